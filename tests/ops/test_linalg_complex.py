"""``ft.linalg`` on complex matrices and ``eig``/``eigvals``: values against numpy,
gradients against JAX's (skipped without JAX), jit and vmap, and the derivatives that
are not implemented saying so."""

import numpy as np
import pytest

import fntorch as ft

LA = ft.linalg
RNG = np.random.default_rng(19)
A = RNG.standard_normal((3, 3))
Z = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
H = Z @ Z.conj().T + 3 * np.eye(3)


def _close(got, want, tol=1e-10):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def _sorted(w):
    return np.sort_complex(np.asarray(w))


@pytest.mark.parametrize("x", [A, Z, A.astype(np.float32)], ids=["f64", "c128", "f32"])
def test_eig_matches_numpy(x):
    w, v = LA.eig(ft.asarray(x))
    assert w.dtype == v.dtype == np.result_type(x.dtype, np.complex64)
    tol = 1e-4 if x.dtype == np.float32 else 1e-10
    _close(_sorted(w), _sorted(np.linalg.eigvals(x)), tol)
    _close(np.asarray(x) @ np.asarray(v), np.asarray(v) * np.asarray(w), tol)
    _close(LA.eigvals(ft.asarray(x)), np.asarray(w), tol)


def test_complex_solvers_and_determinants_match_numpy():
    z = ft.asarray(Z)
    _close(LA.det(z), np.linalg.det(Z))
    s, logabs = LA.slogdet(z)
    ns, nl = np.linalg.slogdet(Z)
    _close(s, ns)
    _close(logabs, nl)
    assert logabs.dtype == ft.float64
    _close(LA.inv(z), np.linalg.inv(Z))
    _close(LA.solve(z, ft.asarray(Z[:, :2])), np.linalg.solve(Z, Z[:, :2]))
    _close(LA.solve(z, ft.asarray(A[:, 0])), np.linalg.solve(Z, A[:, 0]))


def test_hermitian_and_unitary_factorizations_of_complex_matrices():
    h, z = ft.asarray(H), ft.asarray(Z)
    _close(LA.cholesky(h), np.linalg.cholesky(H))
    _close(LA.cholesky(h, upper=True), np.linalg.cholesky(H).conj().T)
    w, v = LA.eigh(h)
    assert w.dtype == ft.float64
    _close(w, np.linalg.eigvalsh(H))
    _close(np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).conj().T, H)
    q, r = LA.qr(z)
    _close(np.asarray(q) @ np.asarray(r), Z)
    u, s, vh = LA.svd(z)
    _close(s, np.linalg.svd(Z, compute_uv=False))
    _close(LA.svdvals(z), np.linalg.svd(Z, compute_uv=False))
    _close(LA.pinv(z), np.linalg.pinv(Z))
    assert int(LA.matrix_rank(z)) == 3
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        _close(LA.matrix_norm(z, ord=ord), np.linalg.norm(Z, ord=ord))
    for ord in (2, 1, 0, np.inf, -np.inf, 3):
        _close(LA.vector_norm(z, ord=ord), np.linalg.norm(Z.ravel(), ord=ord))
    assert LA.vector_norm(z).dtype == ft.float64


def test_jit_and_vmap_of_eig_and_complex_solve():
    batch = ft.asarray(np.stack([A, A.T + 1]))
    ws = ft.vmap(LA.eigvals)(batch)
    _close(ws, np.stack([LA.eigvals(b).numpy() for b in batch]))
    _close(ft.jit(LA.eigvals)(ft.asarray(A)), LA.eigvals(ft.asarray(A)).numpy())
    _close(ft.jit(LA.inv)(ft.asarray(Z)), np.linalg.inv(Z))


def test_eig_eigenvector_derivatives_say_they_are_not_implemented():
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        ft.grad(lambda x: ft.sum(ft.abs(LA.eig(x).eigenvectors)))(ft.asarray(A))


