"""Helpers shared by the Array API modules: operand conversion, promotion, axes.

Python scalars stay Python scalars until promotion has seen them (they are *weak*);
everything else becomes a Tensor (or stays a tracer). Promotion casts tensors with
``convert_element_type`` only when their dtype differs, and turns Python scalars into
numpy scalars of the result dtype, which is what the primitives take.
"""

from __future__ import annotations

import builtins
import functools
import operator
import reprlib
from collections.abc import Sequence

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import ConcretizationError, Tensor, _new_tensor
from ..fx.device import host_device
from . import lax

_PY_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def is_pyscalar(x) -> bool:
    """A Python bool, int, float or complex (numpy scalars are not: they carry a dtype)."""
    return isinstance(x, _PY_SCALARS) and not isinstance(x, np.generic)


def operand(x, asarray) -> Tensor | bool | int | float:
    """A Tensor, tracer or Python scalar; anything else goes through ``asarray``. A numpy
    scalar stays a host scalar (held by a tensor): like a Python scalar it belongs to no
    device, and takes the device of the tensors it meets."""
    if isinstance(x, Tensor) or is_pyscalar(x):
        return x
    if isinstance(x, np.generic):
        return _new_tensor(asarray(x, device=host_device())._value[()])
    return asarray(x)


def promote_dtype(name: str, *args) -> np.dtype:
    """The result dtype of ``args`` (tensors and Python scalars); TypeError naming ``name``."""
    try:
        return dt.dtype_and_weak(*args)[0]
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def cast(x, dtype: np.dtype, weak: bool = False):
    """``x`` (a tensor or Python scalar) as ``dtype``: a numpy scalar for Python scalars,
    marked weak (``dtypes.WeakScalar``) when ``weak``."""
    if is_pyscalar(x):
        if weak:
            return dt.weak_scalar(x, dtype)
        return np.asarray(x, dtype=dtype)[()]
    if x.dtype == dtype:
        return x
    return lax.convert_element_type(x, dtype)


def check_scalar_fits(name: str, x, dtype: np.dtype) -> None:
    """OverflowError naming ``name`` when the Python int ``x`` cannot become ``dtype``.

    numpy's own error (``Python integer 300 out of bounds for int8``) names neither the
    function nor why the dtype is that narrow: a weak scalar takes the tensor's dtype.
    """
    if type(x) is not builtins.int:
        return
    if dt.is_integer(dtype):
        lo, hi = _int_range(dtype)
        if not lo <= x <= hi:
            raise OverflowError(
                f"{name}: the Python int {reprlib.repr(x)} is out of range for {dtype} "
                f"({lo}..{hi}), the dtype it takes from the tensor operand; "
                f"cast the tensor to a wider dtype first"
            )
    elif dt.is_float(dtype):
        try:
            float(x)
        except OverflowError:
            raise OverflowError(
                f"{name}: the Python int {reprlib.repr(x)} is too large for any float dtype "
                f"(the operation is in {dtype})"
            ) from None


@functools.cache
def _int_range(dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)  # ~1 us a call: comparisons with a weak int ask every time
    return int(info.min), int(info.max)


def _weak_traced(args) -> bool:
    """Whether ``args`` are all weak and one is traced (a concrete tensor is never weak):
    the result is then weak, so a traced graph must see its Python scalars as weak too."""
    traced = False
    for a in args:
        if type(a) is Tensor:  # the eager common case, first
            return False
        if is_pyscalar(a):
            continue
        if not getattr(a, "weak_type", False):
            return False
        traced = True
    return traced


def promote(name: str, *args, dtype=None) -> list:
    """``args`` cast to their common dtype (or to ``dtype``)."""
    if dtype is None:
        dtype = promote_dtype(name, *args)
    weak = _weak_traced(args)
    try:
        return [cast(a, dtype, weak) for a in args]
    except OverflowError:  # numpy's message names neither the function nor the range
        for a in args:
            check_scalar_fits(name, a, dtype)
        raise


def as_index(name: str, what: str, value) -> int:
    """``value`` as an int, by ``operator.index``: a float or a string is refused rather
    than truncated or parsed (numpy and PyTorch refuse them too); a traced value's
    ConcretizationError passes through, its message says which argument to mark static.

    >>> as_index("eye", "k", 2.5)
    Traceback (most recent call last):
      ...
    TypeError: eye: k must be an integer, got 2.5
    """
    if isinstance(value, (bool, np.bool_)):  # an int to Python, but axis=True is a mistake
        raise TypeError(f"{name}: {what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except ConcretizationError:
        raise
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {value!r}") from None


class AxisError(ValueError, IndexError):
    """An axis out of range: a ValueError (fntorch's rule for shape errors) that is also
    the IndexError the Array API standard names, as numpy's ``AxisError`` is both."""


def normalize_axis(name: str, axis, ndim: int) -> int:
    """``axis`` as a non-negative int below ``ndim``.

    Out of range: `AxisError` (a ValueError and an IndexError) naming ``name``, the
    axis and the rank.

    >>> normalize_axis("ft.sum", -1, 3)
    2
    """
    a = as_index(name, "axis", axis)
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{name}: axis {axis} is out of bounds for a tensor of rank {ndim} "
            f"(valid axes are {-ndim}..{ndim - 1})"
        )
    return a + ndim if a < 0 else a


def normalize_axes(name: str, axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints) as a sorted tuple; None means all."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Sequence) or isinstance(axis, np.ndarray):
        axes = [normalize_axis(name, a, ndim) for a in axis]
    else:
        axes = [normalize_axis(name, axis, ndim)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis!r}")
    return tuple(sorted(axes))


def size_of(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
