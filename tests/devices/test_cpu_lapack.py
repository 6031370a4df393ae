"""The LAPACK/BLAS route of ``lu``, ``triangular_solve`` and ``lu_solve`` (numpy's
OpenBLAS through ctypes) gives what the numpy loops give, on every branch: trsv and
trsm, both sides, both triangles, transposed or not, unit diagonal or not, batches split
over threads or not, empty shapes, singular matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fntorch.devices import cpu_decomp, cpu_lapack

pytestmark = pytest.mark.skipif(
    not cpu_lapack._routines(), reason="numpy's BLAS exports no LAPACKE/CBLAS here"
)


@settings(max_examples=40, deadline=None)
@given(
    batch=st.sampled_from([(), (3,), (2, 20), (0,)]),
    m=st.integers(0, 6),
    n=st.integers(0, 6),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_lu_equals_the_elimination_loop(batch, m, n, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((*batch, m, n)).astype(dtype)
    for want, got in zip(cpu_decomp.lu_factor_batched(x), cpu_decomp._lu(x)):
        assert want.dtype == got.dtype and want.shape == got.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_lu_of_a_singular_matrix_skips_the_zero_column():
    x = np.array([[0.0, 2.0], [0.0, 1.0]])
    for want, got in zip(cpu_decomp.lu_factor_batched(x), cpu_decomp._lu(x)):
        np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(
    batch=st.sampled_from([(), (3,), (40,)]),
    m=st.integers(1, 5),
    k=st.sampled_from([0, 1, 3]),
    left_side=st.booleans(),
    lower=st.booleans(),
    transpose_a=st.booleans(),
    unit_diagonal=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_triangular_solve_equals_substitution(
    batch, m, k, left_side, lower, transpose_a, unit_diagonal, dtype, seed
):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((*batch, m, m)) + 4 * np.eye(m)).astype(dtype)
    b = rng.standard_normal((*batch, m, k) if left_side else (*batch, k, m)).astype(dtype)
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              unit_diagonal=unit_diagonal)  # fmt: skip
    got = cpu_lapack.solve_triangular(a, b, **kw)
    want = cpu_decomp.solve_triangular_batched(a, b, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_other_dtypes_take_the_loops():
    half = np.eye(2, dtype=np.float16)
    assert cpu_lapack.lu_factor(half) is None
    kw = dict(left_side=True, lower=True, transpose_a=False, unit_diagonal=False)
    assert cpu_lapack.solve_triangular(half, half, **kw) is None


@settings(max_examples=40, deadline=None)
@given(
    batch=st.sampled_from([(), (3,), (40,), (0,)]),
    n=st.integers(0, 6),
    k=st.sampled_from([0, 1, 3]),
    transpose_a=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_lu_solve_equals_the_loops(batch, n, k, transpose_a, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((*batch, n, n)) + 4 * np.eye(n)).astype(dtype)
    b = rng.standard_normal((*batch, n, k)).astype(dtype)
    lu, _, perm = cpu_decomp.lu_factor_batched(a)
    got = cpu_lapack.lu_solve(lu, perm, b, transpose_a=transpose_a)
    rows = np.broadcast_to(perm[..., None], b.shape)
    kw = dict(left_side=True, transpose_a=transpose_a)
    if transpose_a:
        w = cpu_decomp.solve_triangular_batched(lu, b, lower=False, unit_diagonal=False, **kw)
        w = cpu_decomp.solve_triangular_batched(lu, w, lower=True, unit_diagonal=True, **kw)
        want = np.empty_like(w)
        np.put_along_axis(want, rows, w, axis=-2)
    else:
        y = np.take_along_axis(b, rows, axis=-2)
        y = cpu_decomp.solve_triangular_batched(lu, y, lower=True, unit_diagonal=True, **kw)
        want = cpu_decomp.solve_triangular_batched(lu, y, lower=False, unit_diagonal=False, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
