"""Tensor methods: tables of forwarding methods, plus the few with PyTorch-specific meaning.

Each table row attaches one method that calls a public function (``ft.<name>``) with
``self`` first; reductions translate PyTorch's ``dim=``/``keepdim=`` to the Array API's
``axis=``/``keepdims=`` (both spellings are accepted). See `fntorch.ops._tensor`.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import NamedTuple

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor
from ..fx.device import KNOWN_PLATFORMS, Device
from ..fx.device import device as _device
from . import _indexing
from . import api as _api
from ._tensor import _attach, _doc_of, _fn

# ----------------------------------------------------------------------------- helpers


def _axis(dim, axis, where: str):
    """PyTorch's ``dim`` or the Array API's ``axis`` (lists become tuples)."""
    if dim is not None and axis is not None:
        raise TypeError(f"{where}: got both dim={dim!r} and axis={axis!r}; pass one")
    a = axis if dim is None else dim
    return tuple(a) if isinstance(a, list) else a


def _keepdims(keepdim, keepdims) -> bool:
    return builtins.bool(keepdim if keepdims is None else keepdims)


def _shape_args(args, where: str) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike; a float is refused, not truncated (as PyTorch)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    try:
        return tuple(operator.index(a) for a in args)
    except TypeError:
        raise TypeError(f"{where}: expected ints or one tuple of ints, got {args!r}") from None


def _keyword_or_args(args, value, where: str, name: str) -> tuple:
    """PyTorch's keyword spelling (``x.permute(dims=(1, 0))``) of a varargs method."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{where}: got {name} both as positional arguments and as {name}=")
    return (value,)


def _norm(where: str, d, ndim: int) -> int:
    from ._api_common import normalize_axis

    return normalize_axis(where, d, ndim)


class _ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


def _result(name: str):
    """A namedtuple type ``(values, indices)`` named like PyTorch's return types."""
    cls = type(name, (_ValuesIndices,), {"__slots__": ()})
    cls.__doc__ = f"The ``(values, indices)`` result of ``Tensor.{name}``."
    return cls


class return_types:  # noqa: N801 - mirrors torch.return_types
    """The namedtuple types of methods that return ``(values, indices)``."""

    max = _result("max")
    min = _result("min")
    sort = _result("sort")
    topk = _result("topk")


# ------------------------------------------------------------------ forwarding tables

# method name -> ft function name, called as f(self).
_UNARY = {
    "abs": "abs", "absolute": "abs", "neg": "negative", "negative": "negative",
    "positive": "positive", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "square": "square", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin",
    "arcsin": "asin", "acos": "acos", "arccos": "acos", "atan": "atan", "arctan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "arcsinh": "asinh",
    "acosh": "acosh", "arccosh": "acosh", "atanh": "atanh", "arctanh": "atanh",
    "sigmoid": "sigmoid", "relu": "relu", "erf": "erf", "erfinv": "erfinv",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fix": "trunc", "sign": "sign",
    "sgn": "sign", "signbit": "signbit", "reciprocal": "reciprocal",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
    "logical_not": "logical_not", "bitwise_not": "bitwise_invert", "ravel": "ravel",
}  # fmt: skip

# method name -> ft function name, called as f(self, other).
_BINARY = {
    "mul": "multiply", "multiply": "multiply", "true_divide": "divide",
    "floor_divide": "floor_divide", "remainder": "remainder", "pow": "pow",
    "maximum": "maximum", "minimum": "minimum", "atan2": "atan2", "arctan2": "atan2",
    "logaddexp": "logaddexp", "hypot": "hypot", "copysign": "copysign", "nextafter": "nextafter",
    "eq": "equal", "ne": "not_equal", "not_equal": "not_equal", "lt": "less", "less": "less",
    "le": "less_equal", "less_equal": "less_equal", "gt": "greater", "greater": "greater",
    "ge": "greater_equal", "greater_equal": "greater_equal",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "bitwise_left_shift": "bitwise_left_shift", "bitwise_right_shift": "bitwise_right_shift",
    "matmul": "matmul",
}  # fmt: skip


# Reductions over dim/axis with keepdim/keepdims: method -> ft function.
_REDUCTIONS = {
    "sum": "sum", "prod": "prod", "mean": "mean", "all": "all", "any": "any",
    "amax": "max", "amin": "min", "argmax": "argmax", "argmin": "argmin",
    "logsumexp": "logsumexp", "count_nonzero": "count_nonzero",
}  # fmt: skip

# Along one axis (default last for softmax): method -> (ft function, default axis).
_ALONG = {
    "softmax": ("softmax", -1), "log_softmax": ("log_softmax", -1),
    "cumsum": ("cumsum", None), "cumprod": ("cumprod", None),
}  # fmt: skip

# dtype conversions: method -> dtype.
_CASTS = {
    "float": dt.float32, "double": dt.float64, "half": dt.float16, "bfloat16": dt.bfloat16,
    "long": dt.int64, "int": dt.int32, "short": dt.int16, "char": dt.int8, "byte": dt.uint8,
    "bool": dt.bool_,
}  # fmt: skip


def _unary_method(fname):
    def method(self):
        return getattr(_api, fname)(self)

    return method


def _binary_method(fname):
    def method(self, other):
        return getattr(_api, fname)(self, other)

    return method


# PyTorch's mean takes ``dtype=`` (the input is cast to it first) where ``ft.mean``, as
# the standard's, does not; sum and prod pass theirs on.
_CAST_FIRST = {"mean"}


