"""Tensor methods, elementwise and reductions: the forwarding tables of unary and binary
elementwise methods (``x.exp()``, ``x.mul(y)``, ..., also ``x.ravel()``), the fixed-rank
products (``mm``, ``bmm``, ``mv``, ``dot``), reductions over ``dim`` (``sum``, ``mean``,
``amax``, ...) and along one dim (``softmax``, ``cumsum``, ...), plus the methods with
PyTorch-specific options: ``add``/``sub`` with ``alpha``, ``div`` with ``rounding_mode``,
``fmod``, ``float_power``, ``fmax``/``fmin``, ``inner``, ``clamp``, ``round``, ``gelu``,
``max``/``min`` with ``(values, indices)``, ``var``/``std`` (unbiased) and ``norm``.

Attached to Tensor when imported (by `fntorch.ops._tensor_methods`).
"""

from __future__ import annotations

import builtins
import math

from ..fx import dtypes as dt
from ..fx.core import Tensor
from . import api as _api
from ._tensor import _attach, _doc_of
from ._tensor_methods import _axis, _keepdims, return_types

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
    "conj": "conj", "conj_physical": "conj", "angle": "angle",
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


for _f in (add, sub, div, fmod, float_power, inner, clamp, clamp_min, clamp_max, gelu, norm):
    _attach(_f.__name__, _f)
_attach("round", round_)
_attach("fmax", _nan_ignoring("maximum"))
_attach("fmin", _nan_ignoring("minimum"))
_attach("subtract", sub)
_attach("divide", div)
_attach("clip", clamp)
_attach("max", _max_min("max", "argmax", return_types.max))
_attach("min", _max_min("min", "argmin", return_types.min))
_attach("var", _var_std("var"))
_attach("std", _var_std("std"))
