"""Elementwise functions of two tensors (and ``where``), of the Array API standard:
arithmetic (``add``, ``subtract``, ``multiply``, ``divide``, ``floor_divide``,
``remainder``, ``pow``, ``maximum``, ``minimum``, ``clip``), comparisons, logical and
bitwise functions (with their unary ``logical_not`` and ``bitwise_invert``), ``atan2``,
``copysign``, ``hypot``, ``logaddexp``, ``nextafter`` and ``where``. The functions of
one tensor are in `fntorch.ops._api_elementwise_math`.

Binary functions promote their operands (``fntorch.fx.dtypes``: the standard's table
within a kind, int with float gives the float, Python scalars are weak) and then bind
one primitive. True division (and ``atan2``, ``hypot``, ...) takes integer and bool
inputs as the default float dtype, float32.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from . import lax
from ._api_common import _int_range, cast, is_pyscalar, operand, promote, promote_dtype
from ._api_creation import asarray
from ._api_elementwise_math import _operand, _real_tensor, _require, _tensor, _zero, signbit
from ._prims_elementwise import broadcast_shapes

__all__ = [
    "add", "atan2", "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "clip", "copysign", "divide", "equal",
    "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract",
    "where",
]  # fmt: skip


def _binary_args(name, x1, x2, *, floating=False, real=False):
    a, b = _operand(name, x1, "x1"), _operand(name, x2, "x2")
    dtype = promote_dtype(name, a, b)
    if real and dt.is_complex(dtype):
        raise TypeError(f"{name}: expected a real (not complex) dtype, got x1 and x2, which "
                        f"promote to {dtype}")  # fmt: skip
    if floating and not dt.is_inexact(dtype):
        dtype = dt.default_float
    return promote(name, a, b, dtype=dtype)


# ---------------------------------------------------------------- binary functions


def _make_binary(name, fn, doc, example, result, bool_fn=None, kind=None):
    def f(x1, x2, /):
        a, b = _binary_args(name, x1, x2)
        if kind is not None:
            _require(name, kind, a, b)
        if bool_fn is not None and a.dtype == dt.bool_:
            return bool_fn(a, b)
        return fn(a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc}\n\n    >>> import fntorch as ft\n    >>> {example}.tolist()\n    {result}\n"
    return f


def _out_of_range_comparison(fn, a, b, dtype):
    """``fn(a, b)`` as a constant tensor when one operand is a Python int outside the
    integer ``dtype`` of the other (a tensor), else None.

    Every value of the tensor lies on the same side of such an int, so the answer is
    that of the nearest in-range value; numpy 2 compares these exactly as well.
    """
    if not dt.is_integer(dtype):
        return None
    lo, hi = _int_range(dtype)
    for s, t in ((b, a), (a, b)):
        if type(s) is builtins.int and not is_pyscalar(t) and not lo <= s <= hi:
            near = hi if s > hi else lo
            value = fn(near, s) if t is a else fn(s, near)
            return lax.full(tuple(t.shape), value, dt.bool_, like=t)
    return None


def _exact_comparison_dtype(a, b, dtype):
    """The dtype to compare ``a`` and ``b`` in: wider than ``dtype`` when one is a weak
    integer tensor (a Python int traced by jit), whose value may not fit ``dtype``.

    The result is bool whatever the dtype, so widening changes no dtype, only wrong
    answers: 1000 cast to int8 would be -24.
    """
    if dt.is_integer(dtype):
        for x in (a, b):
            if getattr(x, "weak_type", False) and dt.is_integer(x.dtype) and x.dtype != dtype:
                try:
                    return dt.promote_types(dtype, x.dtype)
                except TypeError:
                    return dtype  # uint64 with int64: no wider dtype, as before
    return dtype


def _make_comparison(name, fn, py_fn, doc, example, result, ordered=True):
    def f(x1, x2, /):
        a, b = _operand(name, x1, "x1"), _operand(name, x2, "x2")
        dtype = promote_dtype(name, a, b)
        if ordered and dt.is_complex(dtype):
            raise TypeError(f"{name}: complex numbers are not ordered (x1 and x2 promote to "
                            f"{dtype}); compare real(x) or abs(x)")  # fmt: skip
        const = _out_of_range_comparison(py_fn, a, b, dtype)
        if const is not None:
            return const
        return fn(*promote(name, a, b, dtype=_exact_comparison_dtype(a, b, dtype)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc}\n\n    >>> import fntorch as ft\n    >>> {example}.tolist()\n    {result}\n"
    return f


add = _make_binary(
    "add", lax.add, "Elementwise ``x1 + x2`` with promotion (logical or for bools).",
    "ft.add(ft.asarray([1, 2]), 1)", "[2, 3]", lax.bitwise_or,
)  # fmt: skip
subtract = _make_binary(
    "subtract", lax.sub, "Elementwise ``x1 - x2`` with promotion.",
    "ft.subtract(ft.asarray([1.0, 2.0]), 0.5)", "[0.5, 1.5]", kind="numeric",
)  # fmt: skip
multiply = _make_binary(
    "multiply", lax.mul, "Elementwise ``x1 * x2`` with promotion (logical and for bools).",
    "ft.multiply(ft.asarray([1, 2]), ft.asarray([3, 4]))", "[3, 8]", lax.bitwise_and,
)  # fmt: skip
maximum = _make_binary(
    "maximum", lax.max, "Elementwise maximum (NaN propagates).",
    "ft.maximum(ft.asarray([1, 5]), 3)", "[3, 5]", lax.bitwise_or, kind="real",
)  # fmt: skip
minimum = _make_binary(
    "minimum", lax.min, "Elementwise minimum (NaN propagates).",
    "ft.minimum(ft.asarray([1, 5]), 3)", "[1, 3]", lax.bitwise_and, kind="real",
)  # fmt: skip
equal = _make_comparison(
    "equal", lax.eq, operator.eq, "Elementwise ``x1 == x2``.",
    "ft.equal(ft.asarray([1, 2]), 2)", "[False, True]", ordered=False,
)  # fmt: skip
not_equal = _make_comparison(
    "not_equal", lax.ne, operator.ne, "Elementwise ``x1 != x2``.",
    "ft.not_equal(ft.asarray([1, 2]), 2)", "[True, False]", ordered=False,
)  # fmt: skip
less = _make_comparison(
    "less", lax.lt, operator.lt, "Elementwise ``x1 < x2``.",
    "ft.less(ft.asarray([1, 2]), 2)", "[True, False]",
)  # fmt: skip
less_equal = _make_comparison(
    "less_equal", lax.le, operator.le, "Elementwise ``x1 <= x2``.",
    "ft.less_equal(ft.asarray([1, 3]), 2)", "[True, False]",
)  # fmt: skip
greater = _make_comparison(
    "greater", lax.gt, operator.gt, "Elementwise ``x1 > x2``.",
    "ft.greater(ft.asarray([1, 3]), 2)", "[False, True]",
)  # fmt: skip
greater_equal = _make_comparison(
    "greater_equal", lax.ge, operator.ge, "Elementwise ``x1 >= x2``.",
    "ft.greater_equal(ft.asarray([1, 2]), 2)", "[False, True]",
)  # fmt: skip
bitwise_and = _make_binary(
    "bitwise_and", lax.bitwise_and, "Elementwise bitwise (or, for bools, logical) and.",
    "ft.bitwise_and(ft.asarray([12, 10]), 6)", "[4, 2]", kind="integral",
)  # fmt: skip
bitwise_or = _make_binary(
    "bitwise_or", lax.bitwise_or, "Elementwise bitwise (or, for bools, logical) or.",
    "ft.bitwise_or(ft.asarray([12, 10]), 1)", "[13, 11]", kind="integral",
)  # fmt: skip
bitwise_xor = _make_binary(
    "bitwise_xor", lax.bitwise_xor, "Elementwise bitwise (or, for bools, logical) xor.",
    "ft.bitwise_xor(ft.asarray([12, 10]), 6)", "[10, 12]", kind="integral",
)  # fmt: skip
bitwise_left_shift = _make_binary(
    "bitwise_left_shift", lax.shift_left, "Elementwise ``x1 << x2`` (integers).",
    "ft.bitwise_left_shift(ft.asarray([1, 3]), 2)", "[4, 12]", kind="integer",
)  # fmt: skip


def bitwise_right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2``: arithmetic for signed integers, logical for unsigned.

    >>> import fntorch as ft
    >>> ft.bitwise_right_shift(ft.asarray([-8, 8]), 2).tolist()
    [-2, 2]
    """
    a, b = _binary_args("bitwise_right_shift", x1, x2)
    _require("bitwise_right_shift", "integer", a, b)
    if dt.is_signed(a.dtype):
        return lax.shift_right_arithmetic(a, b)
    return lax.shift_right_logical(a, b)