def _reduction_method(fname, mname):
    def method(self, dim=None, keepdim=False, *, axis=None, keepdims=None, **kwargs):
        ax = _axis(dim, axis, f"Tensor.{mname}")
        dtype = kwargs.pop("dtype", None) if mname in _CAST_FIRST else None
        x = self if dtype is None else self.astype(dtype)
        return getattr(_api, fname)(x, axis=ax, keepdims=_keepdims(keepdim, keepdims), **kwargs)

    return method


def _along_method(fname, mname, default):
    def method(self, dim=None, *, axis=None, dtype=None):
        ax = _axis(dim, axis, f"Tensor.{mname}")
        x = self if dtype is None else self.astype(dtype)
        return getattr(_api, fname)(x, axis=default if ax is None else ax)

    return method


def _cast_method(dtype):
    def method(self):
        return self if self.dtype == dtype else _fn("astype")(self, dtype)

    return method


for _m, _f in _UNARY.items():
    _attach(_m, _unary_method(_f), _doc_of(_f, f"{_m}()"))
for _m, _f in _BINARY.items():
    _attach(_m, _binary_method(_f), _doc_of(_f, f"{_m}(other)"))


def _ranked_product(name: str, ranks: tuple):
    def method(self, other):
        other = other if isinstance(other, Tensor) else _api.asarray(other)
        if (self.ndim, other.ndim) != ranks or (name == "bmm" and self.shape[0] != other.shape[0]):
            raise ValueError(
                f"Tensor.{name}: expected tensors of ranks {ranks}"
                f"{' with equal batch sizes' if name == 'bmm' else ''}, got shapes "
                f"{tuple(self.shape)} and {tuple(other.shape)}"
            )
        return _api.matmul(self, other)

    return method


# An example per fixed-rank product: (shape of x, shape of y, shape of x.<m>(y)).
# PyTorch's fixed-rank products, each a matmul that PyTorch refuses for other ranks (x.dot
# of matrices, x.mm of a vector): method -> example shapes (self, other, result), whose
# lengths are the ranks.
_PRODUCT_SHAPES = {
    "mm": ((2, 3), (3, 4), (2, 4)), "bmm": ((5, 2, 3), (5, 3, 4), (5, 2, 4)),
    "mv": ((2, 3), (3,), (2,)), "dot": ((3,), (3,), ()),
}  # fmt: skip
for _m, (_xs, _ys, _out) in _PRODUCT_SHAPES.items():
    _r = (len(_xs), len(_ys))
    _attach(
        _m, _ranked_product(_m, _r),
        f"``x.{_m}(y)``: ``ft.matmul`` of tensors of ranks {_r}, as PyTorch's (other ranks "
        f"raise ValueError).\n\n>>> import fntorch as ft\n"
        f">>> ft.ones({_xs}).{_m}(ft.ones({_ys})).shape\n{_out}",
    )  # fmt: skip
for _m, _f in _REDUCTIONS.items():
    _attach(
        _m, _reduction_method(_f, _m),
        f"``x.{_m}(dim=None, keepdim=False)`` (also ``axis=``/``keepdims=``): ``ft.{_f}``.\n\n"
        f">>> import fntorch as ft\n>>> ft.ones((2, 3)).{_m}(dim=1).shape\n(2,)",
    )  # fmt: skip
# An example per method along one axis: (x, what is shown of x.<m>(dim=1), its value).
_ALONG_EXAMPLES = {
    "softmax": ("ft.zeros((2, 2))", "", [[0.5, 0.5], [0.5, 0.5]]),
    "log_softmax": ("ft.zeros((2, 2))", ".exp()", [[0.5, 0.5], [0.5, 0.5]]),
    "cumsum": ("ft.asarray([[1, 2, 3], [4, 5, 6]])", "", [[1, 3, 6], [4, 9, 15]]),
    "cumprod": ("ft.asarray([[1, 2, 3], [4, 5, 6]])", "", [[1, 2, 6], [4, 20, 120]]),
}
for _m, (_f, _d) in _ALONG.items():
    _x, _then, _out = _ALONG_EXAMPLES[_m]
    _none = "along the last dim" if _d == -1 else "of the flattened ``x``"
    _attach(
        _m,
        _along_method(_f, _m, _d),
        f"``x.{_m}(dim)`` (also ``axis=``; ``dtype=`` casts first): ``ft.{_f}``, {_none} "
        f"when ``dim`` is None.\n\n"
        f">>> import fntorch as ft\n>>> {_x}.{_m}(dim=1){_then}.tolist()\n{_out}",
    )


def _cast_doc(name: str, dtype) -> str:
    values = ("[False, True, True]" if dtype == dt.bool_ else
              "[0.0, 1.5, 2.0]" if dt.is_float(dtype) else "[0, 1, 2]")  # fmt: skip
    return (
        f"``x`` as {dtype} (``x.astype(ft.{dtype})``; ``x`` itself if it has that dtype).\n\n"
        f">>> import fntorch as ft\n>>> y = ft.asarray([0.0, 1.5, 2.0]).{name}()\n"
        f">>> y.dtype, y.tolist()\n({dtype!r}, {values})"
    )


for _m, _d in _CASTS.items():
    _attach(_m, _cast_method(_d), _cast_doc(_m, _d))


# ---------------------------------------------------------------- arithmetic with options


def add(self, other, *, alpha=1):
    """``self + alpha * other`` (PyTorch's ``add``).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).add(ft.asarray([10, 20]), alpha=2).tolist()
    [21, 42]
    """
    return _api.add(self, other if alpha == 1 else _api.multiply(other, alpha))


