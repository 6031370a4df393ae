"""Manipulation functions of the Array API standard, plus take and take_along_axis
(numpy's pad is in ``_api_pad``).

Each is a few structural primitives (reshape, transpose, broadcast_in_dim, slice,
concatenate, pad, gather) with the standard's argument checking in front: shape and
axis errors raise ValueError naming the function and the values.
"""

from __future__ import annotations

import operator

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import ConcretizationError, Tensor, Tracer
from . import lax
from ._api_common import (
    is_pyscalar,
    normalize_axes,
    normalize_axis,
    operand,
    promote,
    promote_dtype,
    size_of,
)
from ._api_creation import asarray
from ._indexing import wrap_negative

__all__ = [
    "reshape", "permute_dims", "matrix_transpose", "expand_dims", "squeeze", "flip", "roll",
    "stack", "concat", "cat", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
    "moveaxis", "repeat", "tile", "unstack", "take", "take_along_axis", "astype",
    "ravel",
]  # fmt: skip


def _t(x) -> Tensor:
    return asarray(x) if is_pyscalar(x) else operand(x, asarray)


def _ints(v, where: str) -> tuple[int, ...]:
    """``v`` (an int or a sequence of ints) as a tuple of ints. Floats and strings raise
    TypeError naming ``where``, as in numpy: ``int()`` would truncate 2.5 to 2 and read
    "23" as 23."""
    try:
        if getattr(v, "ndim", None) == 0 or not hasattr(v, "__iter__"):
            return (operator.index(v),)
        return tuple(operator.index(s) for s in v)
    except ConcretizationError:
        raise  # a traced size: its message says which argument to mark static
    except TypeError:
        raise TypeError(f"{where}: expected an int or a sequence of ints, got {v!r}") from None


