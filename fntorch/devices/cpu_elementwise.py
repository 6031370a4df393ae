"""CPU (numpy) impls of the elementwise primitives.

The simple primitives map straight to a numpy ufunc (no wrapper: eager dispatch is
measured); numpy and ml_dtypes keep the input dtype for every float dtype, bfloat16
included. Wrappers exist only where numpy's semantics differ from the primitive's:

- integer ``div`` truncates toward zero and ``rem`` takes the dividend's sign. Division
  by zero does not trap; it gives what XLA gives: ``x / 0 == -1`` (all bits set, the
  dtype's max for unsigned), ``x % 0 == x``; ``INT_MIN / -1 == INT_MIN``,
  ``INT_MIN % -1 == 0``.
- integer ``pow`` with a negative exponent is 0, except for the bases 1 and -1 (XLA).
- shifts by a negative amount or by at least the bit width give 0, or the sign fill for
  ``shift_right_arithmetic`` (XLA); arithmetic and logical shifts act on the bit
  pattern, whatever the signedness of the dtype. They, ``integer_pow`` and the complex
  parts are written over an array module in ``xp_impls``, shared with the CUDA device.
- ``erf``, ``erf_inv``, ``lgamma`` and ``digamma`` have no ufunc: they are computed in
  float64 with vectorized series / rational approximations and cast back.
  ``digamma`` at a non-positive integer (a pole) is NaN, as in XLA.
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_elementwise as ew
from ..ops._erf_inv_coeffs import ERF_F32_P as _ERF_F32_P
from ..ops._erf_inv_coeffs import ERF_F32_Q as _ERF_F32_Q
from ..ops._erf_inv_coeffs import GILES_CENTRAL as _GILES_CENTRAL
from ..ops._erf_inv_coeffs import GILES_TAIL as _GILES_TAIL
from ._device import cpu_impls
from .xp_impls import division_impls, elementwise_impls, quiet

_UFUNCS = {
    ew.neg_p: np.negative,
    ew.floor_p: np.floor,
    ew.ceil_p: np.ceil,
    ew.round_p: np.rint,  # half to even
    ew.is_finite_p: np.isfinite,
    ew.signbit_p: np.signbit,
    ew.exp_p: np.exp,
    ew.exp2_p: np.exp2,
    ew.log_p: np.log,
    ew.log1p_p: np.log1p,
    ew.expm1_p: np.expm1,
    ew.tanh_p: np.tanh,
    ew.sin_p: np.sin,
    ew.cos_p: np.cos,
    ew.tan_p: np.tan,
    ew.asin_p: np.arcsin,
    ew.acos_p: np.arccos,
    ew.atan_p: np.arctan,
    ew.sinh_p: np.sinh,
    ew.cosh_p: np.cosh,
    ew.asinh_p: np.arcsinh,
    ew.acosh_p: np.arccosh,
    ew.atanh_p: np.arctanh,
    ew.sqrt_p: np.sqrt,
    ew.cbrt_p: np.cbrt,
    ew.abs_p: np.absolute,
    ew.not_p: np.invert,  # logical on bool, bitwise on integers
    ew.square_p: np.square,
    ew.add_p: np.add,
    ew.sub_p: np.subtract,
    ew.mul_p: np.multiply,
    ew.atan2_p: np.arctan2,
    ew.and_p: np.bitwise_and,
    ew.or_p: np.bitwise_or,
    ew.xor_p: np.bitwise_xor,
    ew.eq_p: np.equal,
    ew.ne_p: np.not_equal,
    ew.lt_p: np.less,
    ew.le_p: np.less_equal,
    ew.gt_p: np.greater,
    ew.ge_p: np.greater_equal,
}
cpu_impls.update(_UFUNCS)


def _is_int(x) -> bool:
    return x.dtype.kind in "iu"


# ------------------------------------------------------------------ signed zeros
# The compiled kernels (``rules._sign``, ``rules._minmax``) follow numpy's float32 and
# float64 loops; two of numpy's other loops treat -0.0 otherwise.


def _sign(x):
    r = np.sign(x)
    if r.dtype == dt.bfloat16:  # ml_dtypes gives sign(-0.0) = -0.0; numpy's loops +0.0
        r = r + r.dtype.type(0)
    return r


def _tie_takes_second(fn):
    """numpy's maximum/minimum/nextafter: NaN propagates; of two equal values (+0.0 and
    -0.0) the second is returned, except in numpy's float16 loops, which return the first."""

    def impl(x, y):
        r = fn(x, y)
        if r.dtype == np.float16:
            r = np.where(np.equal(x, y), y, r)
        return r

    impl.__name__ = fn.__name__
    return impl


