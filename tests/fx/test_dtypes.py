"""Promotion, written out from API.md as a table and checked pair by pair."""

import itertools

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx import dtypes as dt

B, I8, I16, I32, I64 = ft.bool, ft.int8, ft.int16, ft.int32, ft.int64
U8, U16, U32, U64 = ft.uint8, ft.uint16, ft.uint32, ft.uint64
F16, BF16, F32, F64 = ft.float16, ft.bfloat16, ft.float32, ft.float64

INTS = [I8, I16, I32, I64, U8, U16, U32, U64]
FLOATS = [F16, BF16, F32, F64]

# Array API's tables within a kind, plus API.md's decisions across kinds.
SIGNED_UNSIGNED = {
    (I8, U8): I16, (I8, U16): I32, (I8, U32): I64,
    (I16, U8): I16, (I16, U16): I32, (I16, U32): I64,
    (I32, U8): I32, (I32, U16): I32, (I32, U32): I64,
    (I64, U8): I64, (I64, U16): I64, (I64, U32): I64,
}  # fmt: skip


def expected(a, b):
    if a == b:
        return a
    if a == B:
        return b
    if b == B:
        return a
    fa, fb = a in FLOATS, b in FLOATS
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if fa and fb:
        if {a, b} == {F16, BF16}:
            return F32
        return a if a.itemsize > b.itemsize else b
    sa, sb = dt.is_signed(a), dt.is_signed(b)
    if sa == sb:
        return a if a.itemsize > b.itemsize else b
    key = (a, b) if sa else (b, a)
    if U64 in (a, b):
        return TypeError
    return SIGNED_UNSIGNED[key]


@pytest.mark.parametrize("a,b", list(itertools.product([B, *INTS, *FLOATS], repeat=2)))
def test_promotion_table(a, b):
    want = expected(a, b)
    if want is TypeError:
        with pytest.raises(TypeError, match="uint64"):
            ft.result_type(a, b)
    else:
        assert ft.result_type(a, b) == want
        assert ft.result_type(b, a) == want


@pytest.mark.parametrize(
    "tensor_dtype,scalar,want",
    [
        (F32, 2.0, F32), (F16, 2.0, F16), (BF16, 2.0, BF16), (F64, 2, F64),
        (I32, 1, I32), (I8, 1, I8), (U8, 1, U8), (I32, 1.5, F32), (I64, 1.5, F32),
        (B, 1, I64), (B, 1.0, F32), (B, True, B), (I16, True, I16), (F32, True, F32),
    ],
)  # fmt: skip
def test_python_scalars_are_weak(tensor_dtype, scalar, want):
    assert ft.result_type(tensor_dtype, scalar) == want
    assert ft.result_type(scalar, tensor_dtype) == want


def test_scalars_alone_use_defaults():
    assert ft.result_type(1.0) == F32
    assert ft.result_type(1) == I64
    assert ft.result_type(True) == B
    assert ft.result_type(1, 2.0) == F32


def test_dtype_names_and_errors():
    assert dt.canonicalize("float32") is F32
    assert dt.canonicalize(float) is F32 and dt.canonicalize(int) is I64
    assert ft.bfloat16 == np.dtype("bfloat16")
    assert dt.canonicalize(np.complex64) is ft.complex64
    assert dt.canonicalize(complex) is ft.complex64
    with pytest.raises(TypeError, match="complex64"):
        dt.canonicalize(np.clongdouble)
