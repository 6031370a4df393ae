"""``solve`` and ``lu_solve``, the solve primitives: the derivative of a solve reuses its
LU factors (no ``lu`` jvp, no triangular solves of matrix right-hand sides), matches
JAX's to second order, real and complex, and the primitives' errors name what is wrong.
The per-primitive contracts (impl, jvp, transpose, vmap, jit) are tests/cases/decomp*.py.
"""

import numpy as np
import pytest

import fntorch as ft
from fntorch.ops import _prims_decomp as d
from tests.contract import to_np

LA = ft.linalg
RNG = np.random.default_rng(19)


def _system(batch, n, k, dtype=np.float64):
    a = RNG.standard_normal((*batch, n, n)) / np.sqrt(n) + 2 * np.eye(n)
    b = RNG.standard_normal((*batch, n, k))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 0.3j * RNG.standard_normal(a.shape)
        b = b + 1j * RNG.standard_normal(b.shape)
    return a.astype(dtype), b.astype(dtype)


def _names(fn, *args):
    return [e.primitive.name for e in ft.jit(fn).lower(*args).graph.eqns]


def test_the_gradient_of_a_solve_reuses_its_factors():
    a, b = _system((8,), 5, 1, np.float32)
    names = _names(ft.value_and_grad(lambda a, b: ft.sum(LA.solve(a, b) ** 2)), a, b)
    assert names.count("lu") == 1
    assert names.count("lu_solve") == 2  # the solve and its transpose
    assert "triangular_solve" not in names


def test_inv_differentiates_through_solve():
    a, _ = _system((2,), 4, 1)
    names = _names(ft.grad(lambda a: ft.sum(LA.inv(a) ** 3)), a)
    assert names.count("lu") == 1 and "triangular_solve" not in names


@pytest.fixture
def jax64():
    jax = pytest.importorskip("jax")
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", was)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gradients_match_jax(jax64, dtype):
    jnp = jax64.numpy
    a, b = _system((3,), 4, 2, dtype)

    def loss(np_, solve, inv):
        return lambda a, b: np_.sum(np_.abs(solve(a, b)) ** 2) + np_.sum(np_.real(inv(a)))

    want = jax64.grad(loss(jnp, jnp.linalg.solve, jnp.linalg.inv), argnums=(0, 1))(a, b)
    got = ft.grad(loss(ft, LA.solve, LA.inv), argnums=(0, 1))(ft.asarray(a), ft.asarray(b))
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_np(g), np.asarray(w), rtol=1e-9, atol=1e-11)


def test_second_derivatives_match_jax(jax64):
    jnp = jax64.numpy
    a, b = _system((), 3, 1)
    want = jax64.hessian(lambda a: jnp.sum(jnp.linalg.solve(a, b) ** 3))(a)
    got = ft.hessian(lambda a: ft.sum(LA.solve(a, ft.asarray(b)) ** 3))(ft.asarray(a))
    np.testing.assert_allclose(to_np(got), np.asarray(want), rtol=1e-9, atol=1e-11)


def test_forward_and_reverse_agree():
    a, b = _system((2,), 4, 3)
    ta, tb = RNG.standard_normal(a.shape), RNG.standard_normal(b.shape)
    ct = RNG.standard_normal(b.shape)
    _, jt = ft.jvp(LA.solve, (ft.asarray(a), ft.asarray(b)), (ft.asarray(ta), ft.asarray(tb)))
    _, vjp = ft.vjp(LA.solve, ft.asarray(a), ft.asarray(b))
    ga, gb = vjp(ft.asarray(ct))
    lhs = np.sum(ct * to_np(jt))
    rhs = np.sum(to_np(ga) * ta) + np.sum(to_np(gb) * tb)
    assert np.isclose(lhs, rhs, rtol=1e-10)


def test_lu_solve_uses_lus_factors_both_ways():
    a, b = _system((2,), 4, 2)
    lu, _, perm = d.lu(a)
    np.testing.assert_allclose(to_np(d.lu_solve(lu, perm, b)), np.linalg.solve(a, b))
    at = np.swapaxes(a, -1, -2)
    got = d.lu_solve(lu, perm, b, transpose_a=True)
    np.testing.assert_allclose(to_np(got), np.linalg.solve(at, b))


def test_solve_primitive_errors():
    with pytest.raises(ValueError, match=r"solve: b must have shape \(\*batch, 3, k\)"):
        d.solve(np.eye(3), np.ones((2, 1)))
    with pytest.raises(TypeError, match="solve: a and b must share one dtype"):
        d.solve(np.eye(2), np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="solve: a must be a square matrix"):
        d.solve(np.ones((2, 3)), np.ones((2, 1)))
    lu, _, perm = d.lu(np.eye(3))
    with pytest.raises(TypeError, match="lu_solve: permutation must be int32"):
        d.lu_solve(lu, np.arange(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"lu_solve: permutation must have shape \(3,\)"):
        d.lu_solve(lu, np.arange(2, dtype=np.int32), np.ones((3, 1)))
    with pytest.raises(TypeError, match="lu_solve: transpose_a must be a bool"):
        d.lu_solve_p.bind(lu, perm, np.ones((3, 1)), transpose_a=1)