cpu_impls[ew.sign_p] = _sign
cpu_impls[ew.max_p] = _tie_takes_second(np.maximum)
cpu_impls[ew.min_p] = _tie_takes_second(np.minimum)
cpu_impls[ew.nextafter_p] = _tie_takes_second(np.nextafter)


# ------------------------------------------------------------------ integer arithmetic

cpu_impls.update(division_impls(np))  # XLA's integer edge cases (xp_impls)


def _pow(x, y):
    if not _is_int(x):
        return np.power(x, y)
    neg = y < 0
    r = np.power(x, np.where(neg, np.zeros((), y.dtype), y))
    if np.any(neg):
        one = np.ones((), x.dtype)
        minus_one_pow = np.where((y & 1) == 1, -one, one)
        small = np.where(x == 1, one, np.where(x == -one, minus_one_pow, np.zeros((), x.dtype)))
        r = np.where(neg, small, r)
    return r


cpu_impls[ew.pow_p] = _pow


# --------------------------------------------------------------- small float functions


def _logistic(x):
    # exp of a non-positive number never overflows; both branches are accurate.
    e = np.exp(-np.abs(x))
    r = np.reciprocal(1 + e)
    return np.where(x >= 0, r, e * r)


cpu_impls[ew.logistic_p] = _logistic


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


cpu_impls[ew.rsqrt_p] = _rsqrt


def _select_n(which, *cases):
    # An int32 selector out of range picks the nearest case (clipped), never an error.
    if len(cases) == 1:
        shape = np.broadcast_shapes(np.shape(which), np.shape(cases[0]))
        return np.array(np.broadcast_to(cases[0], shape))
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    if len(cases) <= 32:
        return np.choose(which, cases, mode="clip")
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = np.where(which <= i, cases[i], out)
    return out


cpu_impls[ew.select_n_p] = _select_n


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


cpu_impls[ew.clamp_p] = _clamp


# ------------------------------------------------------------------ complex functions


def _expm1(x):
    if not np.iscomplexobj(x):
        return np.expm1(x)
    return _complex_expm1(np.asarray(x))


def _complex_expm1(z):
    """``exp(z) - 1`` for complex ``z``, accurate near 0 (``expm1(x) cos(y) - 2 sin(y/2)^2
    + i e^x sin(y)``) and with the standard's special values at infinities and NaNs,
    where numpy's complex expm1 differs (``expm1(-inf + inf j)`` is ``-1 + 0j``)."""
    x, y = z.real, z.imag
    with np.errstate(all="ignore"):
        re = np.expm1(x) * np.cos(y) - 2 * np.sin(y / 2) ** 2
        im = np.exp(x) * np.sin(y)
        finite_y = np.isfinite(y)
        neg_inf, pos_inf = x == -np.inf, x == np.inf
        # e^x -> 0: -1 + 0 cis(y), the zero signed by sin(y) where that is defined.
        re = np.where(neg_inf, -1.0, re)
        im = np.where(neg_inf, np.where(finite_y, 0.0 * np.sin(np.where(finite_y, y, 0)), 0.0), im)
        # e^x -> inf: inf cis(y) (+inf + 0j at y = 0, inf + NaN j for y inf or NaN).
        cis_inf = np.where(y == 0, np.inf, np.inf * np.cos(y))
        re = np.where(pos_inf, np.where(finite_y, cis_inf, np.inf), re)
        im = np.where(
            pos_inf, np.where(y == 0, y, np.where(finite_y, np.inf * np.sin(y), np.nan)), im
        )
        # +-0 + 0j is +0 + 0j (the standard's; the formula gives -0 - 0 for -0).
        re = np.where((x == 0) & (y == 0), 0.0, re)
        # NaN + 0j keeps its zero imaginary part.
        im = np.where(np.isnan(x) & (y == 0), y, im)
    out = np.empty(z.shape, z.dtype)
    out.real, out.imag = re, im
    return out


