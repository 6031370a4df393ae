"""Indexing, the updates: ``t.at[idx]`` and its ``set``, ``add``, ``multiply``, ``min``,
``max`` and ``get``, each a new tensor (``Tensor.at``).

Updates reuse the parse (`_index_parse.parse_index`): the value is cast to the tensor's
dtype, broadcast to the shape ``t[idx]`` has, laid out as the scatter primitives want it
(index dims, then partially sliced dims, then whole dims) and scattered; static ints and
step-1 slices take ``dynamic_update_slice`` instead.

A concrete out-of-range index raises IndexError, as for reads; a traced one is dropped,
JAX's documented behavior for ``at[]``. An eager CPU tensor updated at concrete indices
takes numpy's own indexed assignment (``ufunc.at`` for the combining modes) instead.
"""

from __future__ import annotations

import numpy as np

from ..fx.core import EVAL_TRACE, Tensor, _current_trace, constant_device
from . import lax
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
    _insert_new_dims,
    _layout,
    on_device,
    parse_index,
)

_SCATTER = {
    "set": "scatter",
    "add": "scatter_add",
    "multiply": "scatter_mul",
    "min": "scatter_min",
    "max": "scatter_max",
}
_COMBINE = {"add": lax.add, "multiply": lax.mul, "min": lax.min, "max": lax.max}


