"""Batching rules of the reduce, scan and sort primitives.

The batch axis stays where it is: the primitive's axes are renumbered past it.
"""

from __future__ import annotations

from functools import partial

from ..ops import _prims_reduce as r
from .batching import batch_rules, bdim_to


def _physical(axis: int, bdim: int) -> int:
    """The axis of the batched value that logical ``axis`` names."""
    return axis + (axis >= bdim)


def _reduce_batch(prim, axis_size, args, dims, *, axes, **params):
    (x,), (b,) = args, dims
    phys = tuple(_physical(a, b) for a in axes)
    out_dim = b - sum(a < b for a in phys)
    return prim.bind(x, axes=phys, **params), out_dim


for _p in (r.reduce_sum_p, r.reduce_prod_p, r.reduce_max_p, r.reduce_min_p, r.reduce_and_p,
           r.reduce_or_p, r.argmax_p, r.argmin_p):  # fmt: skip
    batch_rules[_p] = partial(_reduce_batch, _p)


def _scan_batch(prim, axis_size, args, dims, *, axis, reverse):
    (x,), (b,) = args, dims
    return prim.bind(x, axis=_physical(axis, b), reverse=reverse), b


for _p in (r.cumsum_p, r.cumprod_p, r.cummax_p, r.cummin_p):
    batch_rules[_p] = partial(_scan_batch, _p)


def _sort_batch(axis_size, args, dims, *, dimension, is_stable, num_keys):
    # Operands must share one shape: every operand gets the batch axis of the first
    # batched one (unbatched ones are broadcast).
    b = next(d for d in dims if d is not None)
    args = [bdim_to(x, d, b, axis_size) if d != b else x for x, d in zip(args, dims)]
    outs = r.sort_p.bind(
        *args, dimension=_physical(dimension, b), is_stable=is_stable, num_keys=num_keys
    )
    return outs, [b] * len(outs)


batch_rules[r.sort_p] = _sort_batch
