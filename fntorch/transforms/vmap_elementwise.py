"""Batching rules of the elementwise primitives.

Unary primitives act on the batched value as it is; the batch axis stays put. The
broadcasting n-ary primitives (binary ops, ``select_n``, ``clamp``) need every batched
operand's batch axis at one physical position with the logical dims right-aligned after
it. When all batched operands already agree (same rank, same batch axis) and no
unbatched operand reaches the batch axis under numpy's right-alignment, the primitive
runs on the values as they are. Otherwise each batched operand gets its batch axis at
the front and size-1 dims after it up to the output's logical rank, and unbatched
operands stay as they are: numpy's broadcasting right-aligns them against the logical
dims.
"""

from __future__ import annotations

from functools import partial

from ..fx.core import get_aval
from ..ops import _prims_elementwise as ew
from ..ops import lax
from .batching import batch_rules, moveaxis


def _unary_batch(prim, axis_size, args, dims, **params):
    (x,), (d,) = args, dims
    return prim.bind(x, **params), d


_UNARY = (
    ew.neg_p, ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.is_finite_p, ew.exp_p,
    ew.exp2_p, ew.log_p, ew.log1p_p, ew.expm1_p, ew.tanh_p, ew.logistic_p, ew.sin_p,
    ew.cos_p, ew.tan_p, ew.asin_p, ew.acos_p, ew.atan_p, ew.sinh_p, ew.cosh_p, ew.asinh_p,
    ew.acosh_p, ew.atanh_p, ew.sqrt_p, ew.rsqrt_p, ew.cbrt_p, ew.abs_p, ew.not_p, ew.erf_p,
    ew.erf_inv_p, ew.lgamma_p, ew.digamma_p, ew.square_p, ew.integer_pow_p, ew.real_p,
    ew.imag_p, ew.conj_p, ew.signbit_p,
)  # fmt: skip
for _p in _UNARY:
    batch_rules[_p] = partial(_unary_batch, _p)


def _aligned_dim(args, dims):
    """The common batch axis if the operands can be used as they are, else None."""
    ranks = {get_aval(a).ndim for a, d in zip(args, dims) if d is not None}
    bdims = {d for d in dims if d is not None}
    if len(ranks) != 1 or len(bdims) != 1:
        return None
    (rank,), (bdim,) = ranks, bdims
    # An unbatched operand right-aligns with the trailing dims; it must not reach bdim.
    trailing = rank - 1 - bdim
    if any(get_aval(a).ndim > trailing for a, d in zip(args, dims) if d is None):
        return None
    return bdim


def _broadcasting_batch(prim, axis_size, args, dims, **params):
    bdim = _aligned_dim(args, dims)
    if bdim is not None:
        return prim.bind(*args, **params), bdim
    logical_rank = max(get_aval(a).ndim - (d is not None) for a, d in zip(args, dims))
    moved = []
    for a, d in zip(args, dims):
        if d is None:
            moved.append(a)
            continue
        a = moveaxis(a, d, 0)
        missing = logical_rank + 1 - get_aval(a).ndim
        if missing:
            a = lax.expand_dims(a, tuple(range(1, 1 + missing)))
        moved.append(a)
    return prim.bind(*moved, **params), 0


_BROADCASTING = (
    ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p, ew.pow_p, ew.atan2_p, ew.max_p,
    ew.min_p, ew.nextafter_p, ew.and_p, ew.or_p, ew.xor_p, ew.shift_left_p,
    ew.shift_right_arithmetic_p, ew.shift_right_logical_p, ew.eq_p, ew.ne_p, ew.lt_p,
    ew.le_p, ew.gt_p, ew.ge_p, ew.select_n_p, ew.clamp_p, ew.complex_p,
)  # fmt: skip
for _p in _BROADCASTING:
    batch_rules[_p] = partial(_broadcasting_batch, _p)
