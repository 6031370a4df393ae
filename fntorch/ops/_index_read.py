"""Indexing, the reads: ``t[idx]`` (``Tensor.__getitem__``), with numpy's semantics.

On the entries of `_index_parse.parse_index`, reading is:

- basic indexing (no arrays): ``rev`` for negative steps, one ``slice``, a
  ``dynamic_slice`` for traced integer scalars, ``squeeze`` for the integer dims and
  ``expand_dims`` for the ``None``s;
- advanced indexing: the same slicing, then one ``gather`` (advanced dims first), then a
  ``transpose`` that reproduces numpy's placement (where the first array was, when the
  arrays are consecutive; else first) and ``expand_dims`` for the ``None``s.

A concrete out-of-range index raises IndexError; a traced one is clamped. An eager tensor
whose device registered a fast path in ``eager_reads`` takes it first (the CPU's: numpy's
own indexing for concrete indices).
"""

from __future__ import annotations

import numpy as np

from ..fx.core import EVAL_TRACE, Tensor, _current_trace, constant_device
from ._index_parse import (
    _ADV,
    _DYN,
    _INT,
    _NONE,
    _SLICE,
    _adv_indices,
    _bind,
    _broadcast_index_shapes,
    _cast,
    _common_int_dtype,
    _insert_new_dims,
    _layout,
    _slice_static,
    parse_index,
)


def getitem(x, idx):
    """``x[idx]`` with numpy's semantics (see the module docstring)."""
    entries, new_dims, shape = parse_index(tuple(x.shape), idx)
    x = _insert_new_dims(x, new_dims)
    if any(e.kind == _ADV for e in entries):
        return _getitem_advanced(x, shape, entries)
    x, cur = _slice_static(x, shape, entries)
    dyn = [e for e in entries if e.kind == _DYN]
    if dyn:
        d = _common_int_dtype([e.value for e in dyn])
        starts = [np.asarray(0, d)[()]] * len(cur)
        sizes = list(cur)
        for e in dyn:
            starts[e.dim] = _cast(e.value, d)
            sizes[e.dim] = 1
        x = _bind("dynamic_slice", x, *starts, slice_sizes=tuple(sizes))
    drop = tuple(e.dim for e in entries if e.kind in (_INT, _DYN))
    if drop:
        x = _bind("squeeze", x, dimensions=drop)
    out_new, pos = [], 0
    for e in entries:
        if e.kind == _NONE:
            out_new.append(pos)
            pos += 1
        elif e.kind == _SLICE:
            pos += 1
    if out_new:
        x = _bind("expand_dims", x, dimensions=tuple(out_new))
    return x


def _getitem_advanced(x, shape, entries):
    x, _ = _slice_static(x, shape, [e for e in entries if e.kind == _SLICE])
    idxs, axes = _adv_indices(entries, constant_device(x))
    nb = len(_broadcast_index_shapes([tuple(i.shape) for i in idxs]))
    x = _bind("gather", x, *idxs, axes=tuple(axes))
    layout = _layout(entries)
    perm = []
    for it in layout:
        if it == "B":
            perm.extend(range(nb))
        elif it != "n":
            perm.append(nb + it[1])
    if perm != list(range(len(perm))):
        x = _bind("transpose", x, permutation=tuple(perm))
    new, pos = [], 0
    for it in layout:
        if it == "n":
            new.append(pos)
            pos += 1
        else:
            pos += nb if it == "B" else 1
    if new:
        x = _bind("expand_dims", x, dimensions=tuple(new))
    return x


def _tensor_getitem(self, idx):
    """``t[idx]``: numpy's basic and advanced indexing (ints, slices, ``None``, ``...``,
    integer tensors and arrays, concrete boolean masks).

    >>> import fntorch as ft
    >>> ft.arange(6).reshape(2, 3)[:, ::-1].tolist()
    [[2, 1, 0], [5, 4, 3]]
    """
    if type(self) is Tensor and _current_trace.get() is EVAL_TRACE:
        fast = eager_reads.get(type(self._value))
        if fast is not None:
            out = fast(self, idx)
            if out is not None:
                return out
    return getitem(self, idx)


# Buffer type -> a device's eager fast path ``(x, idx) -> Tensor or None`` (None: the
# general path). Registered by the device kinds (the CPU's: devices/cpu_dispatch.py).
eager_reads: dict = {}

Tensor.__getitem__ = _tensor_getitem