def bitwise_invert(x, /):
    """Elementwise bitwise not (logical not for bools).

    >>> import fntorch as ft
    >>> ft.bitwise_invert(ft.asarray([0, -1])).tolist()
    [-1, 0]
    """
    x = _tensor("bitwise_invert", x)
    _require("bitwise_invert", "integral", x)
    return lax.bitwise_not(x)


def _to_bool(name, x, arg="x"):
    x = _tensor(name, x, arg)
    if x.dtype == dt.bool_:
        return x
    return lax.ne(x, cast(0, x.dtype))


def logical_not(x, /):
    """Elementwise logical not (nonzero counts as True).

    >>> import fntorch as ft
    >>> ft.logical_not(ft.asarray([True, False])).tolist()
    [False, True]
    """
    return lax.bitwise_not(_to_bool("logical_not", x))


def _make_logical(name, fn, result):
    def f(x1, x2, /):
        return fn(_to_bool(name, x1, "x1"), _to_bool(name, x2, "x2"))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Elementwise logical ``{name[8:]}`` (nonzero counts as True).\n\n"
        f"    >>> import fntorch as ft\n"
        f"    >>> ft.{name}(ft.asarray([True, False]), ft.asarray([True, True])).tolist()\n"
        f"    {result}\n"
    )
    return f


