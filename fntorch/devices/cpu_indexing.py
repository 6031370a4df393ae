"""CPU (numpy) impls of the indexing primitives.

Both directions move the indexed ``axes`` to the front and index with the tuple of index
arrays: consecutive advanced indices at the front keep numpy's broadcast dims first,
which is the primitives' output layout for any ``axes`` order. Results are always fresh
arrays; inputs are never written.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..ops import _prims_indexing as pi
from ._device import cpu_impls


def _as_intp(i, n: int):
    """``i`` as int64, values above ``n`` (or the int64 range) lowered to ``n``.

    Lowering first keeps huge uint64 values from wrapping to negatives."""
    i = np.asarray(i)
    if i.dtype.kind == "u" and i.dtype.itemsize == 8:
        i = np.minimum(i, np.uint64(max(n, 0)))
    return i.astype(np.int64, copy=False)


def _front(x, axes):
    return np.moveaxis(x, axes, tuple(range(len(axes))))


def _gather(operand, *indices, axes):
    if not axes:
        return np.array(operand, copy=True)
    x = _front(operand, axes)
    idx = np.broadcast_arrays(*(_as_intp(i, x.shape[k]) for k, i in enumerate(indices)))
    if idx[0].size == 0:
        # No index is read, so there is nothing to clamp (the axis may even be empty).
        return np.empty(idx[0].shape + x.shape[len(axes) :], operand.dtype)
    idx = tuple(np.clip(i, 0, x.shape[k] - 1) for k, i in enumerate(idx))
    return x[idx]


cpu_impls[pi.gather_p] = _gather


def _in_range(x, axes, indices):
    """The x with ``axes`` in front (a view), the in-range index arrays (1-d) and their mask."""
    xf = _front(x, axes)
    idx = np.broadcast_arrays(*(_as_intp(i, xf.shape[k]) for k, i in enumerate(indices)))
    mask = np.ones(idx[0].shape, bool)
    for k, i in enumerate(idx):
        mask &= (i >= 0) & (i < xf.shape[k])
    return xf, tuple(i[mask] for i in idx), mask


def _scatter_impl(ufunc, operand, *rest, axes):
    indices, updates = rest[:-1], rest[-1]
    out = np.array(operand, copy=True)
    if not axes:
        upd = np.broadcast_to(updates, out.shape)
        out[...] = upd if ufunc is None else ufunc(out, upd)
        return out
    view, idx, mask = _in_range(out, axes, indices)
    gshape = mask.shape + view.shape[len(axes) :]
    upd = np.broadcast_to(updates, gshape)[mask]
    if ufunc is None:
        view[idx] = upd  # duplicates: numpy's last write wins (the spec leaves it open)
    elif out.dtype == np.float16 and ufunc in (np.minimum, np.maximum):
        # Through float32, exactly: numpy's float16 loops keep the first of two equal
        # values (+0, -0), its float32 ones and the kernels the second.
        wide = view.astype(np.float32)
        ufunc.at(wide, idx, upd.astype(np.float32))
        view[...] = wide
    else:
        ufunc.at(view, idx, upd)
    return out


cpu_impls[pi.scatter_p] = partial(_scatter_impl, None)
cpu_impls[pi.scatter_add_p] = partial(_scatter_impl, np.add)
cpu_impls[pi.scatter_mul_p] = partial(_scatter_impl, np.multiply)
cpu_impls[pi.scatter_min_p] = partial(_scatter_impl, np.minimum)
cpu_impls[pi.scatter_max_p] = partial(_scatter_impl, np.maximum)
