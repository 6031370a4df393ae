"""Tensor methods, shape and selection: PyTorch's shape and manipulation methods
(``reshape``, ``view``, ``permute``, ``transpose``, ``squeeze``, ``flatten``, ``expand``,
``repeat``, ``flip``, ``split``, ``chunk``, ...), indexing along a dim (``gather``,
``index_select``, ``take_along_dim``, ``tril``/``triu``), sorting (``sort``, ``argsort``,
``topk``) and selection (``where``, ``masked_fill``, ``nonzero``), with PyTorch's
argument conventions (varargs or one tuple of sizes, ``dim=`` or ``axis=``).

Attached to Tensor when imported (by `fntorch.ops._tensor_methods`).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor
from . import _indexing
from . import api as _api
from ._tensor import _attach
from ._tensor_methods import _axis, _keyword_or_args, _norm, _shape_args, return_types

# ------------------------------------------------------------------------ manipulation


def reshape(self, *args, shape=None):
    """``x`` with a new shape (``-1`` infers one size): ``x.reshape(2, 3)`` or
    ``x.reshape((2, 3))``.

    >>> import fntorch as ft
    >>> ft.arange(6).reshape(2, -1).shape
    (2, 3)
    """
    shape = _keyword_or_args(args, shape, "Tensor.reshape", "shape")
    return _api.reshape(self, _shape_args(shape, "Tensor.reshape"))


def view(self, *args, size=None):
    """PyTorch's ``view``: the same as ``reshape`` (values are immutable: no aliasing).

    >>> import fntorch as ft
    >>> ft.arange(6).view(3, 2).tolist()
    [[0, 1], [2, 3], [4, 5]]
    """
    shape = _keyword_or_args(args, size, "Tensor.view", "size")
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        raise TypeError(
            "Tensor.view(dtype) (reinterpreting bits) is not supported; use x.astype(dtype)"
        )
    return _api.reshape(self, _shape_args(shape, "Tensor.view"))


def view_as(self, other):
    """``x.reshape(other.shape)``.

    >>> import fntorch as ft
    >>> ft.arange(6).view_as(ft.zeros((2, 3))).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return _api.reshape(self, tuple(other.shape))


def reshape_as(self, other):
    """``x.reshape(other.shape)``.

    >>> import fntorch as ft
    >>> ft.arange(6).reshape_as(ft.zeros((3, 2))).tolist()
    [[0, 1], [2, 3], [4, 5]]
    """
    return _api.reshape(self, tuple(other.shape))


def permute(self, *args, dims=None):
    """The dims reordered: ``x.permute(2, 0, 1)`` (output dim i is input dim ``dims[i]``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    dims = _keyword_or_args(args, dims, "Tensor.permute", "dims")
    return _api.permute_dims(self, _shape_args(dims, "Tensor.permute"))


def transpose(self, dim0, dim1):
    """``x`` with dims ``dim0`` and ``dim1`` swapped (PyTorch's ``transpose``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).transpose(0, 2).shape
    (4, 3, 2)
    """
    nd = self.ndim
    a, b = _norm("Tensor.transpose", dim0, nd), _norm("Tensor.transpose", dim1, nd)
    if a == b:
        return self
    perm = list(range(nd))
    perm[a], perm[b] = b, a
    return _api.permute_dims(self, tuple(perm))


def movedim(self, source, destination):
    """Dims ``source`` moved to ``destination`` (``ft.moveaxis``; ``moveaxis`` is the same
    method).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).movedim(0, -1).shape
    (3, 4, 2)
    """
    return _api.moveaxis(self, source, destination)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``ft.diff``, PyTorch's spelling).

    >>> import fntorch as ft
    >>> ft.asarray([1, 4, 9, 16]).diff().tolist(), ft.asarray([1, 4, 9, 16]).diff(n=2).tolist()
    ([3, 5, 7], [2, 2])
    """
    return _api.diff(self, axis=dim, n=n, prepend=prepend, append=append)


def unsqueeze(self, dim):
    """``x`` with a size-1 dim inserted at ``dim`` (``-1``: last).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).unsqueeze(0).shape, ft.zeros((2, 3)).unsqueeze(-1).shape
    ((1, 2, 3), (2, 3, 1))
    """
    return _api.expand_dims(self, axis=dim)


