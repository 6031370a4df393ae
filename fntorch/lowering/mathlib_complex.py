"""Complex arithmetic and functions for kernels, on (re, im) pairs of f32 or f64 values.

A complex64/complex128 value lives in a kernel as ``Cx(re, im)``, two scalars of its
parts' type (``builder.reg_type``), loaded from and stored to interleaved buffers by the
kernel template. Each function here takes the ``KernelBuilder`` and such pairs and
returns a pair (or a real value: ``modulus``), written out of ``mathlib``'s real
expansions, so it serves the CPU and NVPTX alike and vectorizes as the real ones do.

The eager impls are numpy's complex loops, so these follow numpy, not a textbook
formula, where the two differ:

- ``mul`` and ``square`` round as numpy's FMA loops on this kind of host (re by
  ``fma(a, c, -b d)``, im by ``fma(a, d, b c)``); ``div`` and ``reciprocal`` are numpy's
  Smith forms, branch for branch, so infinities and NaNs come out as numpy's do;
- ``modulus`` (``abs``) is numpy's ``m sqrt(1 + (n/m)**2)`` (no overflow, inf beats NaN);
- ``log1p`` is numpy's own ``log|1 + z| + i arg(1 + z)`` with glibc's hypot (not
  accurate near 0, as numpy's is not); ``expm1`` is the eager impl's formula;
- ``exp``, ``log``, ``sqrt``, ``sinh``, ``cosh``, ``tanh``, ``sin``, ``cos``, ``tan`` are
  the C99 Annex G functions numpy calls (glibc's), with their special values: zeros,
  infinities and NaNs in either part, signs of zero included, as numpy gives them
  (``tests/lowering/test_complex_kernels.py`` checks a grid of them).

The inverse functions (asin, acos, atan and their hyperbolic kin) are in
``mathlib_catrig``.

Accuracy: the parts' errors are those of ``mathlib``'s expansions, a few ulp (measured
against numpy: 4e-7 for complex64, 8e-16 for complex128, relative to |result|). float64
``log`` near ``|z| = 1`` carries ``|z|**2 - 1`` exactly (double-double); float32 ``log``
and ``sqrt`` compute in float64. Where a function needs sin or cos of a part of 2**50
or more (the imaginary part for exp/expm1/sinh/cosh/tanh, the real one for
sin/cos/tan), the result is NaN, as ``mathlib.sin`` is for such real arguments (numpy
gives a value there: its reduction is exact, the Cody-Waite one here is not).

>>> from fntorch.lowering.builder import KernelBuilder, f64
>>> b = KernelBuilder()
>>> a, c = b.function("re_of_square", [f64, f64], ret=f64)
>>> b.ret(square(b, Cx(a, c)).re)
>>> "llvm.fma" in str(b.module)
True
"""

from __future__ import annotations

from typing import NamedTuple

from . import mathlib
from .mathcore import T, _c, _isnan


class Cx(NamedTuple):
    """A complex value in a kernel: its real and imaginary parts."""

    re: object
    im: object


INF, NAN = float("inf"), float("nan")


def _is_inf(b, x):
    return b.fcmp("oeq", b.fabs(x), _c(b, INF, x))


def _is_finite(b, x):
    return b.fcmp("olt", b.fabs(x), _c(b, INF, x))


def _is_zero(b, x):
    return b.fcmp("oeq", x, _c(b, 0.0, x))


def _sel(b, cond, z: Cx, w: Cx) -> Cx:
    return Cx(b.select(cond, z.re, w.re), b.select(cond, z.im, w.im))


def _const(b, re: float, im: float, like) -> Cx:
    return Cx(_c(b, re, like), _c(b, im, like))


def _widen(b, z: Cx) -> Cx:
    return Cx(b.fpext(z.re, T.f64), b.fpext(z.im, T.f64))


def _narrow(b, z: Cx, like) -> Cx:
    if like.type == T.f64:
        return z
    return Cx(b.fptrunc(z.re, T.f32), b.fptrunc(z.im, T.f32))


# ------------------------------------------------------------------ arithmetic
def add(b, z: Cx, w: Cx) -> Cx:
    return Cx(b.fadd(z.re, w.re), b.fadd(z.im, w.im))


