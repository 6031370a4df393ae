"""Indexing: ``t[idx]`` and the functional updates ``t.at[idx].set(v)`` (and add, ...).

An index expression is parsed once into one `_Entry` per item (ints, slices, ``None``,
integer arrays, with ``...`` expanded and boolean masks turned into integer arrays), with
negative indices wrapped and static ones bounds-checked. Reading then is:

- basic indexing (no arrays): ``rev`` for negative steps, one ``slice``, a
  ``dynamic_slice`` for traced integer scalars, ``squeeze`` for the integer dims and
  ``expand_dims`` for the ``None``s;
- advanced indexing: the same slicing, then one ``gather`` (advanced dims first), then a
  ``transpose`` that reproduces numpy's placement (where the first array was, when the
  arrays are consecutive; else first) and ``expand_dims`` for the ``None``s.

Updates reuse the parse: the value is cast to the tensor's dtype, broadcast to the shape
``t[idx]`` has, laid out as the scatter primitives want it (index dims, then
partially sliced dims, then whole dims) and scattered; static ints and step-1 slices take
``dynamic_update_slice`` instead.

Out-of-range indices: a concrete one raises IndexError, for reads and ``at[]`` updates
alike, as numpy and PyTorch do (JAX clamps it instead). A traced one cannot be checked:
reads clamp it and updates drop it, JAX's documented behavior for ``at[]``.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import (
    EVAL_TRACE,
    ConcretizationError,
    Tensor,
    Tracer,
    _current_trace,
    _new_tensor,
    device_of_buffer,
)
from . import lax

# Entry kinds.
_NONE, _SLICE, _INT, _DYN, _ADV = "none", "slice", "int", "dyn", "adv"
# An ellipsis that stands for no dims still separates advanced indices (numpy's rule:
# x[None, [0, 1], ..., 0] on a matrix puts the advanced dims first).
_SEP = "sep"


def _prim(name: str):
    """The primitive object ``<name>_p`` (looked up late: other modules define them)."""
    p = getattr(lax, name + "_p", None)
    if p is None:
        from . import _prims_indexing, _prims_structural

        for m in (_prims_structural, _prims_indexing):
            p = getattr(m, name + "_p", None)
            if p is not None:
                break
        else:
            raise NotImplementedError(
                f"indexing needs the primitive {name!r}, which is not defined"
            )
    return p


def _bind(name, *args, **params):
    return _prim(name).bind(*args, **params)


# ----------------------------------------------------------------------------- errors


def _mask_error(where: str, e: Exception) -> ConcretizationError:
    return ConcretizationError(
        f"{where}: boolean-mask indexing needs a concrete mask, because the result's shape "
        "depends on how many entries are True; this mask is abstract (traced). Use "
        "ft.where(mask, x, other) to select elementwise, or ft.nonzero(mask, size=...) for "
        f"a fixed number of indices.\n({e})"
    )


def _slice_error(item, e: Exception) -> ConcretizationError:
    return ConcretizationError(
        f"indexing: slice bounds must be concrete, because the result's shape depends on "
        f"them; {item!r} has an abstract (traced) bound. For a window of fixed size k at a "
        "traced start i, index with ft.arange(k) + i (an integer tensor); or mark the "
        f"argument static.\n({e})"
    )


def _bad_index(item) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
        f"tensors/arrays are valid indices, got {item!r} of type {type(item).__name__}"
    )


def _out_of_range(i, axis: int, n: int) -> IndexError:
    return IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")


# ----------------------------------------------------------------------------- parsing


class _Entry:
    """One item of the index. ``dim``: the operand dim it indexes (None for ``None``).

    ``value``: for _SLICE ``(start, stop, step)`` (normalized by ``slice.indices``),
    for _INT a non-negative int, for _DYN a 0-d integer tensor (wrapped), for _ADV an
    integer numpy array (concrete, wrapped) or tensor (traced, wrapped).
    """

    __slots__ = ("kind", "dim", "value")

    def __init__(self, kind, dim, value=None):
        self.kind, self.dim, self.value = kind, dim, value

    def __repr__(self):
        return f"_Entry({self.kind}, dim={self.dim}, {self.value!r})"


def _host(t: Tensor, what: str) -> np.ndarray:
    """The concrete value of ``t`` as a numpy array; ConcretizationError if traced."""
    buf = t._concrete(what)
    if not isinstance(buf, (np.ndarray, np.generic)):
        buf = device_of_buffer(buf).to_host(buf)
    return np.asarray(buf)


def _classify(item):
    """(kind, payload): kind one of none, ellipsis, slice, int, bool, mask, intarray, dyn."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (builtins.bool, np.bool_)):
        return "bool", builtins.bool(item)
    if isinstance(item, (builtins.int, np.integer)):
        return "int", int(item)
    if isinstance(item, (list, tuple)):
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        item = arr
    if isinstance(item, Tensor):
        kind = item.dtype
        if kind == dt.bool_:
            try:
                item = _host(item, "boolean mask indexing")
            except ConcretizationError as e:
                raise _mask_error("indexing", e) from None
        elif dt.is_integer(kind):
            if isinstance(item, Tracer):
                try:
                    item = _host(item, "tensor index")
                except ConcretizationError:
                    return ("dyn" if item.ndim == 0 else "intarray"), item
            else:
                item = _host(item, "tensor index")
        else:
            raise _bad_index(item)
    if isinstance(item, (np.ndarray, np.generic)):
        arr = np.asarray(item)
        if arr.dtype == np.bool_:
            return ("bool", builtins.bool(arr)) if arr.ndim == 0 else ("mask", arr)
        if arr.dtype.kind in "iu":
            return ("int", int(arr)) if arr.ndim == 0 else ("intarray", arr)
        raise _bad_index(item)
    if hasattr(item, "__index__"):
        return "int", operator.index(item)
    raise _bad_index(item)