logical_and = _make_logical("logical_and", lax.bitwise_and, "[True, False]")
logical_or = _make_logical("logical_or", lax.bitwise_or, "[True, True]")
logical_xor = _make_logical("logical_xor", lax.bitwise_xor, "[False, True]")


def divide(x1, x2, /):
    """Elementwise true division; integers and bools divide as float32.

    >>> import fntorch as ft
    >>> ft.divide(ft.asarray([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    a, b = _binary_args("divide", x1, x2, floating=True)
    return lax.div(a, b)


def atan2(x1, x2, /):
    """Elementwise angle of the point ``(x2, x1)`` (integers computed in float32).

    >>> import fntorch as ft
    >>> ft.atan2(ft.asarray([0.0]), ft.asarray([1.0])).tolist()
    [0.0]
    """
    a, b = _binary_args("atan2", x1, x2, floating=True, real=True)
    return lax.atan2(a, b)


def nextafter(x1, x2, /):
    """The next float after ``x1`` towards ``x2``.

    >>> import fntorch as ft
    >>> ft.greater(ft.nextafter(ft.asarray([1.0]), 2.0), 1.0).tolist()
    [True]
    """
    a, b = _binary_args("nextafter", x1, x2, floating=True, real=True)
    return lax.nextafter(a, b)


@_autocast_op("pow")
def pow(x1, x2, /):  # noqa: A001 - the standard's name
    """Elementwise ``x1 ** x2``; a Python int exponent stays exact (``integer_pow``).

    >>> import fntorch as ft
    >>> ft.pow(ft.asarray([2, 3]), 2).tolist(), ft.pow(ft.asarray([4.0]), 0.5).tolist()
    ([4, 9], [2.0])
    """
    if type(x2) is int and not is_pyscalar(x1):
        x = _tensor("pow", x1, "x1")
        if x2 < 0 and dt.is_integer(x.dtype):
            raise ValueError(
                f"pow: an integer tensor ({x.dtype}) cannot be raised to the negative power "
                f"{x2} (numpy refuses it too); cast it to a float dtype first"
            )
        if x.dtype != dt.bool_ and (x2 >= 0 or dt.is_inexact(x.dtype)):
            return lax.integer_pow(x, x2)
    a, b = _binary_args("pow", x1, x2)
    return lax.pow(a, b)


def floor_divide(x1, x2, /):
    """Elementwise ``floor(x1 / x2)``, Python's ``//`` (the result has the divisor's sign rule).

    >>> import fntorch as ft
    >>> ft.floor_divide(ft.asarray([7, -7]), 2).tolist()
    [3, -4]
    """
    a, b = _binary_args("floor_divide", x1, x2, real=True)
    if a.dtype == dt.bool_:
        raise TypeError("floor_divide: expected a numeric dtype, got bool")
    if dt.is_integer(a.dtype):
        q, zero = lax.div(a, b), _zero(a)
        if dt.is_signed(a.dtype):
            r = lax.rem(a, b)
            fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
            q = lax.select(fix, lax.sub(q, cast(1, a.dtype)), q)
        return lax.select(lax.eq(b, zero), zero, q)  # x // 0 is 0, as numpy's
    if a.dtype in (dt.float16, dt.bfloat16):  # as numpy: computed in float32, rounded once
        f32 = [lax.convert_element_type(v, dt.float32) for v in (a, b)]
        return lax.convert_element_type(floor_divide(*f32), a.dtype)
    # numpy's float divmod: exact quotient of (x - fmod(x, y)) / y, then rounded.
    zero, one = _zero(a), cast(1, a.dtype)
    mod = lax.rem(a, b)
    div = lax.div(lax.sub(a, mod), b)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(b, zero), lax.lt(mod, zero)))
    div = lax.select(fix, lax.sub(div, one), div)
    fl = lax.floor(div)
    fl = lax.select(lax.gt(lax.sub(div, fl), cast(0.5, a.dtype)), lax.add(fl, one), fl)
    fl = lax.select(lax.eq(div, zero), copysign(div, lax.div(a, b)), fl)  # -0.0 // 1 is -0.0
    return lax.select(lax.eq(b, zero), lax.div(a, b), fl)


def remainder(x1, x2, /):
    """Elementwise ``x1 - floor_divide(x1, x2) * x2``: Python's ``%`` (the divisor's sign).

    >>> import fntorch as ft
    >>> ft.remainder(ft.asarray([7, -7]), 3).tolist()
    [1, 2]
    """
    a, b = _binary_args("remainder", x1, x2, real=True)
    if a.dtype == dt.bool_:
        raise TypeError("remainder: expected a numeric dtype, got bool")
    r, zero = lax.rem(a, b), _zero(a)
    if dt.is_integer(a.dtype):
        r = lax.select(lax.eq(b, zero), zero, r)  # x % 0 is 0, as numpy's (lax.rem: x)
        if not dt.is_signed(a.dtype):
            return r
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    r = lax.select(fix, lax.add(r, b), r)
    if dt.is_float(a.dtype):  # a zero remainder takes the divisor's sign, as in Python
        r = lax.select(lax.eq(r, zero), copysign(r, b), r)
    return r


def copysign(x1, x2, /):
    """``|x1|`` with the sign of ``x2`` (floats).

    >>> import fntorch as ft
    >>> ft.copysign(ft.asarray([1.0, 2.0]), ft.asarray([-1.0, 0.0])).tolist()
    [-1.0, 2.0]
    """
    a, b = _binary_args("copysign", x1, x2, floating=True, real=True)
    m = lax.abs(a)
    return lax.select(signbit(b), lax.neg(m), m)


def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without overflow or underflow.

    >>> import fntorch as ft
    >>> ft.hypot(ft.asarray([3.0]), ft.asarray([4.0])).tolist()
    [5.0]
    """
    a, b = _binary_args("hypot", x1, x2, floating=True, real=True)
    a, b = lax.abs(a), lax.abs(b)
    big, small = lax.max(a, b), lax.min(a, b)
    zero, one = _zero(big), cast(1, big.dtype)
    safe = lax.select(lax.eq(big, zero), one, big)
    r = lax.mul(big, lax.sqrt(lax.add(one, lax.square(lax.div(small, safe)))))
    inf = cast(math.inf, big.dtype)
    return lax.select(lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf)), inf, r)


