"""fntorch's own vectorizable math: polynomial/rational expansions for kernels.

LLVM's libm intrinsics (llvm.exp/log/sin/tanh...) become scalar libm calls on the CPU
(up to 30x slower) and abort the process on NVPTX (LOWERING-NOTES §2.2), so every
transcendental function of a kernel is written here out of fadd/fmul/fdiv/fma,
compares, selects, bit casts and the inline intrinsics (fabs, sqrt, rint, floor). The
same code serves the CPU and NVPTX.

Each function takes the ``KernelBuilder`` and an f32 or f64 scalar value and returns one
of the same type; float16/bfloat16 callers compute in f32 and round the result.
Polynomial coefficients are Taylor coefficients (exact rationals rounded once, computed
at import) or the published Eigen/XLA (tanh, erf) and Giles (erf_inv) ones; float64
uses higher degrees. No fast-math flag is set inside an expansion (``reassoc`` would
merge the Cody-Waite constant splits, §2.3; Horner steps use ``llvm.fmuladd``) but
``afn`` on float32 tanh's one quotient (``builder.APPROX_QUOTIENT``).

Guaranteed bounds, as checked by ``tests/lowering/test_mathlib.py`` against numpy (or
fntorch's float64 erf/erf_inv) in float64 over dense sweeps of the domain shown
(float32 domain / float64 domain). rel = max relative error, abs = max absolute error:

==========  ==============================  =========  ==========================
function    domain tested (f32 / f64)       float32    float64
==========  ==============================  =========  ==========================
exp         [-87, 88] / [-708, 709]         rel 1.5e-7 rel 4e-16
exp2        [-126, 127] / [-1022, 1023]     rel 1.5e-7 rel 4e-16
expm1       [-20, 88] / [-40, 709]          rel 2.5e-7 rel 5e-16
log         [1e-38, 3e38] / [1e-307, 1e307] rel 1.5e-7 rel 4e-16
log1p       [-0.999, 1e6]                   rel 3e-7   rel 5e-16
sin, cos    |x| <= 1e4 / 1e6                abs 1.2e-7 abs 2.5e-16
tan         |x| <= 1.5                      rel 4e-7   rel 8e-16
atan        [-1e3, 1e3]                     rel 2.5e-7 rel 4e-16
atan2       [-10, 10]^2                     rel 3e-7   rel 6e-16
asin, acos  [-1, 1]                         rel 4e-7   rel 8e-16
sinh, cosh  [-88, 88] / [-709, 709]         rel 4e-7   rel 8e-16
tanh        [-10, 10] / [-20, 20]           rel 5e-7   rel 8e-16
asinh       [-1e5, 1e5]                     rel 3e-7   rel 8e-16
acosh       [1, 1e5]                        rel 3e-7   rel 8e-16
atanh       [-0.9999, 0.9999]               rel 4e-7   rel 8e-16
logistic    [-100, 100] / [-700, 700]       rel 3e-7   rel 6e-16
cbrt        [-1e5, 1e5]                     rel 1.5e-7 rel 8e-16
rsqrt       [1e-3, 1e5]                     rel 1.2e-7 rel 2.5e-16
erf         [-6, 6] / [-7, 7]               rel 6e-7   rel 2e-15
erf_inv     |x| <= 0.99999 / 0.999          rel 5e-7   rel 1e-13 (2e-9 up to 1-1e-9)
pow         x in [0.01, 10], y in [-10, 10] rel 1.2e-7 rel 2.5e-16+8e-18|y ln x|
==========  ==============================  =========  ==========================

Special values follow numpy (NaN in -> NaN out, exp(-inf) = 0, log(0) = -inf,
tanh(+-inf) = +-1, pow's C99 table, signed zeros of odd functions), checked on a grid
of special values. float32 pow computes in float64. float64 pow carries y log|x| as a double-double
(``_pow64_exponent``): its error grows only as |y ln x| 2**-57, up to ~20 ulp at the
overflow threshold for bases near sqrt(2) or sqrt(1/2) (the series tail of log is plain
float64), about 1 ulp elsewhere in the tests; 2.0 ** 1024 is inf.
A float64 pow by a literal integer up to 64 in magnitude is computed by products instead
(``codegen_values._integer_exponent``).

This module holds exp and log and the expansions built on them (hyperbolic functions,
logistic, cbrt, erf, erf_inv, pow) and ``FUNCTIONS``, the table of them all. The circular
functions (sin, cos, tan, atan, atan2, asin, acos), which need neither exp nor log, are
``mathlib_trig``'s (with the Cody-Waite reduction that makes sin/cos/tan NaN past
|x| = 2**50) and are re-exported here; the building blocks both share are ``mathcore``'s.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

# Giles, "Approximating the erfinv function": the same coefficients as the eager impl.
from ..ops._erf_inv_coeffs import ERF_F32_P, ERF_F32_Q
from ..ops._erf_inv_coeffs import GILES_CENTRAL as _GILES_CENTRAL
from ..ops._erf_inv_coeffs import GILES_TAIL as _GILES_TAIL
from .mathcore import (
    _LN2_HI,
    _LN2_LO,
    H,
    T,
    _bits,
    _c,
    _clamp_keep_nan,
    _int_of,
    _isnan,
    _k,
    _reduce_ln2,
    _round_shift,
    _taylor,
    ldexp,
    poly,
    pow2i,
)
from .mathlib_trig import acos, asin, atan, cos, sin, tan
from .mathlib_trig import atan2 as atan2  # re-exported: binary, as pow (rules.py)

# ln2, 2/sqrt(pi) and 1/sqrt(pi), rounded to float64.
_LN2 = H("0x1.62e42fefa39efp-1")
_TWO_OVER_SQRT_PI = H("0x1.20dd750429b6dp+0")
_ONE_OVER_SQRT_PI = H("0x1.20dd750429b6dp-1")

# Eigen / XLA float32 tanh: x P(x^2) / Q(x^2) on [-7.905, 7.905] (highest degree first).
_TANH_P = (
    -2.76076847742355e-16,
    2.00018790482477e-13,
    -8.60467152213735e-11,
    5.12229709037114e-08,
    1.48572235717979e-05,
    6.37261928875436e-04,
    4.89352455891786e-03,
)
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)
# Eigen float32 erf: x P(x^2) / Q(x^2) on [-4, 4]; the same coefficients as the eager impl.
_ERF_P, _ERF_Q = ERF_F32_P, ERF_F32_Q


_LN2_FR = Fraction(_LN2)
# exp: e^r = sum r^n/n!; |r| <= ln2/2.
_EXP = (_taylor(0, 7), _taylor(0, 13))
_EXP2 = (_taylor(0, 7, _LN2_FR), _taylor(0, 13, _LN2_FR))  # 2^r, |r| <= 1/2
# expm1: (e^r - 1 - r)/r^2 = sum r^(n-2)/n!, n >= 2.
_EXPM1 = (_taylor(2, 9), _taylor(2, 16))
# log: R(z) = sum 2 z^n/(2n+1), z = s^2 <= 0.0295.
_LOG = (
    tuple(float(Fraction(2, 2 * n + 1)) for n in range(5, 0, -1)),
    tuple(float(Fraction(2, 2 * n + 1)) for n in range(11, 0, -1)),
)
# erf(a) = 2a/sqrt(pi) e^(-a^2) sum_n (2a^2)^n/(2n+1)!!, all terms positive.
_ERF_SERIES = tuple(
    float(Fraction(2**n) / Fraction(factorial(2 * n + 1), 2**n * factorial(n)))
    for n in range(52, -1, -1)
)


# ------------------------------------------------------------------------ exp family
def exp(b, x, lo=None):
    """e**x (Cody-Waite ln2 reduction, Taylor polynomial, two-step scaling); e**(x + lo)
    with ``lo`` the low part of a double-double argument (pow's)."""
    i = _k(x)
    x = _clamp_keep_nan(b, x, (-104.0, -746.0)[i], (89.0, 710.0)[i])
    k, r = _reduce_ln2(b, x)
    if lo is not None:
        r = b.fadd(r, lo)
    return ldexp(b, poly(b, r, _EXP[i]), k)


def exp2(b, x):
    """2**x: x = k + r exactly, then 2**r by its Taylor polynomial in r."""
    i = _k(x)
    x = _clamp_keep_nan(b, x, (-160.0, -1080.0)[i], (130.0, 1030.0)[i])
    kf, k = _round_shift(b, x)
    return ldexp(b, poly(b, b.fsub(x, kf), _EXP2[i]), k)


def expm1(b, x):
    """e**x - 1, accurate near 0: 2**k (expm1(r) + 1) - 1 written as 2**k em + (2**k - 1)."""
    i = _k(x)
    xc = _clamp_keep_nan(b, x, (-30.0, -40.0)[i], (89.0, 710.0)[i])
    k, r = _reduce_ln2(b, xc)
    em = b.fma(b.fmul(r, r), poly(b, r, _EXPM1[i]), r)
    small = b.icmp("sle", k, b.const(20, T.i32))
    ks = b.select(small, k, b.const(0, T.i32))  # keeps 2**k in range on the unused side
    two_k = pow2i(b, ks, x)
    near = b.fadd(b.fmul(two_k, em), b.fsub(two_k, _c(b, 1.0, x)))
    far = b.fsub(ldexp(b, b.fadd(em, _c(b, 1.0, x)), k), _c(b, 1.0, x))
    out = b.select(small, near, far)
    return b.select(b.fcmp("oeq", x, _c(b, 0.0, x)), x, out)  # expm1(-0) = -0


def _log_reduce(b, x):
    """x = 2**e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)): (e as a float, f exactly)."""
    i = _k(x)
    mant, bias, nbits = _bits(x)
    it = _int_of(x)
    tiny = b.fcmp("olt", x, _c(b, (1.1754943508222875e-38, 2.2250738585072014e-308)[i], x))
    up = (2.0**24, 2.0**54)[i]
    xs = b.select(tiny, b.fmul(x, _c(b, up, x)), x)
    eadj = b.select(tiny, b.const((-24, -54)[i], it), b.const(0, it))
    ix = b.bitcast(xs, it)
    # musl's trick: shift the mantissa range to [sqrt(1/2), sqrt(2)) with integer ops.
    off = (0x3F3504F3, 0x3FE6A09E667F3BCD)[i]
    one = (0x3F800000, 0x3FF0000000000000)[i]
    ix = b.add(ix, b.const(one - off, it))
    e = b.sub(b.ashr(ix, b.const(mant, it)), b.const(bias, it))
    e = b.add(e, eadj)
    m = b.bitcast(b.add(b.and_(ix, b.const((1 << mant) - 1, it)), b.const(off, it)), x.type)
    return b.sitofp(e, x.type), b.fsub(m, _c(b, 1.0, x))


def log(b, x):
    """Natural log: x = 2**k m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) (fdlibm form)."""
    i = _k(x)
    dk, f = _log_reduce(b, x)
    s = b.fdiv(f, b.fadd(f, _c(b, 2.0, x)))
    z = b.fmul(s, s)
    big_r = b.fmul(z, poly(b, z, _LOG[i]))
    hfsq = b.fmul(_c(b, 0.5, x), b.fmul(f, f))
    inner = b.fma(dk, _c(b, _LN2_LO[i], x), b.fmul(s, b.fadd(hfsq, big_r)))
    out = b.fsub(b.fmul(dk, _c(b, _LN2_HI[i], x)), b.fsub(b.fsub(hfsq, inner), f))
    inf = float("inf")
    out = b.select(b.fcmp("oeq", x, _c(b, inf, x)), x, out)
    out = b.select(b.fcmp("oeq", x, _c(b, 0.0, x)), _c(b, -inf, x), out)
    bad = b.or_(b.fcmp("olt", x, _c(b, 0.0, x)), _isnan(b, x))
    return b.select(bad, _c(b, float("nan"), x), out)


def log1p(b, x):
    """log(1 + x) by Goldberg's trick: log(u) * x / (u - 1) with u = 1 + x rounded."""
    one = _c(b, 1.0, x)
    u = b.fadd(one, x)
    d = b.fsub(u, one)
    r = b.fmul(log(b, u), b.fdiv(x, d))
    r = b.select(b.fcmp("oeq", d, _c(b, 0.0, x)), x, r)
    return b.select(b.fcmp("oeq", u, _c(b, float("inf"), x)), u, r)


# ---------------------------------------------------------------------- hyperbolic
def _exp_half_squared(b, a):
    """e**a / 2 without overflowing early: w * (w / 2) with w = e**(a/2)."""
    w = exp(b, b.fmul(a, _c(b, 0.5, a)))
    return b.fmul(w, b.fmul(w, _c(b, 0.5, a)))


def sinh(b, x):
    """sinh x: (e + e/(e+1))/2 with e = expm1(|x|) below 20, e**|x|/2 above."""
    a = b.fabs(x)
    e = expm1(b, a)
    near = b.fmul(_c(b, 0.5, x), b.fadd(e, b.fdiv(e, b.fadd(e, _c(b, 1.0, x)))))
    big = b.fcmp("ogt", a, _c(b, 20.0, x))
    out = b.select(big, _exp_half_squared(b, a), near)
    return b.copysign(out, x)


def cosh(b, x):
    """cosh x = (e + 1/e)/2, e = e**|x|; e**|x|/2 above 20."""
    a = b.fabs(x)
    e = exp(b, a)
    near = b.fmul(_c(b, 0.5, x), b.fadd(e, b.fdiv(_c(b, 1.0, x), e)))
    big = b.fcmp("ogt", a, _c(b, 20.0, x))
    return b.select(big, _exp_half_squared(b, a), near)


def tanh(b, x):
    """tanh: float32 by the Eigen/XLA rational (pure fma/div); float64 via expm1."""
    if x.type == T.f32:
        from .builder import APPROX_QUOTIENT  # xDSL: only when a kernel is being built

        lim = 7.90531110763549805
        xc = _clamp_keep_nan(b, x, -lim, lim)
        z = b.fmul(xc, xc)
        p = b.fmul(xc, poly(b, z, _TANH_P))
        out = b.fdiv(p, poly(b, z, _TANH_Q), flags=APPROX_QUOTIENT)
        # Near 0 the rational's relative error grows; tanh x = x there to 1 ulp.
        tiny = b.fcmp("olt", b.fabs(x), _c(b, 0.0004, x))
        out = b.select(tiny, x, out)
        # Past 9.1, float32 tanh is +-1 exactly (the clamped rational stops at 1 - 2.4e-7).
        return b.select(b.fcmp("ogt", b.fabs(x), _c(b, 9.1, x)), b.copysign(_c(b, 1.0, x), x), out)
    a = b.fabs(x)
    t = expm1(b, b.fmul(a, _c(b, -2.0, x)))
    out = b.fdiv(b.fneg(t), b.fadd(t, _c(b, 2.0, x)))
    return b.copysign(out, x)


def asinh(b, x):
    """asinh x = sign(x) log1p(|x| + x^2/(1 + sqrt(1 + x^2))); log|x| + ln2 when huge."""
    a = b.fabs(x)
    one = _c(b, 1.0, x)
    a2 = b.fmul(a, a)
    near = log1p(b, b.fadd(a, b.fdiv(a2, b.fadd(one, b.sqrt(b.fadd(one, a2))))))
    huge = b.fcmp("ogt", a, _c(b, 2.0**28, x))
    far = b.fadd(log(b, a), _c(b, _LN2, x))
    return b.copysign(b.select(huge, far, near), x)


def acosh(b, x):
    """acosh x = log1p(t + sqrt(2t + t^2)), t = x - 1; log x + ln2 when huge."""
    t = b.fsub(x, _c(b, 1.0, x))
    near = log1p(b, b.fadd(t, b.sqrt(b.fma(t, t, b.fmul(t, _c(b, 2.0, x))))))
    huge = b.fcmp("ogt", x, _c(b, 2.0**28, x))
    out = b.select(huge, b.fadd(log(b, x), _c(b, _LN2, x)), near)
    return b.select(b.fcmp("olt", x, _c(b, 1.0, x)), _c(b, float("nan"), x), out)


def atanh(b, x):
    """atanh x = sign(x) log1p(2|x| / (1 - |x|)) / 2."""
    a = b.fabs(x)
    r = log1p(b, b.fdiv(b.fmul(a, _c(b, 2.0, x)), b.fsub(_c(b, 1.0, x), a)))
    return b.copysign(b.fmul(r, _c(b, 0.5, x)), x)


def logistic(b, x):
    """1/(1 + e**-x) as numpy's impl: e = e**-|x|; 1/(1+e) or e/(1+e)."""
    e = exp(b, b.fneg(b.fabs(x)))
    r = b.fdiv(_c(b, 1.0, x), b.fadd(_c(b, 1.0, x), e))
    return b.select(b.fcmp("oge", x, _c(b, 0.0, x)), r, b.fmul(e, r))


# --------------------------------------------------------------------- the rest
def cbrt(b, x):
    """Cube root: e**(log|x|/3), one Newton step, the sign of x; 0, inf, NaN kept."""
    a = b.fabs(x)
    y = exp(b, b.fmul(log(b, a), _c(b, 1.0 / 3.0, x)))
    y = b.fsub(y, b.fmul(b.fsub(y, b.fdiv(a, b.fmul(y, y))), _c(b, 1.0 / 3.0, x)))
    keep = b.or_(b.fcmp("oeq", a, _c(b, 0.0, x)), b.fcmp("oeq", a, _c(b, float("inf"), x)))
    y = b.select(keep, a, y)
    return b.copysign(y, x)  # NaN stays NaN


def rsqrt(b, x):
    """1 / sqrt(x), two correctly rounded steps (as numpy's impl)."""
    return b.fdiv(_c(b, 1.0, x), b.sqrt(x))


def _erf_f32(b, x):
    xc = _clamp_keep_nan(b, x, -4.0, 4.0)
    z = b.fmul(xc, xc)
    out = b.fdiv(b.fmul(xc, poly(b, z, _ERF_P)), poly(b, z, _ERF_Q))
    # Tiny (incl. subnormal) x: erf x = 2x/sqrt(pi) to float32 precision, rounded once.
    tiny = b.fcmp("olt", b.fabs(x), _c(b, 1e-8, x))
    return b.select(tiny, b.fmul(x, _c(b, _TWO_OVER_SQRT_PI, x)), out)


def _exp_minus_square(b, a):
    """e**(-a^2) with a^2 = hi + lo exactly (fma), so no error grows with a."""
    hi = b.fmul(a, a)
    lo = b.fma(a, a, b.fneg(hi))
    e = exp(b, b.fneg(hi))
    return b.fsub(e, b.fmul(e, lo))


def _erfc_cf(b, a, levels=60):
    """erfc(a) for a >= 3 by its continued fraction a + (1/2)/(a + (2/2)/(a + ...)),
    evaluated forward (the numerator and denominator recurrences: one division instead of
    one per level, ~10x faster; every term is positive, so the recurrence is stable, and
    for 3 <= a <= 30 its values stay below 1e100)."""
    p_prev, p = _c(b, 1.0, a), a  # A_{-1}, A_0
    q_prev, q = _c(b, 0.0, a), _c(b, 1.0, a)  # B_{-1}, B_0
    for k in range(1, levels + 1):
        c = _c(b, k / 2.0, a)
        p, p_prev = b.fma(a, p, b.fmul(c, p_prev)), p
        q, q_prev = b.fma(a, q, b.fmul(c, q_prev)), q
    f = b.fdiv(p, q)
    return b.fdiv(_exp_minus_square(b, a), b.fmul(f, _c(b, 1.7724538509055159, a)))


def _erf_f64(b, x):
    a = b.fabs(x)
    three = _c(b, 3.0, x)
    small = b.fcmp("olt", a, three)
    s = b.select(small, a, three)
    series = b.fmul(
        b.fmul(s, _c(b, _TWO_OVER_SQRT_PI, x)),
        b.fmul(_exp_minus_square(b, s), poly(b, b.fmul(s, s), _ERF_SERIES)),
    )
    big = b.select(small, three, b.minnum(a, _c(b, 30.0, x)))
    tail = b.fsub(_c(b, 1.0, x), _erfc_cf(b, big))
    out = b.copysign(b.select(small, series, tail), x)
    return b.select(_isnan(b, x), x, out)


def erf(b, x):
    """erf: float32 by Eigen's rational on [-4, 4]; float64 by a positive-term series
    below 3 and 1 - erfc (continued fraction) above."""
    return _erf_f32(b, x) if x.type == T.f32 else _erf_f64(b, x)


def erf_inv(b, x):
    """Inverse erf: Giles' single-precision approximation; float64 adds two Newton steps.
    float32 runs the float64 path and rounds once, as the eager impl does: ``ft.random``'s
    normal draws (erf_inv of uniform bits) must be the same eagerly and under jit."""
    if x.type == T.f32:
        return b.fptrunc(_erf_inv(b, b.fpext(x, T.f64), newton=1), T.f32)
    return _erf_inv(b, x, newton=2)


def _erf_inv(b, x, newton):
    one = _c(b, 1.0, x)
    a = b.fabs(x)
    w = b.fneg(log(b, b.fmul(b.fsub(one, a), b.fadd(one, a))))
    central = b.fcmp("olt", w, _c(b, 5.0, x))
    pc = poly(b, b.fsub(w, _c(b, 2.5, x)), _GILES_CENTRAL)
    wt = b.select(central, _c(b, 5.0, x), w)
    pt = poly(b, b.fsub(b.sqrt(wt), _c(b, 3.0, x)), _GILES_TAIL)
    y = b.fmul(b.select(central, pc, pt), x)
    for _ in range(newton):  # float64 here: float32 comes through float64
        slope = b.fmul(_c(b, _TWO_OVER_SQRT_PI, x), _exp_minus_square(b, y))
        y = b.fsub(y, b.fdiv(b.fsub(erf(b, y), x), slope))
    inf = _c(b, float("inf"), x)
    y = b.select(b.fcmp("oeq", a, one), b.copysign(inf, x), y)
    y = b.select(b.fcmp("ogt", a, one), _c(b, float("nan"), x), y)
    return b.select(b.fcmp("oeq", x, _c(b, 0.0, x)), x, y)


def _is_int(b, y):
    return b.fcmp("oeq", b.floor(y), y)


def _two_sum(b, a, c):
    """(a + c rounded, its rounding error), exactly (Knuth)."""
    s = b.fadd(a, c)
    v = b.fsub(s, a)
    return s, b.fadd(b.fsub(a, b.fsub(s, v)), b.fsub(c, v))


def _log_dd(b, x):
    """log x for a positive finite float64, as a double-double (hi, lo) good to ~2**-57
    relative (measured): 2s and the split of e ln2 are carried exactly, the series tail
    s R(s**2) (under 1% of log m) in plain float64."""
    dk, f = _log_reduce(b, x)
    two = _c(b, 2.0, x)
    d = b.fadd(two, f)
    d_lo = b.fadd(b.fsub(two, d), f)  # exact: |f| < 2
    s = b.fdiv(f, d)
    # s's low part: (f - s (d + d_lo)) / d, the residual exact through the fma.
    s_lo = b.fdiv(b.fsub(b.fma(b.fneg(s), d, f), b.fmul(s, d_lo)), d)
    z = b.fmul(s, s)
    tail = b.fmul(s, b.fmul(z, poly(b, z, _LOG[1])))
    hi, err = _two_sum(b, b.fmul(dk, _c(b, _LN2_HI[1], x)), b.fmul(s, two))  # both exact
    lo = b.fadd(b.fadd(err, b.fmul(dk, _c(b, _LN2_LO[1], x))), b.fadd(b.fmul(s_lo, two), tail))
    h = b.fadd(hi, lo)
    return h, b.fsub(lo, b.fsub(h, hi))


def _pow64_exponent(b, x, y):
    """(t, t_lo) with t + t_lo = y log|x| to ~2**-57 relative, for e**t: float64 pow's
    error is then ~|y ln x| 2**-57 (plain exp(y log x) had ~|y ln x| 2**-53)."""
    ax = b.fabs(x)
    inf = _c(b, float("inf"), x)
    finite_x = b.and_(b.fcmp("ogt", ax, _c(b, 0.0, x)), b.fcmp("olt", ax, inf))
    hi, lo = _log_dd(b, b.select(finite_x, ax, _c(b, 1.0, x)))
    # log|x| of 0, inf and NaN: -inf, inf, NaN (the double-double steps would give NaN).
    special = b.select(b.fcmp("oeq", ax, _c(b, 0.0, x)), b.fneg(inf), ax)
    hi = b.select(finite_x, hi, special)
    t = b.fmul(y, hi)
    t_lo = b.fadd(b.fma(y, hi, b.fneg(t)), b.fmul(y, lo))
    # Only a finite, in-range t has a low part (inf - inf would make it NaN).
    in_range = b.fcmp("olt", b.fabs(t), _c(b, 1000.0, x))
    return t, b.select(in_range, t_lo, _c(b, 0.0, x))


def pow(b, x, y):
    """x**y = e**(y log|x|) with C99/numpy special cases; float32 computes in float64,
    float64 carries y log|x| as a double-double."""
    if x.type == T.f32:
        xd, yd = b.fpext(x, T.f64), b.fpext(y, T.f64)
        r = b.fptrunc(exp(b, b.fmul(yd, log(b, b.fabs(xd)))), T.f32)
    else:
        r = exp(b, *_pow64_exponent(b, x, y))
    zero, one = _c(b, 0.0, x), _c(b, 1.0, x)
    nan = _c(b, float("nan"), x)
    neg_x = b.fcmp("olt", b.copysign(one, x), zero)
    is_int = _is_int(b, y)
    half = b.fmul(y, _c(b, 0.5, x))
    odd = b.and_(is_int, b.fcmp("une", b.floor(half), half))
    r = b.select(b.and_(neg_x, odd), b.fneg(r), r)
    finite_y = b.fcmp("olt", b.fabs(y), _c(b, float("inf"), x))
    # A negative finite base and a finite non-integer exponent: NaN (not for -0, -inf).
    neg_finite = b.and_(b.fcmp("olt", x, zero), b.fcmp("ogt", x, _c(b, float("-inf"), x)))
    r = b.select(b.and_(b.and_(neg_finite, b.xor(is_int, b.true())), finite_y), nan, r)
    minus_one = b.fcmp("oeq", x, _c(b, -1.0, x))
    inf_y = b.fcmp("oeq", b.fabs(y), _c(b, float("inf"), x))
    r = b.select(b.and_(minus_one, inf_y), one, r)  # (-1)**inf = 1
    r = b.select(b.or_(b.fcmp("oeq", y, zero), b.fcmp("oeq", x, one)), one, r)
    return r


FUNCTIONS = {
    "exp": exp,
    "exp2": exp2,
    "expm1": expm1,
    "log": log,
    "log1p": log1p,
    "sin": sin,
    "cos": cos,
    "tan": tan,
    "atan": atan,
    "asin": asin,
    "acos": acos,
    "sinh": sinh,
    "cosh": cosh,
    "tanh": tanh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
    "logistic": logistic,
    "cbrt": cbrt,
    "rsqrt": rsqrt,
    "erf": erf,
    "erf_inv": erf_inv,
}
"""Unary expansions by primitive name (binary ones: ``pow``, ``atan2``)."""