def squeeze(self, dim=None, *, axis=None):
    """``x`` without size-1 dims: all of them, or those of ``dim`` (an int or tuple) that
    have size 1 (others are left alone, as in PyTorch).

    >>> import fntorch as ft
    >>> x = ft.zeros((1, 2, 1))
    >>> x.squeeze().shape, x.squeeze(0).shape, x.squeeze(1).shape
    ((2,), (2, 1), (1, 2, 1))
    """
    d = _axis(dim, axis, "Tensor.squeeze")
    shape = self.shape
    if d is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        ds = d if isinstance(d, tuple) else (d,)
        dims = tuple(sorted({_norm("Tensor.squeeze", i, self.ndim) for i in ds}))
        dims = tuple(i for i in dims if shape[i] == 1)
    if not dims:
        return self
    return _api.squeeze(self, axis=dims)


def flatten(self, start_dim=0, end_dim=-1):
    """Dims ``start_dim..end_dim`` merged into one (a 0-d tensor becomes shape (1,)).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3, 4)).flatten(1).shape
    (2, 12)
    """
    shape = tuple(self.shape)
    if not shape:
        return _api.reshape(self, (1,))
    s, e = (
        _norm("Tensor.flatten", start_dim, len(shape)),
        _norm("Tensor.flatten", end_dim, len(shape)),
    )
    if s > e:
        raise ValueError(f"Tensor.flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    return _api.reshape(self, shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])


def unflatten(self, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1).

    >>> import fntorch as ft
    >>> ft.zeros((2, 12)).unflatten(1, (3, -1)).shape
    (2, 3, 4)
    """
    shape = tuple(self.shape)
    d = _norm("Tensor.unflatten", dim, len(shape))
    return _api.reshape(self, shape[:d] + tuple(sizes) + shape[d + 1 :])


def expand(self, *args, size=None):
    """``x`` broadcast to ``sizes``; ``-1`` keeps a dim's size (PyTorch's ``expand``).

    >>> import fntorch as ft
    >>> ft.zeros((3, 1)).expand(2, -1, 4).shape
    (2, 3, 4)
    """
    sizes = _shape_args(_keyword_or_args(args, size, "Tensor.expand", "size"), "Tensor.expand")
    shape = tuple(self.shape)
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ValueError(f"Tensor.expand: sizes {sizes} have fewer dims than shape {shape}")
    out = []
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise ValueError(f"Tensor.expand: -1 is not allowed for a new leading dim {sizes}")
            s = shape[i - lead]
        out.append(s)
    return _api.broadcast_to(self, tuple(out))


def expand_as(self, other):
    """``x`` broadcast to ``other.shape``.

    >>> import fntorch as ft
    >>> ft.asarray([[1], [2]]).expand_as(ft.zeros((2, 3))).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    return _api.broadcast_to(self, tuple(other.shape))


def broadcast_to(self, *shape):
    """``x`` broadcast to ``shape`` (several ints or one tuple).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).broadcast_to(2, 2).tolist()
    [[1, 2], [1, 2]]
    """
    return _api.broadcast_to(self, _shape_args(shape, "Tensor.broadcast_to"))


def repeat(self, *args, repeats=None):
    """PyTorch's ``repeat``: the tensor tiled ``sizes[i]`` times along each dim
    (``numpy.tile``); for numpy's ``repeat`` use ``repeat_interleave``.

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).repeat(2).tolist()
    [1, 2, 1, 2]
    """
    sizes = _keyword_or_args(args, repeats, "Tensor.repeat", "repeats")
    sizes = _shape_args(sizes, "Tensor.repeat")
    if len(sizes) < self.ndim:
        raise ValueError(
            f"Tensor.repeat: needs at least one repeat count per dim ({self.ndim}), got {sizes}"
        )
    return _api.tile(self, sizes)


def repeat_interleave(self, repeats, dim=None):
    """Each element repeated ``repeats`` times along ``dim`` (flattened when None).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).repeat_interleave(2).tolist()
    [1, 1, 2, 2]
    """
    return _api.repeat(self, repeats, axis=dim)


def flip(self, *args, dims=None):
    """``x`` reversed along ``dims`` (an int, several ints or a tuple; ``()`` reverses
    none); ``x.flip()`` reverses every dim, as ``ft.flip``.

    >>> import fntorch as ft
    >>> x = ft.asarray([[1, 2], [3, 4]])
    >>> x.flip(1).tolist(), x.flip().tolist()
    ([[2, 1], [4, 3]], [[4, 3], [2, 1]])
    """
    dims = _keyword_or_args(args, dims, "Tensor.flip", "dims")
    if not dims:
        return _api.flip(self)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return _api.flip(self, axis=dims)


def roll(self, shifts, dims=None):
    """``x`` rolled by ``shifts`` along ``dims`` (flattened when None).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2, 3, 4]).roll(1).tolist()
    [4, 1, 2, 3]
    """
    return _api.roll(self, shifts, axis=dims)


