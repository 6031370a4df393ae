"""jvp and transpose rules of the elementwise primitives.

Each rule's output tangent has the output's (broadcast) shape. The linear primitives
(``neg``, ``add``, ``sub``, ``mul`` and ``div`` in one operand, ``select_n`` in its
cases) have transpose rules; since binary primitives broadcast, a transposed cotangent
is summed back to its operand's shape with `unbroadcast`.

Derivative conventions (as JAX): ``max``/``min`` split the tangent half and half between
tied operands; ``pow``'s derivative in the exponent uses ``log(x)`` with ``log(0)`` taken
as 0 and in the base is 0 where the exponent is 0; ``clamp(lo, x, hi)`` passes the
tangent of whichever operand it returns, ``x`` on ties with a bound (as PyTorch).
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_elementwise as ew
from ..ops import lax
from .ad import (
    Zero,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    is_undefined_primal,
    jvp_rules,
    transpose_rules,
)

# ------------------------------------------------------------------------- helpers


def unbroadcast(x, shape):
    """Sums ``x`` over the dims numpy broadcasting added to reach it from ``shape``.

    The transpose of broadcasting ``shape`` to ``x.shape``: leading dims are summed
    away, and dims that are 1 in ``shape`` summed with the size-1 dim kept.

    >>> import numpy as np
    >>> unbroadcast(np.ones((2, 3), np.float32), (1, 3)).shape
    (1, 3)
    """
    shape = tuple(shape)
    xshape = tuple(get_aval(x).shape)
    if xshape == shape:
        return x
    lead = len(xshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and xshape[lead + i] != 1
    )
    if axes:
        x = lax.reduce_sum(x, axes)
    return lax.reshape(x, shape)


def _broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` with numpy's rules (right-aligned)."""
    shape = tuple(shape)
    xshape = tuple(get_aval(x).shape)
    if xshape == shape:
        return x
    lead = len(shape) - len(xshape)
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def _scalar(x, value):
    """``value`` as a numpy scalar of ``x``'s dtype (what a case of select_n wants)."""
    return np.asarray(value, get_aval(x).dtype)[()]


def _both_undefined(name):
    return ValueError(
        f"{name} transpose: both operands are linear inputs; {name} is linear in only one "
        "of them (the other must be a constant)"
    )


# --------------------------------------------------------------- non-differentiable

for _p in (
    ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.is_finite_p, ew.signbit_p, ew.not_p,
    ew.nextafter_p,
    ew.and_p, ew.or_p, ew.xor_p, ew.shift_left_p, ew.shift_right_arithmetic_p,
    ew.shift_right_logical_p, ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p,
):  # fmt: skip
    defjvp_zero(_p)


# ------------------------------------------------------------------------- linear


def _neg_transpose(ct, x):
    return [lax.neg(ct)]


deflinear(ew.neg_p, _neg_transpose)


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = ew.add_p.bind(x, y)
    shape = get_aval(out).shape
    if type(tx) is Zero:
        return out, _broadcast_to(ty, shape)
    if type(ty) is Zero:
        return out, _broadcast_to(tx, shape)
    return out, ew.add_p.bind(tx, ty)


jvp_rules[ew.add_p] = _add_jvp


def _add_transpose(ct, x, y):
    return [
        unbroadcast(ct, x.shape) if is_undefined_primal(x) else None,
        unbroadcast(ct, y.shape) if is_undefined_primal(y) else None,
    ]


transpose_rules[ew.add_p] = _add_transpose


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = ew.sub_p.bind(x, y)
    shape = get_aval(out).shape
    if type(tx) is Zero:
        return out, _broadcast_to(lax.neg(ty), shape)
    if type(ty) is Zero:
        return out, _broadcast_to(tx, shape)
    return out, ew.sub_p.bind(tx, ty)


jvp_rules[ew.sub_p] = _sub_jvp


def _sub_transpose(ct, x, y):
    return [
        unbroadcast(ct, x.shape) if is_undefined_primal(x) else None,
        unbroadcast(lax.neg(ct), y.shape) if is_undefined_primal(y) else None,
    ]


transpose_rules[ew.sub_p] = _sub_transpose