def _as_update(x, v, where: str):
    """``v`` cast to ``x``'s dtype: a numpy constant or a tensor."""
    if isinstance(v, Tensor):
        return _cast(v, x.dtype)
    try:
        return np.asarray(v, dtype=x.dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{where}: cannot use {v!r} as a value of dtype {x.dtype}: {e}") from None


def _broadcast_to(v, shape, where: str):
    vs = tuple(v.shape)
    while len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    ok = len(vs) <= len(shape) and all(a == b or a == 1 for a, b in zip(vs[::-1], shape[::-1]))
    if not ok:
        raise ValueError(
            f"{where}: a value of shape {tuple(v.shape)} cannot be broadcast to the indexed "
            f"shape {tuple(shape)}"
        )
    if vs != tuple(v.shape):
        v = v.reshape(vs) if isinstance(v, np.ndarray) else _bind("reshape", v, new_sizes=vs)
    if vs == tuple(shape):
        return v
    if isinstance(v, np.ndarray):
        return np.ascontiguousarray(np.broadcast_to(v, shape))
    dims = tuple(range(len(shape) - len(vs), len(shape)))
    return _bind("broadcast_in_dim", v, shape=tuple(shape), broadcast_dimensions=dims)


def _reshape(v, shape):
    shape = tuple(shape)
    if tuple(v.shape) == shape:
        return v
    if isinstance(v, np.ndarray):
        return v.reshape(shape)
    return _bind("reshape", v, new_sizes=shape)


def _transpose(v, perm):
    if list(perm) == list(range(len(perm))):
        return v
    if isinstance(v, np.ndarray):
        return np.ascontiguousarray(v.transpose(perm))
    return _bind("transpose", v, permutation=tuple(perm))


def update(x, idx, v, mode: str):
    """``x`` with ``x[idx] (op)= v``; ``mode`` one of set, add, multiply, min, max."""
    if type(x) is Tensor and _current_trace.get() is EVAL_TRACE:
        fast = eager_updates.get(type(x._value))
        if fast is not None:
            out = fast(x, idx, v, mode)
            if out is not None:
                return out
    return update_general(x, idx, v, mode)


def update_general(x, idx, v, mode: str):
    """`update` through the primitives (what tracers take)."""
    where = f"at[...].{mode}"
    xshape = tuple(x.shape)
    entries, new_dims, shape = parse_index(xshape, idx)
    v = _as_update(x, v, where)
    dev = constant_device(x)  # where the host constants (v, index arrays) must go
    if new_dims:
        # Bool scalars (``x[True]``): update with the extra axes, then drop them again.
        x = _insert_new_dims(x, new_dims)
        out = _update_parsed(x, shape, entries, v, mode, where, dev)
        return _bind("squeeze", out, dimensions=tuple(new_dims))
    return _update_parsed(x, shape, entries, v, mode, where, dev)


def _update_parsed(x, shape, entries, v, mode, where, dev):
    # The shape x[idx] has; v is broadcast to it.
    has_adv = any(e.kind in (_ADV, _DYN) for e in entries)
    simple = not has_adv and all(e.kind != _SLICE or e.value[2] == 1 for e in entries)
    if simple:
        return _update_slices(x, shape, entries, v, mode, where, dev)
    idxs, axes = _adv_indices(entries, dev)
    b_shape = _broadcast_index_shapes([tuple(i.shape) for i in idxs]) if idxs else ()
    nb = len(b_shape)
    # numpy's result shape, in layout order.
    slice_entries = [e for e in entries if e.kind == _SLICE]
    slice_sizes = [len(range(*e.value)) for e in slice_entries]
    layout = _layout(entries)  # with no index arrays, "B" stands for no dims
    r_shape = []
    for it in layout:
        if it == "B":
            r_shape.extend(b_shape)
        elif it == "n":
            r_shape.append(1)
        else:
            r_shape.append(slice_sizes[it[1]])
    v = _broadcast_to(v, r_shape, where)
    # Drop the new axes, then lay out as B + partial slices + whole slices.
    layout_nn = [it for it in layout if it != "n"]
    shape_nn = [s for it, s in zip(_expand(layout, nb), r_shape) if it != "n"]
    v = _reshape(v, shape_nn)
    partial = [j for j, e in enumerate(slice_entries) if e.value != (0, shape[e.dim], 1)]
    whole = [j for j, e in enumerate(slice_entries) if e.value == (0, shape[e.dim], 1)]
    pos, at = {}, 0
    for it in layout_nn:
        if it == "B":
            pos["B"] = list(range(at, at + nb))
            at += nb
        else:
            pos[it[1]] = [at]
            at += 1
    perm = (
        pos.get("B", []) + [p for j in partial for p in pos[j]] + [p for j in whole for p in pos[j]]
    )
    v = _transpose(v, perm)
    if not idxs and not partial:
        # Every dim taken whole: an elementwise update of the full tensor.
        v = _reshape(v, shape)
        if mode == "set":
            return v if isinstance(v, Tensor) else _const_like(x, v)
        return _COMBINE[mode](x, on_device(dev, v))
    n_part = len(partial)
    scatter_idx = []
    for i in idxs:
        scatter_idx.append(_reshape(i, tuple(i.shape) + (1,) * n_part))
    for k, j in enumerate(partial):
        e = slice_entries[j]
        ar = np.arange(*e.value, dtype=np.int64)
        scatter_idx.append(on_device(dev, ar.reshape((-1,) + (1,) * (n_part - 1 - k))))
    s_axes = tuple(axes) + tuple(slice_entries[j].dim for j in partial)
    return _bind(_SCATTER[mode], x, *scatter_idx, on_device(dev, v), axes=s_axes)


def _expand(layout, nb):
    out = []
    for it in layout:
        out.extend([it] * nb if it == "B" else [it])
    return out


def _const_like(x, v):
    """A numpy constant as a tensor on ``x``'s device (a copy, so it traces as a value)."""
    from . import api

    return api.asarray(v, device=x.device)


def _update_slices(x, shape, entries, v, mode, where, dev):
    """Static ints and step-1 slices: ``dynamic_update_slice`` of a block."""
    starts, block = [0] * len(shape), list(shape)
    for e in entries:
        if e.kind == _INT:
            starts[e.dim], block[e.dim] = e.value, 1
        elif e.kind == _SLICE:
            start, stop, _ = e.value
            starts[e.dim], block[e.dim] = start, max(stop - start, 0)
    r_shape = []
    for e in entries:
        if e.kind == _NONE:
            r_shape.append(1)
        elif e.kind == _SLICE:
            r_shape.append(block[e.dim])
    v = _broadcast_to(v, r_shape, where)
    if 0 in block:
        return x
    v = _reshape(v, block)
    if tuple(block) == tuple(shape):
        if mode == "set":
            return v if isinstance(v, Tensor) else _const_like(x, v)
        return _COMBINE[mode](x, on_device(dev, v))
    v = on_device(dev, v)
    if mode != "set":
        cur = _bind(
            "slice",
            x,
            start_indices=tuple(starts),
            limit_indices=tuple(s + b for s, b in zip(starts, block)),
            strides=None,
        )
        v = _COMBINE[mode](cur, v)
    s = [np.asarray(i, np.int64)[()] for i in starts]
    return _bind("dynamic_update_slice", x, v, *s)


class _IndexUpdateRef:
    """``t.at[idx]``: the functional updates of ``t`` at ``idx``."""

    __slots__ = ("tensor", "index")

    def __init__(self, tensor, index):
        self.tensor, self.index = tensor, index

    def get(self):
        """``t[idx]``.

        >>> import fntorch as ft
        >>> ft.asarray([1, 2, 3]).at[1].get().item()
        2
        """
        return self.tensor[self.index]

    def set(self, values):
        """A new tensor equal to ``t`` but ``values`` at ``idx`` (cast to ``t``'s dtype).

        >>> import fntorch as ft
        >>> ft.zeros(3).at[1].set(5.0).tolist()
        [0.0, 5.0, 0.0]
        """
        return update(self.tensor, self.index, values, "set")

    def add(self, values):
        """``t`` with ``values`` added at ``idx``; repeated indices accumulate.

        >>> import fntorch as ft
        >>> ft.zeros(3).at[ft.asarray([0, 0, 2])].add(1.0).tolist()
        [2.0, 0.0, 1.0]
        """
        return update(self.tensor, self.index, values, "add")

    def multiply(self, values):
        """``t`` with the entries at ``idx`` multiplied by ``values``.

        >>> import fntorch as ft
        >>> ft.ones(3).at[1:].multiply(3.0).tolist()
        [1.0, 3.0, 3.0]
        """
        return update(self.tensor, self.index, values, "multiply")

    def min(self, values):
        """``t`` with the entries at ``idx`` replaced by ``minimum(t[idx], values)``.

        >>> import fntorch as ft
        >>> ft.ones(2).at[0].min(0.5).tolist()
        [0.5, 1.0]
        """
        return update(self.tensor, self.index, values, "min")

    def max(self, values):
        """``t`` with the entries at ``idx`` replaced by ``maximum(t[idx], values)``.

        >>> import fntorch as ft
        >>> ft.ones(2).at[0].max(2.0).tolist()
        [2.0, 1.0]
        """
        return update(self.tensor, self.index, values, "max")

    def __repr__(self):
        return f"_IndexUpdateRef({self.tensor!r}, {self.index!r})"


class _IndexUpdateHelper:
    """``t.at``: index it (``t.at[idx]``) to get the functional updates at ``idx``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __getitem__(self, index):
        return _IndexUpdateRef(self.tensor, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.tensor!r})"


# Buffer type -> a device's eager fast path ``(x, idx, v, mode) -> Tensor or None`` (None:
# the general path). Registered by the device kinds (the CPU's: devices/cpu_dispatch.py).
eager_updates: dict = {}


def _at(self):
    """Functional updates: ``t.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``, ``.min(v)``,
    ``.max(v)``, ``.get()``; each returns a new tensor.

    >>> import fntorch as ft
    >>> ft.zeros(3).at[0].set(1.0).tolist()
    [1.0, 0.0, 0.0]
    """
    return _IndexUpdateHelper(self)


Tensor.at = property(_at)