cpu_impls[ew.expm1_p] = _expm1


def _tanh(x):
    out = np.tanh(x)
    if np.iscomplexobj(out):
        # tanh(+-inf + iy) is +-1 + 0j with the zero signed as y (the standard's); numpy's
        # sign follows sin(2y), which rounding makes either sign for large y.
        x = np.asarray(x)
        at_inf = np.isinf(x.real) & np.isfinite(x.imag)
        if np.any(at_inf):
            out = np.array(out)
            out.imag = np.where(at_inf, np.copysign(0.0, x.imag), out.imag)
    return out


cpu_impls[ew.tanh_p] = _tanh
cpu_impls.update(elementwise_impls(np))  # integer_pow, shifts, complex parts


# ------------------------------------------- special functions, in float64 and cast back

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf_series(x, xp=np):
    # erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!!: all terms positive,
    # so no cancellation; 60 terms reach double precision for |x| <= 3.
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, 60):
        term = term * (2.0 * x2 / (2 * n + 1))
        total += term
    return _TWO_OVER_SQRT_PI * xp.exp(-x2) * total


def _erfc_cf(x, xp=np):
    # erfc(x) for x >= 3 by its continued fraction
    # erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), evaluated
    # from the tail; 60 levels reach double precision for x >= 3.
    f = x.copy()
    for k in range(60, 0, -1):
        f = x + (k / 2.0) / f
    return xp.exp(-x * x) / (math.sqrt(math.pi) * f)


def _erf_erfc64(x, xp=np):
    """(erf(x), erfc(|x|)) in float64; erfc accurate in relative terms for |x| >= 3."""
    a = xp.abs(x)
    small = a < 3.0
    s = _erf_series(xp.where(small, a, 0.0), xp)
    c = _erfc_cf(xp.where(small, 3.0, xp.where(xp.isfinite(a), a, 30.0)), xp)
    c = xp.where(a > 30.0, 0.0, c)
    erfc_abs = xp.where(small, 1.0 - s, c)
    erf_abs = xp.where(small, s, 1.0 - c)
    erf = xp.copysign(erf_abs, x)
    return xp.where(xp.isnan(x), np.nan, erf), erfc_abs


def erf64(x, xp=np):
    """erf of a float64 array (vectorized; about 1e-16 relative accuracy) over array
    module ``xp``.

    >>> round(float(erf64(np.array(0.5))), 12)
    0.520499877813
    """
    with quiet(xp):
        return _erf_erfc64(xp.asarray(x, np.float64), xp)[0]


def _horner(coeffs, w):
    p = np.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        p = p * w + c
    return p


def erf_inv64(x):
    """The inverse of erf on float64: Giles' approximation, then Newton steps.

    >>> round(float(erf_inv64(np.array(0.5))), 12)
    0.476936276204
    """
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        w = -np.log((1.0 - a) * (1.0 + a))
        y = (
            np.where(
                w < 5.0,
                _horner(_GILES_CENTRAL, w - 2.5),
                _horner(_GILES_TAIL, np.sqrt(np.where(w < 5.0, 5.0, w)) - 3.0),
            )
            * a
        )
        inside = a < 1.0
        y = np.where(inside, y, 1.0)
        tail = a > 0.5
        for _ in range(5):  # Giles targets float32; the far float64 tail needs 5
            erf, erfc = _erf_erfc64(y)
            slope = _TWO_OVER_SQRT_PI * np.exp(-y * y)
            # Near 1, Newton on log(erfc(y)) = log(1 - a): 1 - a is exact there and the
            # log makes the tail almost linear, so it converges as fast as the centre.
            step = np.where(tail, (np.log(erfc) - np.log1p(-a)) * erfc / slope, (a - erf) / slope)
            y = y + step
        y = np.where(a == 1.0, np.inf, np.where(inside, y, np.nan))
        return np.copysign(y, x)


