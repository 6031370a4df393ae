"""Structural primitives (shape, layout, dtype), their abstract-eval rules and lax wrappers.

See docs/primitives.md for the contract. Structural results keep the operand's weak
type (a reshaped Python scalar is still weak), except `convert_element_type` and `iota`,
which name their dtype. The wrappers skip the bind when the operation is a no-op
(reshape to the same shape, identity permutation, ...), so rules can call them freely.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, Tensor, abstract_eval_rules, get_aval

__all__ = [
    "convert_element_type_p", "iota_p", "broadcast_in_dim_p", "reshape_p", "transpose_p",
    "squeeze_p", "expand_dims_p", "rev_p", "slice_p", "dynamic_slice_p",
    "dynamic_update_slice_p", "concatenate_p", "pad_p", "copy_p", "stop_gradient_p",
    "convert_element_type", "iota", "broadcast_in_dim", "reshape", "transpose", "squeeze",
    "expand_dims", "rev", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate",
    "pad", "copy", "stop_gradient", "slice_output_size", "pad_output_size",
]  # fmt: skip


def _weak(*xs) -> bool:
    return all(getattr(x, "weak_type", False) for x in xs)


def _shape(x) -> tuple:
    return tuple(x.shape)


def _check_axes(name: str, what: str, axes, ndim: int, *, sorted_: bool = False):
    """``axes`` distinct (and increasing if ``sorted_``) ints in ``[0, ndim)``."""
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: {what} {tuple(axes)} must be distinct axes in [0, {ndim})")
    if sorted_ and list(axes) != sorted(axes):
        raise ValueError(f"{name}: {what} {tuple(axes)} must be sorted")


def _check_len(name: str, what: str, seq, ndim: int, shape):
    if len(seq) != ndim:
        raise ValueError(
            f"{name}: {what} {tuple(seq)} must have one entry per operand dim, "
            f"operand shape {tuple(shape)}"
        )


# --------------------------------------------------------------- convert_element_type
convert_element_type_p = Primitive("convert_element_type")


def _convert_element_type_abstract(x, *, new_dtype):
    if new_dtype not in dt.all_dtypes:
        raise TypeError(
            f"convert_element_type: new_dtype must be one of fntorch's dtypes, got {new_dtype!r}"
        )
    return ShapedArray(x.shape, new_dtype)


abstract_eval_rules[convert_element_type_p] = _convert_element_type_abstract

# ------------------------------------------------------------------------------- iota
iota_p = Primitive("iota")


def _iota_abstract(*, dtype, shape, dimension):
    if dtype not in dt.all_dtypes or dtype == dt.bool_:
        raise TypeError(f"iota: dtype must be a numeric fntorch dtype, got {dtype!r}")
    if any(s < 0 for s in shape):
        raise ValueError(f"iota: shape {tuple(shape)} has a negative size")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} is out of range for shape {tuple(shape)}")
    return ShapedArray(shape, dtype)


abstract_eval_rules[iota_p] = _iota_abstract

# ------------------------------------------------------------------- broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != len(x.shape):
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must name one output "
            f"dim per operand dim, operand shape {tuple(x.shape)}"
        )
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must be distinct"
        )
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise ValueError(
                f"broadcast_in_dim: operand shape {tuple(x.shape)} cannot be broadcast to "
                f"{tuple(shape)} with broadcast_dimensions {broadcast_dimensions}"
            )
    if any(s < 0 for s in shape):
        raise ValueError(f"broadcast_in_dim: shape {tuple(shape)} has a negative size")
    return ShapedArray(shape, x.dtype, _weak(x))


abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract

# ---------------------------------------------------------------------------- reshape
reshape_p = Primitive("reshape")


def _reshape_abstract(x, *, new_sizes):
    if any(s < 0 for s in new_sizes):
        raise ValueError(f"reshape: new_sizes {tuple(new_sizes)} has a negative size")
    if int(np.prod(new_sizes, dtype=np.int64)) != int(np.prod(x.shape, dtype=np.int64)):
        raise ValueError(
            f"reshape: cannot reshape operand of shape {tuple(x.shape)} to {tuple(new_sizes)} "
            "(the sizes must have the same product)"
        )
    return ShapedArray(new_sizes, x.dtype, _weak(x))


abstract_eval_rules[reshape_p] = _reshape_abstract

# -------------------------------------------------------------------------- transpose
transpose_p = Primitive("transpose")


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(len(x.shape))):
        raise ValueError(
            f"transpose: permutation {tuple(permutation)} is not a permutation of the "
            f"{len(x.shape)} dims of operand shape {tuple(x.shape)}"
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, _weak(x))


abstract_eval_rules[transpose_p] = _transpose_abstract

# ------------------------------------------------------------------ squeeze, expand_dims
squeeze_p = Primitive("squeeze")


def _squeeze_abstract(x, *, dimensions):
    shape = _shape(x)
    _check_axes("squeeze", "dimensions", dimensions, len(shape))
    bad = [d for d in dimensions if shape[d] != 1]
    if bad:
        raise ValueError(
            f"squeeze: dimensions {tuple(bad)} of operand shape {shape} do not have size 1"
        )
    return ShapedArray(
        tuple(s for i, s in enumerate(shape) if i not in dimensions), x.dtype, _weak(x)
    )


abstract_eval_rules[squeeze_p] = _squeeze_abstract

expand_dims_p = Primitive("expand_dims")


def _expand_dims_abstract(x, *, dimensions):
    out_nd = len(x.shape) + len(dimensions)
    _check_axes("expand_dims", "dimensions", dimensions, out_nd, sorted_=True)
    it = iter(x.shape)
    shape = tuple(1 if i in dimensions else next(it) for i in range(out_nd))
    return ShapedArray(shape, x.dtype, _weak(x))


abstract_eval_rules[expand_dims_p] = _expand_dims_abstract

# -------------------------------------------------------------------------------- rev
rev_p = Primitive("rev")


def _rev_abstract(x, *, dimensions):
    _check_axes("rev", "dimensions", dimensions, len(x.shape))
    return ShapedArray(x.shape, x.dtype, _weak(x))


abstract_eval_rules[rev_p] = _rev_abstract

# ------------------------------------------------------------------------------ slice
slice_p = Primitive("slice")


def slice_output_size(start: int, limit: int, stride: int) -> int:
    """Length of ``range(start, limit, stride)`` for ``0 <= start <= limit``, ``stride > 0``."""
    return max(0, (limit - start + stride - 1) // stride)


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    shape = _shape(x)
    nd = len(shape)
    _check_len("slice", "start_indices", start_indices, nd, shape)
    _check_len("slice", "limit_indices", limit_indices, nd, shape)
    if strides is not None:
        _check_len("slice", "strides", strides, nd, shape)
        if any(s <= 0 for s in strides):
            raise ValueError(f"slice: strides {tuple(strides)} must be positive")
    else:
        strides = (1,) * nd
    for i, (s, l, n) in enumerate(zip(start_indices, limit_indices, shape)):
        if not 0 <= s <= l <= n:
            raise ValueError(
                f"slice: dim {i}: need 0 <= start ({s}) <= limit ({l}) <= size ({n}); "
                f"start_indices {tuple(start_indices)}, limit_indices {tuple(limit_indices)}, "
                f"operand shape {shape}"
            )
    out = tuple(map(slice_output_size, start_indices, limit_indices, strides))
    return ShapedArray(out, x.dtype, _weak(x))


abstract_eval_rules[slice_p] = _slice_abstract

# -------------------------------------------------------- dynamic_slice, dynamic_update_slice
dynamic_slice_p = Primitive("dynamic_slice")


def _check_start_indices(name: str, starts, shape):
    if len(starts) != len(shape):
        raise ValueError(
            f"{name}: expected one start index per operand dim ({len(shape)} for operand "
            f"shape {tuple(shape)}), got {len(starts)}"
        )
    for i, s in enumerate(starts):
        if tuple(s.shape) != ():
            raise ValueError(
                f"{name}: start index {i} must be a 0-d tensor, got shape {tuple(s.shape)}"
            )
        if not dt.is_integer(s.dtype):
            raise TypeError(f"{name}: start index {i} must have an integer dtype, got {s.dtype}")


def _dynamic_slice_abstract(x, *start_indices, slice_sizes):
    shape = _shape(x)
    _check_start_indices("dynamic_slice", start_indices, shape)
    _check_len("dynamic_slice", "slice_sizes", slice_sizes, len(shape), shape)
    if any(not 0 <= k <= n for k, n in zip(slice_sizes, shape)):
        raise ValueError(
            f"dynamic_slice: slice_sizes {tuple(slice_sizes)} must lie in [0, size] for "
            f"operand shape {shape}"
        )
    return ShapedArray(slice_sizes, x.dtype, _weak(x))


abstract_eval_rules[dynamic_slice_p] = _dynamic_slice_abstract

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dynamic_update_slice_abstract(x, update, *start_indices):
    shape, ushape = _shape(x), _shape(update)
    if x.dtype != update.dtype:
        raise TypeError(
            f"dynamic_update_slice: operand and update must have the same dtype, got "
            f"{x.dtype} and {update.dtype}"
        )
    if len(ushape) != len(shape) or any(u > n for u, n in zip(ushape, shape)):
        raise ValueError(
            f"dynamic_update_slice: update shape {ushape} must have the operand's rank and "
            f"fit inside operand shape {shape}"
        )
    _check_start_indices("dynamic_update_slice", start_indices, shape)
    return ShapedArray(shape, x.dtype, _weak(x, update))


abstract_eval_rules[dynamic_update_slice_p] = _dynamic_update_slice_abstract

# ------------------------------------------------------------------------ concatenate
concatenate_p = Primitive("concatenate")


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise ValueError("concatenate: expected at least one operand")
    first = _shape(xs[0])
    if not 0 <= dimension < len(first):
        raise ValueError(
            f"concatenate: dimension {dimension} is out of range for operands of rank {len(first)}"
        )
    total = 0
    for i, x in enumerate(xs):
        if x.dtype != xs[0].dtype:
            raise TypeError(
                f"concatenate: operands must share one dtype, got {xs[0].dtype} (operand 0) "
                f"and {x.dtype} (operand {i})"
            )
        s = _shape(x)
        mismatch = any(a != b for k, (a, b) in enumerate(zip(s, first)) if k != dimension)
        if len(s) != len(first) or mismatch:
            raise ValueError(
                f"concatenate: operand {i} has shape {s}, which does not match operand 0's "
                f"shape {first} outside dimension {dimension}"
            )
        total += s[dimension]
    out = first[:dimension] + (total,) + first[dimension + 1 :]
    return ShapedArray(out, xs[0].dtype, _weak(*xs))


abstract_eval_rules[concatenate_p] = _concatenate_abstract

# -------------------------------------------------------------------------------- pad
pad_p = Primitive("pad")


def pad_output_size(n: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + n + max(n - 1, 0) * interior


def _pad_abstract(x, padding_value, *, padding_config):
    shape = _shape(x)
    if tuple(padding_value.shape) != ():
        raise ValueError(f"pad: padding_value must be 0-d, got shape {tuple(padding_value.shape)}")
    if padding_value.dtype != x.dtype:
        raise TypeError(
            f"pad: padding_value must have the operand's dtype {x.dtype}, got {padding_value.dtype}"
        )
    _check_len("pad", "padding_config", padding_config, len(shape), shape)
    out = []
    for i, (n, cfg) in enumerate(zip(shape, padding_config)):
        if len(cfg) != 3 or cfg[2] < 0:
            raise ValueError(
                f"pad: padding_config entry {i} must be (lo, hi, interior) with interior >= 0, "
                f"got {cfg}"
            )
        size = pad_output_size(n, *cfg)
        if size < 0:
            raise ValueError(
                f"pad: padding_config {tuple(padding_config)} crops dim {i} of operand shape "
                f"{shape} to a negative size ({size})"
            )
        out.append(size)
    return ShapedArray(out, x.dtype, _weak(x))


abstract_eval_rules[pad_p] = _pad_abstract

# ---------------------------------------------------------------- copy, stop_gradient
copy_p = Primitive("copy")
stop_gradient_p = Primitive("stop_gradient")


def _identity_abstract(x):
    return ShapedArray(x.shape, x.dtype, _weak(x))


abstract_eval_rules[copy_p] = _identity_abstract
abstract_eval_rules[stop_gradient_p] = _identity_abstract


# --------------------------------------------------------------- lax-style wrappers


_PY_SCALARS = (bool, int, float)


def _is_tensor(x) -> bool:
    # No-op skips return the operand itself, so only when it is already a tensor: a raw
    # numpy value still goes through bind (lax.full((), ...) must give a Tensor).
    return isinstance(x, Tensor)


def _operand(x):
    """Python scalars become numpy scalars of their default dtype."""
    if type(x) in _PY_SCALARS:  # not isinstance: np.float64 subclasses float
        return np.asarray(x, dtype=dt.dtype_and_weak(x)[0])[()]
    return x


def _axis(a, ndim: int) -> int:
    """Negative axes count from the end; out-of-range ones are left for the rule to reject."""
    a = int(a)
    return a + ndim if a < 0 else a


def _axes(axes, ndim: int) -> tuple:
    return tuple(sorted(_axis(a, ndim) for a in axes))


def convert_element_type(x, new_dtype):
    """``x`` as ``new_dtype`` (float -> int truncates toward zero).

    >>> import fntorch as ft
    >>> convert_element_type(ft.asarray([1.7, -1.7]), ft.int32).tolist()
    [1, -1]
    """
    new_dtype = dt.canonicalize(new_dtype, where="convert_element_type")
    x = _operand(x)
    if _is_tensor(x) and x.dtype == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


def iota(dtype, shape, dimension: int = 0):
    """Values ``0, 1, ...`` along ``dimension`` of a tensor of ``shape``.

    >>> import fntorch as ft
    >>> iota(ft.int32, (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dtype = dt.canonicalize(dtype, where="iota")
    shape = tuple(int(s) for s in shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=_axis(dimension, len(shape)))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """``x`` broadcast to ``shape``: operand dim ``i`` becomes dim ``broadcast_dimensions[i]``.

    >>> import fntorch as ft
    >>> broadcast_in_dim(ft.asarray([1, 2]), (3, 2), (1,)).shape
    (3, 2)
    """
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    x = _operand(x)
    if _is_tensor(x) and _shape(x) == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


def reshape(x, new_sizes):
    """``x`` with shape ``new_sizes`` (row-major order).

    >>> import fntorch as ft
    >>> reshape(ft.asarray([1, 2, 3, 4]), (2, 2)).tolist()
    [[1, 2], [3, 4]]
    """
    new_sizes = tuple(int(s) for s in new_sizes)
    x = _operand(x)
    if _is_tensor(x) and _shape(x) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


def transpose(x, permutation):
    """Output dim ``i`` is input dim ``permutation[i]``.

    >>> import fntorch as ft
    >>> transpose(ft.zeros((2, 3)), (1, 0)).shape
    (3, 2)
    """
    permutation = tuple(int(p) for p in permutation)
    if _is_tensor(x) and permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


def squeeze(x, dimensions):
    """``x`` without its size-1 dims ``dimensions``.

    >>> import fntorch as ft
    >>> squeeze(ft.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
    """
    dimensions = _axes(dimensions, get_aval(x).ndim)
    if _is_tensor(x) and not dimensions:
        return x
    return squeeze_p.bind(x, dimensions=dimensions)


def expand_dims(x, dimensions):
    """``x`` with size-1 dims inserted at output positions ``dimensions``.

    >>> import fntorch as ft
    >>> expand_dims(ft.zeros(3), (0, 2)).shape
    (1, 3, 1)
    """
    x = _operand(x)
    dimensions = _axes(dimensions, get_aval(x).ndim + len(dimensions))
    if _is_tensor(x) and not dimensions:
        return x
    return expand_dims_p.bind(x, dimensions=dimensions)


def rev(x, dimensions):
    """``x`` reversed along ``dimensions``.

    >>> import fntorch as ft
    >>> rev(ft.asarray([1, 2, 3]), (0,)).tolist()
    [3, 2, 1]
    """
    dimensions = _axes(dimensions, get_aval(x).ndim)
    if _is_tensor(x) and not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 - lax's name
    """``x[start:limit:stride]`` along every dim (static bounds).

    >>> import fntorch as ft
    >>> slice(ft.asarray([0, 1, 2, 3, 4]), (1,), (5,), (2,)).tolist()
    [1, 3]
    """
    start_indices = tuple(int(s) for s in start_indices)
    limit_indices = tuple(int(s) for s in limit_indices)
    if strides is not None:
        strides = tuple(int(s) for s in strides)
        if all(s == 1 for s in strides):
            strides = None
    full = all(s == 0 for s in start_indices) and limit_indices == _shape(x)
    if _is_tensor(x) and strides is None and full:
        return x
    return slice_p.bind(
        x, start_indices=start_indices, limit_indices=limit_indices, strides=strides
    )


def _index_scalar(i):
    if type(i) in _PY_SCALARS:
        return np.int32(i) if -(2**31) <= int(i) < 2**31 else np.int64(i)
    return i


def dynamic_slice(x, start_indices, slice_sizes):
    """The window of ``slice_sizes`` at ``start_indices`` (tensors or ints), moved in bounds.

    >>> import fntorch as ft
    >>> dynamic_slice(ft.asarray([0, 1, 2, 3]), (3,), (2,)).tolist()
    [2, 3]
    """
    slice_sizes = tuple(int(s) for s in slice_sizes)
    if _is_tensor(x) and slice_sizes == _shape(x) and len(start_indices) == len(slice_sizes):
        return x  # a full-size window is always clamped to start 0
    starts = [_index_scalar(i) for i in start_indices]
    return dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)


def dynamic_update_slice(x, update, start_indices):
    """``x`` with ``update`` written at ``start_indices`` (moved so the window is in bounds).

    >>> import fntorch as ft
    >>> dynamic_update_slice(ft.zeros(4), ft.ones(2), (1,)).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    starts = [_index_scalar(i) for i in start_indices]
    return dynamic_update_slice_p.bind(x, update, *starts)


def concatenate(xs, dimension: int):
    """``xs`` joined along ``dimension``.

    >>> import fntorch as ft
    >>> concatenate([ft.zeros(2), ft.ones(1)], 0).tolist()
    [0.0, 0.0, 1.0]
    """
    xs = list(xs)
    if len(xs) == 1 and _is_tensor(xs[0]):
        return xs[0]
    if xs:
        dimension = _axis(dimension, get_aval(xs[0]).ndim)
    return concatenate_p.bind(*xs, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    """``x`` padded with ``padding_value``: ``(lo, hi, interior)`` per dim; negative lo/hi crop.

    >>> import fntorch as ft
    >>> pad(ft.asarray([1, 2]), 0, [(1, 0, 1)]).tolist()
    [0, 1, 0, 2]
    """
    padding_config = tuple((int(lo), int(hi), int(k)) for lo, hi, k in padding_config)
    x = _operand(x)
    noop = all(c == (0, 0, 0) for c in padding_config) and len(padding_config) == get_aval(x).ndim
    if _is_tensor(x) and noop:
        return x
    if type(padding_value) in _PY_SCALARS:
        padding_value = np.asarray(padding_value, dtype=get_aval(x).dtype)[()]
    return pad_p.bind(x, padding_value, padding_config=padding_config)


def copy(x):
    """A new buffer holding ``x``'s value.

    >>> import fntorch as ft
    >>> copy(ft.asarray([1.0])).tolist()
    [1.0]
    """
    return copy_p.bind(_operand(x))


def stop_gradient(x):
    """``x``, seen by autodiff as a constant.

    >>> import fntorch as ft
    >>> ft.grad(lambda x: (x * stop_gradient(x)).sum())(ft.asarray([3.0])).tolist()
    [3.0]
    """
    return stop_gradient_p.bind(_operand(x))