def wrap_negative(i, n: int):
    """``where(i < 0, i + n, i)`` for an integer index array or tensor ``i`` on an axis of
    size ``n``: negative indices count from the end. An index dtype too narrow to hold
    ``n`` (int8 indices on an axis of 200) is widened to int64 first: ``i + n`` would
    overflow.

    >>> wrap_negative(np.array([-1, 2], np.int8), 200).tolist()
    [199, 2]
    """
    d = np.dtype(i.dtype)
    if not dt.is_signed(d):
        return i
    if n > dt.iinfo(d).max:
        d = np.dtype(np.int64)
        i = i.astype(d) if isinstance(i, np.ndarray) else lax.convert_element_type(i, d)
    if isinstance(i, np.ndarray):
        return np.where(i < 0, i + n, i)
    neg = lax.lt(i, np.asarray(0, d)[()])
    return lax.select(neg, lax.add(i, np.asarray(n, d)[()]), i)


def parse_index(shape: tuple, idx):
    """The entries of ``idx`` on a tensor of ``shape``, and ``new_dims``: operand positions
    where bool scalars (``x[True]``) need a size-1 axis inserted first.

    Raises IndexError for bad or out-of-range static indices.
    """
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = [_classify(it) for it in idx]
    n_ellipsis = sum(k == "ellipsis" for k, _ in items)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for k, p in items:
        if k in ("slice", "int", "intarray", "dyn"):
            consumed += 1
        elif k == "mask":
            consumed += p.ndim
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"too many indices for tensor: tensor is {ndim}-dimensional, "
            f"but {consumed} were indexed"
        )
    fill = [("slice", slice(None))] * (ndim - consumed)
    if n_ellipsis:
        at = next(i for i, (k, _) in enumerate(items) if k == "ellipsis")
        items = items[:at] + (fill or [("sep", None)]) + items[at + 1 :]
    else:
        items = items + fill

    # Bool scalars index a new size-1 axis with [0] (True) or [] (False), as numpy does.
    shape = list(shape)
    new_dims = []
    entries = []
    dim = 0
    for k, p in items:
        if k == "none":
            entries.append(_Entry(_NONE, None))
            continue
        if k == "sep":
            entries.append(_Entry(_SEP, None))
            continue
        if k == "bool":
            new_dims.append(dim)
            shape.insert(dim, 1)
            k, p = "intarray", np.zeros(1 if p else 0, np.int64)
        if k == "slice":
            try:
                bounds = p.indices(shape[dim])
            except ConcretizationError as e:
                raise _slice_error(p, e) from None
            entries.append(_Entry(_SLICE, dim, bounds))
            dim += 1
        elif k == "int":
            n = shape[dim]
            if not -n <= p < n:
                raise _out_of_range(p, dim, n)
            entries.append(_Entry(_INT, dim, p + n if p < 0 else p))
            dim += 1
        elif k == "dyn":
            entries.append(_Entry(_DYN, dim, wrap_negative(p, shape[dim])))
            dim += 1
        elif k == "intarray":
            n = shape[dim]
            if isinstance(p, np.ndarray):
                if p.size:
                    lo, hi = p.min(), p.max()
                    if lo < -n or hi >= n:
                        raise _out_of_range(lo if lo < -n else hi, dim, n)
                    if lo < 0:
                        p = wrap_negative(p, n)
            else:
                p = wrap_negative(p, n)
            entries.append(_Entry(_ADV, dim, p))
            dim += 1
        elif k == "mask":
            got = tuple(shape[dim : dim + p.ndim])
            if got != p.shape:
                raise IndexError(
                    f"boolean index of shape {p.shape} does not match the indexed tensor "
                    f"dims {got} (axes {dim}..{dim + p.ndim - 1})"
                )
            for arr in np.nonzero(p):
                entries.append(_Entry(_ADV, dim, arr.astype(np.int64)))
                dim += 1
    return entries, new_dims, tuple(shape)


