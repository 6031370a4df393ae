"""Elementwise functions of one tensor, of the Array API standard plus sigmoid, erf,
erfinv, relu and gelu: exponentials, logarithms, roots and trigonometric functions,
magnitude and sign (``abs``, ``negative``, ``sign``, ``square``, ``reciprocal``, ...),
rounding (``floor``, ``ceil``, ``trunc``, ``round``), the complex parts of real tensors
(``conj``, ``real``, ``imag``, ``angle``) and classification (``isnan``, ``isinf``, ``isfinite``,
``signbit``). Also the operand helpers that `fntorch.ops._api_elementwise` (the binary
functions) imports: ``_operand``, ``_tensor``, ``_require``, ``_zero``.

Functions that only make sense for floats (``exp``, ``sin``, ``gelu``) take integer and
bool inputs as the default float dtype, float32. Those the standard defines for complex
inputs keep complex64/complex128 (principal branches, numpy's); the others raise
TypeError for them.
"""

from __future__ import annotations

import math
import reprlib

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from . import lax
from ._api_common import cast, is_pyscalar, operand
from ._api_creation import asarray

__all__ = [
    "abs", "acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "ceil", "conj", "cos",
    "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log",
    "log1p", "log2", "log10", "negative", "positive", "real", "reciprocal", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc",
    "sigmoid", "erf", "erfinv", "relu", "gelu", "exp2", "rsqrt", "cbrt",
]  # fmt: skip


def _operand(name, x, arg):
    """``operand(x)``, whose conversion errors say which function and argument got what."""
    try:
        return operand(x, asarray)
    except (TypeError, ValueError) as e:
        got = reprlib.repr(x)
        raise type(e)(
            f"{name}: {arg} must be a tensor or (a nested list of) numbers, "
            f"got {type(x).__name__} {got} ({e})"
        ) from None


def _tensor(name, x, arg="x"):
    return _operand(name, x, arg) if not is_pyscalar(x) else asarray(x)


def _float_tensor(name, x, complex_ok=True):
    """``x`` as a tensor of a float or complex dtype (ints and bools become float32);
    TypeError for a complex one unless ``complex_ok``."""
    x = _tensor(name, x)
    if dt.is_complex(x.dtype):
        if not complex_ok:
            raise TypeError(f"{name}: expected a real dtype, got {x.dtype}")
        return x
    if not dt.is_float(x.dtype):
        x = lax.convert_element_type(x, dt.default_float)
    return x


def _real_tensor(name, x, arg="x"):
    x = _tensor(name, x, arg)
    if dt.is_complex(x.dtype):
        raise TypeError(f"{name}: expected a real dtype, got {arg} of dtype {x.dtype}")
    return x


# What each kind of dtype check accepts, and how its error words it. Checked here so
# that the error names the function called (the primitive's own names ``and``, ``sub``).
_KINDS = {
    "numeric": ("a numeric (integer or float)", lambda d: d != dt.bool_),
    "integral": ("an integer or bool", lambda d: d == dt.bool_ or dt.is_integer(d)),
    "integer": ("an integer", dt.is_integer),
    "real": ("a real (not complex)", lambda d: not dt.is_complex(d)),
}


def _require(name, kind, *xs):
    """TypeError naming ``name`` unless the tensors ``xs`` (promoted) have a ``kind`` dtype."""
    what, ok = _KINDS[kind]
    d = xs[0].dtype
    if not ok(d):
        got = f"x of dtype {d}" if len(xs) == 1 else f"x1 and x2, which promote to {d}"
        raise TypeError(f"{name}: expected {what} dtype, got {got}")


def _zero(x):
    return cast(0, x.dtype)


# --------------------------------------------------------------------- unary functions


def _make_float_unary(name, fn, example_in, example_out, complex_ok=True):
    def f(x, /):
        return fn(_float_tensor(name, x, complex_ok))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Elementwise ``{name}``; integer and bool inputs are computed in float32.\n\n"
        f"    >>> import fntorch as ft\n"
        f"    >>> ft.{name}(ft.asarray({example_in})).tolist()\n"
        f"    {example_out}\n"
    )
    return f


