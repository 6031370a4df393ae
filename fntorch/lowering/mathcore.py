"""The building blocks of ``mathlib``'s expansions: Horner steps, exponent bit
arithmetic, the shifter rounding trick and the ln2 reduction, over a ``KernelBuilder``
and an f32 or f64 scalar value; and Taylor coefficients computed as exact rationals.

>>> _taylor(0, 3)  # 1/3!, 1/2!, 1/1!, 1/0!: highest degree first, for ``poly``
(0.16666666666666666, 0.5, 1.0, 1.0)
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

H = float.fromhex


class _LazyTypes:
    """xDSL's types, imported on first use: importing rules (and so mathlib) must not
    import xDSL."""

    def __getattr__(self, name):
        from . import builder

        return getattr(builder, name)


T = _LazyTypes()

# (float32 value, float64 value): ln2 as a Cody-Waite hi/lo split, and log2(e).
_LN2_HI = (H("0x1.62e3p-1"), H("0x1.62e42fee00000p-1"))
_LN2_LO = (9.058001351559417e-06, H("0x1.a39ef35793c76p-33"))
_LOG2E = H("0x1.71547652b82fep+0")


def _taylor(first: int, last: int, scale=Fraction(1)) -> tuple:
    """Coefficients scale**n / n! for n = last..first (highest degree first)."""
    return tuple(float(scale**n / factorial(n)) for n in range(last, first - 1, -1))


def _alt(first: int, last: int) -> tuple:
    """(-1)**k / (2k+1)! for odd powers n = 2k+1 in [first, last] (sin series)."""
    return tuple(
        float(Fraction((-1) ** (n // 2), factorial(n))) for n in range(last, first - 1, -2)
    )


def _k(x) -> int:
    """0 for float32, 1 for float64: the index into the constant pairs above."""
    if x.type == T.f32:
        return 0
    if x.type == T.f64:
        return 1
    raise TypeError(f"mathlib: expected an T.f32 or T.f64 value, got {x.type}")


def _int_of(x):
    return T.i32 if x.type == T.f32 else T.i64


def _bits(x) -> tuple[int, int, int]:
    """(mantissa bits, exponent bias, total bits)."""
    return (23, 127, 32) if x.type == T.f32 else (52, 1023, 64)


def poly(b, x, coeffs):
    """Horner: ``coeffs[0] x^n + ... + coeffs[n]`` with fmuladd steps."""
    acc = b.const_like(coeffs[0], x)
    for c in coeffs[1:]:
        acc = b.fmuladd(acc, x, b.const_like(c, x))
    return acc


def _c(b, v, x):
    return b.const_like(v, x)


def _isnan(b, x):
    return b.fcmp("uno", x, x)


def _clamp_keep_nan(b, x, lo, hi):
    # Selects on ordered compares: a NaN passes through unchanged (maxnum would drop it).
    x = b.select(b.fcmp("olt", x, _c(b, lo, x)), _c(b, lo, x), x)
    return b.select(b.fcmp("ogt", x, _c(b, hi, x)), _c(b, hi, x), x)


def pow2i(b, k, x):
    """2**k as a float of x's type, for an integer value k in the normal range."""
    mant, bias, nbits = _bits(x)
    it = _int_of(x)
    k = b.int_resize(k, it, signed=True)
    e = b.shl(b.add(k, b.const(bias, it)), b.const(mant, it))
    return b.bitcast(e, x.type)


def ldexp(b, p, k):
    """p * 2**k in two steps, so results near overflow or in the subnormals are right."""
    it = _int_of(p)
    k = b.int_resize(k, it, signed=True)
    k1 = b.ashr(k, b.const(1, it))
    k2 = b.sub(k, k1)
    return b.fmul(b.fmul(p, pow2i(b, k1, p)), pow2i(b, k2, p))


def _round_shift(b, t):
    """(rint(t) as a float, as an i32) by the shifter trick, for |t| < 2**22.

    Adding 1.5 * 2**mant rounds t to an integer in the low mantissa bits: no rint, no
    fptosi (which is poison on NaN: a NaN here just gives garbage bits, and the NaN
    flows on through the float path)."""
    mant, _, _ = _bits(t)
    shifter = _c(b, 1.5 * 2.0**mant, t)
    u = b.fadd(t, shifter)
    kf = b.fsub(u, shifter)
    it = _int_of(t)
    k = b.sub(b.bitcast(u, it), b.bitcast(shifter, it))
    if it != T.i32:
        k = b.trunc(k, T.i32)
    return kf, k


def _reduce_ln2(b, x):
    """x = k ln2 + r, |r| <= ln2/2 (Cody-Waite, two fma steps); returns (k, r)."""
    i = _k(x)
    kf, k = _round_shift(b, b.fmul(x, _c(b, _LOG2E, x)))
    nk = b.fneg(kf)
    r = b.fma(nk, _c(b, _LN2_HI[i], x), x)
    r = b.fma(nk, _c(b, _LN2_LO[i], x), r)
    return k, r
