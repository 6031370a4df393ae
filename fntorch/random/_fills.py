"""The samplers of the in-place random fills (``t.normal_()``, ``t.uniform_()``, ...):
registered into ``ops._tensor_inplace.random_fills``, which owns the methods (ops may
not import this room). Each takes ``(shape, dtype, generator, *args)``, checks its
arguments as PyTorch does (a ``ValueError`` naming the method and the bad value; a
``TypeError`` for a dtype the distribution has no values in) and draws from a key of
``draw_key(generator)``. The cell is written by the caller only after a draw succeeds.

>>> import fntorch as ft
>>> _ = ft.manual_seed(0); ft.nn.Buffer(ft.zeros(3)).uniform_(5.0, 6.0).floor().tolist()
[5.0, 5.0, 5.0]
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..fx.core import Tensor
from ..ops import _tensor_inplace
from ..ops import api as _api
from . import _distributions as _d
from ._torch_style import draw_key


def _float(name: str, dtype):
    if not _dt.is_float(dtype):
        raise TypeError(f"Tensor.{name}: needs a floating-point cell, got one of {dtype}")
    return dtype


def _number(name: str, arg: str, value) -> float:
    if isinstance(value, Tensor):
        if value.shape != ():
            raise TypeError(f"Tensor.{name}: {arg} must be a number, got shape {value.shape}")
        value = value.item()
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"Tensor.{name}: {arg} must be a number, got {value!r}") from None


def normal(shape, dtype, generator, mean, std):
    """N(mean, std**2), drawn in the cell's float dtype."""
    dtype = _float("normal_", dtype)
    mean, std = _number("normal_", "mean", mean), _number("normal_", "std", std)
    if not std >= 0.0:
        raise ValueError(f"Tensor.normal_: std must be >= 0, got {std}")
    return _d.normal(draw_key(generator), shape, dtype) * std + mean


def uniform(shape, dtype, generator, a, b):
    """U[a, b): PyTorch requires ``a <= b``."""
    dtype = _float("uniform_", dtype)
    a, b = _number("uniform_", "from", a), _number("uniform_", "to", b)
    if not a <= b:
        raise ValueError(f"Tensor.uniform_: expects a [from, to) range, but got from={a} > to={b}")
    return _d.uniform(draw_key(generator), shape, dtype, a, b)


def exponential(shape, dtype, generator, lambd):
    """Inverse transform of U[0, 1): ``-log1p(-u) / lambd`` (finite: ``u < 1``)."""
    dtype = _float("exponential_", dtype)
    lambd = _number("exponential_", "lambd", lambd)
    if not lambd > 0.0:
        raise ValueError(f"Tensor.exponential_: lambd must be > 0, got {lambd}")
    return -_api.log1p(-_d.uniform(draw_key(generator), shape, dtype)) / lambd


def log_normal(shape, dtype, generator, mean, std):
    """``exp`` of N(mean, std**2); PyTorch requires ``std > 0``."""
    _float("log_normal_", dtype)
    if not _number("log_normal_", "std", std) > 0.0:
        raise ValueError(f"Tensor.log_normal_: std must be > 0, got {std}")
    return _api.exp(normal(shape, dtype, generator, mean, std))


def cauchy(shape, dtype, generator, median, sigma):
    """Inverse transform: ``median + sigma * tan(pi * (u - 1/2))``."""
    dtype = _float("cauchy_", dtype)
    median, sigma = _number("cauchy_", "median", median), _number("cauchy_", "sigma", sigma)
    if not sigma > 0.0:
        raise ValueError(f"Tensor.cauchy_: sigma must be > 0, got {sigma}")
    u = _d.uniform(draw_key(generator), shape, dtype)
    return median + sigma * _api.tan(math.pi * (u - 0.5))


def geometric(shape, dtype, generator, p):
    """Trials to the first success: ``ceil(log1p(-u) / log1p(-p))``, at least 1."""
    p = _number("geometric_", "p", p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"Tensor.geometric_: p must be in (0, 1), got {p}")
    u = _d.uniform(draw_key(generator), shape, _dt.float64)
    return _api.maximum(_api.ceil(_api.log1p(-u) / math.log1p(-p)), 1.0)


def bernoulli(shape, dtype, generator, p):
    """1 with probability ``p`` (a number, or a tensor broadcast to the cell)."""
    if isinstance(p, Tensor):
        if not _dt.is_float(p.dtype):
            raise TypeError(f"Tensor.bernoulli_: p must be a float tensor, got {p.dtype}")
        lo, hi = float(_api.min(p)), float(_api.max(p))
        prob = _api.broadcast_to(p, shape)
    else:
        lo = hi = prob = _number("bernoulli_", "p", p)
    if not (0.0 <= lo and hi <= 1.0):
        raise ValueError(f"Tensor.bernoulli_: p must be in [0, 1], got values in [{lo}, {hi}]")
    return _d.bernoulli(draw_key(generator), prob, shape)


def random(shape, dtype, generator, low, high):
    """Uniform integers in [low, high), defaulting to the dtype's exact range."""
    if high is None:
        low = 0
        if _dt.is_float(dtype):
            high = 2 ** (_dt.finfo(dtype).nmant + 1) + 1  # [0, 2**digits]: every value exact
        elif dtype == _dt.bool_:
            high = 2
        else:
            high = int(_dt.iinfo(dtype).max)
    for arg, v in (("from", low), ("to", high)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"Tensor.random_: {arg} must be an int, got {v!r}")
    if not low < high:
        raise ValueError(f"Tensor.random_: expects from < to, got from={low}, to={high}")
    draw_dtype = dtype if _dt.is_integer(dtype) else _dt.int64
    return _d.randint(draw_key(generator), shape, low, high, dtype=draw_dtype)


_tensor_inplace.random_fills.update(
    normal_=normal,
    uniform_=uniform,
    exponential_=exponential,
    log_normal_=log_normal,
    cauchy_=cauchy,
    geometric_=geometric,
    bernoulli_=bernoulli,
    random_=random,
)
