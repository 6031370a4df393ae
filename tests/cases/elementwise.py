"""Cases of the elementwise primitives (see tests/cases/__init__.py).

Each float function has a case on a domain where it is smooth (checked by every
contract, jvp included) and a ``*_special`` case over a wider range with NaN and inf
(impl and vmap only). References compute in float64 and round to the operand dtype;
where numpy has no function, they use ``math`` per element, or scipy when present (the
library's own float64 code otherwise). Integer references are written independently of
the impls (float64 arithmetic on small values, Python ints for shifts).

``linear_args`` of a binary primitive that is linear in one operand only (``mul``,
``div``) names that operand: the transpose contract closes over the others as constants.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_elementwise as ew

from . import Case, array, broadcastable_shapes, shapes

FLOATS = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
WIDE = (dt.float32, dt.float64)
SIGNED = (dt.int8, dt.int32, dt.int64)
INTS = (dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint32)
NUMERIC = FLOATS + INTS
ALL = NUMERIC + (dt.bool_,)

try:  # scipy is only an oracle here, never a dependency of fntorch
    from scipy import special as _sp
except ImportError:  # pragma: no cover
    _sp = None


# ------------------------------------------------------------------------ drawing


def _shape(data):
    return data.draw(shapes(0, 3, 0, 4), label="shape")


def _away_from_zero(x, lo):
    """``x`` pushed out of ``(-lo, lo)``, keeping its sign (and its dtype)."""
    x = np.asarray(x)
    if not dt.is_float(x.dtype):
        return x
    s = np.where(np.signbit(x), -1.0, 1.0)
    return (s * (lo + np.abs(x.astype(np.float64)))).astype(x.dtype)


def _unary(lo=-3.0, hi=3.0, special=False, away=None, ints=None):
    def draw(data, dtype):
        x = array(data, _shape(data), dtype, lo=lo, hi=hi, special=special)
        if away is not None:
            x = _away_from_zero(x, away)
        if ints is not None and dt.is_integer(dtype):
            x = np.clip(x, *ints).astype(dtype)
        return [x], {}

    return draw


def _nary(n, ranges=None, special=False, away=None, int_clip=None):
    """Operands with broadcast-compatible shapes; ``ranges`` per operand ``(lo, hi)``
    for floats, ``int_clip`` per operand ``(lo, hi)`` for integers."""
    ranges = ranges or [(-3.0, 3.0)] * n

    def draw(data, dtype):
        out = []
        for i, s in enumerate(broadcastable_shapes(data, n)):
            lo, hi = ranges[i]
            x = array(data, s, dtype, lo=lo, hi=hi, special=special)
            if away is not None and away[i] is not None:
                x = _away_from_zero(x, away[i])
            if int_clip is not None and dt.is_integer(dtype):
                x = np.clip(x, *int_clip[i]).astype(dtype)
            out.append(x)
        return out, {}

    return draw


def _random_sign(data, x):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="signs"))
    return (x * np.where(rng.random(np.shape(x)) < 0.5, -1, 1)).astype(x.dtype)


# --------------------------------------------------------------------- references


def _f64(fn):
    """Reference computed in float64 and rounded to the first operand's dtype."""

    def ref(*args, **params):
        dtype = np.asarray(args[0]).dtype
        with np.errstate(all="ignore"):
            out = fn(*[np.asarray(a, np.float64) for a in args], **params)
        return np.asarray(out).astype(dtype)

    return ref


def _same(fn):
    """Reference computed in the operands' own dtype (integer, bool, exact results)."""

    def ref(*args, **params):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*[np.asarray(a) for a in args], **params))

    return ref


def _per_element(fn):
    return np.vectorize(fn, otypes=[np.float64])


def _math_lgamma(x):
    if math.isinf(x):
        return math.inf
    if math.isnan(x):
        return math.nan
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def _digamma_ref(x):
    if _sp is not None:
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, _sp.digamma(x))
    from fntorch.devices.cpu_elementwise import digamma64

    return digamma64(x)


