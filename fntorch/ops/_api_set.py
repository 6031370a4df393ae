"""Set functions of the Array API standard, and ``nonzero``.

The ``unique_*`` functions and ``nonzero`` without ``size=`` have data-dependent output
shapes: they need concrete values and raise ``ft.ConcretizationError`` under
``jit``/``vmap``/``make_graph``. ``nonzero(x, size=n)`` traces.
"""

from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor
from . import lax
from ._api_manipulation import ravel
from ._api_reduce import _t, _to_bool

__all__ = ["unique_values", "unique_counts", "unique_inverse", "unique_all", "nonzero"]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _host(x, where: str):
    x = _t(x)
    buf = x._concrete(where)
    return x, np.asarray(x.device.to_host(buf))


def _on(x, arr):
    # Not np.ascontiguousarray: it makes a 0-d array 1-d, and inverse_indices must
    # keep the shape of a 0-d x.
    return Tensor(x.device.put(np.asarray(arr, order="C")))


def _unique(x, where: str):
    """``x``, and its ``unique_all`` as host arrays."""
    x, a = _host(x, where)
    flat = a.ravel()
    # numpy sorts ml_dtypes' bfloat16 without ordering NaN, which leaves duplicate
    # values; float32 holds every bfloat16 exactly.
    key = flat.astype(np.float32) if dt.is_float(flat.dtype) and flat.dtype.kind != "f" else flat
    # NaNs are distinct (the standard); the values come sorted.
    _, i, inv, c = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    # Values read back at first occurrences: every function keeps the same one of an
    # equal -0.0 and 0.0.
    inv = inv.astype(np.int64).reshape(x.shape)
    return x, UniqueAllResult(flat[i], i.astype(np.int64), inv, c.astype(np.int64))


def unique_values(x, /) -> Tensor:
    """The distinct values of ``x``, sorted (NaNs each distinct). Needs concrete values.

    >>> import fntorch as ft
    >>> ft.unique_values(ft.asarray([3, 1, 3])).tolist()
    [1, 3]
    """
    x, u = _unique(x, "ft.unique_values")
    return _on(x, u.values)


def unique_counts(x, /) -> UniqueCountsResult:
    """``(values, counts)`` of the distinct values of ``x``. Needs concrete values.

    >>> import fntorch as ft
    >>> ft.unique_counts(ft.asarray([3, 1, 3])).counts.tolist()
    [1, 2]
    """
    x, u = _unique(x, "ft.unique_counts")
    return UniqueCountsResult(_on(x, u.values), _on(x, u.counts))


def unique_inverse(x, /) -> UniqueInverseResult:
    """``(values, inverse_indices)``: ``values[inverse_indices] == x``. Needs concrete values.

    >>> import fntorch as ft
    >>> ft.unique_inverse(ft.asarray([3, 1, 3])).inverse_indices.tolist()
    [1, 0, 1]
    """
    x, u = _unique(x, "ft.unique_inverse")
    return UniqueInverseResult(_on(x, u.values), _on(x, u.inverse_indices))


def unique_all(x, /) -> UniqueAllResult:
    """``(values, indices, inverse_indices, counts)`` of ``x``'s distinct values; ``indices``
    are first occurrences in the flattened ``x``. Needs concrete values.

    >>> import fntorch as ft
    >>> ft.unique_all(ft.asarray([3, 1, 3])).indices.tolist()
    [1, 0]
    """
    x, u = _unique(x, "ft.unique_all")
    return UniqueAllResult(*(_on(x, a) for a in u))


def nonzero(x, /, *, size: int | None = None, fill_value=None) -> tuple:
    """The indices of the nonzero elements, one int64 tensor per dim.

    Without ``size`` this needs concrete values. With ``size`` it traces: the first
    ``size`` indices, padded with ``fill_value`` (default 0).

    >>> import fntorch as ft
    >>> [i.tolist() for i in ft.nonzero(ft.asarray([[0, 1], [1, 0]]))]
    [[0, 1], [1, 0]]
    >>> ft.nonzero(ft.asarray([0, 5, 7]), size=3, fill_value=-1)[0].tolist()
    [1, 2, -1]
    >>> [i.tolist() for i in ft.nonzero(ft.eye(2), size=3, fill_value=(7, 8))]
    [[0, 1, 7], [0, 1, 8]]
    """
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no indices; use ft.reshape(x, (1,)) first")
    if size is None:
        x, a = _host(x, "ft.nonzero (or pass size=)")
        return tuple(_on(x, i.astype(np.int64)) for i in np.nonzero(a))
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"nonzero: size must be non-negative, got {size}")
    fills = 0 if fill_value is None else fill_value
    fills = tuple(fills) if isinstance(fills, (tuple, list)) else (fills,) * x.ndim
    if len(fills) != x.ndim:  # as JAX: one fill value, or one per dim
        raise ValueError(
            f"nonzero: fill_value needs one value or one per dim ({x.ndim}), got {fill_value!r}"
        )
    flat = ravel(_to_bool(x))
    n = flat.shape[0]
    # Stable sort of "is zero" keys puts the nonzero positions first, in order.
    key = lax.convert_element_type(lax.bitwise_not(flat), dt.int8)
    _, perm = lax.sort([key, lax.on_device_of(x, lax.iota(dt.int64, (n,), 0))], 0, True, 1)
    count = lax.reduce_sum(lax.convert_element_type(flat, dt.int64), (0,))
    if size <= n:
        perm = lax.slice(perm, (0,), (size,))
    else:
        perm = lax.pad(perm, np.int64(0), [(0, size - n, 0)])
    valid = lax.lt(lax.on_device_of(x, lax.iota(dt.int64, (size,), 0)), count)
    out = []
    stride = n
    for s, fill in zip(x.shape, fills):
        stride //= s if s else 1
        coord = lax.rem(
            lax.div(perm, np.int64(builtins.max(stride, 1))), np.int64(builtins.max(s, 1))
        )
        # A tensor fill (traced under vmap/jit, as JAX allows) stays a tensor.
        fill = _fill_index(fill, size) if isinstance(fill, Tensor) else np.int64(fill)
        out.append(lax.select(valid, coord, fill))
    return tuple(out)


def _fill_index(fill: Tensor, size: int) -> Tensor:
    """A 0-d tensor ``fill`` as ``size`` int64 fill values."""
    if fill.ndim:
        raise ValueError(f"nonzero: each fill_value must be 0-d, got shape {tuple(fill.shape)}")
    return lax.broadcast_in_dim(lax.convert_element_type(fill, dt.int64), (size,), ())