# ---------------------------------------------------------------------- shared steps


def _insert_new_dims(x, new_dims):
    if not new_dims:
        return x
    return _bind("expand_dims", x, dimensions=tuple(new_dims))


def _slice_static(x, shape, entries):
    """Applies the slices and static ints of ``entries`` (``rev`` for negative steps, then one
    ``slice``). Int dims keep size 1. Returns the result and its shape."""
    starts, limits, strides, revs = [0] * len(shape), list(shape), [1] * len(shape), []
    for e in entries:
        d = e.dim
        if e.kind == _INT:
            starts[d], limits[d] = e.value, e.value + 1
        elif e.kind == _SLICE:
            n = shape[d]
            start, stop, step = e.value
            count = len(range(start, stop, step))
            if count == 0:
                starts[d] = limits[d] = 0
                continue
            if step < 0:
                revs.append(d)
                start, step = n - 1 - start, -step
            starts[d] = start
            limits[d] = start + (count - 1) * step + 1
            strides[d] = step
    if revs:
        x = _bind("rev", x, dimensions=tuple(revs))
    new_shape = tuple(len(range(s, l, st)) for s, l, st in zip(starts, limits, strides))
    if new_shape != tuple(shape) or any(st != 1 for st in strides):
        x = _bind(
            "slice",
            x,
            start_indices=tuple(starts),
            limit_indices=tuple(limits),
            strides=None if all(st == 1 for st in strides) else tuple(strides),
        )
    return x, new_shape


def _common_int_dtype(ts):
    d = ts[0].dtype
    for t in ts[1:]:
        d = dt.promote_types(d, t.dtype)
    return d


def _cast(t, dtype):
    if t.dtype == dtype:
        return t
    return _bind("convert_element_type", t, new_dtype=dtype)


def _layout(entries):
    """numpy's result layout: a list of "B" (the advanced block), ("k", j) (the j-th kept
    operand dim) and "n" (a new axis), and whether it has an advanced block."""
    adv_pos = [i for i, e in enumerate(entries) if e.kind in (_ADV, _INT, _DYN)]
    items, j = [], 0
    for e in entries:
        if e.kind == _NONE:
            items.append("n")
        elif e.kind == _SLICE:
            items.append(("k", j))
            j += 1
        elif e.kind == _SEP:
            items.append("s")
        else:
            items.append("a")
    consecutive = adv_pos and adv_pos[-1] - adv_pos[0] + 1 == len(adv_pos)
    if consecutive:
        first = adv_pos[0]
        out = items[:first] + ["B"] + items[first:]
    else:
        out = ["B"] + items
    return [it for it in out if it not in ("a", "s")]


def _broadcast_index_shapes(shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " ".join(str(tuple(s)) for s in shapes)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {listed}"
        ) from None


# ----------------------------------------------------------------------------- reading


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


def _adv_indices(entries):
    """The advanced index operands (ints as 0-d arrays) and their operand dims."""
    idxs, axes = [], []
    for e in entries:
        if e.kind == _INT:
            idxs.append(np.asarray(e.value, np.int64))
        elif e.kind in (_DYN, _ADV):
            idxs.append(e.value)
        else:
            continue
        axes.append(e.dim)
    return idxs, axes


def _getitem_advanced(x, shape, entries):
    x, _ = _slice_static(x, shape, [e for e in entries if e.kind == _SLICE])
    idxs, axes = _adv_indices(entries)
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


# ----------------------------------------------------------------------------- updates

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
        out = _eager_update(x, idx, v, mode)
        if out is not None:
            return out
    return update_general(x, idx, v, mode)


def update_general(x, idx, v, mode: str):
    """`update` through the primitives (what tracers take)."""
    where = f"at[...].{mode}"
    xshape = tuple(x.shape)
    entries, new_dims, shape = parse_index(xshape, idx)
    v = _as_update(x, v, where)
    if new_dims:
        # Bool scalars (``x[True]``): update with the extra axes, then drop them again.
        out = _update_parsed(_insert_new_dims(x, new_dims), shape, entries, v, mode, where)
        return _bind("squeeze", out, dimensions=tuple(new_dims))
    return _update_parsed(x, shape, entries, v, mode, where)