defjvp(ew.mul_p, lambda t, x, y: lax.mul(t, y), lambda t, x, y: lax.mul(x, t))


def _mul_transpose(ct, x, y):
    if is_undefined_primal(x):
        if is_undefined_primal(y):
            raise _both_undefined("mul")
        return [unbroadcast(lax.mul(ct, y), x.shape), None]
    return [None, unbroadcast(lax.mul(x, ct), y.shape)]


transpose_rules[ew.mul_p] = _mul_transpose

defjvp2(
    ew.div_p,
    lambda t, ans, x, y: lax.div(t, y),
    lambda t, ans, x, y: lax.neg(lax.mul(t, lax.div(ans, y))),
)


def _div_transpose(ct, x, y):
    if is_undefined_primal(y):
        raise ValueError(
            "div transpose: the denominator is a linear input, but div is linear only in "
            "its numerator"
        )
    return [unbroadcast(lax.div(ct, y), x.shape), None]


transpose_rules[ew.div_p] = _div_transpose


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = ew.select_n_p.bind(which, *cases)
    ts = tangents[1:]
    zero = _scalar(out, 0)
    tout = ew.select_n_p.bind(which, *[zero if type(t) is Zero else t for t in ts])
    return out, _broadcast_to(tout, get_aval(out).shape)


jvp_rules[ew.select_n_p] = _select_n_jvp


def _select_n_transpose(ct, which, *cases):
    if is_undefined_primal(which):
        raise ValueError("select_n transpose: the selector cannot be a linear input")
    zero = _scalar(ct, 0)
    cts = [None]
    for i, c in enumerate(cases):
        if not is_undefined_primal(c):
            cts.append(None)
            continue
        picks = [zero] * len(cases)
        picks[i] = ct
        cts.append(unbroadcast(ew.select_n_p.bind(which, *picks), c.shape))
    return cts


transpose_rules[ew.select_n_p] = _select_n_transpose


# ------------------------------------------------------------------ complex parts
# JAX's conventions: a transpose is the transpose of the real-linear map on (re, im)
# pairs under the pairing Re(sum(a * b)), never the adjoint; so ``grad`` of a real
# function of ``z`` is df/dx - i df/dy, as jax.grad gives.


def _real_transpose(ct, x):
    return [lax.complex(ct, _scalar(ct, 0))]


def _imag_transpose(ct, x):
    return [lax.complex(_scalar(ct, 0), lax.neg(ct))]


def _conj_transpose(ct, x):
    return [lax.conj(ct)]


def _parts_rule(prim, complex_rule, real_rule):
    def rule(ct, x):
        if dt.is_complex(x.aval.dtype):
            return complex_rule(ct, x)
        return real_rule(ct)

    deflinear(prim, rule)


_parts_rule(ew.real_p, _real_transpose, lambda ct: [ct])
_parts_rule(ew.imag_p, _imag_transpose, lambda ct: [lax.mul(ct, _scalar(ct, 0))])
deflinear(ew.conj_p, _conj_transpose)


def _complex_transpose(ct, x, y):
    return [
        unbroadcast(lax.real(ct), x.shape) if is_undefined_primal(x) else None,
        unbroadcast(lax.neg(lax.imag(ct)), y.shape) if is_undefined_primal(y) else None,
    ]


deflinear(ew.complex_p, _complex_transpose)


# ------------------------------------------------------------------------- unary