def sub(b, z: Cx, w: Cx) -> Cx:
    return Cx(b.fsub(z.re, w.re), b.fsub(z.im, w.im))


def neg(b, z: Cx) -> Cx:
    return Cx(b.fneg(z.re), b.fneg(z.im))


def conj(b, z: Cx) -> Cx:
    return Cx(z.re, b.fneg(z.im))


def mul(b, z: Cx, w: Cx) -> Cx:
    """z w, rounded as numpy's FMA loop: no Annex G recovery of infinities."""
    re = b.fma(z.re, w.re, b.fneg(b.fmul(z.im, w.im)))
    return Cx(re, b.fma(z.re, w.im, b.fmul(z.im, w.re)))


def square(b, z: Cx) -> Cx:
    """z**2 as numpy's square: re fused, im the plain sum of the two products."""
    re = b.fma(z.re, z.re, b.fneg(b.fmul(z.im, z.im)))
    return Cx(re, b.fadd(b.fmul(z.re, z.im), b.fmul(z.im, z.re)))


def div(b, z: Cx, w: Cx) -> Cx:
    """z / w by Smith's method, numpy's branches: the larger part of w divides; w = 0
    gives the parts of z over |re w| (infinities or NaNs, as numpy)."""
    a, c = z
    wr, wi = w
    ar, ai = b.fabs(wr), b.fabs(wi)
    one = _c(b, 1.0, wr)
    # |re w| >= |im w| (false for a NaN): the ratio im/re.
    rat = b.fdiv(wi, wr)
    scl = b.fdiv(one, b.fadd(wr, b.fmul(wi, rat)))
    re = b.fmul(b.fadd(a, b.fmul(c, rat)), scl)
    by_re = Cx(re, b.fmul(b.fsub(c, b.fmul(a, rat)), scl))
    zero_w = b.and_(_is_zero(b, ar), _is_zero(b, ai))
    by_re = _sel(b, zero_w, Cx(b.fdiv(a, ar), b.fdiv(c, ar)), by_re)
    # Otherwise the ratio re/im.
    rat = b.fdiv(wr, wi)
    scl = b.fdiv(one, b.fadd(wi, b.fmul(wr, rat)))
    re = b.fmul(b.fadd(b.fmul(a, rat), c), scl)
    by_im = Cx(re, b.fmul(b.fsub(b.fmul(c, rat), a), scl))
    return _sel(b, b.fcmp("oge", ar, ai), by_re, by_im)


def reciprocal(b, z: Cx) -> Cx:
    """1 / z as numpy's reciprocal (Smith's method, its own branches)."""
    x, y = z
    one = _c(b, 1.0, x)
    r = b.fdiv(y, x)
    d = b.fadd(x, b.fmul(y, r))
    by_re = Cx(b.fdiv(one, d), b.fdiv(b.fneg(r), d))
    r2 = b.fdiv(x, y)
    d2 = b.fadd(b.fmul(x, r2), y)
    by_im = Cx(b.fdiv(r2, d2), b.fdiv(b.fneg(one), d2))
    return _sel(b, b.fcmp("oge", b.fabs(x), b.fabs(y)), by_re, by_im)


def integer_pow(b, z: Cx, n: int) -> Cx:
    """z**n by squaring and multiplying in the eager impl's order; a negative n takes
    the reciprocal of the product."""
    k = abs(int(n))
    out, base = None, z
    while k:
        if k & 1:
            out = base if out is None else mul(b, out, base)
        k >>= 1
        if k:
            base = mul(b, base, base)
    if out is None:
        return _const(b, 1.0, 0.0, z.re)
    return reciprocal(b, out) if n < 0 else out