def sub(self, other, *, alpha=1):
    """``self - alpha * other`` (PyTorch's ``sub``; ``subtract`` is the same method).

    >>> import fntorch as ft
    >>> ft.asarray([10, 20]).sub(ft.asarray([1, 2]), alpha=2).tolist()
    [8, 16]
    """
    return _api.subtract(self, other if alpha == 1 else _api.multiply(other, alpha))


def div(self, other, *, rounding_mode=None):
    """``self / other``; ``rounding_mode`` ``"floor"`` or ``"trunc"`` as in PyTorch.

    >>> import fntorch as ft
    >>> ft.asarray([-7, 7]).div(2, rounding_mode="trunc").tolist()
    [-3, 3]
    """
    if rounding_mode is None:
        return _api.divide(self, other)
    if rounding_mode == "floor":
        return _api.floor_divide(self, other)
    if rounding_mode == "trunc":
        from ._api_common import promote

        a, b = promote("div", self, other)
        if dt.is_float(a.dtype):
            return _api.trunc(_api.divide(a, b))
        from . import lax

        return lax.div(a, b)  # integer division rounds toward zero
    raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


def fmod(self, other):
    """The C-style remainder (the sign of ``self``), as PyTorch's ``fmod``; ``remainder``
    takes the sign of ``other``.

    >>> import fntorch as ft
    >>> ft.asarray([-7, 7]).fmod(3).tolist()
    [-1, 1]
    """
    from . import lax
    from ._api_common import promote

    return lax.rem(*promote("fmod", self, other))


def float_power(self, exponent):
    """``self ** exponent`` computed in float64, as PyTorch's ``float_power``.

    >>> import fntorch as ft
    >>> ft.asarray([2, 3]).float_power(2).dtype
    dtype('float64')
    """
    if isinstance(exponent, Tensor):
        exponent = _api.astype(exponent, dt.float64)
    return _api.pow(_api.astype(self, dt.float64), exponent)


def _nan_ignoring(fname):
    def method(self, other):
        out = getattr(_api, fname)(self, other)
        if not dt.is_float(out.dtype):
            return out
        # NaN only where both are NaN: each NaN side takes the other's value.
        out = _api.where(_api.isnan(other), self, out)
        return _api.where(_api.isnan(self), other, out)

    method.__doc__ = (
        f"``ft.{fname}`` ignoring NaN (the other operand wins; NaN if both are), as "
        f"PyTorch's ``f{fname[:3]}``.\n\n>>> import fntorch as ft\n"
        f">>> ft.asarray([float('nan'), 1.0]).f{fname[:3]}(ft.asarray([2.0, 3.0])).tolist()\n"
        f"{[2.0, 3.0] if fname == 'maximum' else [2.0, 1.0]}"
    )
    return method


def inner(self, other):
    """PyTorch's ``inner``: the sum of products over the last dims of both (a scalar
    operand multiplies).

    >>> import fntorch as ft
    >>> ft.ones((2, 3)).inner(ft.ones((4, 3))).shape
    (2, 4)
    """
    if not isinstance(other, Tensor):
        other = _api.asarray(other)
    if self.ndim == 0 or other.ndim == 0:
        return _api.multiply(self, other)
    return _api.tensordot(self, other, axes=((self.ndim - 1,), (other.ndim - 1,)))


def clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's names
    """``self`` clipped to ``[min, max]`` (either may be None), in the dtype ``self``
    and the bounds promote to, as PyTorch's: an integer tensor clamped to float bounds
    gives floats (``ft.clip`` keeps ``self``'s dtype instead, as the Array API says).

    >>> import fntorch as ft
    >>> ft.asarray([-2.0, 0.5, 3.0]).clamp(0, 1).tolist()
    [0.0, 0.5, 1.0]
    >>> ft.asarray([-2, 1, 3]).clamp(0.5, 2.5).tolist()
    [0.5, 1.0, 2.5]
    """
    bounds = [b for b in (min, max) if b is not None]
    dtype = dt.result_type(self, *bounds)
    return _api.clip(self if dtype == self.dtype else _api.astype(self, dtype), min, max)


def clamp_min(self, min):  # noqa: A002
    """``self`` clipped below at ``min`` (``clamp(min, None)``).

    >>> import fntorch as ft
    >>> ft.asarray([-1.0, 0.5, 2.0]).clamp_min(0).tolist()
    [0.0, 0.5, 2.0]
    """
    return clamp(self, min, None)


def clamp_max(self, max):  # noqa: A002
    """``self`` clipped above at ``max`` (``clamp(None, max)``).

    >>> import fntorch as ft
    >>> ft.asarray([-1.0, 0.5, 2.0]).clamp_max(1).tolist()
    [-1.0, 0.5, 1.0]
    """
    return clamp(self, None, max)


def round_(self, decimals=0):
    """Rounds half to even; ``decimals`` digits after the point (PyTorch's ``round``).

    >>> import fntorch as ft
    >>> ft.asarray([0.5, 1.5, 2.5]).round().tolist()
    [0.0, 2.0, 2.0]
    >>> ft.asarray([1.2345, 2.5], dtype=ft.float64).round(decimals=2).tolist()
    [1.23, 2.5]
    """
    if decimals == 0:
        return _api.round(self)
    s = 10.0**decimals
    return _api.divide(_api.round(_api.multiply(self, s)), s)


