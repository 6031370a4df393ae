"""Complex inverse trigonometric and hyperbolic functions for kernels, on ``Cx`` pairs.

The eager impls are numpy's, which call glibc's casinh, casin, cacos, cacosh, catanh
and catan. Finite arguments follow the algorithms of FreeBSD's ``catrig.c`` (Hull,
Fairgrieve and Tang's for asinh/asin/acos/acosh; a log1p/atan2 form for atanh/atan):
each part accurate to a few ulp relative to itself, where glibc's are too, so the two
agree to a few ulp part by part, not bit for bit. Infinities, NaNs and signed zeros are
glibc's (C99 Annex G, with glibc's choices where Annex G leaves the sign of an infinity
or of a NaN's companion open); ``tests/lowering/test_complex_kernels.py`` checks them on
a grid.

float32 parts are computed in float64 and rounded once: the double intermediates keep
every float32 argument away from overflow and underflow, so one code path serves both.

>>> from fntorch.lowering.builder import KernelBuilder, f64
>>> b = KernelBuilder()
>>> a, c = b.function("re_of_asinh", [f64, f64], ret=f64)
>>> b.ret(asinh(b, Cx(a, c)).re)
>>> "fcmp" in str(b.module)
True
"""

from __future__ import annotations

from . import mathlib
from .mathcore import T, _c, _isnan
from .mathlib_complex import (
    INF,
    NAN,
    Cx,
    _is_inf,
    _is_zero,
    _log_abs_f64,
    _narrow,
    _sel,
    _widen,
    hypot,
)

_EPS = 2.0**-52
_RECIP_EPS = 2.0**52  # past this |z| only log|2z| + i arg z is left of asinh
_A_CROSS, _B_CROSS = 10.0, 0.6417  # Hull et al.'s crossovers (A's raised as FreeBSD's)
_FOUR_SQRT_MIN = 2.0**-509  # below this y / A may underflow
_SQRT_6_EPS = 3.6500241499888571e-8  # asinh z = z to the last bit below a quarter of it
_SQRT_3_EPS = 2.5809568279517849e-8  # atanh z = z below half of it
_SQRT_MIN = 2.0**-511
_LN2 = 6.9314718055994531e-1
_PIO2_HI, _PIO2_LO = 1.5707963267948966e0, 6.1232339957367659e-17
_PI = 3.141592653589793


def _in_f64(fn, b, z: Cx) -> Cx:
    if z.re.type == T.f64:
        return fn(b, z)
    return _narrow(b, fn(b, _widen(b, z)), z.re)


def _not(b, c):
    return b.xor(c, b.true())


def _half_excess(b, a, c, h):
    """(hypot(a, c) - c) / 2 given h = hypot(a, c), without cancellation for c > 0."""
    half = _c(b, 0.5, a)
    pos = b.fmul(b.fdiv(b.fmul(a, a), b.fadd(h, c)), half)
    out = b.select(_is_zero(b, c), b.fmul(a, half), pos)
    return b.select(b.fcmp("olt", c, _c(b, 0.0, c)), b.fmul(b.fsub(h, c), half), out)


