"""``ft.nn.init``: PyTorch's initialisers, writing cells in place.

Each ``*_`` function takes a cell (an ``ft.nn.Parameter``, a buffer or any
``fntorch.fx.cell.Cell``), draws its new value with PyTorch's distribution and fan
computation from the global key (``ft.manual_seed``) or a ``generator=``, rebinds the cell
with ``tensor.set_(value)`` and returns it. A plain tensor is immutable: passing one
raises ``TypeError`` naming the functional form (an ``ft.random`` sampler with a key).

>>> import fntorch as ft
>>> w = ft.nn.Parameter(ft.zeros((4, 3)))
>>> _ = ft.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
>>> bool((w.abs() <= 1 / 3**0.5).all())
True
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as _dt
from ..fx.cell import Cell
from ..ops import api as _api
from ..random import _distributions as _d
from ..random._torch_style import draw_key

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
    "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
]  # fmt: skip

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")  # fmt: skip


def calculate_gain(nonlinearity: str, param=None) -> float:
    """PyTorch's recommended gain for ``nonlinearity`` (``param``: leaky_relu's slope).

    >>> import fntorch as ft
    >>> ft.nn.init.calculate_gain("relu") == 2 ** 0.5, ft.nn.init.calculate_gain("tanh")
    (True, 1.6666666666666667)
    """
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor) -> tuple[int, int]:
    """PyTorch's fans: ``(size(1) * receptive field, size(0) * receptive field)``.

    >>> import fntorch as ft
    >>> ft.nn.init._calculate_fan_in_and_fan_out(ft.zeros((8, 4, 3, 3)))
    (36, 72)
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _cell(tensor, where: str, functional: str) -> Cell:
    if not isinstance(tensor, Cell):
        raise TypeError(
            f"nn.init.{where}: expected a cell to write in place (an ft.nn.Parameter or a "
            f"buffer), got {type(tensor).__name__}, which is immutable; draw a new value "
            f"instead, {functional}, and wrap it in ft.nn.Parameter if it is a weight"
        )
    return tensor


def _float_dtype(tensor):
    return tensor.dtype if _dt.is_float(tensor.dtype) else _dt.float32


def _write(cell: Cell, value) -> Cell:
    return cell.set_(_api.astype(value, cell.dtype))


def _uniform(cell, a, b, generator):
    v = _d.uniform(draw_key(generator), tuple(cell.shape), _float_dtype(cell), a, b)
    return _write(cell, v)


