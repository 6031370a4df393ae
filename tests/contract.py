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
    if dtype in (dt.float32, dt.complex64):
        return max(rtol, 2e-5), max(atol, 1e-6)
    return rtol, atol


def assert_close(got, expected, *, rtol, atol, exact=False, what=""):
    got = to_np(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != expected {expected.shape}"
    if exact or not dt.is_inexact(got.dtype):
        if dt.is_float(got.dtype):  # NaN == NaN for every float dtype, bfloat16 included
            got, expected = got.astype(np.float64), expected.astype(np.float64)
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    r, a = tolerance(got.dtype, rtol, atol)
    wide = np.complex128 if dt.is_complex(got.dtype) else np.float64
    np.testing.assert_allclose(
        got.astype(wide),
        expected.astype(wide),
        rtol=r,
        atol=a,
        equal_nan=True,
        err_msg=what,
    )


def case_ids(case):
    return case.name


def derivative_dtypes(case) -> list:
    """The dtypes the derivative contracts run a case in: float64 and complex128, those
    of the two the case has."""
    return [d for d in (dt.float64, dt.complex128) if d in case.dtypes]


def standard_normal(rng, shape, dtype):
    """Random normal values of ``shape``; complex ones for a complex ``dtype``."""
    x = rng.standard_normal(shape)
    if dt.is_complex(np.dtype(dtype)):
        x = x + 1j * rng.standard_normal(shape)
    return x