def _hard_work(b, x, y):
    """For x, y >= 0 finite below 2**52: Re asinh(x + iy) and what Im needs, as
    (rx, usable, B, s, ny): Im asinh = asin(B) where ``usable``, else atan2(ny, s)
    (s = sqrt(A**2 - y**2) and ny = y, both rescaled where s would underflow)."""
    one, half = _c(b, 1.0, x), _c(b, 0.5, x)
    yp, ym = b.fadd(y, one), b.fsub(y, one)
    big_r, s_ = hypot(b, x, yp), hypot(b, x, ym)
    a = b.maxnum(b.fmul(b.fadd(big_r, s_), half), one)  # A >= 1 despite rounding
    y_is_1 = b.fcmp("oeq", y, one)
    away = b.fcmp("oge", x, b.fmul(_c(b, _EPS, x), b.fabs(ym)))
    below = b.fcmp("olt", y, one)
    omy_opy = b.fmul(b.fsub(one, y), yp)  # (1 - y)(1 + y)
    # Re: log(A + sqrt(A**2 - 1)), as log1p of A - 1 where A is near 1.
    am1 = b.fadd(_half_excess(b, x, yp, big_r), _half_excess(b, x, b.fsub(one, y), s_))
    rx = mathlib.log1p(b, b.fadd(am1, b.sqrt(b.fmul(am1, b.fadd(a, one)))))
    # x negligible beside |y - 1|: A - 1 is x**2 / (2(1 - y**2)) below 1, y - 1 above.
    rx_below = b.fdiv(x, b.sqrt(omy_opy))
    rx_above = mathlib.log1p(b, b.fadd(ym, b.sqrt(b.fmul(ym, yp))))
    rx = b.select(away, rx, b.select(below, rx_below, rx_above))
    tiny_x = b.fcmp("olt", x, _c(b, _EPS * _EPS / 128, x))
    rx = b.select(b.and_(y_is_1, tiny_x), b.sqrt(x), rx)
    far = mathlib.log(b, b.fadd(a, b.sqrt(b.fsub(b.fmul(a, a), one))))
    rx = b.select(b.fcmp("olt", a, _c(b, _A_CROSS, x)), rx, far)
    # Im: asin(y / A), as atan2(y, sqrt((A + y)(A - y))) where y / A nears 1.
    bb = b.fdiv(y, a)
    amy = b.fadd(_half_excess(b, x, yp, big_r), _half_excess(b, x, ym, s_))
    s = b.sqrt(b.fmul(amy, b.fadd(a, y)))
    scale = _c(b, 4 / _EPS / _EPS, x)
    s_big_y = b.fdiv(b.fmul(b.fmul(x, scale), y), b.sqrt(b.fmul(yp, ym)))
    s = b.select(away, s, b.select(below, b.sqrt(omy_opy), s_big_y))
    ny = b.select(b.or_(away, below), y, b.fmul(y, scale))
    tiny_x = b.fcmp("olt", x, _c(b, _EPS / 128, x))
    s = b.select(b.and_(y_is_1, tiny_x), b.fmul(b.sqrt(x), b.sqrt(b.fmul(b.fadd(a, y), half))), s)
    ny = b.select(b.and_(y_is_1, tiny_x), y, ny)
    tiny_y = b.fcmp("olt", y, _c(b, _FOUR_SQRT_MIN, x))
    s = b.select(tiny_y, b.fmul(a, _c(b, 2 / _EPS, x)), s)
    ny = b.select(tiny_y, b.fmul(y, _c(b, 2 / _EPS, x)), ny)
    usable = b.and_(_not(b, tiny_y), b.fcmp("ole", bb, _c(b, _B_CROSS, x)))
    return rx, usable, bb, s, ny


def _asinh64(b, z: Cx) -> Cx:
    x, y = z
    ax, ay = b.fabs(x), b.fabs(y)
    rx, usable, bb, s, ny = _hard_work(b, ax, ay)
    ry = b.select(usable, mathlib.asin(b, bb), mathlib.atan2(b, ny, s))
    # Large |z| (and the infinities, which come out as Annex G's): log|2z| + i arg z.
    large = b.or_(b.fcmp("ogt", ax, _c(b, _RECIP_EPS, x)), b.fcmp("ogt", ay, _c(b, _RECIP_EPS, x)))
    lg_re = b.fadd(_log_abs_f64(b, ax, ay), _c(b, _LN2, x))
    lg_re = b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), lg_re)
    lg = Cx(lg_re, mathlib.atan2(b, ay, ax))
    out = _sel(b, large, lg, Cx(rx, ry))
    lim = _c(b, _SQRT_6_EPS / 4, x)
    small = b.and_(b.fcmp("olt", ax, lim), b.fcmp("olt", ay, lim))
    out = _sel(b, small, Cx(ax, ay), out)
    out = Cx(b.copysign(out.re, x), b.copysign(out.im, y))
    # NaNs, as glibc: (+-inf, NaN) for an infinite part, (NaN, y) at y = 0.
    nan = _c(b, NAN, x)
    nan_x, nan_y = _isnan(b, x), _isnan(b, y)
    out = _sel(b, b.or_(nan_x, nan_y), Cx(nan, nan), out)
    out = _sel(b, b.and_(nan_x, _is_zero(b, y)), Cx(nan, y), out)
    out = _sel(b, b.and_(nan_y, _is_inf(b, x)), Cx(x, nan), out)
    return _sel(b, b.and_(nan_x, _is_inf(b, y)), Cx(b.copysign(_c(b, INF, x), x), nan), out)


def asinh(b, z: Cx) -> Cx:
    """asinh z = log(z + sqrt(1 + z**2)) (Annex G's casinh, glibc's special values)."""
    return _in_f64(_asinh64, b, z)