def _normal(cell, mean, std, generator):
    z = _d.normal(draw_key(generator), tuple(cell.shape), _float_dtype(cell))
    return _write(cell, z * std + mean)


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fills the cell with draws from U(a, b).

    >>> import fntorch as ft
    >>> w = ft.nn.init.uniform_(ft.nn.Parameter(ft.zeros(100)), -1, 1)
    >>> bool((w.abs() <= 1).all())
    True
    """
    c = _cell(tensor, "uniform_", "ft.random.uniform(key, shape, minval=a, maxval=b)")
    return _uniform(c, a, b, generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fills the cell with draws from N(mean, std**2).

    >>> import fntorch as ft
    >>> ft.nn.init.normal_(ft.nn.Parameter(ft.zeros(3)), 0.0, 0.02).shape
    (3,)
    """
    c = _cell(tensor, "normal_", "mean + std * ft.random.normal(key, shape)")
    return _normal(c, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills the cell with N(mean, std**2) draws conditioned on ``a <= x <= b`` (absolute
    bounds, as PyTorch).

    >>> import fntorch as ft
    >>> w = ft.nn.init.trunc_normal_(ft.nn.Parameter(ft.zeros(100)), std=1.0, a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    c = _cell(tensor, "trunc_normal_", "ft.random.truncated_normal(key, lower, upper, shape)")
    lo, hi = (a - mean) / std, (b - mean) / std
    z = _d.truncated_normal(draw_key(generator), lo, hi, tuple(c.shape), _float_dtype(c))
    return _write(c, _api.clip(z * std + mean, a, b))


def constant_(tensor, val):
    """Fills the cell with ``val``.

    >>> import fntorch as ft
    >>> ft.nn.init.constant_(ft.nn.Parameter(ft.zeros(2)), 0.5).tolist()
    [0.5, 0.5]
    """
    c = _cell(tensor, "constant_", "ft.full(shape, val)")
    return c.set_(_api.full(tuple(c.shape), val, dtype=c.dtype, device=c.device))


def ones_(tensor):
    """Fills the cell with ones.

    >>> import fntorch as ft
    >>> ft.nn.init.ones_(ft.nn.Parameter(ft.zeros(2))).tolist()
    [1.0, 1.0]
    """
    return constant_(_cell(tensor, "ones_", "ft.ones(shape)"), 1)


def zeros_(tensor):
    """Fills the cell with zeros.

    >>> import fntorch as ft
    >>> ft.nn.init.zeros_(ft.nn.Parameter(ft.ones(2))).tolist()
    [0.0, 0.0]
    """
    return constant_(_cell(tensor, "zeros_", "ft.zeros(shape)"), 0)


def eye_(tensor):
    """Fills a 2-d cell with the identity matrix.

    >>> import fntorch as ft
    >>> ft.nn.init.eye_(ft.nn.Parameter(ft.zeros((2, 3)))).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    c = _cell(tensor, "eye_", "ft.eye(n, m)")
    if c.ndim != 2:
        raise ValueError(f"nn.init.eye_: only 2-d tensors are supported, got shape {c.shape}")
    return c.set_(_api.eye(c.shape[0], c.shape[1], dtype=c.dtype, device=c.device))


def dirac_(tensor, groups: int = 1):
    """Fills a 3-, 4- or 5-d cell (a convolution's weight) with the Dirac delta, so the
    convolution is the identity on as many channels as possible (per group).

    >>> import fntorch as ft
    >>> w = ft.nn.init.dirac_(ft.nn.Parameter(ft.zeros((2, 2, 3))))
    >>> w[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    c = _cell(tensor, "dirac_", "a tensor built with ft.zeros(shape).at[idx].set(1)")
    shape = tuple(c.shape)
    if len(shape) not in (3, 4, 5):
        raise ValueError(f"nn.init.dirac_: only 3-, 4- and 5-d tensors are supported, got {shape}")
    if shape[0] % groups != 0:
        raise ValueError(f"nn.init.dirac_: dim 0 ({shape[0]}) is not divisible by groups")
    out_per_group = shape[0] // groups
    w = np.zeros(shape, np.dtype(c.dtype))
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            w[(g * out_per_group + d, d, *centre)] = 1
    return c.set_(_api.asarray(w, device=c.device))


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import fntorch as ft
    >>> w = ft.nn.init.xavier_uniform_(ft.nn.Parameter(ft.zeros((3, 5))))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
    True
    """
    c = _cell(tensor, "xavier_uniform_", "ft.random.uniform(key, shape, minval=-a, maxval=a)")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(c)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return _uniform(c, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import fntorch as ft
    >>> ft.nn.init.xavier_normal_(ft.nn.Parameter(ft.zeros((3, 5)))).shape
    (3, 5)
    """
    c = _cell(tensor, "xavier_normal_", "std * ft.random.normal(key, shape)")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(c)
    return _normal(c, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(c, a, mode, nonlinearity) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(c, mode))


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None):  # fmt: skip
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (``gain`` of
    ``nonlinearity`` with slope ``a``; ``fan`` of ``mode``). nn.Linear's default is
    ``a=sqrt(5)``.

    >>> import fntorch as ft
    >>> w = ft.nn.init.kaiming_uniform_(ft.nn.Parameter(ft.zeros((4, 6))), nonlinearity="relu")
    >>> bool((w.abs() <= 1.0).all())
    True
    """
    c = _cell(tensor, "kaiming_uniform_", "ft.random.uniform(key, shape, minval=-b, maxval=b)")
    if 0 in tuple(c.shape):
        return c  # PyTorch warns and leaves an empty tensor as it is
    bound = math.sqrt(3.0) * _kaiming_std(c, a, mode, nonlinearity)
    return _uniform(c, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None):  # fmt: skip
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)``.

    >>> import fntorch as ft
    >>> ft.nn.init.kaiming_normal_(ft.nn.Parameter(ft.zeros((4, 6))), mode="fan_out").shape
    (4, 6)
    """
    c = _cell(tensor, "kaiming_normal_", "std * ft.random.normal(key, shape)")
    if 0 in tuple(c.shape):
        return c
    return _normal(c, 0.0, _kaiming_std(c, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain: float = 1, generator=None):
    """A (semi-)orthogonal matrix, as PyTorch: the Q of a QR of a normal draw, signs fixed
    by R's diagonal, dims after the first flattened, times ``gain``. The QR runs eagerly
    on the host (numpy): fntorch has no QR primitive yet.

    >>> import fntorch as ft
    >>> w = ft.nn.init.orthogonal_(ft.nn.Parameter(ft.zeros((3, 3))))
    >>> bool(ft.abs(w @ w.T - ft.eye(3)).max() < 1e-5)
    True
    """
    c = _cell(tensor, "orthogonal_", "the Q of a QR of ft.random.normal(key, (rows, cols))")
    if c.ndim < 2:
        raise ValueError(
            "nn.init.orthogonal_: only tensors with 2 or more dimensions are supported"
        )
    if c.size == 0:
        return c
    rows = c.shape[0]
    cols = int(c.size) // rows
    flat = np.asarray(_d.normal(draw_key(generator), (rows, cols), _dt.float64))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(c, _api.asarray(q.reshape(tuple(c.shape)) * gain, device=c.device))


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """A 2-d cell drawn from N(0, std**2) with ``ceil(sparsity * rows)`` entries of each
    column set to zero, at random rows.

    >>> import fntorch as ft
    >>> w = ft.nn.init.sparse_(ft.nn.Parameter(ft.zeros((10, 3))), 0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    c = _cell(tensor, "sparse_", "ft.where(mask, 0, std * ft.random.normal(key, shape))")
    if c.ndim != 2:
        raise ValueError(f"nn.init.sparse_: only 2-d tensors are supported, got shape {c.shape}")
    rows, cols = c.shape
    zeros = math.ceil(sparsity * rows)
    k_values, k_rows = draw_key(generator), draw_key(generator)
    values = _d.normal(k_values, (rows, cols), _float_dtype(c)) * std
    rank = _api.argsort(_api.argsort(_d.uniform(k_rows, (rows, cols)), axis=0), axis=0)
    return _write(c, _api.where(rank < zeros, _api.zeros_like(values), values))