def split(self, split_size_or_sections, dim=0):
    """Pieces along ``dim``: of size ``split_size`` (the last may be smaller), or of the
    listed sizes (PyTorch's ``split``).

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in ft.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    n = self.shape[_norm("Tensor.split", dim, self.ndim)]
    d = _norm("Tensor.split", dim, self.ndim)
    if isinstance(split_size_or_sections, (int, np.integer)):
        k = builtins.int(split_size_or_sections)
        if k <= 0:
            raise ValueError(f"Tensor.split: split_size must be positive, got {k}")
        sizes = [min(k, n - s) for s in range(0, n, k)] or [0]
    else:
        sizes = [builtins.int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ValueError(f"Tensor.split: sizes {sizes} do not add up to {n} (dim {dim})")
    out, start = [], 0
    for s in sizes:
        out.append(_indexing.getitem(self, (slice(None),) * d + (slice(start, start + s),)))
        start += s
    return tuple(out)


def chunk(self, chunks, dim=0):
    """``chunks`` pieces along ``dim`` (each of size ``ceil(n / chunks)``, the last smaller).

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.arange(5).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise ValueError(f"Tensor.chunk: chunks must be a positive int, got {chunks!r}")
    n = self.shape[_norm("Tensor.chunk", dim, self.ndim)]
    if n == 0:
        return split(self, [0] * chunks, dim)  # PyTorch's: ``chunks`` empty pieces
    return split(self, -(-n // chunks), dim)


def unbind(self, dim=0):
    """The slices along ``dim``, as a tuple (``ft.unstack``).

    >>> import fntorch as ft
    >>> [c.tolist() for c in ft.asarray([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    return _api.unstack(self, axis=dim)


def gather(self, dim, index):
    """PyTorch's ``gather``: ``out[i, j] = self[i, index[i, j]]`` for ``dim=1``. The
    result has ``index``'s shape, which may be smaller than ``self``'s outside ``dim``
    (``ft.take_along_axis`` broadcasts instead).

    >>> import fntorch as ft
    >>> x = ft.asarray([[1, 2, 3], [4, 5, 6]])
    >>> x.gather(1, ft.asarray([[2, 0]])).tolist()
    [[3, 1]]
    """
    d = _norm("Tensor.gather", dim, self.ndim)
    index = index if isinstance(index, Tensor) else _api.asarray(index)
    shape, ishape = tuple(self.shape), tuple(index.shape)
    if len(ishape) != len(shape) or any(
        i > n for k, (i, n) in enumerate(zip(ishape, shape)) if k != d
    ):
        raise ValueError(
            f"Tensor.gather: index of shape {ishape} must have self's rank and fit inside "
            f"self's shape {shape} outside dim {d}"
        )
    part = tuple(slice(None) if k == d else slice(0, i) for k, i in enumerate(ishape))
    return _api.take_along_axis(_indexing.getitem(self, part), index, axis=d)


def index_select(self, dim, index):
    """The entries ``index`` (a vector; a 0-d index counts as one entry) along ``dim``: the
    result keeps ``self``'s rank, as PyTorch's.

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).index_select(1, ft.asarray(0)).shape
    (2, 1)
    """
    index = index if isinstance(index, Tensor) else _api.asarray(index)
    if index.ndim > 1:
        raise ValueError(
            f"Tensor.index_select: index must be a vector (or 0-d), got shape {index.shape}"
        )
    return _api.take(self, _api.reshape(index, (-1,)), axis=dim)


def take_along_dim(self, indices, dim=None):
    """``ft.take_along_axis`` (flattened when ``dim`` is None).

    >>> import fntorch as ft
    >>> x = ft.asarray([[10, 30, 20], [60, 40, 50]])
    >>> x.take_along_dim(x.argsort(dim=1), dim=1).tolist()
    [[10, 20, 30], [40, 50, 60]]
    """
    if dim is None:
        return _api.take_along_axis(_api.reshape(self, (-1,)), _api.reshape(indices, (-1,)), axis=0)
    return _api.take_along_axis(self, indices, axis=dim)


def tril(self, diagonal=0):
    """The lower triangle (``ft.tril``); ``diagonal`` shifts it (positive: above the main one).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).tril().tolist()
    [[1, 0, 0], [4, 5, 0], [7, 8, 9]]
    """
    return _api.tril(self, k=diagonal)


def triu(self, diagonal=0):
    """The upper triangle (``ft.triu``); ``diagonal`` shifts it (positive: above the main one).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).triu(1).tolist()
    [[0, 2, 3], [0, 0, 6], [0, 0, 0]]
    """
    return _api.triu(self, k=diagonal)


# -------------------------------------------------------------------- sorting, selection


def sort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """PyTorch's ``sort``: the namedtuple ``(values, indices)`` along ``dim``.

    >>> import fntorch as ft
    >>> ft.asarray([3, 1, 2]).sort().indices.tolist()
    [1, 2, 0]
    """
    ax = _axis(None if axis is not None else dim, axis, "Tensor.sort")
    idx = _api.argsort(self, axis=ax, descending=descending, stable=True)
    return return_types.sort(_api.take_along_axis(self, idx, axis=ax), idx)


def argsort(self, dim=-1, descending=False, stable=False, *, axis=None):
    """The indices that sort ``x`` along ``dim`` (stable).

    >>> import fntorch as ft
    >>> x = ft.asarray([3, 1, 2])
    >>> x.argsort().tolist(), x.argsort(descending=True).tolist()
    ([1, 2, 0], [0, 2, 1])
    """
    ax = _axis(None if axis is not None else dim, axis, "Tensor.argsort")
    return _api.argsort(self, axis=ax, descending=descending, stable=True)


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    """The ``k`` largest (or smallest) entries along ``dim``: ``(values, indices)``.

    >>> import fntorch as ft
    >>> ft.asarray([1, 5, 3]).topk(2).values.tolist()
    [5, 3]
    """
    d = _norm("Tensor.topk", dim, self.ndim)
    n = self.shape[d]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n:
        raise ValueError(f"Tensor.topk: k={k!r} is out of range for dim {dim} of size {n}")
    idx = _api.argsort(self, axis=d, descending=largest, stable=True)
    idx = _indexing.getitem(idx, (slice(None),) * d + (slice(0, k),))
    return return_types.topk(_api.take_along_axis(self, idx, axis=d), idx)


def where(self, condition, other):
    """PyTorch's ``x.where(condition, y)``: ``ft.where(condition, x, y)``.

    >>> import fntorch as ft
    >>> x = ft.asarray([1, -2, 3])
    >>> x.where(x > 0, 0).tolist()
    [1, 0, 3]
    """
    return _api.where(condition, self, other)


def masked_fill(self, mask, value):
    """``x`` with ``value`` (cast to ``x``'s dtype) where ``mask`` is True.

    >>> import fntorch as ft
    >>> ft.zeros(3).masked_fill(ft.asarray([True, False, True]), 1.0).tolist()
    [1.0, 0.0, 1.0]
    """
    mask = mask if isinstance(mask, Tensor) else _api.asarray(mask)
    if mask.dtype != dt.bool_:  # as PyTorch: a float mask is a mistake, not a truth value
        raise TypeError(f"Tensor.masked_fill: mask must have dtype bool, got {mask.dtype}")
    if isinstance(value, Tensor) and value.ndim:
        raise ValueError(f"Tensor.masked_fill: value must be 0-d, got shape {value.shape}")
    if isinstance(value, Tensor):
        value = _api.astype(value, self.dtype) if value.dtype != self.dtype else value
    else:
        value = np.asarray(value, dtype=self.dtype)[()]
        value = _api.asarray(value, device=self.device)
    return _api.where(mask, value, self)


def nonzero(self, *, as_tuple=False):
    """PyTorch's ``nonzero``: an ``(n, ndim)`` int64 tensor of indices (or the Array API's
    tuple with ``as_tuple=True``). Needs a concrete value.

    >>> import fntorch as ft
    >>> x = ft.asarray([[0, 1], [1, 1]])
    >>> x.nonzero().tolist()
    [[0, 1], [1, 0], [1, 1]]
    >>> [i.tolist() for i in x.nonzero(as_tuple=True)]
    [[0, 1, 1], [1, 0, 1]]
    """
    idx = _api.nonzero(self)
    if as_tuple:
        return idx
    return _api.stack(idx, axis=1)


for _f in (reshape, view, view_as, reshape_as, permute, transpose, movedim, unsqueeze, squeeze,
           flatten, unflatten, expand, expand_as, broadcast_to, repeat, repeat_interleave, flip,
           roll, split, chunk, unbind, gather, index_select, take_along_dim, tril, triu, sort,
           argsort, topk, where, masked_fill, nonzero, diff):  # fmt: skip
    _attach(_f.__name__, _f)
_attach("swapaxes", transpose)
_attach("swapdims", transpose)
_attach("moveaxis", movedim)