def _asin64(b, z: Cx) -> Cx:
    x, y = z
    w = _asinh64(b, Cx(b.fneg(y), x))
    out = Cx(w.im, b.fneg(w.re))
    # NaNs, as glibc's casin (not through casinh): z at x = 0, (NaN, +-inf) at an
    # infinite part.
    nan = _c(b, NAN, x)
    any_nan = b.fcmp("uno", x, y)
    inf_part = b.or_(_is_inf(b, x), _is_inf(b, y))
    at_nan = _sel(b, inf_part, Cx(nan, b.copysign(_c(b, INF, x), y)), Cx(nan, nan))
    at_nan = _sel(b, _is_zero(b, x), z, at_nan)
    return _sel(b, any_nan, at_nan, out)


def asin(b, z: Cx) -> Cx:
    """asin z = -i asinh(iz) (glibc's casin, with its special values)."""
    return _in_f64(_asin64, b, z)


def _recip_re(b, x, y):
    """Re(1 / (x + iy)) = x / (x**2 + y**2) for x, y >= 0 with max(x, y) > 2**52, both
    scaled by the larger so that neither square overflows or spuriously underflows."""
    m = b.maxnum(x, y)
    u, v = b.fdiv(x, m), b.fdiv(y, m)
    return b.fdiv(b.fdiv(u, b.fadd(b.fmul(u, u), b.fmul(v, v))), m)


def _atanh64(b, z: Cx) -> Cx:
    x, y = z
    ax, ay = b.fabs(x), b.fabs(y)
    zero, one, two = _c(b, 0.0, x), _c(b, 1.0, x), _c(b, 2.0, x)
    quarter, half = _c(b, 0.25, x), _c(b, 0.5, x)
    # Re: log((1 + x)**2 + y**2) / ((1 - x)**2 + y**2)) / 4, as log1p of 4x / |z - 1|**2.
    xm1 = b.fsub(ax, one)
    y2 = b.select(b.fcmp("olt", ay, _c(b, _SQRT_MIN, x)), zero, b.fmul(ay, ay))
    rx = b.fmul(mathlib.log1p(b, b.fdiv(b.fmul(ax, _c(b, 4.0, x)), b.fadd(b.fmul(xm1, xm1), y2))),
                quarter)  # fmt: skip
    x_is_1 = b.fcmp("oeq", ax, one)
    eps = _c(b, _EPS, x)
    at_1 = b.fmul(b.fsub(_c(b, _LN2, x), mathlib.log(b, ay)), half)
    rx = b.select(b.and_(x_is_1, b.fcmp("olt", ay, eps)), at_1, rx)
    # Im: atan2(2y, 1 - x**2 - y**2) / 2.
    omx = b.fmul(b.fsub(one, ax), b.fadd(one, ax))
    ry = mathlib.atan2(b, b.fmul(ay, two), b.fsub(omx, b.fmul(ay, ay)))
    ry = b.select(b.fcmp("olt", ay, eps), mathlib.atan2(b, b.fmul(ay, two), omx), ry)
    ry = b.fmul(b.select(x_is_1, mathlib.atan2(b, two, b.fneg(ay)), ry), half)
    out = Cx(rx, ry)
    lim = _c(b, _SQRT_3_EPS / 2, x)
    out = _sel(b, b.and_(b.fcmp("olt", ax, lim), b.fcmp("olt", ay, lim)), Cx(ax, ay), out)
    # Large |z| (the infinities included): 1/z + i pi/2 to the last bit.
    big = _c(b, _RECIP_EPS, x)
    large = b.or_(b.fcmp("ogt", ax, big), b.fcmp("ogt", ay, big))
    inf_part = b.or_(_is_inf(b, x), _is_inf(b, y))
    far = Cx(b.select(inf_part, zero, _recip_re(b, ax, ay)), _c(b, _PIO2_HI, x))
    out = _sel(b, large, far, out)
    out = _sel(b, _is_zero(b, x), Cx(ax, mathlib.atan(b, ay)), out)
    real_axis = b.and_(_is_zero(b, y), b.fcmp("ole", ax, one))
    out = _sel(b, real_axis, Cx(mathlib.atanh(b, ax), ay), out)
    out = Cx(b.copysign(out.re, x), b.copysign(out.im, y))
    # NaNs, as glibc: (+-0, NaN) for a NaN y with x zero or infinite, (+-0, +-pi/2) for
    # an infinite y (with any x, NaN too: the zero takes the NaN's sign).
    nan, zero_x = _c(b, NAN, x), b.copysign(zero, x)
    nan_y = _isnan(b, y)
    out = _sel(b, b.fcmp("uno", x, y), Cx(nan, nan), out)
    out = _sel(b, b.and_(nan_y, b.or_(_is_zero(b, x), _is_inf(b, x))), Cx(zero_x, nan), out)
    return _sel(b, _is_inf(b, y), Cx(zero_x, b.copysign(_c(b, _PIO2_HI, x), y)), out)