# ------------------------------------------------------------------ modulus, sign
def hypot(b, x, y):
    """sqrt(x**2 + y**2) as numpy's complex abs: m sqrt(1 + (n/m)**2), m = max(|x|, |y|);
    inf if either part is inf (even with a NaN), else NaN if either is."""
    ax, ay = b.fabs(x), b.fabs(y)
    swap = b.fcmp("olt", ax, ay)
    m = b.select(swap, ay, ax)
    n = b.select(swap, ax, ay)
    r = b.fdiv(n, m)
    out = b.fmul(m, b.sqrt(b.fma(r, r, _c(b, 1.0, x))))
    out = b.select(_is_zero(b, m), _c(b, 0.0, x), out)
    out = b.select(b.fcmp("uno", x, y), _c(b, NAN, x), out)
    return b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), out)


def modulus(b, z: Cx):
    """|z| (a real value): the ``abs`` primitive."""
    return hypot(b, z.re, z.im)


def sign(b, z: Cx) -> Cx:
    """z / |z| as numpy 2's sign: 0 at 0; at an infinite part, the unit toward it (NaN
    when both parts are infinite); NaN if |z| is."""
    x, y = z
    m = hypot(b, x, y)
    out = Cx(b.fdiv(x, m), b.fdiv(y, m))
    zero, one = _c(b, 0.0, x), _c(b, 1.0, x)
    unit_re = b.select(b.fcmp("ogt", x, zero), one, b.fneg(one))
    unit_im = b.select(b.fcmp("ogt", y, zero), one, b.fneg(one))
    inf_x, inf_y = _is_inf(b, x), _is_inf(b, y)
    at_inf = _sel(b, inf_x, Cx(unit_re, zero), Cx(zero, unit_im))
    at_inf = _sel(b, b.and_(inf_x, inf_y), _const(b, NAN, NAN, x), at_inf)
    out = _sel(b, _is_zero(b, m), Cx(zero, zero), out)
    out = _sel(b, _is_inf(b, m), at_inf, out)
    return _sel(b, _isnan(b, m), _const(b, NAN, NAN, x), out)


def is_finite(b, z: Cx):
    return b.and_(_is_finite(b, z.re), _is_finite(b, z.im))


# ---------------------------------------------------------------------- exp family
_EXP_SPLIT = {32: 88.0, 64: 709.0}  # past these e**x overflows: e**(x/2) twice instead


def _bits(x) -> int:
    return 32 if x.type == T.f32 else 64


def exp(b, z: Cx) -> Cx:
    """e**z = e**x cis(y) (Annex G): e**(x/2) applied twice where e**x alone would
    overflow while e**x cos y does not; im = y where y = 0; (inf, NaN) and (0, 0) at
    x = +-inf with y infinite or NaN."""
    x, y = z
    big = b.fcmp("ogt", x, _c(b, _EXP_SPLIT[_bits(x)], x))
    e = mathlib.exp(b, b.select(big, b.fmul(x, _c(b, 0.5, x)), x))
    re = b.fmul(e, mathlib.cos(b, y))
    im = b.fmul(e, mathlib.sin(b, y))
    re = b.select(big, b.fmul(re, e), re)
    im = b.select(big, b.fmul(im, e), im)
    im = b.select(_is_zero(b, y), y, im)
    bad_y = b.xor(_is_finite(b, y), b.true())
    out = _sel(b, b.and_(b.fcmp("oeq", x, _c(b, INF, x)), bad_y), _const(b, INF, NAN, x),
               Cx(re, im))  # fmt: skip
    return _sel(b, b.and_(b.fcmp("oeq", x, _c(b, -INF, x)), bad_y), _const(b, 0.0, 0.0, x), out)