def _update_parsed(x, shape, entries, v, mode, where):
    # The shape x[idx] has; v is broadcast to it.
    has_adv = any(e.kind in (_ADV, _DYN) for e in entries)
    simple = not has_adv and all(e.kind != _SLICE or e.value[2] == 1 for e in entries)
    if simple:
        return _update_slices(x, shape, entries, v, mode, where)
    idxs, axes = _adv_indices(entries)
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
        return _COMBINE[mode](x, v)
    n_part = len(partial)
    scatter_idx = []
    for i in idxs:
        scatter_idx.append(_reshape(i, tuple(i.shape) + (1,) * n_part))
    for k, j in enumerate(partial):
        e = slice_entries[j]
        ar = np.arange(*e.value, dtype=np.int64)
        scatter_idx.append(ar.reshape((-1,) + (1,) * (n_part - 1 - k)))
    s_axes = tuple(axes) + tuple(slice_entries[j].dim for j in partial)
    return _bind(_SCATTER[mode], x, *scatter_idx, v, axes=s_axes)


def _expand(layout, nb):
    out = []
    for it in layout:
        out.extend([it] * nb if it == "B" else [it])
    return out


def _const_like(x, v):
    """A numpy constant as a tensor on ``x``'s device (a copy, so it traces as a value)."""
    from . import api

    return api.asarray(v, device=x.device)


def _update_slices(x, shape, entries, v, mode, where):
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
        return _COMBINE[mode](x, v)
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


# ------------------------------------------------------------------ eager fast paths
# An eager tensor on the CPU indexed by concrete values: numpy's own indexing has exactly
# these semantics (numpy is the reference the tests compare with), at numpy's speed.
# Anything unusual, and every error, goes the general way, which words the errors.

_BASIC = (builtins.int, slice, type(None), type(Ellipsis))
_AT_UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _numpy_item(it):
    t = type(it)
    if t in _BASIC or isinstance(it, np.integer):
        return it
    if t is Tensor:
        it = it._value
        return it if type(it) is np.ndarray and it.dtype.kind in "biu" else _NO
    if t is list:
        try:
            it = np.asarray(it)
        except ValueError:
            return _NO
        if it.size == 0 and it.dtype.kind == "f":
            return it.astype(np.int64)
    if isinstance(it, np.ndarray) and it.dtype.kind in "biu":
        return it
    return _NO


_NO = object()


def _numpy_index(idx):
    """``idx`` as a numpy index, or ``_NO`` when it needs the general path."""
    if type(idx) is tuple:
        out = tuple(_numpy_item(i) for i in idx)
        return _NO if any(i is _NO for i in out) else out
    return _numpy_item(idx)


def _eager_update(x, idx, v, mode):
    buf = x._value
    if type(buf) is not np.ndarray or (mode in ("add", "multiply") and buf.dtype == np.bool_):
        return None
    np_idx = _numpy_index(idx)
    if np_idx is _NO:
        return None
    if isinstance(v, Tensor):
        if type(v) is not Tensor:
            return None  # a tracer: the general path
        v = v._value
        if not isinstance(v, (np.ndarray, np.generic)):
            return None
    try:
        if isinstance(v, (np.ndarray, np.generic)):
            v = np.asarray(v).astype(buf.dtype, copy=False)
        else:  # Python values: the same cast (and overflow errors) as the general path
            v = np.asarray(v, dtype=buf.dtype)
        out = buf.copy()
        if mode == "set":
            out[np_idx] = v
        else:
            _AT_UFUNCS[mode].at(out, np_idx, v)
    except (IndexError, ValueError, TypeError, OverflowError):
        return None
    return _new_tensor(out)


def _tensor_getitem(self, idx):
    """``t[idx]``: numpy's basic and advanced indexing (ints, slices, ``None``, ``...``,
    integer tensors and arrays, concrete boolean masks).

    >>> import fntorch as ft
    >>> ft.arange(6).reshape(2, 3)[:, ::-1].tolist()
    [[2, 1, 0], [5, 4, 3]]
    """
    if type(self) is Tensor and _current_trace.get() is EVAL_TRACE:
        buf = self._value
        if type(buf) is np.ndarray:
            np_idx = _numpy_index(idx)
            if np_idx is not _NO:
                try:
                    r = buf[np_idx]
                except (IndexError, ValueError, TypeError):
                    return getitem(self, idx)  # the general path words the error
                return _new_tensor(r if type(r) is np.ndarray else np.asarray(r))
    return getitem(self, idx)


def _at(self):
    """Functional updates: ``t.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``, ``.min(v)``,
    ``.max(v)``, ``.get()``; each returns a new tensor.

    >>> import fntorch as ft
    >>> ft.zeros(3).at[0].set(1.0).tolist()
    [1.0, 0.0, 0.0]
    """
    return _IndexUpdateHelper(self)


Tensor.__getitem__ = _tensor_getitem
Tensor.at = property(_at)