def atanh(b, z: Cx) -> Cx:
    """atanh z = log((1 + z) / (1 - z)) / 2 (glibc's catanh special values)."""
    return _in_f64(_atanh64, b, z)


def _swap(z: Cx) -> Cx:
    return Cx(z.im, z.re)


def atan(b, z: Cx) -> Cx:
    """atan z = swap(atanh(swap z)), swap(x + iy) = y + ix: glibc's catan is this
    mirror of its catanh, special values included."""
    return _in_f64(lambda b, z: _swap(_atanh64(b, _swap(z))), b, z)


def _acos_finite(b, z: Cx) -> Cx:
    """acos z = pi/2 - asin z, computed so that it stays accurate near z = 1; also right
    at the infinities (Annex G's values), not at NaNs."""
    x, y = z
    ax, ay = b.fabs(x), b.fabs(y)
    zero = _c(b, 0.0, x)
    neg_x = b.fcmp("olt", b.copysign(_c(b, 1.0, x), x), zero)
    ry, usable, bb, s, nx = _hard_work(b, ay, ax)
    by_b = mathlib.acos(b, b.select(neg_x, b.fneg(bb), bb))
    rx = b.select(usable, by_b, mathlib.atan2(b, s, b.select(neg_x, b.fneg(nx), nx)))
    big = _c(b, _RECIP_EPS, x)
    large = b.or_(b.fcmp("ogt", ax, big), b.fcmp("ogt", ay, big))
    lg_im = b.fadd(_log_abs_f64(b, ax, ay), _c(b, _LN2, x))
    lg_im = b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), lg_im)
    out = _sel(b, large, Cx(mathlib.atan2(b, ay, x), lg_im), Cx(rx, ry))
    lim = _c(b, _SQRT_6_EPS / 4, x)
    small = b.and_(b.fcmp("olt", ax, lim), b.fcmp("olt", ay, lim))
    pio2 = b.fsub(_c(b, _PIO2_HI, x), b.fsub(x, _c(b, _PIO2_LO, x)))
    out = _sel(b, small, Cx(pio2, ay), out)
    one = b.and_(b.fcmp("oeq", x, _c(b, 1.0, x)), _is_zero(b, y))
    out = _sel(b, one, Cx(zero, ay), out)
    return Cx(out.re, b.copysign(out.im, b.fneg(y)))


def _acos64(b, z: Cx) -> Cx:
    x, y = z
    out = _acos_finite(b, z)
    # NaNs, as glibc's cacos (pi/2 - casin z): (pi/2, NaN) at x = 0, (NaN, -+inf) at an
    # infinite part.
    nan = _c(b, NAN, x)
    at_nan = _sel(b, b.or_(_is_inf(b, x), _is_inf(b, y)),
                  Cx(nan, b.fneg(b.copysign(_c(b, INF, x), y))), Cx(nan, nan))  # fmt: skip
    at_nan = _sel(b, _is_zero(b, x), Cx(_c(b, _PIO2_HI, x), nan), at_nan)
    return _sel(b, b.fcmp("uno", x, y), at_nan, out)


def acos(b, z: Cx) -> Cx:
    """acos z = pi/2 - asin z (glibc's cacos special values)."""
    return _in_f64(_acos64, b, z)


def _acosh64(b, z: Cx) -> Cx:
    x, y = z
    w = _acos_finite(b, z)
    out = Cx(b.fabs(w.im), b.copysign(w.re, y))
    # NaNs, as glibc's cacosh: +inf real part for an infinite part; pi/2 beside a NaN
    # at x = 0.
    nan, inf = _c(b, NAN, x), _c(b, INF, x)
    at_nan = _sel(b, b.or_(_is_inf(b, x), _is_inf(b, y)), Cx(inf, nan), Cx(nan, nan))
    at_nan = _sel(b, _is_zero(b, x), Cx(nan, _c(b, _PIO2_HI, x)), at_nan)
    return _sel(b, b.fcmp("uno", x, y), at_nan, out)


def acosh(b, z: Cx) -> Cx:
    """acosh z = log(z + sqrt(z + 1) sqrt(z - 1)) (glibc's cacosh special values)."""
    return _in_f64(_acosh64, b, z)