def reshape(x, /, shape, *, copy=None) -> Tensor:
    """``x`` with a new ``shape`` (row-major); one dimension may be ``-1`` (inferred).

    >>> import fntorch as ft
    >>> ft.reshape(ft.arange(6), (2, -1)).shape
    (2, 3)
    """
    x = _t(x)
    shape = _ints(shape, "reshape: shape")
    size = x.size
    unknown = [i for i, s in enumerate(shape) if s == -1]
    bad = len(unknown) > 1 or any(s < -1 for s in shape)
    if not bad and unknown:
        known = size_of(s for s in shape if s != -1)
        if known == 0 or size % known:
            bad = True
        else:
            shape = shape[: unknown[0]] + (size // known,) + shape[unknown[0] + 1 :]
    if bad or size_of(shape) != size:
        raise ValueError(
            f"reshape: cannot reshape a tensor of shape {tuple(x.shape)} (size {size}) "
            f"into shape {shape}"
        )
    return lax.reshape(x, shape)


def ravel(x, /) -> Tensor:
    """``x`` flattened to 1-d.

    >>> import fntorch as ft
    >>> ft.ravel(ft.ones((2, 3))).shape
    (6,)
    """
    x = _t(x)
    return lax.reshape(x, (x.size,))


def permute_dims(x, /, axes) -> Tensor:
    """``x`` with its dims reordered: output dim ``i`` is input dim ``axes[i]``.

    >>> import fntorch as ft
    >>> ft.permute_dims(ft.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = _t(x)
    perm = tuple(normalize_axis("permute_dims", a, x.ndim) for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(
            f"permute_dims: axes {tuple(axes)} are not a permutation of the {x.ndim} dims "
            f"of a tensor of shape {tuple(x.shape)}"
        )
    return lax.transpose(x, perm)


def matrix_transpose(x, /) -> Tensor:
    """``x`` with its last two dims swapped.

    >>> import fntorch as ft
    >>> ft.matrix_transpose(ft.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: expected rank >= 2, got shape {tuple(x.shape)}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def expand_dims(x, /, axis=0) -> Tensor:
    """``x`` with a size-1 dim inserted at ``axis`` (an int or a tuple of ints).

    >>> import fntorch as ft
    >>> ft.expand_dims(ft.zeros((2, 3)), axis=-1).shape
    (2, 3, 1)
    """
    x = _t(x)
    axes = _ints(axis, "expand_dims: axis")
    nd = x.ndim + len(axes)
    dims = normalize_axes("expand_dims", axes, nd)
    return lax.expand_dims(x, dims)


def squeeze(x, /, axis=None) -> Tensor:
    """``x`` without the size-1 dims ``axis`` (all size-1 dims when None).

    >>> import fntorch as ft
    >>> ft.squeeze(ft.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    x = _t(x)
    if axis is None:
        dims = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        dims = normalize_axes("squeeze", axis, x.ndim)
        for d in dims:
            if x.shape[d] != 1:
                raise ValueError(
                    f"squeeze: cannot squeeze axis {d} of size {x.shape[d]} "
                    f"(tensor of shape {tuple(x.shape)})"
                )
    return lax.squeeze(x, dims)


def flip(x, /, *, axis=None) -> Tensor:
    """``x`` reversed along ``axis`` (all dims when None).

    >>> import fntorch as ft
    >>> ft.flip(ft.asarray([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    x = _t(x)
    return lax.rev(x, normalize_axes("flip", axis, x.ndim))


def _slice_axis(x, axis: int, start: int, stop: int, step: int = 1):
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return lax.slice(x, starts, limits, strides)


def roll(x, /, shift, *, axis=None) -> Tensor:
    """``x`` with its elements shifted by ``shift`` along ``axis`` (flattened when None).
    A shift may be a traced integer tensor, as in JAX.

    >>> import fntorch as ft
    >>> ft.roll(ft.asarray([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    x = _t(x)
    if axis is None:
        return reshape(roll(ravel(x), shift, axis=0), x.shape)
    shifts, axes = _shifts(shift), _ints(axis, "roll: axis")
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    for s, a in zip(shifts, axes):
        a = normalize_axis("roll", a, x.ndim)
        n = x.shape[a]
        if n == 0:
            continue
        if isinstance(s, Tensor):
            x = _roll_traced(x, s, a)
        elif s % n:
            s %= n
            x = lax.concatenate([_slice_axis(x, a, n - s, n), _slice_axis(x, a, 0, n - s)], a)
    return x


def _shifts(shift) -> list:
    """roll's shifts: ints, or 0-d integer tensors where the shift is traced."""
    if not isinstance(shift, Tracer):
        if not isinstance(shift, (list, tuple)) or not any(isinstance(s, Tracer) for s in shift):
            return list(_ints(shift, "roll: shift"))
        return [s if isinstance(s, Tracer) else _ints(s, "roll: shift")[0] for s in shift]
    if not dt.is_integer(shift.dtype) or shift.ndim > 1:
        raise TypeError(f"roll: shift must be an int or a 1-d integer tensor, got {shift!r}")
    return [shift] if shift.ndim == 0 else list(unstack(shift))


def _roll_traced(x, s, axis: int):
    """``x`` rolled by a traced shift: the window of ``concat([x, x])`` starting at
    ``n - s mod n`` (JAX's method)."""
    n = x.shape[axis]
    s = lax.convert_element_type(s, dt.int64)
    r = lax.rem(s, np.int64(n))
    r = lax.select(lax.lt(r, np.int64(0)), lax.add(r, np.int64(n)), r)
    starts = [np.int64(0)] * x.ndim
    starts[axis] = lax.sub(np.int64(n), r)
    return lax.dynamic_slice(lax.concatenate([x, x], axis), starts, x.shape)


def _same_dtype(name: str, arrays) -> list:
    arrays = [_t(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name}: expected at least one tensor")
    dtype = promote_dtype(name, *arrays)
    return promote(name, *arrays, dtype=dtype)


def stack(arrays, /, *, axis: int = 0) -> Tensor:
    """Tensors of one shape joined along a new ``axis``.

    >>> import fntorch as ft
    >>> ft.stack([ft.zeros(3), ft.ones(3)], axis=1).shape
    (3, 2)
    """
    arrays = _same_dtype("stack", arrays)
    shape = tuple(arrays[0].shape)
    for a in arrays[1:]:
        if tuple(a.shape) != shape:
            raise ValueError(
                f"stack: all tensors must have the same shape, got {shape} and {tuple(a.shape)}"
            )
    ax = normalize_axis("stack", axis, len(shape) + 1)
    return lax.concatenate([lax.expand_dims(a, (ax,)) for a in arrays], ax)


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """Tensors joined along an existing ``axis`` (flattened first when None).

    >>> import fntorch as ft
    >>> ft.concat([ft.zeros((1, 2)), ft.ones((3, 2))]).shape
    (4, 2)
    """
    arrays = _same_dtype("concat", arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    first = tuple(arrays[0].shape)
    if not first:
        raise ValueError("concat: cannot concatenate 0-d tensors")
    ax = normalize_axis("concat", axis, len(first))
    for a in arrays[1:]:
        s = tuple(a.shape)
        if len(s) != len(first) or any(p != q for i, (p, q) in enumerate(zip(s, first)) if i != ax):
            raise ValueError(
                f"concat: shapes {first} and {s} differ outside the concatenation axis {ax}"
            )
    return lax.concatenate(arrays, ax)


def cat(tensors, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """PyTorch's spelling of ``concat``: ``dim`` (or ``axis``) positional or by keyword.

    >>> import fntorch as ft
    >>> ft.cat([ft.zeros((2, 1)), ft.ones((2, 3))], 1).shape
    (2, 4)
    """
    return concat(tensors, axis=dim if axis is None else axis)


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (numpy's rules); ValueError if none.

    >>> import fntorch as ft
    >>> ft.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    from ._prims_elementwise import broadcast_shapes as _bs

    if not shapes:
        return ()
    return _bs("broadcast_shapes", *(_ints(s, "broadcast_shapes") for s in shapes))


def broadcast_to(x, /, shape) -> Tensor:
    """``x`` broadcast to ``shape`` (numpy's rules).

    >>> import fntorch as ft
    >>> ft.broadcast_to(ft.asarray([1, 2]), (3, 2)).tolist()
    [[1, 2], [1, 2], [1, 2]]
    """
    x = _t(x)
    shape = _ints(shape, "broadcast_to: shape")
    lead = len(shape) - x.ndim
    if lead < 0 or any(s not in (1, t) for s, t in zip(x.shape, shape[lead:])):
        raise ValueError(
            f"broadcast_to: cannot broadcast a tensor of shape {tuple(x.shape)} to shape {shape}"
        )
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*arrays) -> list:
    """The tensors broadcast against each other (a list).

    >>> import fntorch as ft
    >>> [a.shape for a in ft.broadcast_arrays(ft.zeros((2, 1)), ft.zeros(3))]
    [(2, 3), (2, 3)]
    """
    arrays = [_t(a) for a in arrays]
    from ._prims_elementwise import broadcast_shapes as _bs

    shape = _bs("broadcast_arrays", *(tuple(a.shape) for a in arrays)) if arrays else ()
    return [broadcast_to(a, shape) for a in arrays]


def moveaxis(x, source, destination, /) -> Tensor:
    """``x`` with dims ``source`` moved to positions ``destination``.

    >>> import fntorch as ft
    >>> ft.moveaxis(ft.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = _t(x)
    src = [normalize_axis("moveaxis", a, x.ndim) for a in _ints(source, "moveaxis: source")]
    dst = _ints(destination, "moveaxis: destination")
    dst = [normalize_axis("moveaxis", a, x.ndim) for a in dst]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(
            f"moveaxis: source {source} and destination {destination} must be distinct "
            "axes of the same length"
        )
    rest = [a for a in range(x.ndim) if a not in src]
    perm = [0] * x.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    for i in range(x.ndim):
        if i not in dst:
            perm[i] = next(it)
    return lax.transpose(x, perm)


def _concrete_ints(v, where: str) -> np.ndarray:
    """``v`` (ints, an integer array or a concrete integer tensor) as an int64 array;
    TypeError naming ``where`` for other dtypes (casting would truncate 2.5 to 2)."""
    a = v
    if isinstance(v, Tensor):
        buf = v._concrete(where)
        a = v.device.to_host(buf) if hasattr(v, "device") else buf
    a = np.asarray(a)
    if a.dtype.kind not in "iu" and a.size:
        raise TypeError(f"{where}: expected integers, got {v!r} of dtype {a.dtype}")
    return a.astype(np.int64)


def repeat(x, repeats, /, *, axis=None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened when None).

    ``repeats`` is an int, or one count per element (needs concrete values).

    >>> import fntorch as ft
    >>> ft.repeat(ft.asarray([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    x = _t(x)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis("repeat", axis, x.ndim)
    n = x.shape[ax]
    if isinstance(repeats, (int, np.integer)):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {r}")
        shape = x.shape[: ax + 1] + (r,) + x.shape[ax + 1 :]
        dims = tuple(range(ax + 1)) + tuple(range(ax + 2, x.ndim + 1))
        y = lax.broadcast_in_dim(x, shape, dims)
        return lax.reshape(y, x.shape[:ax] + (n * r,) + x.shape[ax + 1 :])
    reps = _concrete_ints(repeats, "ft.repeat (the repeats)").ravel()
    if reps.size == 1:
        reps = np.full(n, reps[0])
    if reps.size != n or (reps < 0).any():
        raise ValueError(
            f"repeat: repeats must be non-negative, one per element of axis {ax} (size {n}), "
            f"got {reps.size}"
        )
    return take(x, np.repeat(np.arange(n, dtype=np.int64), reps), axis=ax)


def tile(x, repetitions, /) -> Tensor:
    """``x`` repeated ``repetitions[i]`` times along each dim.

    >>> import fntorch as ft
    >>> ft.tile(ft.asarray([1, 2]), (2,)).tolist()
    [1, 2, 1, 2]
    """
    x = _t(x)
    reps = _ints(repetitions, "tile: repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    x = lax.reshape(x, shape)
    wide = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    y = lax.broadcast_in_dim(x, wide, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(y, tuple(r * s for r, s in zip(reps, shape)))


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> import fntorch as ft
    >>> [t.tolist() for t in ft.unstack(ft.asarray([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = _t(x)
    ax = normalize_axis("unstack", axis, x.ndim)
    return tuple(lax.squeeze(_slice_axis(x, ax, i, i + 1), (ax,)) for i in range(x.shape[ax]))


def _index_tensor(name: str, indices):
    if isinstance(indices, Tensor):
        idx = indices
    else:
        arr = np.asarray(indices)
        if arr.dtype.kind not in "iu":
            if arr.size == 0:
                arr = arr.astype(np.int64)
            else:
                raise TypeError(f"{name}: indices must be integers, got dtype {arr.dtype}")
        return arr
    if not dt.is_integer(idx.dtype):
        raise TypeError(f"{name}: indices must be integers, got dtype {idx.dtype}")
    return idx


def take(x, indices, /, *, axis=None) -> Tensor:
    """The elements of ``x`` at ``indices`` along ``axis`` (``x`` flattened when None).

    Negative indices count from the end; out-of-range ones are clamped (no error: the
    indices may be traced).

    >>> import fntorch as ft
    >>> ft.take(ft.asarray([[1, 2], [3, 4]]), ft.asarray([1, 0]), axis=1).tolist()
    [[2, 1], [4, 3]]
    """
    x = _t(x)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis("take", axis, x.ndim)
    idx = wrap_negative(_index_tensor("take", indices), x.shape[ax])
    out = lax.gather(x, [idx], (ax,))
    k = len(idx.shape)
    # gather puts the index dims first; numpy puts them where the axis was.
    perm = tuple(range(k, k + ax)) + tuple(range(k)) + tuple(range(k + ax, out.ndim))
    return lax.transpose(out, perm)


def take_along_axis(x, indices, /, axis: int = -1) -> Tensor:
    """``x`` indexed along ``axis`` by ``indices`` of the same rank (numpy's ``take_along_axis``).

    >>> import fntorch as ft
    >>> x = ft.asarray([[10, 30, 20]])
    >>> ft.take_along_axis(x, ft.argsort(x, axis=1), axis=1).tolist()
    [[10, 20, 30]]
    """
    x = _t(x)
    idx = _index_tensor("take_along_axis", indices)
    if len(idx.shape) != x.ndim:
        raise ValueError(
            f"take_along_axis: indices of shape {tuple(idx.shape)} must have the rank of x, "
            f"shape {tuple(x.shape)}"
        )
    ax = normalize_axis("take_along_axis", axis, x.ndim)
    for d in range(x.ndim):
        if d != ax and idx.shape[d] not in (1, x.shape[d]) and x.shape[d] != 1:
            raise ValueError(
                f"take_along_axis: indices of shape {tuple(idx.shape)} do not broadcast "
                f"against x of shape {tuple(x.shape)} outside axis {ax}"
            )
    index = []
    for d in range(x.ndim):
        if d == ax:
            index.append(wrap_negative(idx, x.shape[d]))
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            index.append(np.arange(x.shape[d], dtype=np.int64).reshape(shape))
    return lax.gather(x, index, tuple(range(x.ndim)))


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """``x`` converted to ``dtype`` (float to int truncates toward zero).

    >>> import fntorch as ft
    >>> ft.astype(ft.asarray([1.7, -1.7]), ft.int32).tolist()
    [1, -1]
    """
    x = _t(x)
    dtype = dt.canonicalize(dtype, where="astype")
    out = lax.convert_element_type(x, dtype)
    if device is not None:
        out = asarray(out, device=device)
    if copy and out is x and not isinstance(x, Tracer):
        out = lax.copy(x)
    return out