def expm1(b, z: Cx) -> Cx:
    """e**z - 1 as the eager impl computes it: expm1(x) cos y - 2 sin(y/2)**2 +
    i e**x sin y, with its special values at x = +-inf, at 0 and at NaN + 0j."""
    x, y = z
    zero, inf = _c(b, 0.0, x), _c(b, INF, x)
    s, cy = mathlib.sin(b, y), mathlib.cos(b, y)
    h = mathlib.sin(b, b.fmul(y, _c(b, 0.5, x)))
    re = b.fsub(b.fmul(mathlib.expm1(b, x), cy), b.fmul(_c(b, 2.0, x), b.fmul(h, h)))
    im = b.fmul(mathlib.exp(b, x), s)
    finite_y, zero_y = _is_finite(b, y), _is_zero(b, y)
    neg_inf, pos_inf = b.fcmp("oeq", x, b.fneg(inf)), b.fcmp("oeq", x, inf)
    re = b.select(neg_inf, _c(b, -1.0, x), re)
    im = b.select(neg_inf, b.select(finite_y, b.fmul(zero, s), zero), im)
    cis_re = b.select(zero_y, inf, b.fmul(inf, cy))
    re = b.select(pos_inf, b.select(finite_y, cis_re, inf), re)
    cis_im = b.select(finite_y, b.fmul(inf, s), _c(b, NAN, x))
    im = b.select(pos_inf, b.select(zero_y, y, cis_im), im)
    re = b.select(b.and_(_is_zero(b, x), zero_y), zero, re)
    im = b.select(b.and_(_isnan(b, x), zero_y), y, im)
    return Cx(re, im)


# ---------------------------------------------------------------------------- log
def _log_abs_f64(b, x, y):
    """log|x + iy| for float64 parts: near |z| = 1, log1p of |z|**2 - 1 summed exactly
    from the squares' double-double parts; elsewhere log m + log1p((n/m)**2) / 2."""
    ax, ay = b.fabs(x), b.fabs(y)
    swap = b.fcmp("olt", ax, ay)
    m = b.select(swap, ay, ax)
    n = b.select(swap, ax, ay)
    half, one = _c(b, 0.5, x), _c(b, 1.0, x)
    p = b.fmul(m, m)
    p_lo = b.fma(m, m, b.fneg(p))
    q = b.fmul(n, n)
    q_lo = b.fma(n, n, b.fneg(q))
    s1, e1 = mathlib._two_sum(b, p, b.fneg(one))
    s2, e2 = mathlib._two_sum(b, s1, q)
    t = b.fadd(s2, b.fadd(b.fadd(e1, e2), b.fadd(p_lo, q_lo)))
    near = b.fmul(half, mathlib.log1p(b, t))
    r = b.fdiv(n, m)
    far = b.fadd(mathlib.log(b, m), b.fmul(half, mathlib.log1p(b, b.fmul(r, r))))
    h = b.fadd(p, q)
    close = b.and_(b.fcmp("oge", h, half), b.fcmp("ole", h, _c(b, 2.0, x)))
    return b.select(close, near, far)


def _log_abs_f32(b, x, y):
    """log|x + iy| for float32 parts, in float64: the squares are exact there, and so is
    m**2 - 1 near |z| = 1 (48 bits of m**2 above 2**-49)."""
    xd, yd = b.fpext(x, T.f64), b.fpext(y, T.f64)
    ax, ay = b.fabs(xd), b.fabs(yd)
    swap = b.fcmp("olt", ax, ay)
    m = b.select(swap, ay, ax)
    n = b.select(swap, ax, ay)
    half = _c(b, 0.5, xd)
    p, q = b.fmul(m, m), b.fmul(n, n)
    h = b.fadd(p, q)
    near = mathlib.log1p(b, b.fadd(b.fsub(p, _c(b, 1.0, xd)), q))
    close = b.and_(b.fcmp("oge", h, half), b.fcmp("ole", h, _c(b, 2.0, xd)))
    out = b.fmul(half, b.select(close, near, mathlib.log(b, h)))
    return b.fptrunc(out, T.f32)


def log(b, z: Cx) -> Cx:
    """log|z| + i atan2(y, x) (Annex G): -inf at 0, +inf at an infinite part (NaN in
    the other or not), NaN at a NaN part otherwise."""
    x, y = z
    re = (_log_abs_f32 if x.type == T.f32 else _log_abs_f64)(b, x, y)
    zero = b.and_(_is_zero(b, x), _is_zero(b, y))
    re = b.select(zero, _c(b, -INF, x), re)
    re = b.select(b.fcmp("uno", x, y), _c(b, NAN, x), re)
    re = b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), re)
    return Cx(re, mathlib.atan2(b, y, x))