# Lanczos approximation, g = 7, n = 9 (the coefficients of Numerical Recipes / Godfrey).
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def _lgamma_pos(z):
    """log Gamma(z) for z >= 0.5."""
    zm1 = z - 1.0
    s = np.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        s = s + c / (zm1 + i)
    t = zm1 + _LANCZOS_G + 0.5
    return _HALF_LOG_TWO_PI + (zm1 + 0.5) * np.log(t) - t + np.log(s)


def _abs_sinpi(x):
    # |sin(pi x)| with the argument reduced to [-1/2, 1/2] first: exactly 0 at integers.
    return np.abs(np.sin(np.pi * (x - np.round(x))))


def lgamma64(x):
    """log|Gamma(x)| on float64 (Lanczos, reflected below 1/2).

    >>> round(float(lgamma64(np.array(4.0))), 12)
    1.791759469228
    """
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        refl = x < 0.5
        pos = _lgamma_pos(np.where(refl, 1.0 - x, x))
        neg = np.log(np.pi / _abs_sinpi(x)) - pos
        out = np.where(refl, neg, pos)
        # Exact values where the formulas lose: log Gamma(1) = log Gamma(2) = 0, and inf.
        out = np.where((x == 1.0) | (x == 2.0), 0.0, out)
        return np.where(np.isinf(x), np.inf, out)


_DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_pos(x):
    """digamma(x) for x > 0: recurrence up to x >= 10, then the asymptotic series."""
    acc = np.zeros_like(x)
    for _ in range(10):
        small = x < 10.0
        acc = acc - np.where(small, 1.0 / x, 0.0)
        x = np.where(small, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    series = _horner(_DIGAMMA_ASYMPTOTIC[::-1], inv2) * inv2
    return acc + np.log(x) - 0.5 / x - series


def digamma64(x):
    """digamma (psi) on float64; NaN at the poles (non-positive integers).

    >>> round(float(digamma64(np.array(1.0))), 12)
    -0.577215664902
    """
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        refl = x <= 0.0
        pos = _digamma_pos(np.where(refl, 1.0 - x, x))
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        r = x - np.round(x)
        neg = pos - np.pi / np.tan(np.pi * r)
        out = np.where(refl, np.where(r == 0.0, np.nan, neg), pos)
        out = np.where(x == np.inf, np.inf, out)
        return np.where(x == -np.inf, np.nan, out)


def _via_float64(fn):
    def impl(x):
        return np.asarray(fn(x)).astype(x.dtype)

    impl.__name__ = fn.__name__
    return impl


def erf_impl(xp):
    """The ``erf`` impl over array module ``xp`` (numpy; CuPy on the GPU, whose float32
    steps round as numpy's, so the bits are the CPU's).

    >>> erf_impl(np)(np.array([0.0, 10.0], np.float32)).tolist()
    [0.0, 1.0]
    """

    def erf(x):
        # float32 and narrower: the kernels' rational approximation, in float32 (about
        # 30x faster than the float64 series, and eager then agrees with jit); float64:
        # the series.
        if x.dtype == np.float64:
            return erf64(x, xp)
        x32 = xp.asarray(x, np.float32)
        with quiet(xp):
            xc = xp.clip(x32, np.float32(-4.0), np.float32(4.0))
            z = xc * xc
            out = _horner32(_ERF_F32_P, z, xp)
            out *= xc
            out /= _horner32(_ERF_F32_Q, z, xp)
            out = xp.where(xp.abs(x32) < 1e-8, x32 * np.float32(_TWO_OVER_SQRT_PI), out)
        return out.astype(x.dtype, copy=False)

    return erf


def _horner32(coeffs, z, xp):
    acc = xp.full_like(z, coeffs[0])
    for c in coeffs[1:]:
        acc *= z  # in place: each step would otherwise allocate two arrays
        acc += np.float32(c)
    return acc


cpu_impls[ew.erf_p] = erf_impl(np)
cpu_impls[ew.erf_inv_p] = _via_float64(erf_inv64)
cpu_impls[ew.lgamma_p] = _via_float64(lgamma64)
cpu_impls[ew.digamma_p] = _via_float64(digamma64)
