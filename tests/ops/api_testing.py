"""Helpers for the Array API tests: numpy conversion, comparison, hypothesis strategies."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fntorch as ft
from fntorch.fx import dtypes as dt

FLOATS = (dt.float32, dt.float64)
SIGNED = (dt.int8, dt.int16, dt.int32, dt.int64)
UNSIGNED = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)
INTS = SIGNED + UNSIGNED


def to_np(x) -> np.ndarray:
    """The value of a tensor (or anything array-like) as a numpy array."""
    if isinstance(x, ft.Tensor):
        return np.asarray(x._value)
    return np.asarray(x)


def assert_close(got, expected, *, rtol=None, atol=0.0, dtype=True):
    """Shape, dtype (unless ``dtype=False``) and values (NaN equal to NaN)."""
    g, e = to_np(got), np.asarray(expected)
    assert g.shape == e.shape, f"shape {g.shape} != expected {e.shape}"
    if dtype:
        assert g.dtype == e.dtype, f"dtype {g.dtype} != expected {e.dtype}"
    if g.dtype.kind == "f" or e.dtype.kind == "f":
        if rtol is None:
            rtol = 1e-5 if g.dtype in (np.float32, np.dtype(dt.bfloat16), np.float16) else 1e-12
            if g.dtype in (np.float16, np.dtype(dt.bfloat16)):
                rtol = 1e-2
        np.testing.assert_allclose(
            g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(g, e)


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=4):
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def arrays(dtype, shape, *, finite=False, min_value=None, max_value=None, elements=None):
    """numpy arrays of ``dtype``; floats include NaN and infinities unless ``finite``."""
    dtype = np.dtype(dtype)
    if elements is None:
        if dtype.kind == "f":
            elements = st.floats(
                min_value=min_value,
                max_value=max_value,
                allow_nan=not finite and min_value is None,
                allow_infinity=not finite and min_value is None and max_value is None,
                width=8 * dtype.itemsize,
            )
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            lo = info.min if min_value is None else max(min_value, info.min)
            hi = info.max if max_value is None else min(max_value, info.max)
            elements = st.integers(lo, hi)
    return hnp.arrays(dtype, shape, elements=elements)