def _libm_hypot(b, x, y):
    """C's hypot as glibc rounds it (numpy's complex log1p calls it): float32 as the
    float64 sqrt(x**2 + y**2) rounded; float64 by Borges' corrected square root (glibc's
    build without FMA, matched bit for bit on random samples), scaled by 2**600 outside
    [2**-511, 2**511]. Near 0, log1p's real part is the log of this value near 1, so a
    last-bit difference here would be a large relative one there."""
    if x.type == T.f32:
        xd, yd = b.fpext(x, T.f64), b.fpext(y, T.f64)
        h = b.sqrt(b.fadd(b.fmul(xd, xd), b.fmul(yd, yd)))
        return b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), b.fptrunc(h, T.f32))
    ax, ay = b.fabs(x), b.fabs(y)
    swap = b.fcmp("olt", ax, ay)
    m = b.select(swap, ay, ax)
    n = b.select(swap, ax, ay)
    big = b.fcmp("ogt", m, _c(b, 2.0**511, x))
    tiny = b.fcmp("olt", n, _c(b, 2.0**-511, x))
    s = b.select(big, _c(b, 2.0**-600, x), b.select(tiny, _c(b, 2.0**600, x), _c(b, 1.0, x)))
    m, n = b.fmul(m, s), b.fmul(n, s)
    two, four = _c(b, 2.0, x), _c(b, 4.0, x)
    h = b.sqrt(b.fadd(b.fmul(m, m), b.fmul(n, n)))
    # h's rounding error from the exact residual m**2 + n**2 - h**2 = -(t1 + t2).
    d_n = b.fsub(h, n)
    t1_n = b.fmul(m, b.fsub(b.fmul(two, d_n), m))
    t2_n = b.fmul(b.fsub(d_n, b.fmul(two, b.fsub(m, n))), d_n)
    d_m = b.fsub(h, m)
    t1_m = b.fmul(b.fmul(two, d_m), b.fsub(m, b.fmul(two, n)))
    t2_m = b.fadd(b.fmul(b.fsub(b.fmul(four, d_m), n), n), b.fmul(d_m, d_m))
    near = b.fcmp("ole", h, b.fmul(two, n))
    t = b.fadd(b.select(near, t1_n, t1_m), b.select(near, t2_n, t2_m))
    h = b.fdiv(b.fsub(h, b.fdiv(t, b.fmul(two, h))), s)
    # n below m 2**-54 adds nothing but its rounding: m + n, as glibc returns.
    m, n = b.fdiv(m, s), b.fdiv(n, s)
    h = b.select(b.fcmp("ole", n, b.fmul(m, _c(b, 2.0**-54, x))), b.fadd(m, n), h)
    h = b.select(b.fcmp("uno", x, y), _c(b, NAN, x), h)
    return b.select(b.or_(_is_inf(b, x), _is_inf(b, y)), _c(b, INF, x), h)


def log1p(b, z: Cx) -> Cx:
    """log(1 + z) as numpy computes it: log|u + iy| + i atan2(y, u), u = 1 + x rounded."""
    u = b.fadd(z.re, _c(b, 1.0, z.re))
    return Cx(mathlib.log(b, _libm_hypot(b, u, z.im)), mathlib.atan2(b, z.im, u))


# --------------------------------------------------------------------------- sqrt
def _sqrt_core(b, x, y):
    """The principal sqrt of finite x + iy (Kahan): t = sqrt((|x| + |z|) / 2), then
    (t, y / 2t) for x >= 0, (|y| / 2t, t with y's sign) for x < 0."""
    t = b.sqrt(b.fmul(b.fadd(b.fabs(x), hypot(b, x, y)), _c(b, 0.5, x)))
    u = b.fdiv(y, b.fadd(t, t))
    right = b.fcmp("oge", x, _c(b, 0.0, x))
    return Cx(b.select(right, t, b.fabs(u)), b.select(right, u, b.copysign(t, y)))


