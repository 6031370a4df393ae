"""PyTorch's top-level spellings that model files use: ``Size``, ``is_tensor``, ``numel``,
``flatten``, ``topk``, ``chunk`` and ``split``, each the Tensor method of the same name
(PyTorch's meaning, ``dim=``) called with the tensor first; and ``zeros``, ``ones`` and
``empty``, which take the Array API's one ``shape`` and also PyTorch's ``ones(2, 3)``
(``requires_grad=True`` gives a leaf cell, as ``x.requires_grad_()`` does).
"""

from __future__ import annotations

import builtins  # the star import below shadows any/all/sum with the tensor functions
import operator

from ..fx.core import Tensor
from . import _api_creation
from ._api_torch_funcs import *  # noqa: F403 - re-exported: PyTorch's method-functions
from ._api_torch_funcs import __all__ as _funcs

__all__ = [
    "Size", "is_tensor", "numel", "flatten", "topk", "chunk", "split", "zeros", "ones", "empty",
    *_funcs,
]  # fmt: skip


class Size(tuple):
    """PyTorch's ``torch.Size``: a tuple of ints (what ``x.size()`` returns).

    >>> import fntorch as ft
    >>> s = ft.zeros((2, 3)).size()
    >>> s, s == (2, 3), s[1:], s.numel()
    (fntorch.Size([2, 3]), True, fntorch.Size([3]), 6)
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, (operator.index(s) for s in sizes))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape.

        >>> import fntorch as ft
        >>> ft.Size([2, 3, 4]).numel()
        24
        """
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        out = super().__getitem__(i)
        return Size(out) if isinstance(i, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __repr__(self):
        return f"fntorch.Size({list(self)})"

    def __reduce__(self):
        return (Size, (tuple(self),))


def _tensor(x, where: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{where}: expected a Tensor, got {type(x).__name__}")
    return x


def is_tensor(obj) -> bool:
    """Whether ``obj`` is an ``ft.Tensor`` (a cell such as a Parameter counts).

    >>> import fntorch as ft
    >>> ft.is_tensor(ft.ones(2)), ft.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def numel(input) -> int:  # noqa: A002 - PyTorch's name
    """The number of elements of ``input`` (``input.numel()``).

    >>> import fntorch as ft
    >>> ft.numel(ft.zeros((2, 3)))
    6
    """
    return int(_tensor(input, "numel").size)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """Dims ``start_dim..end_dim`` merged into one (``input.flatten(...)``).

    >>> import fntorch as ft
    >>> ft.flatten(ft.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    return _tensor(input, "flatten").flatten(start_dim, end_dim)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """PyTorch's ``topk``: the namedtuple ``(values, indices)`` of the ``k`` largest (or
    smallest) entries along ``dim``. (``ft.top_k(x, k)`` is the Array API-style extra.)

    >>> import fntorch as ft
    >>> ft.topk(ft.asarray([1, 5, 3]), 2).indices.tolist()
    [1, 2]
    """
    return _tensor(input, "topk").topk(k, dim, largest, sorted)


def chunk(input, chunks: int, dim: int = 0) -> tuple:  # noqa: A002
    """``chunks`` pieces along ``dim`` (each of ``ceil(n / chunks)``, the last smaller).

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.chunk(ft.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    return _tensor(input, "chunk").chunk(chunks, dim)


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """PyTorch's ``split``: pieces of ``split_size`` along ``dim`` (the last may be
    smaller), or of the listed sizes.

    >>> import fntorch as ft
    >>> [p.tolist() for p in ft.split(ft.arange(5), [1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    return _tensor(tensor, "split").split(split_size_or_sections, dim)


def _creation_shape(size: tuple, where: str):
    """``f((2, 3))`` (the Array API's one shape) and PyTorch's ``f(2, 3)`` alike."""
    if not size:
        raise TypeError(f"{where}: missing the shape (ints, or one sequence of ints)")
    if len(size) == 1:
        return size[0]
    if builtins.any(isinstance(s, (tuple, list)) for s in size):
        raise TypeError(f"{where}: shape must be ints or one sequence of ints, got {size!r}")
    return size


def _shape_given(shape, more: tuple, size, where: str):
    """The shape of ``f(shape)``, PyTorch's ``f(2, 3)`` and its ``f(size=(2, 3))``."""
    if size is not None:
        if shape is not None or more:
            raise TypeError(f"{where}: give the shape once, positionally or as size=")
        return _creation_shape((size,), where)
    return _creation_shape(() if shape is None else (shape, *more), where)


def _leaf(t: Tensor, requires_grad: bool) -> Tensor:
    # requires_grad=True: a new leaf cell (nn attaches Tensor.requires_grad_; ops cannot
    # import nn)
    return t.requires_grad_() if requires_grad else t


def zeros(shape=None, *more, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros (float32 by default) of shape ``shape``: ``zeros((2, 3))``, or
    PyTorch's ``zeros(2, 3)`` and ``zeros(size=(2, 3))``.

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).shape, ft.zeros(2, 3).shape, ft.zeros(1, requires_grad=True).requires_grad
    ((2, 3), (2, 3), True)
    """
    shape = _shape_given(shape, more, size, "zeros")
    out = _api_creation.zeros(shape, dtype=dtype, device=device)
    return _leaf(out, requires_grad)


def ones(shape=None, *more, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones (float32 by default) of shape ``shape``: ``ones((2, 3))``, or
    PyTorch's ``ones(2, 3)`` and ``ones(size=(2, 3))``.

    >>> import fntorch as ft
    >>> ft.ones(2, dtype=ft.int32).tolist(), ft.ones(1, 2).tolist()
    ([1, 1], [[1.0, 1.0]])
    """
    shape = _shape_given(shape, more, size, "ones")
    out = _api_creation.ones(shape, dtype=dtype, device=device)
    return _leaf(out, requires_grad)


def empty(shape=None, *more, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialised tensor of shape ``shape``; in fntorch it holds zeros (values are
    immutable anyway). ``empty((0, 2))``, or PyTorch's ``empty(0, 2)`` and ``empty(size=...)``.

    >>> import fntorch as ft
    >>> ft.empty((0, 2)).shape, ft.empty(0, 2).shape
    ((0, 2), (0, 2))
    """
    shape = _shape_given(shape, more, size, "empty")
    out = _api_creation.empty(shape, dtype=dtype, device=device)
    return _leaf(out, requires_grad)