def _erf_inv_ref(x):
    if _sp is not None:
        return _sp.erfinv(x)
    from fntorch.devices.cpu_elementwise import erf_inv64

    return erf_inv64(x)


def _logistic_ref(x):
    return 1.0 / (1.0 + np.exp(-x))


def _int_div_ref(x, y):
    q = np.trunc(x.astype(np.float64) / np.where(y == 0, 1, y).astype(np.float64))
    return np.where(y == 0, ~np.zeros((), x.dtype), q.astype(x.dtype))


def _int_rem_ref(x, y):
    ys = np.where(y == 0, 1, y).astype(np.float64)
    r = x.astype(np.float64) - ys * np.trunc(x.astype(np.float64) / ys)
    return np.where(y == 0, x, r.astype(x.dtype))


def _int_pow_ref(x, y):
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    pos = np.power(xf, np.maximum(yf, 0)).astype(x.dtype)
    odd = np.mod(yf, 2) == 1
    neg = np.where(xf == 1, 1, np.where(xf == -1, np.where(odd, -1, 1), 0))
    return np.where(yf < 0, neg.astype(x.dtype), pos)


def _bits(x):
    return x.dtype.itemsize * 8


def _shift_ref(kind):
    def one(x, s, bits, signed):
        mask = (1 << bits) - 1
        u = int(x) & mask
        s = int(s)
        if kind == "left":
            r = 0 if not 0 <= s < bits else (u << s) & mask
        elif kind == "logical":
            r = 0 if not 0 <= s < bits else u >> s
        else:
            v = u - (1 << bits) if u >> (bits - 1) else u
            r = (v >> (s if 0 <= s < bits else bits - 1)) & mask
        if signed and r >> (bits - 1):
            r -= 1 << bits
        return r

    def ref(x, y):
        x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
        bits, signed = _bits(x), dt.is_signed(x.dtype)
        out = [one(a, b, bits, signed) for a, b in zip(x.reshape(-1), y.reshape(-1))]
        return np.array(out, dtype=x.dtype).reshape(x.shape)

    return ref


def _shift_draw(data, dtype):
    sx, sy = broadcastable_shapes(data, 2)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="bits"))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=sx, dtype=dtype, endpoint=True)
    bits = np.dtype(dtype).itemsize * 8
    lo = -2 if dt.is_signed(dtype) else 0
    y = rng.integers(lo, bits + 3, size=sy).astype(dtype)
    return [x, y], {}


def _select_draw(n, which_dtype):
    def draw(data, dtype):
        shape_list = broadcastable_shapes(data, n + 1)
        if which_dtype == dt.bool_:
            which = array(data, shape_list[0], dt.bool_)
        else:
            w = array(data, shape_list[0], dt.int32)
            which = (np.abs(w) % n).astype(np.int32)
        return [which] + [array(data, s, dtype) for s in shape_list[1:]], {}

    return draw


def _select_ref(which, *cases):
    if which.dtype == np.bool_ and len(cases) == 2:
        return np.where(which, cases[1], cases[0])
    shape = np.broadcast_shapes(which.shape, *(np.shape(c) for c in cases))
    out = np.broadcast_to(cases[0], shape).copy()
    for i, c in enumerate(cases):
        out = np.where(which == i, c, out)
    return out.astype(np.asarray(cases[0]).dtype)


