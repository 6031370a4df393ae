"""Batching rules of the collectives.

``named_batch_rules``: the collective names this vmap's own axis, so it acts on the
batch axis itself, as JAX's vmap with ``axis_name`` does: ``psum`` sums over it (the
result is unbatched: every lane holds it), ``all_gather`` moves it into the gathered dim,
``psum_scatter`` sums over it and hands lane ``k`` block ``k``, ``all_to_all`` swaps it
with the split dim, ``ppermute`` permutes the lanes, ``axis_index`` is the lane number.

``batch_rules``: the collective names another axis, so the batch axis is one more dim
it carries along (moved to the front where the collective has dims of its own).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_collective as pc
from ..ops import lax
from .batching import batch_rules, bdim_at_front, moveaxis, named_batch_rules


def _physical(axis: int, bdim: int) -> int:
    return axis + (axis >= bdim)


# ------------------------------------------------------------ another axis' collectives


def _carry_batch(prim, axis_size, args, dims, **params):
    (x,), (b,) = args, dims
    return prim.bind(x, **params), b


for _p in (pc.psum_p, pc.pmax_p, pc.pmin_p, pc.pvary_p, pc.ppermute_p):
    batch_rules[_p] = partial(_carry_batch, _p)


def _front_batch(prim, shifted, axis_size, args, dims, **params):
    """The batch axis first, and the collective's own dims (``shifted``) one later."""
    (x,), (b,) = args, dims
    params = {k: v + 1 if k in shifted else v for k, v in params.items()}
    return prim.bind(moveaxis(x, b, 0), **params), 0


batch_rules[pc.all_gather_p] = partial(_front_batch, pc.all_gather_p, ("axis",))
batch_rules[pc.psum_scatter_p] = partial(_front_batch, pc.psum_scatter_p, ("scatter_dimension",))
batch_rules[pc.all_to_all_p] = partial(_front_batch, pc.all_to_all_p, ("split_axis", "concat_axis"))


def _axis_index_batch(axis_size, args, dims, **params):  # no operands: never batched
    return pc.axis_index_p.bind(**params), None


batch_rules[pc.axis_index_p] = _axis_index_batch


# ---------------------------------------------------------------- this vmap's own axis


def _psum_own(axis_size, args, dims, **params):
    (x,), (b,) = args, dims
    if b is None:  # the same value in every lane
        dtype = get_aval(x).dtype
        return lax.mul(x, np.asarray(axis_size, dtype)[()]), None
    return lax.reduce_sum(x, (b,)), None


def _extremum_own(reduce, axis_size, args, dims, **params):
    (x,), (b,) = args, dims
    return (x if b is None else reduce(x, (b,))), None


named_batch_rules[pc.psum_p] = _psum_own
named_batch_rules[pc.pmax_p] = partial(_extremum_own, lax.reduce_max)
named_batch_rules[pc.pmin_p] = partial(_extremum_own, lax.reduce_min)


def _pvary_own(axis_size, args, dims, **params):
    (x,), (b,) = args, dims
    return (bdim_at_front(x, None, axis_size), 0) if b is None else (x, b)


named_batch_rules[pc.pvary_p] = _pvary_own


def _all_gather_own(axis_size, args, dims, *, axis, tiled, **params):
    (x,), (b,) = args, dims
    x = bdim_at_front(x, b, axis_size)  # the lanes are what is gathered
    out = moveaxis(x, 0, axis)
    if tiled:
        shape = list(get_aval(out).shape)
        shape[axis : axis + 2] = [shape[axis] * shape[axis + 1]]
        out = lax.reshape(out, tuple(shape))
    return out, None


named_batch_rules[pc.all_gather_p] = _all_gather_own


def _psum_scatter_own(axis_size, args, dims, *, scatter_dimension, tiled, **params):
    (x,), (b,) = args, dims
    if b is None:
        total = lax.mul(x, np.asarray(axis_size, get_aval(x).dtype)[()])
    else:
        total = lax.reduce_sum(x, (b,))
    d = scatter_dimension
    if tiled:  # cut dim d into (axis_size, block): lane k keeps block k
        shape = list(get_aval(total).shape)
        shape[d : d + 1] = [axis_size, shape[d] // axis_size]
        total = lax.reshape(total, tuple(shape))
    return total, d


named_batch_rules[pc.psum_scatter_p] = _psum_scatter_own


def _all_to_all_own(axis_size, args, dims, *, split_axis, concat_axis, **params):
    (x,), (b,) = args, dims
    x = bdim_at_front(x, b, axis_size)  # (sender, *logical)
    x = moveaxis(x, 1 + split_axis, 0)  # (receiver, sender, *rest)
    return moveaxis(x, 1, 1 + concat_axis), 0


named_batch_rules[pc.all_to_all_p] = _all_to_all_own


def _ppermute_own(axis_size, args, dims, *, perm, **params):
    (x,), (b,) = args, dims
    x = bdim_at_front(x, b, axis_size)
    source = np.zeros(axis_size, np.int64)
    receives = np.zeros(axis_size, bool)
    for s, d in perm:
        source[d], receives[d] = s, True
    taken = lax.gather(x, [source], (0,))
    if receives.all():
        return taken, 0
    shape = get_aval(taken).shape
    mask = lax.broadcast_in_dim(receives, shape, (0,))
    zero = lax.full(shape, 0, get_aval(x).dtype)
    return lax.select_n(mask, zero, taken), 0


named_batch_rules[pc.ppermute_p] = _ppermute_own


def _axis_index_own(axis_size, args, dims, **params):
    return lax.iota(dt.int32, (axis_size,)), 0


named_batch_rules[pc.axis_index_p] = _axis_index_own