defjvp2(ew.exp_p, lambda t, ans, x: lax.mul(t, ans))
defjvp2(ew.exp2_p, lambda t, ans, x: lax.mul(t, lax.mul(ans, math.log(2.0))))
defjvp(ew.log_p, lambda t, x: lax.div(t, x))
defjvp(ew.log1p_p, lambda t, x: lax.div(t, lax.add(x, 1.0)))
defjvp2(ew.expm1_p, lambda t, ans, x: lax.mul(t, lax.add(ans, 1.0)))
defjvp2(ew.tanh_p, lambda t, ans, x: lax.mul(t, lax.sub(1.0, lax.square(ans))))
defjvp2(ew.logistic_p, lambda t, ans, x: lax.mul(t, lax.mul(ans, lax.sub(1.0, ans))))
defjvp(ew.sin_p, lambda t, x: lax.mul(t, lax.cos(x)))
defjvp(ew.cos_p, lambda t, x: lax.neg(lax.mul(t, lax.sin(x))))
defjvp2(ew.tan_p, lambda t, ans, x: lax.mul(t, lax.add(lax.square(ans), 1.0)))
defjvp(ew.asin_p, lambda t, x: lax.mul(t, lax.rsqrt(lax.sub(1.0, lax.square(x)))))
defjvp(ew.acos_p, lambda t, x: lax.neg(lax.mul(t, lax.rsqrt(lax.sub(1.0, lax.square(x))))))
defjvp(ew.atan_p, lambda t, x: lax.div(t, lax.add(lax.square(x), 1.0)))
defjvp(ew.sinh_p, lambda t, x: lax.mul(t, lax.cosh(x)))
defjvp(ew.cosh_p, lambda t, x: lax.mul(t, lax.sinh(x)))
defjvp(ew.asinh_p, lambda t, x: lax.mul(t, lax.rsqrt(lax.add(lax.square(x), 1.0))))
defjvp(
    ew.acosh_p,
    lambda t, x: lax.mul(t, lax.rsqrt(lax.mul(lax.sub(x, 1.0), lax.add(x, 1.0)))),
)
defjvp(ew.atanh_p, lambda t, x: lax.div(t, lax.mul(lax.sub(1.0, x), lax.add(x, 1.0))))
defjvp2(ew.sqrt_p, lambda t, ans, x: lax.div(lax.mul(t, 0.5), ans))
defjvp2(ew.rsqrt_p, lambda t, ans, x: lax.mul(t, lax.div(lax.mul(ans, -0.5), x)))
defjvp2(ew.cbrt_p, lambda t, ans, x: lax.mul(t, lax.mul(lax.integer_pow(ans, -2), 1.0 / 3.0)))


def _abs_jvp(t, x):
    if dt.is_complex(get_aval(x).dtype):
        # d|z| = Re(conj(z) dz) / |z| (0 at 0, where sign is 0), JAX's rule.
        return lax.real(lax.mul(t, lax.conj(lax.sign(x))))
    return lax.mul(t, lax.sign(x))


defjvp(ew.abs_p, _abs_jvp)
defjvp(ew.square_p, lambda t, x: lax.mul(t, lax.mul(x, 2.0)))
defjvp(
    ew.erf_p,
    lambda t, x: lax.mul(t, lax.mul(lax.exp(lax.neg(lax.square(x))), 2.0 / math.sqrt(math.pi))),
)
defjvp2(
    ew.erf_inv_p,
    lambda t, ans, x: lax.mul(t, lax.mul(lax.exp(lax.square(ans)), math.sqrt(math.pi) / 2.0)),
)
defjvp(ew.lgamma_p, lambda t, x: lax.mul(t, lax.digamma(x)))

# Asymptotic series of trigamma at w: 1/w + 1/(2w^2) + sum_k B_2k / w^(2k+1).
_TRIGAMMA_ODD = (1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0)


def trigamma(x):
    """The derivative of digamma, built from primitives (so it is differentiable too).

    Recurrence up to ``x + 6``, the asymptotic series there, reflection below 1/2;
    about 1e-10 relative accuracy.

    >>> import numpy as np
    >>> round(float(trigamma(np.float64(1.0))), 8)  # pi^2 / 6
    1.64493407
    """
    refl = lax.lt(x, 0.5)
    z = lax.select(refl, lax.sub(1.0, x), x)
    acc = lax.integer_pow(z, -2)
    for k in range(1, 6):
        acc = lax.add(acc, lax.integer_pow(lax.add(z, float(k)), -2))
    w = lax.add(z, 6.0)
    inv = lax.div(1.0, w)
    inv2 = lax.square(inv)
    series = lax.mul(inv2, _TRIGAMMA_ODD[-1])
    for c in _TRIGAMMA_ODD[-2::-1]:
        series = lax.mul(lax.add(series, c), inv2)
    pos = lax.add(acc, lax.mul(inv, lax.add(lax.add(1.0, lax.mul(inv, 0.5)), series)))
    # trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x); sin of the reduced argument.
    s = lax.sin(lax.mul(lax.sub(x, lax.round(x)), math.pi))
    s = lax.select(refl, s, 1.0)  # the branch not taken must not divide by zero
    reflected = lax.sub(lax.div(math.pi**2, lax.square(s)), pos)
    return lax.select(refl, reflected, pos)


