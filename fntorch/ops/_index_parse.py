"""Indexing, the parse: an index expression as one `_Entry` per item.

An index expression is parsed once into one `_Entry` per item (ints, slices, ``None``,
integer arrays, with ``...`` expanded and boolean masks turned into integer arrays), with
negative indices wrapped and static ones bounds-checked: a concrete out-of-range index
raises IndexError, for reads and ``at[]`` updates alike, as numpy and PyTorch do (JAX
clamps it instead). A traced one cannot be checked here: reads clamp it and updates drop
it, JAX's documented behavior for ``at[]``.

Also here: the steps reads (`_index_read`) and updates (`_index_update`) share on a
parsed index (the static slicing, the advanced index operands, numpy's result layout),
the late primitive lookup both bind through, and `_numpy_index`, the index as numpy's
own, for the eager fast paths of both.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import ConcretizationError, Tensor, Tracer, device_of_buffer
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


def _adv_indices(entries, dev=None):
    """The advanced index operands (ints as 0-d arrays) and their operand dims; the host
    arrays among them put on ``dev`` (``fx.core.constant_device``)."""
    idxs, axes = [], []
    for e in entries:
        if e.kind == _INT:
            idxs.append(np.asarray(e.value, np.int64))
        elif e.kind in (_DYN, _ADV):
            idxs.append(e.value)
        else:
            continue
        axes.append(e.dim)
    if dev is not None:
        idxs = [on_device(dev, i) for i in idxs]
    return idxs, axes


def on_device(dev, a):
    """Host array ``a`` as a tensor on ``dev`` (None: ``a`` itself); tensors stay."""
    if dev is None or not isinstance(a, np.ndarray):
        return a
    return Tensor(dev.put(a))


# ------------------------------------------------------------------ eager fast paths
# An eager tensor on the CPU indexed by concrete values: numpy's own indexing has exactly
# these semantics (numpy is the reference the tests compare with), at numpy's speed.
# Anything unusual, and every error, goes the general way, which words the errors.

_BASIC = (builtins.int, slice, type(None), type(Ellipsis))


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
