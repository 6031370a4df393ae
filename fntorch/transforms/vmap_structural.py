"""Batching rules of the structural primitives.

Most rules shift their axis params past the batch axis and leave it where it is. The
exceptions: `reshape` (row-major order needs the batch axis first), `pad` with a
batched padding value (a masked select), and `dynamic_slice`/`dynamic_update_slice`
with batched start indices, which become a `gather`/`scatter` of the clamped windows.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_structural as ps
from ..ops import lax
from .batching import batch_rules, bdim_at_front, bdim_to, moveaxis


def _shift(axes, d):
    """Unbatched axes -> axes of the value whose batch axis is ``d``."""
    return tuple(a + (a >= d) for a in axes)


def _unary_batch(prim, axis_size, args, dims, **params):
    (x,), (d,) = args, dims
    return prim.bind(x, **params), d


for _p in (ps.convert_element_type_p, ps.copy_p, ps.stop_gradient_p):
    batch_rules[_p] = partial(_unary_batch, _p)


def _iota_batch(axis_size, args, dims, *, dtype, shape, dimension):
    # iota has no operands, so vmap never sees it batched; kept for the coverage table.
    return ps.iota_p.bind(dtype=dtype, shape=shape, dimension=dimension), None


batch_rules[ps.iota_p] = _iota_batch


def _broadcast_in_dim_batch(axis_size, args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    bdims = [b + 1 for b in broadcast_dimensions]
    bdims.insert(d, 0)
    return lax.broadcast_in_dim(x, (axis_size, *shape), bdims), 0


batch_rules[ps.broadcast_in_dim_p] = _broadcast_in_dim_batch


def _reshape_batch(axis_size, args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    return lax.reshape(moveaxis(x, d, 0), (axis_size, *new_sizes)), 0


batch_rules[ps.reshape_p] = _reshape_batch


def _transpose_batch(axis_size, args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = list(_shift(permutation, d))
    perm.insert(d, d)
    return lax.transpose(x, perm), d


batch_rules[ps.transpose_p] = _transpose_batch


def _squeeze_batch(axis_size, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return lax.squeeze(x, _shift(dimensions, d)), d - sum(a < d for a in dimensions)


batch_rules[ps.squeeze_p] = _squeeze_batch


def _expand_dims_batch(axis_size, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    out_nd = get_aval(x).ndim - 1 + len(dimensions)
    kept = [i for i in range(out_nd) if i not in dimensions]
    # The batch axis goes just before the output position of operand dim d.
    out_d = kept[d] if d < len(kept) else out_nd
    return lax.expand_dims(x, _shift(dimensions, out_d)), out_d


batch_rules[ps.expand_dims_p] = _expand_dims_batch


def _rev_batch(axis_size, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return lax.rev(x, _shift(dimensions, d)), d


batch_rules[ps.rev_p] = _rev_batch


def _slice_batch(axis_size, args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(d, 0)
    limit.insert(d, axis_size)
    if strides is not None:
        strides = list(strides)
        strides.insert(d, 1)
    return lax.slice(x, start, limit, strides), d


batch_rules[ps.slice_p] = _slice_batch


def _concatenate_batch(axis_size, args, dims, *, dimension):
    d = next(d for d in dims if d is not None)
    xs = [bdim_to(x, xd, d, axis_size) for x, xd in zip(args, dims)]
    return lax.concatenate(xs, dimension + (dimension >= d)), d


batch_rules[ps.concatenate_p] = _concatenate_batch


def _pad_batch(axis_size, args, dims, *, padding_config):
    (x, pv), (dx, dpv) = args, dims
    if dpv is None:
        config = list(padding_config)
        config.insert(dx, (0, 0, 0))
        return lax.pad(x, pv, config), dx
    # A padding value per example: pad with zeros, then select it where no x landed.
    aval = get_aval(pv)
    x = bdim_at_front(x, dx, axis_size)
    zero = np.zeros((), aval.dtype)[()]
    padded = lax.pad(x, zero, [(0, 0, 0), *padding_config])
    from_x = lax.pad(lax.full(get_aval(x).shape[1:], True, dt.bool_), np.False_, padding_config)
    pv = lax.reshape(pv, (axis_size,) + (1,) * len(padding_config))
    return lax.select_n(from_x, pv, padded), 0


batch_rules[ps.pad_p] = _pad_batch


# ---------------------------------------------------------- dynamic_slice, dynamic_update_slice


def _window_indices(axis_size, shape, starts, start_dims, sizes, batched_operand):
    """Index tensors that gather the clamped windows: one per operand axis (the batch axis
    first when the operand is batched), broadcasting to ``(axis_size, *sizes)``."""
    r = len(shape)
    idx = dt.int32 if max(shape, default=0) < 2**31 else dt.int64
    out = []
    if batched_operand:
        out.append(lax.iota(idx, (axis_size,) + (1,) * r, 0))
        if starts:
            out[0] = lax.on_device_of(starts[0], out[0])
    for i, (n, s, sd, k) in enumerate(zip(shape, starts, start_dims, sizes)):
        # Clamp in the start's own dtype, then narrow: narrowing first wraps an int64 or
        # uint64 start past int32's range (2**32 + 1 became 1) back into bounds.
        sdtype = get_aval(s).dtype
        hi = min(n - k, int(dt.iinfo(sdtype).max))
        s = lax.clamp(np.zeros((), sdtype)[()], s, np.asarray(hi, sdtype)[()])
        s = lax.convert_element_type(s, idx)
        s = lax.reshape(s, (axis_size if sd is not None else 1,) + (1,) * r)
        pos = lax.iota(idx, (1,) * (i + 1) + (k,) + (1,) * (r - i - 1), i + 1)
        out.append(lax.add(s, lax.on_device_of(s, pos)))
    return out


def _zero_index(starts):
    return np.zeros((), get_aval(starts[0]).dtype)[()] if starts else np.int32(0)


def _dynamic_slice_batch(axis_size, args, dims, *, slice_sizes):
    (x, *starts), (dx, *dstarts) = args, dims
    if all(d is None for d in dstarts):
        starts = list(starts)
        starts.insert(dx, _zero_index(starts))
        sizes = list(slice_sizes)
        sizes.insert(dx, axis_size)
        return lax.dynamic_slice(x, starts, sizes), dx
    if dx is not None:
        x = moveaxis(x, dx, 0)
    shape = get_aval(x).shape[dx is not None :]
    indices = _window_indices(axis_size, shape, starts, dstarts, slice_sizes, dx is not None)
    axes = tuple(range(len(indices)))
    return lax.gather(x, indices, axes), 0


batch_rules[ps.dynamic_slice_p] = _dynamic_slice_batch


def _dynamic_update_slice_batch(axis_size, args, dims):
    (x, u, *starts), (dx, du, *dstarts) = args, dims
    if all(d is None for d in dstarts):
        d = 0 if dx is None else dx
        x = bdim_to(x, dx, d, axis_size)
        u = bdim_to(u, du, d, axis_size)
        starts = list(starts)
        starts.insert(d, _zero_index(starts))
        return lax.dynamic_update_slice(x, u, starts), d
    x = bdim_at_front(x, dx, axis_size)
    u = bdim_at_front(u, du, axis_size)
    shape, sizes = get_aval(x).shape[1:], get_aval(u).shape[1:]
    indices = _window_indices(axis_size, shape, starts, dstarts, sizes, True)
    return lax.scatter(x, indices, u, tuple(range(len(indices)))), 0


batch_rules[ps.dynamic_update_slice_p] = _dynamic_update_slice_batch