defjvp(ew.digamma_p, lambda t, x: lax.mul(t, trigamma(x)))


def _integer_pow_jvp(t, x, *, y):
    if y == 0:
        return lax.mul(t, 0.0)
    if y == 1:
        return t
    return lax.mul(t, lax.mul(lax.integer_pow(x, y - 1), float(y)))


defjvp(ew.integer_pow_p, _integer_pow_jvp)


# ------------------------------------------------------------------------- binary


def _pow_jvp_base(t, x, y):
    y_minus_1 = lax.sub(y, 1.0)
    jac = lax.select(lax.eq(y, _scalar(y, 0)), _scalar(y, 0), lax.mul(y, lax.pow(x, y_minus_1)))
    return lax.mul(t, jac)


def _pow_jvp_exponent(t, ans, x, y):
    safe_x = lax.select(lax.eq(x, _scalar(x, 0)), _scalar(x, 1), x)
    return lax.mul(t, lax.mul(lax.log(safe_x), ans))


defjvp2(ew.pow_p, lambda t, ans, x, y: _pow_jvp_base(t, x, y), _pow_jvp_exponent)


def _atan2_denominator(x, y):
    return lax.add(lax.square(x), lax.square(y))


defjvp(
    ew.atan2_p,
    lambda t, x, y: lax.mul(t, lax.div(y, _atan2_denominator(x, y))),
    lambda t, x, y: lax.neg(lax.mul(t, lax.div(x, _atan2_denominator(x, y)))),
)


def _rem_jvp_dividend(t, ans, x, y):
    return _broadcast_to(t, get_aval(ans).shape)


def _rem_jvp_divisor(t, ans, x, y):
    # rem(x, y) = x - y * trunc(x / y); trunc is locally constant.
    q = lax.div(x, y)
    trunc = lax.mul(lax.sign(q), lax.floor(lax.abs(q)))
    return lax.neg(lax.mul(t, trunc))


defjvp2(ew.rem_p, _rem_jvp_dividend, _rem_jvp_divisor)


def _minmax_share(mine, other, ans):
    """1 where ``mine`` is the result, 1/2 where both are, 0 elsewhere."""
    one = _scalar(ans, 1)
    shared = lax.select(lax.eq(other, ans), _scalar(ans, 0.5), one)
    return lax.select(lax.eq(mine, ans), shared, _scalar(ans, 0))


defjvp2(
    ew.max_p,
    lambda t, ans, x, y: lax.mul(t, _minmax_share(x, y, ans)),
    lambda t, ans, x, y: lax.mul(t, _minmax_share(y, x, ans)),
)
defjvp2(
    ew.min_p,
    lambda t, ans, x, y: lax.mul(t, _minmax_share(x, y, ans)),
    lambda t, ans, x, y: lax.mul(t, _minmax_share(y, x, ans)),
)


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    tlo, tx, thi = tangents
    out = ew.clamp_p.bind(lo, x, hi)
    # out = min(max(x, lo), hi): hi where it is below max(x, lo), else lo where it is
    # above x, else x; each operand's tangent passes where it is the one returned.
    pick_hi = lax.bitwise_or(lax.gt(x, hi), lax.gt(lo, hi))
    pick_lo = lax.bitwise_and(lax.bitwise_not(pick_hi), lax.gt(lo, x))
    pick_x = lax.bitwise_and(lax.ge(x, lo), lax.le(x, hi))
    pick_x = lax.bitwise_and(pick_x, lax.le(lo, hi))
    zero = _scalar(out, 0)
    tout = None
    for t, pick in ((tlo, pick_lo), (tx, pick_x), (thi, pick_hi)):
        if type(t) is Zero:
            continue
        contrib = lax.select(pick, t, zero)
        tout = contrib if tout is None else lax.add(tout, contrib)
    return out, _broadcast_to(tout, get_aval(out).shape)


jvp_rules[ew.clamp_p] = _clamp_jvp