def sqrt(b, z: Cx) -> Cx:
    """Principal square root (Annex G). float32 computes in float64 (no overflow, no
    underflow); float64 scales by 1/4 near overflow and by 2**108 in the subnormals."""
    x, y = z
    if x.type == T.f32:
        w = _narrow(b, _sqrt_core(b, *_widen(b, z)), x)
    else:
        m = b.maxnum(b.fabs(x), b.fabs(y))
        big = b.fcmp("ogt", m, _c(b, 2.0**1020, x))
        small = b.fcmp("olt", m, _c(b, 2.0**-1000, x))
        s = b.select(big, _c(b, 0.25, x), b.select(small, _c(b, 2.0**108, x), _c(b, 1.0, x)))
        back = b.select(big, _c(b, 2.0, x), b.select(small, _c(b, 2.0**-54, x), _c(b, 1.0, x)))
        w = _sqrt_core(b, b.fmul(x, s), b.fmul(y, s))
        w = Cx(b.fmul(w.re, back), b.fmul(w.im, back))
    inf, zero = _c(b, INF, x), _c(b, 0.0, x)
    nan_y = _isnan(b, y)
    # x = +-inf with a NaN y: (inf, NaN) and (NaN, +-inf); an infinite y: (inf, y).
    w = _sel(b, b.and_(b.fcmp("oeq", x, inf), nan_y), Cx(inf, y), w)
    w = _sel(b, b.and_(b.fcmp("oeq", x, b.fneg(inf)), nan_y), Cx(y, b.copysign(inf, y)), w)
    w = _sel(b, b.and_(_is_zero(b, x), _is_zero(b, y)), Cx(zero, y), w)
    return _sel(b, _is_inf(b, y), Cx(inf, y), w)


def rsqrt(b, z: Cx) -> Cx:
    """1 / sqrt(z), as the eager impl: numpy's reciprocal of the square root."""
    return reciprocal(b, sqrt(b, z))


# ---------------------------------------------------------------- hyperbolic, trig
_HYP_SPLIT = {32: 88.0, 64: 709.0}  # past these e**|x| / 2 overflows; products may not
_TANH_SPLIT = {32: 44.0, 64: 354.0}  # glibc's: tanh is +-1 and im e**-2|x| past these
_EPS = {32: 2.0**-23, 64: 2.0**-52}


def _hyperbolic_products(b, x, y, odd: bool) -> Cx:
    """(sinh x cos y, cosh x sin y) for ``odd``, else (cosh x cos y, sinh x sin y), with
    e**|x| / 2 applied as two halves of e**(|x|/2) where it alone would overflow."""
    c, s = mathlib.cos(b, y), mathlib.sin(b, y)
    sh, ch = mathlib.sinh(b, x), mathlib.cosh(b, x)
    near = Cx(b.fmul(sh, c), b.fmul(ch, s)) if odd else Cx(b.fmul(ch, c), b.fmul(sh, s))
    a = b.fabs(x)
    w = mathlib.exp(b, b.fmul(a, _c(b, 0.5, x)))
    half = _c(b, 0.5, x)
    sign = b.copysign(_c(b, 1.0, x), x)

    def big(t, sinh_part):
        v = b.fmul(b.fmul(w, b.fmul(half, t)), w)
        return b.fmul(v, sign) if sinh_part else v

    far = Cx(big(c, odd), big(s, not odd))
    return _sel(b, b.fcmp("ogt", a, _c(b, _HYP_SPLIT[_bits(x)], x)), far, near)


def sinh(b, z: Cx) -> Cx:
    """sinh x cos y + i cosh x sin y with glibc's special values: im = y at y = 0;
    (x, NaN) at x = 0 and (+inf, NaN) at x = +-inf when y is infinite or NaN."""
    x, y = z
    out = _hyperbolic_products(b, x, y, True)
    out = Cx(out.re, b.select(_is_zero(b, y), y, out.im))
    bad_y = b.xor(_is_finite(b, y), b.true())
    out = _sel(b, b.and_(_is_zero(b, x), bad_y), Cx(x, _c(b, NAN, x)), out)
    return _sel(b, b.and_(_is_inf(b, x), bad_y), _const(b, INF, NAN, x), out)


