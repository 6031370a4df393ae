"""The circular functions of ``mathlib``: sin, cos, tan and atan, atan2, asin, acos.

Each takes the ``KernelBuilder`` and an f32 or f64 scalar value and returns one of the same
type, built from fadd/fmul/fdiv/fma, compares and selects as the rest of ``mathlib`` is;
their error bounds are rows of the table in ``mathlib``'s docstring, which ``mathlib``
re-exports them beside (``mathlib.FUNCTIONS``). None of them needs exp or log.

sin/cos/tan reduce x = q pi/2 + r by Cody-Waite only (no Payne-Hanek), with pi/2 split
in three parts: the reduction is exact up to |x| = 2**50, and beyond that they return NaN
rather than a wrong value; float32 reduces in float64. atan reduces |x| > 1 to 1/|x| and
then to a table of atan(tan(k pi/16)) (hi + lo) and a short odd polynomial; atan2, asin
and acos are written on atan's kernel, with C99's signed zeros and infinities.

>>> from fntorch.lowering.builder import KernelBuilder, f64
>>> b = KernelBuilder()
>>> (x,) = b.function("sin", [f64], ret=f64)
>>> b.ret(sin(b, x))
>>> "llvm.fma" in str(b.module)
True
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

from .mathcore import H, T, _alt, _c, _k, poly

# Constants: (float32 value, float64 value). hi/lo pairs are Cody-Waite splits.
_TWO_OVER_PI = H("0x1.45f306dc9c883p-1")
_PIO2 = (H("0x1.921fb54442d18p+0"), H("0x1.1a62633145c07p-54"), H("-0x1.f1976b7ed8fbcp-110"))
_PIO2_HL = ((H("0x1.921fb6p+0"), H("-0x1.777a5cp-25")), (_PIO2[0], _PIO2[1]))
_PI_HL = (
    (H("0x1.921fb6p+1"), H("-0x1.777a5cp-24")),
    (H("0x1.921fb54442d18p+1"), H("0x1.1a62633145c07p-53")),
)

# atan table: c_k = tan(k pi/16) rounded to the dtype, and atan(c_k) as hi + lo.
_ATAN_C = (
    (0.0, H("0x1.975f5ep-3"), H("0x1.a8279ap-2"), H("0x1.561b82p-1"), 1.0),
    (0.0, H("0x1.975f5e0553158p-3"), H("0x1.a827999fcef32p-2"), H("0x1.561b82ab7f990p-1"), 1.0),
)
_ATAN_HI = (
    (0.0, H("0x1.921fb6p-3"), H("0x1.921fb6p-2"), H("0x1.2d97c8p-1"), H("0x1.921fb6p-1")),
    (
        0.0,
        H("0x1.921fb54442d18p-3"),
        H("0x1.921fb54442d18p-2"),
        H("0x1.2d97c7f3321d2p-1"),
        H("0x1.921fb54442d18p-1"),
    ),
)
_ATAN_LO = (
    (0.0, H("-0x1.81b8c6p-28"), H("-0x1.a6898cp-28"), H("-0x1.06bc8cp-26"), H("-0x1.777a5cp-26")),
    (
        0.0,
        H("0x1.f93470dfef04ap-58"),
        H("0x1.c398861b78b55p-59"),
        H("-0x1.8f57cafebcf16p-58"),
        H("0x1.1a62633145c07p-55"),
    ),
)
# tan((2k+1) pi/32): where the table entry changes.
_ATAN_SPLIT = (0.09849140335716425, 0.3033466836073424, 0.5345111359507917, 0.8206787908286604)

# sin r = r + r^3 S(r^2); cos r = 1 - r^2/2 + r^4 C(r^2); |r| <= pi/4.
_SIN = (_alt(3, 13), _alt(3, 21))
_COS = (
    tuple(float(Fraction((-1) ** (n // 2), factorial(n))) for n in range(14, 3, -2)),
    tuple(float(Fraction((-1) ** (n // 2), factorial(n))) for n in range(22, 3, -2)),
)
# atan v = v + v^3 A(v^2), A = sum (-1)^k v^(2k-2)/(2k+1); |v| <= 0.0985.
_ATAN = (
    tuple(float(Fraction((-1) ** k, 2 * k + 1)) for k in range(4, 0, -1)),
    tuple(float(Fraction((-1) ** k, 2 * k + 1)) for k in range(8, 0, -1)),
)


def _reduce_pio2(b, x):
    """x = q pi/2 + r; returns (r as x's type, q mod 4 as T.i32). float32 reduces in T.f64."""
    xd = b.fpext(x, T.f64) if x.type == T.f32 else x
    kd = b.rint(b.fmul(xd, _c(b, _TWO_OVER_PI, xd)))
    kd = b.select(b.fcmp("olt", b.fabs(xd), _c(b, 2.0**50, xd)), kd, _c(b, 0.0, xd))
    nk = b.fneg(kd)
    r = b.fma(nk, _c(b, _PIO2[0], xd), xd)  # exact (see the module docstring)
    r = b.fma(nk, _c(b, _PIO2[1], xd), r)
    r = b.fma(nk, _c(b, _PIO2[2], xd), r)
    quarter = b.fmul(kd, _c(b, 0.25, xd))
    q = b.fsub(kd, b.fmul(b.floor(quarter), _c(b, 4.0, xd)))  # kd mod 4, exact
    q = b.fptosi(q, T.i32)
    if x.type == T.f32:
        r = b.fptrunc(r, T.f32)
    return r, q


def _sin_poly(b, r):
    z = b.fmul(r, r)
    return b.fma(b.fmul(z, r), poly(b, z, _SIN[_k(r)]), r)


def _cos_poly(b, r):
    z = b.fmul(r, r)
    one = _c(b, 1.0, r)
    hz = b.fmul(z, _c(b, 0.5, r))
    w = b.fsub(one, hz)
    tail = b.fmul(b.fmul(z, z), poly(b, z, _COS[_k(r)]))
    # fdlibm: w + (((1 - w) - hz) + tail) recovers the rounding of 1 - hz.
    return b.fadd(w, b.fadd(b.fsub(b.fsub(one, w), hz), tail))


def _finite_or_nan(b, x, out):
    # NaN for inf, NaN and |x| >= 2**50, where the Cody-Waite reduction has no bits left.
    ok = b.fcmp("olt", b.fabs(x), _c(b, 2.0**50, x))
    return b.select(ok, out, _c(b, float("nan"), x))


def _quadrant(b, q, s, c, shift):
    qs = b.add(q, b.const(shift, T.i32)) if shift else q
    odd = b.icmp("ne", b.and_(qs, b.const(1, T.i32)), b.const(0, T.i32))
    neg = b.icmp("ne", b.and_(qs, b.const(2, T.i32)), b.const(0, T.i32))
    v = b.select(odd, c, s)
    return b.select(neg, b.fneg(v), v)


def sin(b, x):
    """sin x: Cody-Waite reduction by pi/2 (3-part constant), sin/cos polynomials."""
    r, q = _reduce_pio2(b, x)
    out = _quadrant(b, q, _sin_poly(b, r), _cos_poly(b, r), 0)
    out = b.select(b.fcmp("oeq", x, _c(b, 0.0, x)), x, out)  # sin(-0) = -0
    return _finite_or_nan(b, x, out)


def cos(b, x):
    """cos x = sin(x + pi/2) by quadrant."""
    r, q = _reduce_pio2(b, x)
    return _finite_or_nan(b, x, _quadrant(b, q, _sin_poly(b, r), _cos_poly(b, r), 1))


def tan(b, x):
    """tan x = sin r / cos r, or -cos r / sin r in odd quadrants."""
    r, q = _reduce_pio2(b, x)
    s, c = _sin_poly(b, r), _cos_poly(b, r)
    odd = b.icmp("ne", b.and_(q, b.const(1, T.i32)), b.const(0, T.i32))
    out = b.select(odd, b.fneg(b.fdiv(c, s)), b.fdiv(s, c))
    out = b.select(b.fcmp("oeq", x, _c(b, 0.0, x)), x, out)
    return _finite_or_nan(b, x, out)


def _atan01(b, u):
    """atan u for u in [0, 1] (or NaN): atan(c_k) + atan((u - c_k) / (1 + u c_k))."""
    i = _k(u)
    c, hi, lo = _c(b, 0.0, u), _c(b, 0.0, u), _c(b, 0.0, u)
    for k, split in enumerate(_ATAN_SPLIT, start=1):
        above = b.fcmp("ogt", u, _c(b, split, u))
        c = b.select(above, _c(b, _ATAN_C[i][k], u), c)
        hi = b.select(above, _c(b, _ATAN_HI[i][k], u), hi)
        lo = b.select(above, _c(b, _ATAN_LO[i][k], u), lo)
    v = b.fdiv(b.fsub(u, c), b.fma(u, c, _c(b, 1.0, u)))
    z = b.fmul(v, v)
    av = b.fma(b.fmul(z, v), poly(b, z, _ATAN[i]), v)
    return b.fadd(hi, b.fadd(lo, av))


def _minus(b, hl, a, x):
    """(hi + lo) - a for a constant split hi + lo."""
    return b.fadd(b.fsub(_c(b, hl[0], x), a), _c(b, hl[1], x))


def atan(b, x):
    """atan x = +-(pi/2 - atan(1/|x|)) for |x| > 1."""
    t = b.fabs(x)
    inv = b.fcmp("ogt", t, _c(b, 1.0, x))
    u = b.select(inv, b.fdiv(_c(b, 1.0, x), t), t)
    a = _atan01(b, u)
    a = b.select(inv, _minus(b, _PIO2_HL[_k(x)], a, x), a)
    return b.copysign(a, x)


def atan2(b, y, x):
    """atan2(y, x) with C99's signed zeros and infinities (numpy's arctan2)."""
    i = _k(x)
    ax, ay = b.fabs(x), b.fabs(y)
    swap = b.fcmp("ogt", ay, ax)
    num = b.select(swap, ax, ay)
    den = b.select(swap, ay, ax)
    t = b.fdiv(num, den)
    zero, inf = _c(b, 0.0, x), _c(b, float("inf"), x)
    both0 = b.and_(b.fcmp("oeq", ax, zero), b.fcmp("oeq", ay, zero))
    both_inf = b.and_(b.fcmp("oeq", ax, inf), b.fcmp("oeq", ay, inf))
    t = b.select(both0, zero, b.select(both_inf, _c(b, 1.0, x), t))
    a = _atan01(b, t)
    a = b.select(swap, _minus(b, _PIO2_HL[i], a, x), a)
    neg_x = b.fcmp("olt", b.copysign(_c(b, 1.0, x), x), zero)
    a = b.select(neg_x, _minus(b, _PI_HL[i], a, x), a)
    out = b.copysign(a, y)
    return b.select(b.fcmp("uno", x, y), _c(b, float("nan"), x), out)


def _sqrt_one_minus_sq(b, x):
    one = _c(b, 1.0, x)
    return b.sqrt(b.fmul(b.fsub(one, x), b.fadd(one, x)))


def asin(b, x):
    """asin x = atan2(x, sqrt((1 - x)(1 + x)))."""
    return atan2(b, x, _sqrt_one_minus_sq(b, x))


def acos(b, x):
    """acos x = atan2(sqrt((1 - x)(1 + x)), x)."""
    return atan2(b, _sqrt_one_minus_sq(b, x), x)