def gelu(self, approximate="none"):
    """GELU; ``approximate`` is PyTorch's ``"none"``/``"tanh"`` (or a bool).

    >>> import fntorch as ft
    >>> x = ft.asarray(1.0)
    >>> round(x.gelu().item(), 4), round(x.gelu(approximate="tanh").item(), 4)
    (0.8413, 0.8412)
    """
    if isinstance(approximate, str):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        approximate = approximate == "tanh"
    return _api.gelu(self, approximate=approximate)


# ------------------------------------------------------------------------- reductions


def _max_min(fname, argname, result):
    def method(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if isinstance(dim, Tensor):
            return getattr(_api, "maximum" if fname == "max" else "minimum")(self, dim)
        ax = _axis(dim, axis, f"Tensor.{fname}")
        if ax is None:
            return getattr(_api, fname)(self)
        if isinstance(ax, tuple):
            raise TypeError(
                f"Tensor.{fname}(dim=...) takes one dim and returns (values, indices); "
                f"for several dims use x.a{fname}(dim={ax})"
            )
        kd = _keepdims(keepdim, keepdims)
        values = getattr(_api, fname)(self, axis=ax, keepdims=kd)
        indices = getattr(_api, argname)(self, axis=ax, keepdims=kd)
        return result(values, indices)

    method.__doc__ = (
        f"``x.{fname}()``: the {fname}imum value. ``x.{fname}(dim, keepdim=False)`` (or "
        f"``axis=``): the namedtuple ``(values, indices)``, as PyTorch. ``x.{fname}(other)``: "
        f"elementwise.\n\n>>> import fntorch as ft\n"
        f">>> ft.asarray([[1, 3], [4, 2]]).{fname}(dim=1).indices.tolist()\n"
        f"{[1, 0] if fname == 'max' else [0, 1]}"
    )
    return method


def _var_std(fname):
    def method(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
               keepdims=None):  # fmt: skip
        if isinstance(dim, builtins.bool):  # x.std(False): PyTorch's std(unbiased)
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        elif unbiased is not None:
            raise TypeError(f"Tensor.{fname}: pass unbiased= or correction=, not both")
        ax = _axis(dim, axis, f"Tensor.{fname}")
        return getattr(_api, fname)(
            self, axis=ax, correction=correction, keepdims=_keepdims(keepdim, keepdims)
        )

    method.__doc__ = (
        f"``x.{fname}(dim=None, keepdim=False, *, correction=1)``: unbiased by default, as "
        f"PyTorch (``ft.{fname}`` has the standard's ``correction=0``).\n\n"
        f">>> import fntorch as ft\n>>> ft.asarray([1.0, 3.0]).var().item()\n2.0"
    )
    return method


def norm(self, p=2, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """The vector ``p``-norm over ``dim`` (all elements when None), as PyTorch's ``norm``.

    >>> import fntorch as ft
    >>> ft.asarray([3.0, 4.0]).norm().item()
    5.0
    """
    ax = _axis(dim, axis, "Tensor.norm")
    kd = _keepdims(keepdim, keepdims)
    a = _api.abs(self)
    if p in ("fro", 2):
        return _api.sqrt(_api.sum(_api.multiply(a, a), axis=ax, keepdims=kd))
    if p == math.inf:
        return _api.max(a, axis=ax, keepdims=kd)
    if p == -math.inf:
        return _api.min(a, axis=ax, keepdims=kd)
    if p == 1:
        return _api.sum(a, axis=ax, keepdims=kd)
    if p == 0:
        return _api.sum(_api.astype(_api.not_equal(a, 0), self.dtype), axis=ax, keepdims=kd)
    return _api.pow(_api.sum(_api.pow(a, p), axis=ax, keepdims=kd), 1.0 / p)


# ------------------------------------------------------------------------ manipulation


def reshape(self, *args, shape=None):
    """``x`` with a new shape (``-1`` infers one size): ``x.reshape(2, 3)`` or
    ``x.reshape((2, 3))``.

    >>> import fntorch as ft
    >>> ft.arange(6).reshape(2, -1).shape
    (2, 3)
    """
    shape = _keyword_or_args(args, shape, "Tensor.reshape", "shape")
    return _api.reshape(self, _shape_args(shape, "Tensor.reshape"))


def view(self, *args, size=None):
    """PyTorch's ``view``: the same as ``reshape`` (values are immutable: no aliasing).

    >>> import fntorch as ft
    >>> ft.arange(6).view(3, 2).tolist()
    [[0, 1], [2, 3], [4, 5]]
    """
    shape = _keyword_or_args(args, size, "Tensor.view", "size")
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        raise TypeError(
            "Tensor.view(dtype) (reinterpreting bits) is not supported; use x.astype(dtype)"
        )
    return _api.reshape(self, _shape_args(shape, "Tensor.view"))


def view_as(self, other):
    """``x.reshape(other.shape)``.

    >>> import fntorch as ft
    >>> ft.arange(6).view_as(ft.zeros((2, 3))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return _api.reshape(self, tuple(other.shape))


def reshape_as(self, other):
    """``x.reshape(other.shape)``.

    >>> import fntorch as ft
    >>> ft.arange(6).reshape_as(ft.zeros((3, 2))).tolist()
    [[0, 1], [2, 3], [4, 5]]
    """
    return _api.reshape(self, tuple(other.shape))


def permute(self, *args, dims=None):
    """The dims reordered: ``x.permute(2, 0, 1)`` (output dim i is input dim ``dims[i]``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    dims = _keyword_or_args(args, dims, "Tensor.permute", "dims")
    return _api.permute_dims(self, _shape_args(dims, "Tensor.permute"))


def transpose(self, dim0, dim1):
    """``x`` with dims ``dim0`` and ``dim1`` swapped (PyTorch's ``transpose``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).transpose(0, 2).shape
    (4, 3, 2)
    """
    nd = self.ndim
    a, b = _norm("Tensor.transpose", dim0, nd), _norm("Tensor.transpose", dim1, nd)
    if a == b:
        return self
    perm = list(range(nd))
    perm[a], perm[b] = b, a
    return _api.permute_dims(self, tuple(perm))


def movedim(self, source, destination):
    """Dims ``source`` moved to ``destination`` (``ft.moveaxis``; ``moveaxis`` is the same
    method).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).movedim(0, -1).shape
    (3, 4, 2)
    """
    return _api.moveaxis(self, source, destination)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``ft.diff``, PyTorch's spelling).

    >>> import fntorch as ft
    >>> ft.asarray([1, 4, 9, 16]).diff().tolist(), ft.asarray([1, 4, 9, 16]).diff(n=2).tolist()
    ([3, 5, 7], [2, 2])
    """
    return _api.diff(self, axis=dim, n=n, prepend=prepend, append=append)


def unsqueeze(self, dim):
    """``x`` with a size-1 dim inserted at ``dim`` (``-1``: last).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).unsqueeze(0).shape, ft.zeros((2, 3)).unsqueeze(-1).shape
    ((1, 2, 3), (2, 3, 1))
    """
    return _api.expand_dims(self, axis=dim)


def squeeze(self, dim=None, *, axis=None):
    """``x`` without size-1 dims: all of them, or those of ``dim`` (an int or tuple) that
    have size 1 (others are left alone, as in PyTorch).

    >>> import fntorch as ft
    >>> x = ft.zeros((1, 2, 1))
    >>> x.squeeze().shape, x.squeeze(0).shape, x.squeeze(1).shape
    ((2,), (2, 1), (1, 2, 1))
    """
    d = _axis(dim, axis, "Tensor.squeeze")
    shape = self.shape
    if d is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        ds = d if isinstance(d, tuple) else (d,)
        dims = tuple(sorted({_norm("Tensor.squeeze", i, self.ndim) for i in ds}))
        dims = tuple(i for i in dims if shape[i] == 1)
    if not dims:
        return self
    return _api.squeeze(self, axis=dims)


def flatten(self, start_dim=0, end_dim=-1):
    """Dims ``start_dim..end_dim`` merged into one (a 0-d tensor becomes shape (1,)).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).flatten(1).shape
    (2, 12)
    """
    shape = tuple(self.shape)
    if not shape:
        return _api.reshape(self, (1,))
    s, e = (
        _norm("Tensor.flatten", start_dim, len(shape)),
        _norm("Tensor.flatten", end_dim, len(shape)),
    )
    if s > e:
        raise ValueError(f"Tensor.flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    return _api.reshape(self, shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])


def unflatten(self, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1).

    >>> import fntorch as ft
    >>> ft.zeros((2, 12)).unflatten(1, (3, -1)).shape
    (2, 3, 4)
    """
    shape = tuple(self.shape)
    d = _norm("Tensor.unflatten", dim, len(shape))
    return _api.reshape(self, shape[:d] + tuple(sizes) + shape[d + 1 :])


def expand(self, *args, size=None):
    """``x`` broadcast to ``sizes``; ``-1`` keeps a dim's size (PyTorch's ``expand``).

    >>> import fntorch as ft
    >>> ft.zeros((3, 1)).expand(2, -1, 4).shape
    (2, 3, 4)
    """
    sizes = _shape_args(_keyword_or_args(args, size, "Tensor.expand", "size"), "Tensor.expand")
    shape = tuple(self.shape)
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ValueError(f"Tensor.expand: sizes {sizes} have fewer dims than shape {shape}")
    out = []
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise ValueError(f"Tensor.expand: -1 is not allowed for a new leading dim {sizes}")
            s = shape[i - lead]
        out.append(s)
    return _api.broadcast_to(self, tuple(out))


def expand_as(self, other):
    """``x`` broadcast to ``other.shape``.

    >>> import fntorch as ft
    >>> ft.asarray([[1], [2]]).expand_as(ft.zeros((2, 3))).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    return _api.broadcast_to(self, tuple(other.shape))


def broadcast_to(self, *shape):
    """``x`` broadcast to ``shape`` (several ints or one tuple).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).broadcast_to(2, 2).tolist()
    [[1, 2], [1, 2]]
    """
    return _api.broadcast_to(self, _shape_args(shape, "Tensor.broadcast_to"))


def repeat(self, *args, repeats=None):
    """PyTorch's ``repeat``: the tensor tiled ``sizes[i]`` times along each dim
    (``numpy.tile``); for numpy's ``repeat`` use ``repeat_interleave``.

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).repeat(2).tolist()
    [1, 2, 1, 2]
    """
    sizes = _keyword_or_args(args, repeats, "Tensor.repeat", "repeats")
    sizes = _shape_args(sizes, "Tensor.repeat")
    if len(sizes) < self.ndim:
        raise ValueError(
            f"Tensor.repeat: needs at least one repeat count per dim ({self.ndim}), got {sizes}"
        )
    return _api.tile(self, sizes)


def repeat_interleave(self, repeats, dim=None):
    """Each element repeated ``repeats`` times along ``dim`` (flattened when None).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).repeat_interleave(2).tolist()
    [1, 1, 2, 2]
    """
    return _api.repeat(self, repeats, axis=dim)


def flip(self, *args, dims=None):
    """``x`` reversed along ``dims`` (an int, several ints or a tuple; ``()`` reverses
    none); ``x.flip()`` reverses every dim, as ``ft.flip``.

    >>> import fntorch as ft
    >>> x = ft.asarray([[1, 2], [3, 4]])
    >>> x.flip(1).tolist(), x.flip().tolist()
    ([[2, 1], [4, 3]], [[4, 3], [2, 1]])
    """
    dims = _keyword_or_args(args, dims, "Tensor.flip", "dims")
    if not dims:
        return _api.flip(self)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return _api.flip(self, axis=dims)


def roll(self, shifts, dims=None):
    """``x`` rolled by ``shifts`` along ``dims`` (flattened when None).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2, 3, 4]).roll(1).tolist()
    [4, 1, 2, 3]
    """
    return _api.roll(self, shifts, axis=dims)


def split(self, split_size_or_sections, dim=0):
    """Pieces along ``dim``: of size ``split_size`` (the last may be smaller), or of the
    listed sizes (PyTorch's ``split``).

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in ft.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    n = self.shape[_norm("Tensor.split", dim, self.ndim)]
    d = _norm("Tensor.split", dim, self.ndim)
    if isinstance(split_size_or_sections, (int, np.integer)):
        k = builtins.int(split_size_or_sections)
        if k <= 0:
            raise ValueError(f"Tensor.split: split_size must be positive, got {k}")
        sizes = [min(k, n - s) for s in range(0, n, k)] or [0]
    else:
        sizes = [builtins.int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ValueError(f"Tensor.split: sizes {sizes} do not add up to {n} (dim {dim})")
    out, start = [], 0
    for s in sizes:
        out.append(_indexing.getitem(self, (slice(None),) * d + (slice(start, start + s),)))
        start += s
    return tuple(out)


def chunk(self, chunks, dim=0):
    """``chunks`` pieces along ``dim`` (each of size ``ceil(n / chunks)``, the last smaller).

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.arange(5).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise ValueError(f"Tensor.chunk: chunks must be a positive int, got {chunks!r}")
    n = self.shape[_norm("Tensor.chunk", dim, self.ndim)]
    if n == 0:
        return split(self, [0] * chunks, dim)  # PyTorch's: ``chunks`` empty pieces
    return split(self, -(-n // chunks), dim)


def unbind(self, dim=0):
    """The slices along ``dim``, as a tuple (``ft.unstack``).

    >>> import fntorch as ft
    >>> [c.tolist() for c in ft.asarray([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    return _api.unstack(self, axis=dim)


def gather(self, dim, index):
    """PyTorch's ``gather``: ``out[i, j] = self[i, index[i, j]]`` for ``dim=1``. The
    result has ``index``'s shape, which may be smaller than ``self``'s outside ``dim``
    (``ft.take_along_axis`` broadcasts instead).

    >>> import fntorch as ft
    >>> x = ft.asarray([[1, 2, 3], [4, 5, 6]])
    >>> x.gather(1, ft.asarray([[2, 0]])).tolist()
    [[3, 1]]
    """
    d = _norm("Tensor.gather", dim, self.ndim)
    index = index if isinstance(index, Tensor) else _api.asarray(index)
    shape, ishape = tuple(self.shape), tuple(index.shape)
    if len(ishape) != len(shape) or any(
        i > n for k, (i, n) in enumerate(zip(ishape, shape)) if k != d
    ):
        raise ValueError(
            f"Tensor.gather: index of shape {ishape} must have self's rank and fit inside "
            f"self's shape {shape} outside dim {d}"
        )
    part = tuple(slice(None) if k == d else slice(0, i) for k, i in enumerate(ishape))
    return _api.take_along_axis(_indexing.getitem(self, part), index, axis=d)


def index_select(self, dim, index):
    """The entries ``index`` (a vector; a 0-d index counts as one entry) along ``dim``: the
    result keeps ``self``'s rank, as PyTorch's.

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).index_select(1, ft.asarray(0)).shape
    (2, 1)
    """
    index = index if isinstance(index, Tensor) else _api.asarray(index)
    if index.ndim > 1:
        raise ValueError(
            f"Tensor.index_select: index must be a vector (or 0-d), got shape {index.shape}"
        )
    return _api.take(self, _api.reshape(index, (-1,)), axis=dim)


def take_along_dim(self, indices, dim=None):
    """``ft.take_along_axis`` (flattened when ``dim`` is None).

    >>> import fntorch as ft
    >>> x = ft.asarray([[10, 30, 20], [60, 40, 50]])
    >>> x.take_along_dim(x.argsort(dim=1), dim=1).tolist()
    [[10, 20, 30], [40, 50, 60]]
    """
    if dim is None:
        return _api.take_along_axis(_api.reshape(self, (-1,)), _api.reshape(indices, (-1,)), axis=0)
    return _api.take_along_axis(self, indices, axis=dim)


def tril(self, diagonal=0):
    """The lower triangle (``ft.tril``); ``diagonal`` shifts it (positive: above the main one).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).tril().tolist()
    [[1, 0, 0], [4, 5, 0], [7, 8, 9]]
    """
    return _api.tril(self, k=diagonal)


def triu(self, diagonal=0):
    """The upper triangle (``ft.triu``); ``diagonal`` shifts it (positive: above the main one).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).triu(1).tolist()
    [[0, 2, 3], [0, 0, 6], [0, 0, 0]]
    """
    return _api.triu(self, k=diagonal)


# -------------------------------------------------------------------- sorting, selection


def sort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """PyTorch's ``sort``: the namedtuple ``(values, indices)`` along ``dim``.

    >>> import fntorch as ft
    >>> ft.asarray([3, 1, 2]).sort().indices.tolist()
    [1, 2, 0]
    """
    ax = _axis(None if axis is not None else dim, axis, "Tensor.sort")
    idx = _api.argsort(self, axis=ax, descending=descending, stable=True)
    return return_types.sort(_api.take_along_axis(self, idx, axis=ax), idx)


def argsort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """The indices that sort ``x`` along ``dim`` (stable).

    >>> import fntorch as ft
    >>> x = ft.asarray([3, 1, 2])
    >>> x.argsort().tolist(), x.argsort(descending=True).tolist()
    ([1, 2, 0], [0, 2, 1])
    """
    ax = _axis(None if axis is not None else dim, axis, "Tensor.argsort")
    return _api.argsort(self, axis=ax, descending=descending, stable=True)


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    """The ``k`` largest (or smallest) entries along ``dim``: ``(values, indices)``.

    >>> import fntorch as ft
    >>> ft.asarray([1, 5, 3]).topk(2).values.tolist()
    [5, 3]
    """
    d = _norm("Tensor.topk", dim, self.ndim)
    n = self.shape[d]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n:
        raise ValueError(f"Tensor.topk: k={k!r} is out of range for dim {dim} of size {n}")
    idx = _api.argsort(self, axis=d, descending=largest, stable=True)
    idx = _indexing.getitem(idx, (slice(None),) * d + (slice(0, k),))
    return return_types.topk(_api.take_along_axis(self, idx, axis=d), idx)


def where(self, condition, other):
    """PyTorch's ``x.where(condition, y)``: ``ft.where(condition, x, y)``.

    >>> import fntorch as ft
    >>> x = ft.asarray([1, -2, 3])
    >>> x.where(x > 0, 0).tolist()
    [1, 0, 3]
    """
    return _api.where(condition, self, other)


def masked_fill(self, mask, value):
    """``x`` with ``value`` (cast to ``x``'s dtype) where ``mask`` is True.

    >>> import fntorch as ft
    >>> ft.zeros(3).masked_fill(ft.asarray([True, False, True]), 1.0).tolist()
    [1.0, 0.0, 1.0]
    """
    mask = mask if isinstance(mask, Tensor) else _api.asarray(mask)
    if mask.dtype != dt.bool_:  # as PyTorch: a float mask is a mistake, not a truth value
        raise TypeError(f"Tensor.masked_fill: mask must have dtype bool, got {mask.dtype}")
    if isinstance(value, Tensor) and value.ndim:
        raise ValueError(f"Tensor.masked_fill: value must be 0-d, got shape {value.shape}")
    if isinstance(value, Tensor):
        value = _api.astype(value, self.dtype) if value.dtype != self.dtype else value
    else:
        value = np.asarray(value, dtype=self.dtype)[()]
        value = _api.asarray(value, device=self.device)
    return _api.where(mask, value, self)


def nonzero(self, *, as_tuple=False):
    """PyTorch's ``nonzero``: an ``(n, ndim)`` int64 tensor of indices (or the Array API's
    tuple with ``as_tuple=True``). Needs a concrete value.

    >>> import fntorch as ft
    >>> x = ft.asarray([[0, 1], [1, 1]])
    >>> x.nonzero().tolist()
    [[0, 1], [1, 0], [1, 1]]
    >>> [i.tolist() for i in x.nonzero(as_tuple=True)]
    [[0, 1, 1], [1, 0, 1]]
    """
    idx = _api.nonzero(self)
    if as_tuple:
        return idx
    return _api.stack(idx, axis=1)


# --------------------------------------------------------------- dtype, device, identity


def astype(self, dtype, *, copy=True):
    """``x`` converted to ``dtype`` (``ft.astype``; floats truncate toward zero).

    >>> import fntorch as ft
    >>> ft.asarray([1.7, -1.7]).astype(ft.int32).tolist()
    [1, -1]
    """
    return _api.astype(self, dtype, copy=copy)


def _is_device_spec(a) -> bool:
    if isinstance(a, Device) or isinstance(getattr(a, "type", None), str):  # torch.device
        return True
    return isinstance(a, str) and a.partition(":")[0] in KNOWN_PLATFORMS


def to_device(self, device, /, *, stream=None):
    """The Array API's ``x.to_device(device)``: ``x.to(device)``.

    >>> import fntorch as ft
    >>> ft.ones(2).to_device("cpu").device
    device(type='cpu')
    """
    if stream is not None:
        raise ValueError(f"Tensor.to_device: stream must be None, got {stream!r}")
    return self.to(device)


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
    """PyTorch's ``to``: ``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)``,
    ``x.to(other)`` (its dtype and device), or keywords. Returns ``x`` itself when nothing
    changes (and ``copy`` is False).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).to(ft.float32).dtype
    dtype('float32')
    """
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif _is_device_spec(a):
            device = a
        else:
            dtype = a
    out = self
    if dtype is not None:
        d = dt.canonicalize(dtype, where="Tensor.to")
        if d != out.dtype:
            out = _api.astype(out, d)
    if device is not None:
        target, current = _device(device), out.device
        if current is not None and current is not target:  # (None: a tracer's unknown)
            out = _api.asarray(out, device=target)
    if copy and out is self:
        out = clone(self)
    return out


def cpu(self):
    """``x.to("cpu")``.

    >>> import fntorch as ft
    >>> ft.ones(2).cpu().device
    device(type='cpu')
    """
    return to(self, "cpu")


def cuda(self, device=None):
    """``x.to("cuda")`` (or ``"cuda:<device>"``). Needs a CUDA device: where there is none,
    it raises RuntimeError, so this example is not run here (``x.cpu()`` is the way back).

    >>> import fntorch as ft
    >>> ft.ones(2).cuda().device  # doctest: +SKIP
    device(type='cuda', index=0)
    """
    if device is None or isinstance(device, int):
        return to(self, "cuda" if device is None else f"cuda:{device}")
    return to(self, device)  # "cuda:0", a Device or a torch.device, as PyTorch takes


def type_as(self, other):
    """``x`` converted to ``other``'s dtype.

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).type_as(ft.zeros(1)).dtype
    dtype('float32')
    """
    return self if self.dtype == other.dtype else _api.astype(self, other.dtype)


def clone(self):
    """A copy (a new buffer; values are immutable, so this is rarely needed).

    >>> import fntorch as ft
    >>> x = ft.asarray([1, 2])
    >>> y = x.clone()
    >>> y.tolist(), y is x
    ([1, 2], False)
    """
    from . import lax

    return lax.copy(self)


def detach(self):
    """``x`` with its gradient stopped (``ft.stop_gradient``).

    >>> import fntorch as ft
    >>> ft.grad(lambda x: (x * x.detach()).sum())(ft.asarray([3.0])).tolist()
    [3.0]
    """
    from . import lax

    return lax.stop_gradient(self)


def contiguous(self):
    """``x`` itself: fntorch tensors have no user-visible layout.

    >>> import fntorch as ft
    >>> x = ft.ones(2)
    >>> x.contiguous() is x
    True
    """
    return self


def dim(self):
    """The number of dims (``x.ndim``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).dim()
    2
    """
    return self.ndim


def numel(self):
    """The number of elements (``x.size``; PyTorch's ``x.size()`` is ``x.shape`` here).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).numel()
    6
    """
    return self.size


def element_size(self):
    """The size of one element in bytes.

    >>> import fntorch as ft
    >>> ft.zeros(2, dtype=ft.float16).element_size()
    2
    """
    return self.dtype.itemsize


def is_floating_point(self):
    """Whether the dtype is a float dtype.

    >>> import fntorch as ft
    >>> ft.ones(2).is_floating_point(), ft.asarray([1]).is_floating_point()
    (True, False)
    """
    return dt.is_float(self.dtype)


def _new(fname):
    def method(self, size, *rest, dtype=None, device=None):
        shape = _shape_args((size, *rest), f"Tensor.new_{fname}")
        return getattr(_api, fname)(shape, dtype=dtype or self.dtype, device=device or self.device)

    method.__doc__ = (
        f"``ft.{fname}(size)`` with ``x``'s dtype and device (unless given).\n\n"
        f">>> import fntorch as ft\n>>> y = ft.ones(2, dtype=ft.int32).new_{fname}((2, 3))\n"
        f">>> y.shape, y.dtype\n((2, 3), dtype('int32'))"
    )
    return method


def new_full(self, size, fill_value, *, dtype=None, device=None):
    """``ft.full(size, fill_value)`` with ``x``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> y = ft.zeros(2, dtype=ft.int32).new_full((2, 2), 7)
    >>> y.dtype, y.tolist()
    (dtype('int32'), [[7, 7], [7, 7]])
    """
    return _api.full(
        tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device
    )


def new_tensor(self, data, *, dtype=None, device=None):
    """``ft.asarray(data)`` with ``x``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> y = ft.zeros(2, dtype=ft.float16).new_tensor([1, 2])
    >>> y.dtype, y.tolist()
    (dtype('float16'), [1.0, 2.0])
    """
    return _api.asarray(data, dtype=dtype or self.dtype, device=device or self.device)


for _f in (add, sub, div, fmod, float_power, inner, clamp, clamp_min, clamp_max, gelu, norm,
           reshape, view, view_as, reshape_as, permute, transpose, movedim, unsqueeze, squeeze,
           flatten, unflatten, expand, expand_as, broadcast_to, repeat, repeat_interleave, flip,
           roll, split, chunk, unbind, gather, index_select, take_along_dim, tril, triu, sort,
           argsort, topk, where, masked_fill, nonzero, astype, to, to_device, cpu, cuda, type_as,
           clone, detach, contiguous, dim, numel, element_size, is_floating_point, new_full,
           new_tensor, diff):  # fmt: skip
    _attach(_f.__name__, _f)
_attach("round", round_)
_attach("fmax", _nan_ignoring("maximum"))
_attach("fmin", _nan_ignoring("minimum"))
_attach("subtract", sub)
_attach("divide", div)
_attach("clip", clamp)
_attach("swapaxes", transpose)
_attach("swapdims", transpose)
_attach("moveaxis", movedim)
_attach("max", _max_min("max", "argmax", return_types.max))
_attach("min", _max_min("min", "argmin", return_types.min))
_attach("var", _var_std("var"))
_attach("std", _var_std("std"))
for _name in ("zeros", "ones", "empty"):
    _attach(f"new_{_name}", _new(_name))
