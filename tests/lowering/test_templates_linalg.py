"""The ``lu`` and ``lu_solve`` template kernels against the eager impls (LAPACK through
ctypes): factors and solutions to rounding, pivots and permutations exactly, on any
strides, non-square and singular matrices, one or several right-hand sides, both
transposes, batches split across the threads; and ``jit`` of a solve's gradient runs
them where the dtypes allow, the eager impls where not."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.devices import cpu_impls
from fntorch.lowering import templates as T
from fntorch.lowering.spec_special import LuSolveSpec, LuSpec, spec_for
from fntorch.lowering.table import lowering_table
from fntorch.ops import _prims_decomp as d

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _lu(x):
    k = T.template_kernel("lu", [x], {})
    m, n = x.shape[-2:]
    outs = [np.empty(x.shape, x.dtype), np.empty((*x.shape[:-2], min(m, n)), np.int32),
            np.empty((*x.shape[:-1],), np.int32)]  # fmt: skip
    k([x], outs)
    return outs


def _close(got, want, dtype):
    tol = 1e-4 if dtype == F32 else 1e-11
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.sampled_from([(), (3,), (2, 2)]),
    m=st.integers(1, 7),
    n=st.integers(1, 7),
    dtype=st.sampled_from([F32, F64]),
    reverse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_lu_matches_eager(batch, m, n, dtype, reverse, seed):
    x = np.random.default_rng(seed).standard_normal((*batch, m, n)).astype(dtype)
    if reverse:  # a negative-stride view
        x = x[..., ::-1, ::-1]
    got = _lu(x)
    want = cpu_impls[d.lu_p](x)
    _close(got[0], want[0], dtype)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(g, w)


def test_lu_of_singular_matrices_and_large_batches():
    x = np.array([[0.0, 2.0, 1.0], [0.0, 1.0, 3.0], [0.0, 4.0, 1.0]])  # a zero column
    for g, w in zip(_lu(x), cpu_impls[d.lu_p](x)):
        np.testing.assert_array_equal(g, w)
    # large enough for the parallel split (>= kernels.PARALLEL_THRESHOLD)
    x = np.random.default_rng(1).standard_normal((300, 16, 16)).astype(np.float32)
    got, want = _lu(x), cpu_impls[d.lu_p](x)
    _close(got[0], want[0], F32)
    np.testing.assert_array_equal(got[2], want[2])


@settings(max_examples=25, deadline=None)
@given(
    batch=st.sampled_from([(), (3,), (2, 2), (70,)]),
    n=st.integers(1, 7),
    k=st.sampled_from([1, 3]),
    transpose_a=st.booleans(),
    dtype=st.sampled_from([F32, F64]),
    seed=st.integers(0, 2**16),
)
def test_lu_solve_matches_eager(batch, n, k, transpose_a, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((*batch, n, n)) + 3 * np.eye(n)).astype(dtype)
    lu, _, perm = cpu_impls[d.lu_p](a)
    b = rng.standard_normal((*batch, n, k)).astype(dtype)
    params = {"transpose_a": transpose_a}
    kern = T.template_kernel("lu_solve", [lu, perm, b], params)
    got = np.empty_like(b)
    wide = np.zeros((*batch, n, 2 * k), dtype)
    wide[..., ::2] = b
    kern([lu, perm, wide[..., ::2]], [got])  # a strided view of the same values
    _close(got, cpu_impls[d.lu_solve_p](lu, perm, b, **params), dtype)


def test_lu_solve_large_batch_both_ways():
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((64, 32, 32)) + 6 * np.eye(32)).astype(np.float32)
    lu, _, perm = cpu_impls[d.lu_p](a)
    for k in (1, 16):
        b = rng.standard_normal((64, 32, k)).astype(np.float32)
        for transpose_a in (False, True):
            got = np.empty_like(b)
            T.template_kernel("lu_solve", [lu, perm, b], {"transpose_a": transpose_a})(
                [lu, perm, b], [got]
            )
            want = np.linalg.solve(np.swapaxes(a, -1, -2) if transpose_a else a, b)
            _close(got, want, F32)


def test_specs_take_small_real_matrices_only():
    class A:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, np.dtype(dtype)

    assert spec_for("lu", [A((2, 2), F32)], {}) == LuSpec(F32)
    assert spec_for("lu", [A((2, 2), np.complex64)], {}) is None
    args = [A((2, 2), F64), A((2,), np.int32), A((2, 1), F64)]
    assert spec_for("lu_solve", args, {"transpose_a": True}) == LuSolveSpec(F64, True, True)
    args[2] = A((2, 1), np.complex128)
    assert spec_for("lu_solve", args, {"transpose_a": False}) is None
    assert LuSpec(F32).key() != LuSolveSpec(F32, False, True).key()
    # large matrices and many right-hand sides keep LAPACK's blocked routines
    assert spec_for("lu", [A((2, 300, 3), F32)], {}) is None
    assert spec_for("lu_solve", [A((300, 300), F32), A((300,), np.int32), A((300, 1), F32)],
                    {"transpose_a": False}) is None  # fmt: skip
    args = [A((4, 4), F32), A((4,), np.int32), A((4, 97), F32)]
    assert spec_for("lu_solve", args, {"transpose_a": False}) is None
    for p in (d.lu_p, d.lu_solve_p):
        assert lowering_table[p].kind == "template"


def _steps(f, *args):
    plan = ft.jit(f).lower(*args).plan
    return [(type(s).__name__, s.eqn.primitive.name) for s in plan.library_calls]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_jit_of_a_solves_gradient(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 5, 5)) + 3 * np.eye(5)).astype(dtype)
    b = rng.standard_normal((4, 5, 1)).astype(dtype)
    step = ft.value_and_grad(lambda a, b: ft.sum(ft.abs(ft.linalg.solve(a, b)) ** 2))
    got, want = ft.jit(step)(a, b), step(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)
    kind = "TemplateStep" if dtype == np.float32 else "LibraryStep"
    steps = _steps(step, ft.asarray(a), ft.asarray(b))
    assert [s for s in steps if s[1] in ("lu", "lu_solve")] == [
        (kind, "lu"),
        (kind, "lu_solve"),
        (kind, "lu_solve"),
    ]
