"""Batching rules of the indexing primitives.

Three situations, the same for gather and every scatter:

- No index is batched: the batch axis is one more operand dim that is not indexed, so
  it stays where it is; only ``axes`` shift past it. It lands among the trailing
  (non-indexed) dims of the gather shape, which is where batched updates are moved to.
- Indices batched, operand not (gather only): the batch axis becomes the first dim of
  the broadcast index shape, so it leads the output.
- Both batched: an iota index over the operand's batch axis (moved to the front) turns
  it into one more gathered axis, paired elementwise with the batch of the indices.

Scatters whose operand is unbatched but whose updates or indices are get a broadcast
operand: the result differs per batch member.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_indexing as pi
from ..ops import lax
from .batching import batch_rules, bdim_at_front, moveaxis


def _logical_shape(x, d):
    s = tuple(get_aval(x).shape)
    return s if d is None else s[:d] + s[d + 1 :]


def _index_shape(indices, dims):
    return tuple(np.broadcast_shapes(*(_logical_shape(i, d) for i, d in zip(indices, dims))))


def _shift(axes, d):
    """``axes`` of the logical operand as axes of the physical one, batched at ``d``."""
    return tuple(a + (a >= d) for a in axes)


def _batch_pos_in_rest(axes_phys, d):
    """Where the physical operand's batch axis ``d`` lands among the non-indexed dims."""
    return d - sum(a < d for a in axes_phys)


def _indices_batch_front(axis_size, indices, dims, rank_b):
    """Batched index tensors with the batch as the first of ``rank_b + 1`` broadcast dims."""
    out = []
    for i, d in zip(indices, dims):
        if d is not None:
            i = moveaxis(i, d, 0)
            s = tuple(get_aval(i).shape[1:])
            if len(s) < rank_b:
                i = lax.reshape(i, (axis_size, *(1,) * (rank_b - len(s)), *s))
        out.append(i)  # unbatched ones broadcast from the right, as they are
    return out


def _batch_iota(axis_size, rank_b):
    return lax.iota(dt.int32, (axis_size, *(1,) * rank_b), 0)


def _updates_at(updates, d, grank, pos, axis_size):
    """``updates`` broadcastable to a rank ``grank + 1`` gather shape batched at ``pos``."""
    s = _logical_shape(updates, d)
    pad = grank - len(s)
    if d is None:
        if pos <= pad:  # a 1 among the leading ones: broadcasting adds it anyway
            return updates
        full = (1,) * pad + s
        return lax.reshape(updates, (*full[:pos], 1, *full[pos:]))
    updates = moveaxis(updates, d, 0)
    if pad:
        updates = lax.reshape(updates, (axis_size, *(1,) * pad, *s))
    return moveaxis(updates, 0, pos)


def _gather_batch(axis_size, args, dims, *, axes):
    operand, *indices = args
    d_op, *d_idx = dims
    rank_b = len(_index_shape(indices, d_idx))
    if all(d is None for d in d_idx):
        axes_phys = _shift(axes, d_op)
        out = lax.gather(operand, indices, axes_phys)
        return out, rank_b + _batch_pos_in_rest(axes_phys, d_op)
    idx = _indices_batch_front(axis_size, indices, d_idx, rank_b)
    if d_op is None:
        return lax.gather(operand, idx, axes), 0
    operand = moveaxis(operand, d_op, 0)
    idx = [lax.on_device_of(operand, _batch_iota(axis_size, rank_b)), *idx]
    return lax.gather(operand, idx, (0, *(a + 1 for a in axes))), 0


batch_rules[pi.gather_p] = _gather_batch


def _scatter_batch(scatter_fn, axis_size, args, dims, *, axes):
    operand, *indices, updates = args
    d_op, *d_idx, d_u = dims
    rank_b = len(_index_shape(indices, d_idx))
    grank = rank_b + len(_logical_shape(operand, d_op)) - len(axes)
    if all(d is None for d in d_idx):
        if d_op is None:
            operand, d_op = bdim_at_front(operand, None, axis_size), 0
        axes_phys = _shift(axes, d_op)
        pos = rank_b + _batch_pos_in_rest(axes_phys, d_op)
        updates = _updates_at(updates, d_u, grank, pos, axis_size)
        return scatter_fn(operand, indices, updates, axes_phys), d_op
    operand = bdim_at_front(operand, d_op, axis_size)
    idx = [_batch_iota(axis_size, rank_b), *_indices_batch_front(axis_size, indices, d_idx, rank_b)]
    updates = _updates_at(updates, d_u, grank, 0, axis_size)
    return scatter_fn(operand, idx, updates, (0, *(a + 1 for a in axes))), 0


batch_rules[pi.scatter_p] = partial(_scatter_batch, lax.scatter)
batch_rules[pi.scatter_add_p] = partial(_scatter_batch, lax.scatter_add)
batch_rules[pi.scatter_mul_p] = partial(_scatter_batch, lax.scatter_mul)
batch_rules[pi.scatter_min_p] = partial(_scatter_batch, lax.scatter_min)
batch_rules[pi.scatter_max_p] = partial(_scatter_batch, lax.scatter_max)