exp = _autocast_op("exp")(_make_float_unary("exp", lax.exp, "[0.0]", "[1.0]"))
exp2 = _make_float_unary("exp2", lax.exp2, "[3.0]", "[8.0]", complex_ok=False)
expm1 = _autocast_op("expm1")(_make_float_unary("expm1", lax.expm1, "[0.0]", "[0.0]"))
log = _autocast_op("log")(_make_float_unary("log", lax.log, "[1.0]", "[0.0]"))
log1p = _autocast_op("log1p")(_make_float_unary("log1p", lax.log1p, "[0.0]", "[0.0]"))
sqrt = _make_float_unary("sqrt", lax.sqrt, "[4.0]", "[2.0]")
rsqrt = _autocast_op("rsqrt")(_make_float_unary("rsqrt", lax.rsqrt, "[4.0]", "[0.5]"))
cbrt = _make_float_unary("cbrt", lax.cbrt, "[8.0]", "[2.0]", complex_ok=False)
sin = _make_float_unary("sin", lax.sin, "[0.0]", "[0.0]")
cos = _make_float_unary("cos", lax.cos, "[0.0]", "[1.0]")
tan = _autocast_op("tan")(_make_float_unary("tan", lax.tan, "[0.0]", "[0.0]"))
asin = _autocast_op("asin")(_make_float_unary("asin", lax.asin, "[0.0]", "[0.0]"))
acos = _autocast_op("acos")(_make_float_unary("acos", lax.acos, "[1.0]", "[0.0]"))
atan = _make_float_unary("atan", lax.atan, "[0.0]", "[0.0]")
sinh = _autocast_op("sinh")(_make_float_unary("sinh", lax.sinh, "[0.0]", "[0.0]"))
cosh = _autocast_op("cosh")(_make_float_unary("cosh", lax.cosh, "[0.0]", "[1.0]"))
tanh = _make_float_unary("tanh", lax.tanh, "[0.0]", "[0.0]")
asinh = _make_float_unary("asinh", lax.asinh, "[0.0]", "[0.0]")
acosh = _make_float_unary("acosh", lax.acosh, "[1.0]", "[0.0]")
atanh = _make_float_unary("atanh", lax.atanh, "[0.0]", "[0.0]")
sigmoid = _make_float_unary("sigmoid", lax.logistic, "[0.0]", "[0.5]", complex_ok=False)
erf = _make_float_unary("erf", lax.erf, "[0.0]", "[0.0]", complex_ok=False)
erfinv = _autocast_op("erfinv")(
    _make_float_unary("erfinv", lax.erf_inv, "[0.0]", "[0.0]", complex_ok=False)
)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


@_autocast_op("log2")
def log2(x, /):
    """Elementwise base-2 logarithm.

    >>> import fntorch as ft
    >>> ft.log2(ft.asarray([1.0, 8.0])).tolist()
    [0.0, 3.0]
    """
    x = _float_tensor("log2", x)
    return lax.div(lax.log(x), cast(_LN2, x.dtype))


@_autocast_op("log10")
def log10(x, /):
    """Elementwise base-10 logarithm.

    >>> import fntorch as ft
    >>> ft.log10(ft.asarray([1.0, 100.0])).tolist()
    [0.0, 2.0]
    """
    x = _float_tensor("log10", x)
    return lax.div(lax.log(x), cast(_LN10, x.dtype))


def abs(x, /):  # noqa: A001 - the standard's name
    """Elementwise absolute value (the dtype is kept; a complex's modulus is real).

    >>> import fntorch as ft
    >>> ft.abs(ft.asarray([-1, 2])).tolist(), ft.abs(ft.asarray(3 + 4j)).item()
    ([1, 2], 5.0)
    """
    x = _tensor("abs", x)
    _require("abs", "numeric", x)
    if dt.is_integer(x.dtype) and not dt.is_signed(x.dtype):
        return x
    return lax.abs(x)


