"""Tensor methods, PyTorch spellings that the other parts lack: ``x.size()`` /
``x.size(d)`` (``x.size`` stays the Array API's int), ``narrow``, ``is_cuda``,
``is_contiguous``, ``nelement``, ``type``, ``allclose``, ``isclose``, ``lerp``, ``equal``,
``outer`` and a plain value's ``data``.

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


def _is_contiguous(self, memory_format=None) -> bool:
    """Always True: fntorch values have no strides to be non-contiguous in.

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).T.is_contiguous()
    True
    """
    return True


def _nelement(self) -> int:
    """The number of elements (PyTorch's ``nelement``, ``numel``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).nelement()
    6
    """
    return int(self.size)


def _type(self, dtype=None):
    """PyTorch's ``x.type()``: the type name (``"fntorch.FloatTensor"``) without an
    argument, else ``x`` cast to ``dtype``.

    >>> import fntorch as ft
    >>> ft.ones(2).type(), ft.ones(2).type(ft.int64).dtype
    ('fntorch.FloatTensor', dtype('int64'))
    """
    if dtype is None:
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool"}  # fmt: skip
        return f"fntorch.{names.get(str(self.dtype), str(self.dtype))}Tensor"
    return self.astype(dtype)


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``ft.allclose(x, other)`` as a method.

    >>> import fntorch as ft
    >>> ft.ones(2).allclose(ft.ones(2))
    True
    """
    from ._api_torch_funcs import allclose

    return allclose(self, other, rtol, atol, equal_nan)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``ft.isclose(x, other)`` as a method.

    >>> import fntorch as ft
    >>> ft.ones(2).isclose(ft.asarray([1.0, 0.0])).tolist()
    [True, False]
    """
    from ._api_torch_funcs import isclose

    return isclose(self, other, rtol, atol, equal_nan)


def _lerp(self, end, weight):
    """``ft.lerp(x, end, weight)`` as a method.

    >>> import fntorch as ft
    >>> ft.zeros(1).lerp(ft.ones(1), 0.25).tolist()
    [0.25]
    """
    from ._api_torch_funcs import lerp

    return lerp(self, end, weight)


def _equal(self, other) -> bool:
    """Whether ``other`` has the same shape and the same values (PyTorch's ``equal``).

    >>> import fntorch as ft
    >>> ft.ones(2).equal(ft.ones(2)), ft.ones(2).equal(ft.ones(3))
    (True, False)
    """
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool((self == other).all())


def _outer(self, vec2):
    """The outer product with ``vec2`` (PyTorch's ``x.outer``, ``ft.outer``).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).outer(ft.asarray([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    from ._api_linalg import outer

    return outer(self, vec2)


def _data(self):
    """A plain value's ``x.data``: ``x.detach()`` (a cell's ``.data`` is its alias).

    >>> import fntorch as ft
    >>> ft.ones(2).data.tolist()
    [1.0, 1.0]
    """
    return self.detach()


_attach("is_contiguous", _is_contiguous)
_attach("nelement", _nelement)
_attach("type", _type)
_attach("allclose", _allclose)
_attach("isclose", _isclose)
_attach("lerp", _lerp)
_attach("equal", _equal)
_attach("outer", _outer)
_attach("data", property(_data))
