"""dtypes and type promotion.

fntorch dtypes are plain ``numpy.dtype`` objects (bfloat16 comes from ml_dtypes), so a
tensor's dtype and its buffer's dtype are the same object and no translation table sits
on the eager hot path.

Promotion follows the Array API standard within a kind; across kinds an integer or bool
meets a float and gives the float operand's dtype, as PyTorch and JAX do, and a real
meets a complex and gives the complex dtype wide enough for both (float64 with
complex64 is complex128, the standard's table). Python scalars are *weak*: they take the
dtype of the tensor they meet, and only pick a default dtype (float32, int64, complex64)
when they must change kind; a Python complex meeting a float tensor gives the complex
dtype of that float's precision.
"""

from __future__ import annotations

import builtins
import functools
from typing import NamedTuple

import ml_dtypes
import numpy as np

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
# The tangent dtype of integer and boolean values (JAX's float0): it holds no data.
float0 = np.dtype([("float0", np.void, 0)])

default_float = float32
default_int = int64
default_complex = complex64

bool_dtypes = (bool_,)
signed_dtypes = (int8, int16, int32, int64)
unsigned_dtypes = (uint8, uint16, uint32, uint64)
integer_dtypes = signed_dtypes + unsigned_dtypes
float_dtypes = (float16, bfloat16, float32, float64)
complex_dtypes = (complex64, complex128)
real_dtypes = bool_dtypes + integer_dtypes + float_dtypes
all_dtypes = real_dtypes + complex_dtypes

_by_name = {str(d): d for d in all_dtypes} | {"bool": bool_}
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


def is_float(dtype) -> bool:
    return dtype in float_dtypes


def is_complex(dtype) -> bool:
    return dtype in complex_dtypes


def is_inexact(dtype) -> bool:
    """A float or complex dtype: the ones derivatives are taken of."""
    return dtype in float_dtypes or dtype in complex_dtypes


def real_dtype(dtype) -> np.dtype:
    """The dtype of a value's real part: float32 for complex64, float64 for complex128,
    ``dtype`` itself for real dtypes.

    >>> real_dtype(complex64), real_dtype(float16)
    (dtype('float32'), dtype('float16'))
    """
    if dtype == complex64:
        return float32
    if dtype == complex128:
        return float64
    return dtype


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype with ``dtype``'s precision: complex128 for float64 and
    complex128, complex64 for every other dtype.

    >>> complex_dtype(float64), complex_dtype(float32)
    (dtype('complex128'), dtype('complex64'))
    """
    return complex128 if dtype in (float64, complex128) else complex64


def is_integer(dtype) -> bool:
    return dtype in integer_dtypes


def is_signed(dtype) -> bool:
    return dtype in signed_dtypes


def kind_rank(dtype) -> int:
    if dtype == bool_:
        return _BOOL
    if dtype in float_dtypes:
        return _FLOAT
    if dtype in complex_dtypes:
        return _COMPLEX
    return _INT


def canonicalize(dtype, *, where: str = "dtype") -> np.dtype:
    """Turns anything naming an fntorch dtype into the ``numpy.dtype`` fntorch uses.

    >>> canonicalize("float32") is float32
    True
    """
    if isinstance(dtype, np.dtype) and dtype in _all_set:
        return dtype
    if dtype is builtins.float:
        return default_float
    if dtype is builtins.int:
        return default_int
    if dtype is builtins.bool:
        return bool_
    if dtype is builtins.complex:
        return default_complex
    if isinstance(dtype, str) and dtype in _by_name:
        return _by_name[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in _all_set:
        names = ", ".join(_by_name)
        raise TypeError(f"{where}: expected one of fntorch's dtypes ({names}), got {dtype!r}")
    return d


_all_set = frozenset(all_dtypes)


@functools.cache
def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype two tensors of dtypes ``a`` and ``b`` combine to.

    >>> promote_types(int8, uint8)
    dtype('int16')
    """
    if a == b:
        return a
    ka, kb = kind_rank(a), kind_rank(b)
    if _COMPLEX in (ka, kb):
        # The standard's table: the complex dtype as wide as the wider of the two.
        wide = complex128 in (a, b) or float64 in (a, b)
        return complex128 if wide else complex64
    if ka != kb:
        return a if ka > kb else b
    if ka == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    # Both integers.
    sa, sb = is_signed(a), is_signed(b)
    if sa == sb:
        return a if a.itemsize > b.itemsize else b
    s, u = (a, b) if sa else (b, a)
    if u == uint64:
        raise TypeError(
            f"promote_types: uint64 and signed {s} have no common integer dtype; "
            "cast one explicitly (x.astype(...))"
        )
    if u.itemsize < s.itemsize:
        return s
    return np.dtype(f"int{u.itemsize * 16}")


_PY_KIND = {
    builtins.bool: _BOOL,
    builtins.int: _INT,
    builtins.float: _FLOAT,
    builtins.complex: _COMPLEX,
}