def cosh(b, z: Cx) -> Cx:
    """cosh x cos y + i sinh x sin y with glibc's special values: at y = 0 im is a zero
    of sign(x) sign(y) (y for a NaN x); (NaN, +0) at x = 0 and (+inf, NaN) at x = +-inf
    when y is infinite or NaN."""
    x, y = z
    out = _hyperbolic_products(b, x, y, False)
    signed = b.select(_isnan(b, x), y, b.fmul(b.copysign(_c(b, 1.0, x), x), y))
    out = Cx(out.re, b.select(_is_zero(b, y), signed, out.im))
    bad_y = b.xor(_is_finite(b, y), b.true())
    out = _sel(b, b.and_(_is_zero(b, x), bad_y), _const(b, NAN, 0.0, x), out)
    return _sel(b, b.and_(_is_inf(b, x), bad_y), _const(b, INF, NAN, x), out)


def _tanh(b, x, y, zero_sign_of_y: bool) -> Cx:
    """glibc's ctanh (Kahan's form): sinh x cosh x / d + i sin y cos y / d with
    d = sinh**2 x + cos**2 y; +-1 + i 4 sin y cos y e**-2|x| for large |x|. At x = +-inf
    im is a zero of y's sign (``zero_sign_of_y``: the eager tanh's) or, as glibc, of
    sin y cos y's for a finite |y| > 1."""
    bits = _bits(x)
    s, c = mathlib.sin(b, y), mathlib.cos(b, y)
    sh, ch = mathlib.sinh(b, x), mathlib.cosh(b, x)
    cc = b.fmul(c, c)
    full = b.fcmp("ogt", b.fabs(sh), b.fmul(b.fabs(c), _c(b, _EPS[bits], x)))
    d = b.select(full, b.fadd(b.fmul(sh, sh), cc), cc)
    sc = b.fmul(s, c)
    out = Cx(b.fdiv(b.fmul(sh, ch), d), b.fdiv(sc, d))
    a = b.fabs(x)
    one = b.copysign(_c(b, 1.0, x), x)
    tail = b.fmul(b.fmul(_c(b, 4.0, x), sc), mathlib.exp(b, b.fmul(a, _c(b, -2.0, x))))
    out = _sel(b, b.fcmp("ogt", a, _c(b, _TANH_SPLIT[bits], x)), Cx(one, tail), out)
    nan, zero_y = _c(b, NAN, x), _is_zero(b, y)
    odd = b.xor(b.and_(_is_finite(b, x), _is_finite(b, y)), b.true())
    odd_re = b.select(b.or_(zero_y, _is_zero(b, x)), x, nan)
    out = _sel(b, odd, Cx(odd_re, b.select(zero_y, y, nan)), out)
    zero = b.copysign(_c(b, 0.0, x), y)
    if not zero_sign_of_y:
        big_y = b.and_(_is_finite(b, y), b.fcmp("ogt", b.fabs(y), _c(b, 1.0, x)))
        zero = b.select(big_y, b.copysign(_c(b, 0.0, x), sc), zero)
    return _sel(b, _is_inf(b, x), Cx(one, zero), out)


def tanh(b, z: Cx) -> Cx:
    """tanh z as the eager impl: glibc's, with im a zero of y's sign at x = +-inf."""
    return _tanh(b, z.re, z.im, True)


def _times_i(b, z: Cx) -> Cx:
    return Cx(b.fneg(z.im), z.re)


def _over_i(b, z: Cx) -> Cx:
    return Cx(z.im, b.fneg(z.re))


def sin(b, z: Cx) -> Cx:
    """sin z = -i sinh(iz); at an infinite y with x infinite or NaN, (NaN, +inf) as
    glibc's csin (the identity would give -inf)."""
    out = _over_i(b, sinh(b, _times_i(b, z)))
    fix = b.and_(_is_inf(b, z.im), b.xor(_is_finite(b, z.re), b.true()))
    return Cx(out.re, b.select(fix, _c(b, INF, z.re), out.im))


def cos(b, z: Cx) -> Cx:
    """cos z = cosh(iz)."""
    return cosh(b, _times_i(b, z))


def tan(b, z: Cx) -> Cx:
    """tan z = -i tanh(iz), with glibc's ctan zero signs (numpy's, unpatched)."""
    w = _times_i(b, z)
    return _over_i(b, _tanh(b, w.re, w.im, False))
