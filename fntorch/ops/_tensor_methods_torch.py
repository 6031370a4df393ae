"""Tensor methods, PyTorch spellings that the other parts lack: ``x.size()`` /
``x.size(d)`` (``x.size`` stays the Array API's int), ``narrow`` and ``is_cuda``.

``x.size`` is a ``SizeInt``: an ``int`` (the number of elements, as the Array API says:
``x.size == 6``, ``x.size * 2``, ``range(x.size)``, ``np.zeros(x.size)``) that is also
callable as PyTorch's method (``x.size()`` is ``ft.Size(x.shape)``, ``x.size(1)`` is
``x.shape[1]``). Arithmetic on it gives plain ints, and it pickles and copies as one.
The property is wrapped here, around the ``size`` of ``fx.core``'s Tensor and Tracer
(the element count stays theirs), so it holds for tracers and cells alike.

Attached to Tensor when imported (by `fntorch.ops._tensor_methods`).
"""

from __future__ import annotations

import operator

from ..fx import core
from ..fx.core import Tensor
from . import _indexing
from ._api_torch import Size
from ._tensor import _attach
from ._tensor_methods import _norm


class SizeInt(int):
    """The number of elements of a tensor, an ``int`` that PyTorch code may also call:
    ``x.size()`` is ``ft.Size(x.shape)`` and ``x.size(d)`` is ``x.shape[d]``.

    >>> import fntorch as ft
    >>> x = ft.zeros((2, 3))
    >>> x.size, x.size == 6, x.size + 1, x.size(), x.size(-1)
    (6, True, 7, fntorch.Size([2, 3]), 3)
    """

    def __new__(cls, n: int, shape: tuple):
        self = super().__new__(cls, n)
        self._shape = shape
        return self

    def __call__(self, dim=None):
        if dim is None:
            return Size(self._shape)
        d = operator.index(dim)
        n = len(self._shape)
        if not -n <= d < n:
            raise IndexError(
                f"Tensor.size: dim {dim} is out of range for a tensor with {n} dims"
                f" (expected one in [{-n}, {n - 1}])"
            )
        return self._shape[d]

    def __reduce__(self):
        return (int, (int(self),))  # a plain int: the shape is no part of the number


def _wrap_size(cls) -> None:
    count = cls.__dict__["size"].fget

    def size(self):
        """The number of elements, an int (the Array API's ``x.size``) that is also
        PyTorch's method: ``x.size()`` is ``ft.Size(x.shape)``, ``x.size(d)`` the size
        of dim ``d``.

        >>> import fntorch as ft
        >>> x = ft.zeros((2, 3))
        >>> x.size, x.size(), x.size(1)
        (6, fntorch.Size([2, 3]), 3)
        """
        return SizeInt(count(self), tuple(self.shape))

    size.__qualname__ = f"{cls.__name__}.size"
    cls.size = property(size)  # `size` is fx.core's (see the docstring)


_wrap_size(Tensor)
_wrap_size(core.Tracer)


def narrow(self, dim, start, length):
    """``length`` entries of dim ``dim`` from ``start`` (negative: from the end), as
    PyTorch's ``narrow``.

    >>> import fntorch as ft
    >>> ft.arange(6).reshape(2, 3).narrow(1, 1, 2).tolist()
    [[1, 2], [4, 5]]
    """
    d = _norm("Tensor.narrow", dim, self.ndim)
    n = self.shape[d]
    s, k = operator.index(start), operator.index(length)
    if s < 0:
        s += n
    if not 0 <= s <= n or k < 0 or s + k > n:
        raise IndexError(
            f"Tensor.narrow: start {start} and length {length} are out of range for dim"
            f" {dim} of size {n}"
        )
    return _indexing.getitem(self, (slice(None),) * d + (slice(s, s + k),))


def _is_cuda(self):
    """Whether ``x`` lives on a CUDA device.

    >>> import fntorch as ft
    >>> ft.ones(2).is_cuda
    False
    """
    dev = self.device
    return dev is not None and dev.type == "cuda"


_attach("narrow", narrow)
_attach("is_cuda", property(_is_cuda))