def logaddexp(x1, x2, /):
    """Elementwise ``log(exp(x1) + exp(x2))``, computed stably.

    >>> import fntorch as ft
    >>> ft.logaddexp(ft.asarray([0.0, 1000.0]), 0.0).tolist()  # log(2) in float32, 1000
    [0.6931471824645996, 1000.0]
    """
    a, b = _binary_args("logaddexp", x1, x2, floating=True, real=True)
    m = lax.max(a, b)
    d = lax.sub(a, b)
    r = lax.add(m, lax.log1p(lax.exp(lax.neg(lax.abs(d)))))
    return lax.select(lax.ne(d, d), lax.add(a, b), r)  # both inf of one sign, or a NaN


def clip(x, /, min=None, max=None):  # noqa: A002 - the standard's names
    """``x`` clamped to ``[min, max]`` (either may be None); the result keeps ``x``'s dtype.

    >>> import fntorch as ft
    >>> ft.clip(ft.asarray([-2, 0, 5]), 0, 3).tolist()
    [0, 0, 3]
    """
    x = _real_tensor("clip", x)
    out = x
    bounds = ((min, lax.max, math.ceil, lax.ceil), (max, lax.min, math.floor, lax.floor))
    for bound, fn, rnd, rnd_t in bounds:
        if bound is None:
            continue
        if is_pyscalar(bound):
            if dt.is_integer(x.dtype):
                info = np.iinfo(x.dtype)
                if isinstance(bound, float) and math.isnan(bound):
                    raise ValueError("clip: a NaN bound cannot clip an integer tensor")
                if isinstance(bound, float) and math.isinf(bound):
                    bound = info.max if bound > 0 else info.min
                bound = bound if isinstance(bound, int) else rnd(bound)
                bound = int(np.clip(bound, info.min, info.max))
            bound = cast(bound, x.dtype)
        else:
            bound = operand(bound, asarray)
            if dt.is_integer(x.dtype) and bound.dtype != x.dtype:
                # Into x's range before the cast, as the scalar bounds above: a cast
                # would wrap an int bound (300 in uint8 is 44) or truncate a float one.
                if dt.is_float(bound.dtype):
                    bound = rnd_t(bound)  # the float -> int cast then saturates
                elif dt.is_integer(bound.dtype):
                    xi, bi = np.iinfo(x.dtype), np.iinfo(bound.dtype)
                    lo, hi = builtins.max(xi.min, bi.min), builtins.min(xi.max, bi.max)
                    bound = lax.clamp(cast(lo, bound.dtype), bound, cast(hi, bound.dtype))
            bound = cast(bound, x.dtype)
        out = fn(out, bound)
    return out


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` else ``x2``, broadcast together, with promotion.

    >>> import fntorch as ft
    >>> ft.where(ft.asarray([True, False]), ft.asarray([1, 2]), 0).tolist()
    [1, 0]
    """
    c = _to_bool("where", condition, "condition")
    a, b = _binary_args("where", x1, x2)
    try:
        return lax.select_n(c, b, a)
    except ValueError:
        try:
            broadcast_shapes("where", c.shape, a.shape, b.shape)
        except ValueError:
            # select_n's own message lists its operands (condition, x2, x1) unnamed
            raise ValueError(
                f"where: condition {tuple(c.shape)}, x1 {tuple(a.shape)} and x2 "
                f"{tuple(b.shape)} cannot be broadcast together"
            ) from None
        raise