def _weak_kind(x):
    k = _PY_KIND.get(type(x))
    if k is not None or isinstance(x, (np.generic, np.dtype)):
        return k
    # Subclasses of Python numbers other than numpy's (np.float64 subclasses float).
    for t, kind in (
        (builtins.bool, _BOOL),
        (builtins.int, _INT),
        (builtins.float, _FLOAT),
        (builtins.complex, _COMPLEX),
    ):
        if isinstance(x, t):
            return kind
    return None


def _strong_dtype(x):
    d = x if isinstance(x, np.dtype) else getattr(x, "dtype", None)
    if d is None:
        return canonicalize(x, where="result_type")
    if not isinstance(d, np.dtype) or d not in _all_set:
        return canonicalize(d, where="result_type")
    return d


def dtype_and_weak(*args) -> tuple[np.dtype, builtins.bool]:
    """Promotion over tensors, dtypes and Python scalars: (dtype, result_is_weak)."""
    strong = None
    weak = -1
    for x in args:
        k = _PY_KIND.get(type(x))
        if k is None:
            d = getattr(x, "dtype", None)
            if d is not None and d in _all_set and not getattr(x, "weak_type", False):
                # The common case, a strong tensor: no further checks.
                strong = d if strong is None or strong is d else promote_types(strong, d)
                continue
            k = _weak_kind(x)
            if k is None:
                if getattr(x, "weak_type", False):
                    k = kind_rank(x.dtype)
                else:
                    d = _strong_dtype(x)
                    strong = d if strong is None else promote_types(strong, d)
                    continue
        if k > weak:
            weak = k
    if strong is None:
        if weak < 0:
            raise ValueError("result_type: expected at least one argument")
        return (bool_, default_int, default_float, default_complex)[weak], True
    if weak > kind_rank(strong):
        if weak == _COMPLEX:
            return complex_dtype(strong), False
        return (default_int if weak == _INT else default_float), False
    return strong, False


def result_type(*args) -> np.dtype:
    """The dtype of combining ``args`` (tensors, dtypes, Python scalars).

    >>> import fntorch as ft
    >>> ft.result_type(ft.float32, 2.0), ft.result_type(ft.int32, 1)
    (dtype('float32'), dtype('int32'))
    >>> ft.result_type(ft.int8, ft.uint8)
    dtype('int16')
    """
    return dtype_and_weak(*args)[0]


class WeakScalar:
    """Marks a numpy scalar that promotion made from a Python scalar: the primitives need
    a numpy scalar, but under a trace the value must stay weak as the Python scalar was
    (JAX's ``weak_type`` literal), or ``weak_tracer * 2`` would widen a tensor it meets.
    A numpy scalar without the mark (a user's, a constant of the library) is strong.

    >>> w = weak_scalar(2, int8)
    >>> w == 2, w.dtype, isinstance(w, WeakScalar), isinstance(w[()], WeakScalar)
    (np.True_, dtype('int8'), True, False)
    """

    __slots__ = ()
    weak_type = True


@functools.cache
def _weak_scalar_type(scalar_type):
    return type(f"weak_{scalar_type.__name__}", (scalar_type, WeakScalar), {"__slots__": ()})


def weak_scalar(x, dtype: np.dtype):
    """The Python scalar ``x`` as a numpy scalar of ``dtype`` marked ``WeakScalar``."""
    value = np.asarray(x, dtype=dtype)[()]
    marked = _weak_scalar_type(type(value))(value)
    # numpy's bool and ml_dtypes' scalars build their base type whatever class is asked
    # for; they stay unmarked (a weak bool promotes as a strong one does).
    return marked if isinstance(marked, WeakScalar) else value


class FInfo(NamedTuple):
    """A float dtype's limits as Python numbers (the Array API's ``finfo`` object, as
    ``torch.finfo``'s; numpy's holds numpy scalars of the dtype)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    tiny: float
    resolution: float
    nmant: int
    nexp: int
    dtype: np.dtype


def finfo(dtype) -> FInfo:
    """Machine limits of a float dtype (numpy's or ml_dtypes' finfo, as Python numbers);
    for a complex dtype, those of its real and imaginary parts.

    >>> finfo(bfloat16).eps, finfo(float32).bits
    (0.0078125, 32)
    """
    dtype = canonicalize(dtype, where="finfo")
    if is_complex(dtype):  # the standard: the limits of the real and imaginary parts
        dtype = real_dtype(dtype)
    elif not is_float(dtype):
        raise TypeError(f"finfo: expected a float dtype, got {dtype}; use iinfo for integers")
    f = ml_dtypes.finfo(dtype) if dtype == bfloat16 else np.finfo(dtype)
    return FInfo(
        int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal),
        float(f.tiny), float(f.resolution), int(f.nmant), int(f.nexp), np.dtype(dtype),
    )  # fmt: skip


def iinfo(dtype):
    """Machine limits of an integer dtype.

    >>> iinfo(uint8).max
    255
    """
    dtype = canonicalize(dtype, where="iinfo")
    if not is_integer(dtype):
        raise TypeError(f"iinfo: expected an integer dtype, got {dtype}; use finfo for floats")
    return np.iinfo(dtype)
