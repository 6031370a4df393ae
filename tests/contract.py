"""Helpers shared by the per-primitive contract tests."""

from __future__ import annotations

import numpy as np

from fntorch.fx import dtypes as dt
from fntorch.fx.core import Tensor


def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def to_np(x):
    if isinstance(x, Tensor):
        return np.asarray(x._value)
    return np.asarray(x)


def tolerance(dtype, rtol, atol):
    dtype = np.dtype(dtype)
    if dtype in (dt.float16, dt.bfloat16):
        return max(rtol, 2e-2), max(atol, 2e-2)
    if dtype == dt.float32:
        return max(rtol, 2e-5), max(atol, 1e-6)
    return rtol, atol


def assert_close(got, expected, *, rtol, atol, exact=False, what=""):
    got = to_np(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != expected {expected.shape}"
    if exact or not (dt.is_float(got.dtype) or got.dtype == np.float64):
        if dt.is_float(got.dtype):  # NaN == NaN for every float dtype, bfloat16 included
            got, expected = got.astype(np.float64), expected.astype(np.float64)
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    r, a = tolerance(got.dtype, rtol, atol)
    np.testing.assert_allclose(
        got.astype(np.float64),
        expected.astype(np.float64),
        rtol=r,
        atol=a,
        equal_nan=True,
        err_msg=what,
    )


def case_ids(case):
    return case.name