GRADS = {
    "eigvals_real": (lambda m, x: m.sum(m.abs(m.linalg.eigvals(x)) ** 2), A),
    "eigvals_complex": (lambda m, x: m.sum(m.real(m.linalg.eigvals(x) ** 3)), Z),
    "det": (lambda m, x: m.real(m.linalg.det(x) * (1 - 2j)), Z),
    "slogdet": (lambda m, x: m.linalg.slogdet(x)[1] + m.imag(m.linalg.slogdet(x)[0]), Z),
    "inv": (lambda m, x: m.sum(m.imag(m.linalg.inv(x)) ** 2), Z),
    "solve": (lambda m, x: m.sum(m.abs(m.linalg.solve(x, x[:, :1] + 1.0))), Z),
    # Functions of the Hermitian/unitary factors that do not depend on LAPACK's phases.
    "cholesky": (lambda m, x: m.sum(m.abs(m.linalg.cholesky(x)) ** 2 * m.arange(3.0)), H),
    "cholesky_upper": (lambda m, x: m.sum(m.real(m.linalg.cholesky(x, upper=True) * 1j)), H),
    "eigvalsh": (lambda m, x: m.sum(m.linalg.eigvalsh(x) ** 2), H),
    "eigh_vectors": (lambda m, x: m.sum(m.abs(m.linalg.eigh(x)[1]) ** 4), H),
    "qr": (
        lambda m, x: m.sum(m.abs(m.linalg.qr(x)[0]) ** 3) + m.sum(m.real(m.linalg.qr(x)[1])),
        Z[:, :2],
    ),  # fmt: skip
    "svdvals": (lambda m, x: m.sum(m.linalg.svdvals(x) ** 3), Z[:2]),
    "svd_u": (lambda m, x: m.sum(m.abs(m.linalg.svd(x, full_matrices=False)[0]) ** 4), Z[:, :2]),
    "svd_vh": (lambda m, x: m.sum(m.abs(m.linalg.svd(x, full_matrices=False)[2]) ** 4), Z[:2]),
    "pinv": (lambda m, x: m.sum(m.abs(m.linalg.pinv(x)) ** 2), Z),
    "nuclear_norm": (lambda m, x: m.linalg.matrix_norm(x, ord="nuc"), Z),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_matches_jax(name, jax64):
    f, x = GRADS[name]
    got = ft.grad(lambda v: f(ft, v))(ft.asarray(x))
    want = jax64.grad(lambda v: f(jax64.numpy, v))(jax64.numpy.asarray(x))
    _close(got, np.asarray(want), 1e-8)


def test_complex_lstsq_and_solve_triangular():
    b = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    tall = np.concatenate([Z, Z[:1] * 2j])
    bt = np.concatenate([b, b[:1]])
    sol, res, rank, s = LA.lstsq(ft.asarray(tall), ft.asarray(bt))
    nsol, nres, nrank, ns = np.linalg.lstsq(tall, bt, rcond=None)
    _close(sol, nsol)
    _close(res, nres)
    assert res.dtype == ft.float64 and int(rank) == nrank
    _close(s, ns)
    upper = np.triu(Z)
    _close(LA.solve_triangular(ft.asarray(upper), ft.asarray(b), upper=True),
           np.linalg.solve(upper, b))  # fmt: skip


@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("adjoint", [False, True], ids=["plain", "adjoint"])
def test_complex_lu_solve_every_form(left, adjoint):
    b = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    b = ft.asarray(b if left else b.T)

    def with_lu(m):
        return LA.lu_solve(*LA.lu_factor(m), b, left=left, adjoint=adjoint)

    def with_solve(m):  # the same system through ft.linalg.solve (its grads match JAX's)
        op = ft.conj(ft.matrix_transpose(m)) if adjoint else m
        if left:
            return LA.solve(op, b)
        return ft.matrix_transpose(LA.solve(ft.matrix_transpose(op), ft.matrix_transpose(b)))

    z = ft.asarray(Z)
    _close(with_lu(z), np.asarray(with_solve(z)))
    op = Z.conj().T if adjoint else Z
    x = np.asarray(with_lu(z))
    _close(op @ x if left else x @ op, np.asarray(b))
    loss = lambda f: lambda m: ft.sum(ft.abs(f(m)) ** 2)  # noqa: E731
    _close(ft.grad(loss(with_lu))(z), np.asarray(ft.grad(loss(with_solve))(z)), 1e-9)