def _clamp_ref(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _integer_pow_draw(data, dtype):
    y = data.draw(st.integers(-3, 4), label="y")
    if not dt.is_float(dtype):
        y = abs(y)
    x = array(data, _shape(data), dtype, lo=-2.0, hi=2.0)
    if dt.is_float(dtype):
        x = _away_from_zero(x, 0.3)
    else:
        x = np.clip(x, 0 if not dt.is_signed(dtype) else -5, 5).astype(dtype)
    return [x], dict(y=y)


def _integer_pow_ref(x, *, y):
    if dt.is_float(np.asarray(x).dtype):
        return _f64(lambda a: np.power(a, float(y)))(x)
    return np.power(x.astype(np.int64), y).astype(x.dtype)


def _signed_specials(data, dtype):
    # NaNs and zeros of both signs among ordinary values: the sign bit, not the value.
    x = array(data, _shape(data), dtype, special=True)
    if x.size:
        flat = x.reshape(-1).copy()
        flat[:: max(1, flat.size // 3)] = np.array(-0.0, dtype)
        flat = np.where(data.draw(st.booleans(), label="negate nans") & np.isnan(flat), -flat, flat)
        x = flat.astype(dtype).reshape(x.shape)
    return [x], {}


def _halves(data, dtype):
    # Many exact halves, so round's half-to-even rule is exercised.
    x = array(data, _shape(data), dtype, lo=-4.0, hi=4.0)
    return [(np.round(x.astype(np.float64) * 2) / 2).astype(dtype)], {}


# ------------------------------------------------------------------------- cases

# Shifted ranges: operands drawn from equal seeds still never tie (max, min, clamp are
# not differentiable at ties, so finite differences would not apply there).
_NO_TIES = [(-3.0, 3.0), (-2.9, 3.1), (-2.75, 3.25)]
_SMOOTH = dict(diff_args=(0,), dtypes=FLOATS)


def _float_unary(p, fn, lo=-3.0, hi=3.0, away=None, **kw):
    """The smooth case and the special-values case of a float unary primitive."""
    ref = _f64(fn)
    return [
        Case(p, _unary(lo, hi, away=away), ref, **{**_SMOOTH, **kw}),
        Case(
            p,
            _unary(-6.0, 6.0, special=True),
            ref,
            name=f"{p.name}_special",
            dtypes=WIDE,
            rtol=kw.get("rtol", 1e-5),
            atol=kw.get("atol", 1e-6),
        ),
    ]


CASES = [
    *_float_unary(ew.exp_p, np.exp),
    *_float_unary(ew.exp2_p, np.exp2),
    *_float_unary(ew.log_p, np.log, 0.1, 5.0),
    *_float_unary(ew.log1p_p, np.log1p, -0.5, 3.0),
    *_float_unary(ew.expm1_p, np.expm1),
    *_float_unary(ew.tanh_p, np.tanh),
    *_float_unary(ew.logistic_p, _logistic_ref, -5.0, 5.0),
    *_float_unary(ew.sin_p, np.sin),
    *_float_unary(ew.cos_p, np.cos),
    *_float_unary(ew.tan_p, np.tan, -1.2, 1.2),
    *_float_unary(ew.asin_p, np.arcsin, -0.9, 0.9),
    *_float_unary(ew.acos_p, np.arccos, -0.9, 0.9),
    *_float_unary(ew.atan_p, np.arctan),
    *_float_unary(ew.sinh_p, np.sinh),
    *_float_unary(ew.cosh_p, np.cosh),
    *_float_unary(ew.asinh_p, np.arcsinh),
    *_float_unary(ew.acosh_p, np.arccosh, 1.1, 5.0),
    *_float_unary(ew.atanh_p, np.arctanh, -0.9, 0.9),
    *_float_unary(ew.sqrt_p, np.sqrt, 0.1, 5.0),
    *_float_unary(ew.rsqrt_p, lambda x: 1.0 / np.sqrt(x), 0.1, 5.0),
    *_float_unary(ew.cbrt_p, np.cbrt, 0.0, 3.0, away=0.1),
    *_float_unary(ew.erf_p, _per_element(math.erf)),
    *_float_unary(ew.erf_inv_p, _erf_inv_ref, -0.9, 0.9),
    *_float_unary(ew.lgamma_p, _per_element(_math_lgamma), 0.1, 6.0),
    Case(
        ew.lgamma_p,
        _unary(-2.9, -0.1),
        _f64(_per_element(_math_lgamma)),
        name="lgamma_negative",
        diff_args=(0,),
        dtypes=WIDE,
    ),
    *_float_unary(ew.digamma_p, _digamma_ref, 0.1, 6.0),
    Case(
        ew.digamma_p,
        _unary(-2.9, -0.1),
        _f64(_digamma_ref),
        name="digamma_negative",
        diff_args=(0,),
        dtypes=WIDE,
    ),
    # Integer-valued and piecewise-constant float functions: jvp is zero away from jumps.
    Case(ew.floor_p, _unary(-4.0, 4.0, special=True), _f64(np.floor), dtypes=FLOATS),
    Case(ew.floor_p, _unary(), _f64(np.floor), name="floor_jvp", dtypes=WIDE, diff_args=(0,)),
    Case(ew.ceil_p, _unary(-4.0, 4.0, special=True), _f64(np.ceil), dtypes=FLOATS),
    Case(ew.ceil_p, _unary(), _f64(np.ceil), name="ceil_jvp", dtypes=WIDE, diff_args=(0,)),
    Case(ew.round_p, _halves, _f64(np.round), dtypes=FLOATS, exact=True),
    Case(
        ew.round_p,
        _unary(-4.0, 4.0, special=True),
        _f64(np.round),
        name="round_special",
        dtypes=FLOATS,
    ),
    Case(ew.round_p, _unary(), _f64(np.round), name="round_jvp", dtypes=WIDE, diff_args=(0,)),
    Case(ew.sign_p, _unary(special=True), _same(np.sign), dtypes=NUMERIC),
    Case(ew.sign_p, _unary(away=0.1), _f64(np.sign), name="sign_jvp", dtypes=WIDE, diff_args=(0,)),
    Case(ew.is_finite_p, _unary(special=True), _same(np.isfinite), dtypes=FLOATS, exact=True),
    Case(ew.signbit_p, _signed_specials, _same(np.signbit), dtypes=FLOATS, exact=True),
    Case(ew.not_p, _unary(), _same(np.invert), dtypes=INTS + (dt.bool_,), exact=True),
    # Functions of any numeric dtype.
    Case(ew.neg_p, _unary(), _same(np.negative), dtypes=NUMERIC, diff_args=(0,), linear_args=(0,)),
    Case(ew.abs_p, _unary(away=0.1), _same(np.abs), dtypes=NUMERIC, diff_args=(0,)),
    Case(ew.abs_p, _unary(special=True), _same(np.abs), name="abs_special", dtypes=WIDE),
    Case(ew.square_p, _unary(ints=(-10, 10)), _f64(np.square), dtypes=NUMERIC, diff_args=(0,)),
    Case(
        ew.integer_pow_p,
        _integer_pow_draw,
        _integer_pow_ref,
        dtypes=FLOATS + SIGNED + (dt.uint8,),
        diff_args=(0,),
    ),
    # Binary, broadcasting.
    Case(ew.add_p, _nary(2), _same(np.add), dtypes=NUMERIC, diff_args=(0, 1), linear_args=(0, 1)),
    Case(ew.add_p, _nary(2, special=True), _same(np.add), name="add_special", dtypes=WIDE),
    Case(
        ew.sub_p, _nary(2), _same(np.subtract), dtypes=NUMERIC, diff_args=(0, 1), linear_args=(0, 1)
    ),
    Case(
        ew.mul_p, _nary(2), _same(np.multiply), dtypes=NUMERIC, diff_args=(0, 1), linear_args=(0,)
    ),
    Case(
        ew.mul_p,
        _nary(2),
        _same(np.multiply),
        name="mul_linear_in_y",
        dtypes=WIDE,
        linear_args=(1,),
    ),
    Case(
        ew.div_p,
        _nary(2, away=(None, 0.2)),
        _f64(np.divide),
        dtypes=FLOATS,
        diff_args=(0, 1),
        linear_args=(0,),
    ),
    Case(ew.div_p, _nary(2, special=True), _f64(np.divide), name="div_special", dtypes=WIDE),
    Case(ew.div_p, _nary(2), _same(_int_div_ref), name="div_int", dtypes=INTS, exact=True),
    Case(
        ew.rem_p,
        _nary(2, [(-5.0, 5.0), (0.7, 1.9)]),
        _f64(np.fmod),
        dtypes=FLOATS,
        diff_args=(0, 1),
    ),
    Case(ew.rem_p, _nary(2, special=True), _f64(np.fmod), name="rem_special", dtypes=WIDE),
    Case(ew.rem_p, _nary(2), _same(_int_rem_ref), name="rem_int", dtypes=INTS, exact=True),
    Case(
        ew.pow_p,
        _nary(2, [(0.5, 3.0), (-2.0, 2.0)]),
        _f64(np.power),
        dtypes=FLOATS,
        diff_args=(0, 1),
    ),
    Case(ew.pow_p, _nary(2, special=True), _f64(np.power), name="pow_special", dtypes=WIDE),
    Case(
        ew.pow_p,
        _nary(2, int_clip=[(-4, 4), (-3, 3)]),
        _same(_int_pow_ref),
        name="pow_int",
        dtypes=SIGNED,
        exact=True,
    ),
    Case(ew.atan2_p, _nary(2, away=(0.3, 0.3)), _f64(np.arctan2), dtypes=FLOATS, diff_args=(0, 1)),
    Case(ew.atan2_p, _nary(2, special=True), _f64(np.arctan2), name="atan2_special", dtypes=WIDE),
    Case(ew.max_p, _nary(2, _NO_TIES), _same(np.maximum), dtypes=ALL, diff_args=(0, 1)),
    Case(ew.max_p, _nary(2, special=True), _same(np.maximum), name="max_special", dtypes=WIDE),
    Case(ew.min_p, _nary(2, _NO_TIES), _same(np.minimum), dtypes=ALL, diff_args=(0, 1)),
    Case(ew.min_p, _nary(2, special=True), _same(np.minimum), name="min_special", dtypes=WIDE),
    Case(ew.nextafter_p, _nary(2, special=True), _same(np.nextafter), dtypes=FLOATS, exact=True),
    Case(ew.and_p, _nary(2), _same(np.bitwise_and), dtypes=INTS + (dt.bool_,), exact=True),
    Case(ew.or_p, _nary(2), _same(np.bitwise_or), dtypes=INTS + (dt.bool_,), exact=True),
    Case(ew.xor_p, _nary(2), _same(np.bitwise_xor), dtypes=INTS + (dt.bool_,), exact=True),
    Case(ew.shift_left_p, _shift_draw, _shift_ref("left"), dtypes=INTS, exact=True),
    Case(ew.shift_right_logical_p, _shift_draw, _shift_ref("logical"), dtypes=INTS, exact=True),
    Case(
        ew.shift_right_arithmetic_p, _shift_draw, _shift_ref("arithmetic"), dtypes=INTS, exact=True
    ),
    *[
        Case(p, _nary(2, special=True), _same(f), dtypes=ALL, exact=True)
        for p, f in (
            (ew.eq_p, np.equal),
            (ew.ne_p, np.not_equal),
            (ew.lt_p, np.less),
            (ew.le_p, np.less_equal),
            (ew.gt_p, np.greater),
            (ew.ge_p, np.greater_equal),
        )
    ],
    # select_n and clamp.
    Case(
        ew.select_n_p,
        _select_draw(2, dt.bool_),
        _same(_select_ref),
        dtypes=ALL,
        diff_args=(1, 2),
        linear_args=(1, 2),
    ),
    Case(
        ew.select_n_p,
        _select_draw(3, dt.int32),
        _same(_select_ref),
        name="select_n_int",
        dtypes=ALL,
        diff_args=(1, 2, 3),
        linear_args=(1, 2, 3),
    ),
    Case(
        ew.select_n_p,
        _select_draw(1, dt.bool_),
        _same(_select_ref),
        name="select_n_one",
        dtypes=WIDE,
        diff_args=(1,),
        linear_args=(1,),
    ),
    Case(ew.clamp_p, _nary(3, _NO_TIES), _same(_clamp_ref), dtypes=NUMERIC, diff_args=(0, 1, 2)),
    Case(ew.clamp_p, _nary(3, special=True), _same(_clamp_ref), name="clamp_special", dtypes=WIDE),
]