def negative(x, /):
    """Elementwise ``-x``.

    >>> import fntorch as ft
    >>> ft.negative(ft.asarray([1.0, -2.0])).tolist()
    [-1.0, 2.0]
    """
    x = _tensor("negative", x)
    _require("negative", "numeric", x)
    return lax.neg(x)


def positive(x, /):
    """Elementwise ``+x`` (the value itself).

    >>> import fntorch as ft
    >>> ft.positive(ft.asarray([-1.0])).tolist()
    [-1.0]
    """
    x = _tensor("positive", x)
    if x.dtype == dt.bool_:
        raise TypeError("positive: expected a numeric dtype, got bool")
    return x


def square(x, /):
    """Elementwise ``x * x``.

    >>> import fntorch as ft
    >>> ft.square(ft.asarray([3, -2])).tolist()
    [9, 4]
    """
    x = _tensor("square", x)
    _require("square", "numeric", x)
    return lax.square(x)


def sign(x, /):
    """Elementwise sign: -1, 0 or 1 (NaN for NaN).

    >>> import fntorch as ft
    >>> ft.sign(ft.asarray([-3.0, 0.0, 2.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    x = _tensor("sign", x)
    _require("sign", "numeric", x)
    return lax.sign(x)


@_autocast_op("reciprocal")
def reciprocal(x, /):
    """Elementwise ``1 / x`` (integers give float32).

    >>> import fntorch as ft
    >>> ft.reciprocal(ft.asarray([2.0, 4.0])).tolist()
    [0.5, 0.25]
    """
    x = _float_tensor("reciprocal", x)
    return lax.div(cast(1, x.dtype), x)


def _rounding(name, fn, example_in, example_out):
    def f(x, /):
        x = _real_tensor(name, x)
        if not dt.is_float(x.dtype):
            if x.dtype == dt.bool_:
                raise TypeError(f"{name}: expected a numeric dtype, got bool")
            return x
        return fn(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Elementwise ``{name}``; integer inputs are returned unchanged.\n\n"
        f"    >>> import fntorch as ft\n"
        f"    >>> ft.{name}(ft.asarray({example_in})).tolist()\n"
        f"    {example_out}\n"
    )
    return f


def _trunc(x):
    return lax.select(lax.lt(x, cast(0, x.dtype)), lax.ceil(x), lax.floor(x))


floor = _rounding("floor", lax.floor, "[-1.5, 1.5]", "[-2.0, 1.0]")
ceil = _rounding("ceil", lax.ceil, "[-1.5, 1.5]", "[-1.0, 2.0]")
trunc = _rounding("trunc", _trunc, "[-1.5, 1.5]", "[-1.0, 1.0]")
round = _rounding("round", lax.round, "[0.5, 1.5, 2.5]", "[0.0, 2.0, 2.0]")  # noqa: A001


def conj(x, /):
    """Complex conjugate (a real ``x`` is its own).

    >>> import fntorch as ft
    >>> ft.conj(ft.asarray([1 + 2j])).tolist()
    [(1-2j)]
    """
    x = _tensor("conj", x)
    return lax.conj(x) if dt.is_complex(x.dtype) else x


def real(x, /):
    """Real part (of a complex64 a float32, of a complex128 a float64; a real ``x`` is
    its own).

    >>> import fntorch as ft
    >>> ft.real(ft.asarray([1 + 2j])).tolist()
    [1.0]
    """
    x = _tensor("real", x)
    return lax.real(x) if dt.is_complex(x.dtype) else x


def imag(x, /):
    """Imaginary part (zeros for a real ``x``).

    >>> import fntorch as ft
    >>> ft.imag(ft.asarray([1 + 2j])).tolist()
    [2.0]
    """
    x = _tensor("imag", x)
    if dt.is_complex(x.dtype):
        return lax.imag(x)
    return lax.full(x.shape, 0, x.dtype, like=x)


def angle(x, /):
    """The argument of a complex number, ``atan2(imag(x), real(x))`` (0 or pi for reals).

    >>> import fntorch as ft
    >>> f"{ft.angle(ft.asarray(1j)).item():.4f}"
    '1.5708'
    """
    x = _float_tensor("angle", x)
    if dt.is_complex(x.dtype):
        return lax.atan2(lax.imag(x), lax.real(x))
    return lax.atan2(lax.full(x.shape, 0, x.dtype, like=x), x)


# ----------------------------------------------------------------- classification


def isnan(x, /):
    """Elementwise ``x is NaN`` (always False for integers).

    >>> import fntorch as ft
    >>> ft.isnan(ft.asarray([1.0, float("nan")])).tolist()
    [False, True]
    """
    x = _tensor("isnan", x)
    if dt.is_complex(x.dtype):
        return lax.bitwise_or(isnan(lax.real(x)), isnan(lax.imag(x)))
    if not dt.is_float(x.dtype):
        return lax.full(x.shape, False, dt.bool_, like=x)
    return lax.ne(x, x)


def isinf(x, /):
    """Elementwise ``x`` is +inf or -inf.

    >>> import fntorch as ft
    >>> ft.isinf(ft.asarray([1.0, float("-inf")])).tolist()
    [False, True]
    """
    x = _tensor("isinf", x)
    if dt.is_complex(x.dtype):
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    if not dt.is_float(x.dtype):
        return lax.full(x.shape, False, dt.bool_, like=x)
    return lax.eq(lax.abs(x), cast(math.inf, x.dtype))


def isfinite(x, /):
    """Elementwise ``x`` is neither infinite nor NaN (always True for integers).

    >>> import fntorch as ft
    >>> ft.isfinite(ft.asarray([1.0, float("inf")])).tolist()
    [True, False]
    """
    x = _tensor("isfinite", x)
    if not dt.is_inexact(x.dtype):
        return lax.full(x.shape, True, dt.bool_, like=x)
    return lax.is_finite(x)


def signbit(x, /):
    """Elementwise: is the sign bit set (True for -0.0, and for a NaN with its sign bit
    set, as numpy's and the standard's)?

    >>> import fntorch as ft
    >>> ft.signbit(ft.asarray([-0.0, 0.0, -2.0])).tolist()
    [True, False, True]
    """
    x = _real_tensor("signbit", x)
    if not dt.is_float(x.dtype):
        if dt.is_signed(x.dtype):
            return lax.lt(x, cast(0, x.dtype))
        return lax.full(x.shape, False, dt.bool_, like=x)
    return lax.signbit(x)


# ----------------------------------------------------------------- neural-net extras


def relu(x, /):
    """Elementwise ``max(x, 0)``, whose derivative at 0 is 0 (as in JAX and PyTorch; a
    plain ``max`` splits a tie's derivative, giving 0.5).

    >>> import fntorch as ft
    >>> ft.relu(ft.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    >>> float(ft.grad(ft.relu)(0.0))
    0.0
    """
    x = _tensor("relu", x)
    zero = _zero(x)
    # x where positive, else max(x, 0) held constant: 0, or NaN for NaN.
    return lax.select(lax.gt(x, zero), x, lax.stop_gradient(lax.max(x, zero)))


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x, /, approximate: bool = False):
    """Gaussian error linear unit: ``x * Phi(x)`` (erf form); ``approximate=True`` uses tanh.

    >>> import fntorch as ft
    >>> ft.gelu(ft.asarray([0.0, 10.0])).tolist()
    [0.0, 10.0]
    """
    x = _float_tensor("gelu", x)
    d = x.dtype
    half = cast(0.5, d)
    if approximate:
        inner = lax.add(x, lax.mul(cast(0.044715, d), lax.integer_pow(x, 3)))
        t = lax.tanh(lax.mul(cast(_SQRT_2_OVER_PI, d), inner))
    else:
        t = lax.erf(lax.mul(x, cast(_SQRT_HALF, d)))
    return lax.mul(lax.mul(half, x), lax.add(cast(1, d), t))
