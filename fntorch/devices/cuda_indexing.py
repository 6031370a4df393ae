"""Gathers and ``scatter_add`` on the GPU without a host round trip.

A gather clamps its indices and reads with CuPy's integer-array indexing; a
``scatter_add`` (a gather's transpose: the backward of every embedding, ``take`` and
label pick) adds with ``cupyx.scatter_add``'s atomics. Neither reads a value back to
the host: where the CPU impl drops the out-of-range updates with a boolean mask (whose
result size CuPy must read back, a sync), here they are kept at a clamped index with
their value replaced by the sum's identity (``-0.0`` for floats: ``-0.0 + x == x`` for
every ``x``, signed zeros included). A first version that ran the CPU impl's own code
with CuPy synced on that mask and made W5's step slower than the host route (4.2 ms
against 2.75); this one does not sync.

The other scatters (plain, mul, min, max) stay on the host: a plain scatter's
duplicates CuPy writes in no fixed order, and atomic min/max treat NaN and signed zeros
their own way. Float atomics add duplicates in no fixed order, so sums agree with the
CPU's to rounding, not bit for bit.

>>> sorted(p.name for p in indexing_impls(__import__("numpy"), None))
[]
"""

from __future__ import annotations

import numpy as np

from ..ops import _prims_indexing as pi
from .cuda_bf16 import as_device

# The dtypes cupyx.scatter_add takes (the rest go through the host).
SCATTER_ADD_DTYPES = frozenset(map(np.dtype, ("float32", "float64", "int32", "uint32")))


def indexing_impls(cp, host_scatter_add) -> dict:
    """``{gather_p, scatter_add_p}`` impls for CuPy module ``cp``; empty where ``cp`` is
    numpy standing in (no cupyx). ``host_scatter_add`` runs the dtypes cupyx lacks."""
    try:
        import cupyx
    except ImportError:
        return {}

    def front(x, axes):
        return cp.moveaxis(x, axes, tuple(range(len(axes))))

    def index_arrays(x, indices):
        """The index arrays broadcast together, as int64 (uint64 values above the axis
        lowered first, so they cannot wrap to negatives)."""
        out = []
        for k, i in enumerate(indices):
            i = cp.asarray(i)
            if i.dtype == np.uint64:
                i = cp.minimum(i, np.uint64(max(x.shape[k], 0)))
            out.append(i.astype(np.int64, copy=False))
        return cp.broadcast_arrays(*out)

    def gather(operand, *indices, axes):
        if not axes:
            return operand.copy()
        x = front(operand, axes)
        idx = index_arrays(x, indices)
        if idx[0].size == 0:  # nothing is read, so nothing to clamp (the axis may be empty)
            return cp.empty(idx[0].shape + x.shape[len(axes) :], operand.dtype)
        return x[tuple(cp.clip(i, 0, x.shape[k] - 1) for k, i in enumerate(idx))]

    def scatter_add(operand, *rest, axes):
        if operand.dtype not in SCATTER_ADD_DTYPES:
            return host_scatter_add(operand, *rest, axes=axes)
        indices, updates = rest[:-1], as_device(cp, rest[-1])
        out = operand.copy()
        if not axes:
            out += cp.broadcast_to(updates, out.shape).astype(out.dtype, copy=False)
            return out
        view = front(out, axes)
        idx = index_arrays(view, indices)
        if idx[0].size == 0:
            return out
        inside = cp.ones(idx[0].shape, bool)
        for k, i in enumerate(idx):
            inside &= (i >= 0) & (i < view.shape[k])
        tail = view.shape[len(axes) :]
        upd = cp.broadcast_to(updates, idx[0].shape + tail).astype(out.dtype, copy=False)
        # a device scalar: CuPy takes no numpy arrays, and a Python one could widen upd
        identity = cp.full((), -0.0 if out.dtype.kind == "f" else 0, out.dtype)
        upd = cp.where(inside.reshape(inside.shape + (1,) * len(tail)), upd, identity)
        clamped = tuple(cp.clip(i, 0, view.shape[k] - 1) for k, i in enumerate(idx))
        cupyx.scatter_add(view, clamped, upd)
        return out

    scatter_add.through_host = "dtypes cupyx.scatter_add does not take"
    return {pi.gather_p: gather, pi.scatter_add_p: scatter_add}
