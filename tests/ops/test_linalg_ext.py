"""ft.linalg against numpy (values), finite differences (float64 gradients), a Python loop
(vmap), eager (jit), and torch.linalg / jax where installed (skipped cleanly if not)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.ops import _prims_decomp as d

LA = ft.linalg
RNG = np.random.default_rng(0)


def np_(x):
    if isinstance(x, (tuple, list)):
        return [np_(v) for v in x]
    return np.asarray(x._value) if isinstance(x, ft.Tensor) else np.asarray(x)


def spd(batch, n, rng=RNG):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def sym_distinct(batch, n, rng=RNG):
    q, _ = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    w = np.arange(n) + rng.uniform(0, 0.4, (*batch, n)) - n / 2
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def general(batch, m, n, rng=RNG):
    return rng.standard_normal((*batch, m, n)) + 2 * np.eye(m, n)


# (name, function of tensors, numpy reference, inputs): each function returns one
# tensor (or a tuple) whose values are unique (no sign freedom), so numpy compares.
def _abs_cols(v):
    return v * v  # eigenvector / singular vector signs are free: compare squares


CASES = {
    "cholesky": (lambda a: LA.cholesky(a), np.linalg.cholesky, [spd((2,), 3)]),
    "cholesky_upper": (
        lambda a: LA.cholesky(a, upper=True),
        lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2),
        [spd((), 3)],
    ),
    "eigvalsh": (LA.eigvalsh, np.linalg.eigvalsh, [sym_distinct((2,), 4)]),
    "eigh_vectors": (
        lambda a: _abs_cols(LA.eigh(a).eigenvectors),
        lambda a: _abs_cols(np.linalg.eigh(a)[1]),
        [sym_distinct((2,), 3)],
    ),
    "svdvals": (LA.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), [general((2,), 4, 3)]),
    "svd_u": (
        lambda a: _abs_cols(LA.svd(a, full_matrices=False).U),
        lambda a: _abs_cols(np.linalg.svd(a, full_matrices=False)[0]),
        [general((2,), 4, 3)],
    ),
    "qr_r_abs": (
        lambda a: ft.abs(LA.qr(a).R),
        lambda a: np.abs(np.linalg.qr(a)[1]),
        [general((2,), 4, 3)],
    ),
    "det": (LA.det, np.linalg.det, [general((2, 2), 3, 3)]),
    "slogdet_logabs": (
        lambda a: LA.slogdet(a).logabsdet,
        lambda a: np.linalg.slogdet(a)[1],
        [general((2,), 4, 4)],
    ),
    "slogdet_sign": (
        lambda a: LA.slogdet(a).sign,
        lambda a: np.linalg.slogdet(a)[0],
        [RNG.standard_normal((6, 3, 3))],
    ),
    "inv": (LA.inv, np.linalg.inv, [general((2,), 3, 3)]),
    "solve": (LA.solve, np.linalg.solve, [general((2,), 3, 3), RNG.standard_normal((2, 3, 2))]),
    "solve_vector": (
        LA.solve,
        lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
        [general((2,), 3, 3), RNG.standard_normal(3)],
    ),
    "solve_broadcast": (
        LA.solve,
        np.linalg.solve,
        [general((2, 1), 3, 3), RNG.standard_normal((4, 3, 2))],
    ),
    "solve_triangular_upper": (
        lambda a, b: LA.solve_triangular(a, b, upper=True),
        lambda a, b: np.linalg.solve(np.triu(a), b),
        [general((2,), 3, 3), RNG.standard_normal((2, 3, 2))],
    ),
    "solve_triangular_right_unit": (
        lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        lambda a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3)),
        [general((), 3, 3), RNG.standard_normal((2, 3))],
    ),
    "lu_solve": (
        lambda a, b: LA.lu_solve(*LA.lu_factor(a), b),
        np.linalg.solve,
        [RNG.standard_normal((2, 4, 4)), RNG.standard_normal((2, 4, 2))],
    ),
    "lu_solve_adjoint": (
        lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, adjoint=True),
        lambda a, b: np.linalg.solve(np.swapaxes(a, -1, -2), b),
        [RNG.standard_normal((2, 4, 4)), RNG.standard_normal((2, 4, 2))],
    ),
    "lu_solve_right": (
        lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, left=False),
        lambda a, b: b @ np.linalg.inv(a),
        [RNG.standard_normal((4, 4)), RNG.standard_normal((2, 4))],
    ),
    "pinv": (LA.pinv, np.linalg.pinv, [general((2,), 4, 3)]),
    "pinv_wide": (LA.pinv, np.linalg.pinv, [general((), 2, 4)]),
    "lstsq": (
        lambda a, b: LA.lstsq(a, b).solution,
        lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
        [general((), 5, 3), RNG.standard_normal((5, 2))],
    ),
    "lstsq_residuals": (
        lambda a, b: LA.lstsq(a, b).residuals,
        lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1],
        [general((), 5, 3), RNG.standard_normal((5, 2))],
    ),
    "matrix_power3": (
        lambda a: LA.matrix_power(a, 3),
        lambda a: np.linalg.matrix_power(a, 3),
        [general((2,), 3, 3)],
    ),  # fmt: skip
    "matrix_power-2": (
        lambda a: LA.matrix_power(a, -2),
        lambda a: np.linalg.matrix_power(a, -2),
        [general((2,), 3, 3)],
    ),
    "matrix_norm_fro": (
        LA.matrix_norm,
        lambda a: np.linalg.norm(a, "fro", axis=(-2, -1)),
        [general((2,), 3, 4)],
    ),  # fmt: skip
    "vector_norm": (LA.vector_norm, np.linalg.norm, [RNG.standard_normal((3, 4))]),
    "trace": (LA.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), [general((2,), 3, 4)]),
    "diagonal-1": (
        lambda a: LA.diagonal(a, offset=-1),
        lambda a: np.diagonal(a, -1, -2, -1),
        [general((2,), 3, 4)],
    ),
    "cross": (LA.cross, np.cross, [RNG.standard_normal((2, 3)), RNG.standard_normal((3,))]),
    "multi_dot": (
        lambda a, b, c: LA.multi_dot([a, b, c]),
        lambda a, b, c: np.linalg.multi_dot([a, b, c]),
        [RNG.standard_normal(3), RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))],
    ),
}

for _ord in (1, -1, 2, -2, np.inf, -np.inf, "nuc"):
    CASES[f"matrix_norm_{_ord}"] = (
        lambda a, o=_ord: LA.matrix_norm(a, ord=o),
        lambda a, o=_ord: np.linalg.norm(a, o, axis=(-2, -1)),
        [general((2,), 3, 4)],
    )
for _ord in (1, 3, 0.5, np.inf, -np.inf):
    CASES[f"vector_norm_{_ord}"] = (
        lambda a, o=_ord: LA.vector_norm(a, ord=o, axis=-1),
        lambda a, o=_ord: np.linalg.norm(a, o, axis=-1),
        [RNG.standard_normal((3, 4)) + 0.1],
    )

# Functions with no derivative to check (integer or piecewise-constant results).
NO_GRAD = {"slogdet_sign"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [ft.float32, ft.float64])
def test_values_match_numpy(name, dtype):
    fn, ref, args = CASES[name]
    got = fn(*[ft.asarray(a, dtype=dtype) for a in args])
    tol = 1e-4 if dtype == ft.float32 else 1e-10
    np.testing.assert_allclose(np_(got), ref(*args), rtol=tol, atol=tol)
    assert np_(got).dtype == dtype


def _fd_check(f, args, eps=1e-6, rtol=1e-5, atol=1e-6):
    """grad of ``sum(w * f(*args))`` (random ``w``) against central differences, in f64."""
    out = np_(f(*[ft.asarray(a) for a in args]))
    w = np.random.default_rng(1).standard_normal(out.shape)

    def loss(*xs):
        return ft.sum(f(*xs) * ft.asarray(w))

    grads = ft.grad(loss, argnums=tuple(range(len(args))))(*[ft.asarray(a) for a in args])
    for i, (a, g) in enumerate(zip(args, grads)):
        t = np.random.default_rng(2 + i).standard_normal(np.shape(a))
        plus = [np.asarray(x) for x in args]
        minus = [np.asarray(x) for x in args]
        plus[i], minus[i] = plus[i] + eps * t, minus[i] - eps * t
        fd = (np_(loss(*map(ft.asarray, plus))) - np_(loss(*map(ft.asarray, minus)))) / (2 * eps)
        np.testing.assert_allclose(np.sum(np_(g) * t), fd, rtol=rtol, atol=atol, err_msg=str(i))


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_GRAD))
def test_gradients_match_finite_differences(name):
    fn, _, args = CASES[name]
    _fd_check(fn, [np.asarray(a, np.float64) for a in args])


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_a_loop(name):
    fn, _, args = CASES[name]
    rng = np.random.default_rng(3)
    # Batch the first argument: three perturbed copies (keeps its structure: SPD, ...).
    stacked = np.stack([args[0] + 1e-2 * k * rng.standard_normal(np.shape(args[0]))
                        for k in range(3)])  # fmt: skip
    if name.startswith("cholesky"):
        stacked = stacked @ np.swapaxes(stacked, -1, -2)
    rest = [ft.asarray(a) for a in args[1:]]
    got = ft.vmap(lambda x, *r: fn(x, *r), in_axes=(0,) + (None,) * len(rest))(
        ft.asarray(stacked), *rest
    )
    want = np.stack([np_(fn(ft.asarray(s), *rest)) for s in stacked])
    np.testing.assert_allclose(np_(got), want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_matches_eager(name):
    fn, _, args = CASES[name]
    xs = [ft.asarray(a) for a in args]
    np.testing.assert_allclose(np_(ft.jit(fn)(*xs)), np_(fn(*xs)), rtol=1e-10, atol=1e-10)


def test_jit_lists_the_decompositions_as_library_steps():
    lowered = ft.jit(lambda a: LA.det(a) + LA.svdvals(a).sum()).lower(ft.ones((3, 3)))
    names = {e.primitive.name for e in lowered.graph.eqns}
    assert {"lu", "svd"} <= names


@settings(max_examples=25, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**31 - 1),
)
def test_factorizations_reconstruct_their_input(batch, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n + 1, n))
    q, r = np_(LA.qr(ft.asarray(a)))
    np.testing.assert_allclose(q @ r, a, atol=1e-10)
    u, s, vh = np_(LA.svd(ft.asarray(a), full_matrices=False))
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=1e-10)
    sq = a[..., :n, :]
    lu, piv = np_(LA.lu_factor(ft.asarray(sq)))
    p = np.broadcast_to(np.eye(n), sq.shape).copy()
    for i in range(n):  # LAPACK's swaps, in order, applied to the identity
        j = piv[..., i] - 1
        for idx in np.ndindex(*sq.shape[:-2]):
            p[idx][[i, j[idx]]] = p[idx][[j[idx], i]]
    low = np.tril(lu, -1) + np.eye(n)
    np.testing.assert_allclose(p @ sq, low @ np.triu(lu), atol=1e-10)
    sym = sq + np.swapaxes(sq, -1, -2)
    w, v = np_(LA.eigh(ft.asarray(sym)))
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), sym, atol=1e-10)


def test_matrix_rank_and_rtol():
    a = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])
    assert LA.matrix_rank(ft.asarray(a)).item() == np.linalg.matrix_rank(a)
    assert LA.matrix_rank(ft.asarray(a), rtol=1e-6).item() == 1
    batch = np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0])])
    assert LA.matrix_rank(ft.asarray(batch)).tolist() == [3, 2]
    # an array rtol broadcasts against the batch
    assert LA.matrix_rank(ft.asarray(np.diag([1.0, 0.1])[None].repeat(2, 0)),
                          rtol=ft.asarray([0.01, 0.5])).tolist() == [2, 1]  # fmt: skip


def test_singular_values_nan_rules():
    assert LA.det(ft.zeros((2, 2))).item() == 0.0
    s, l = LA.slogdet(ft.zeros((2, 2)))
    assert s.item() == 0.0 and l.item() == -np.inf
    assert np.isnan(np_(LA.cholesky(ft.asarray(-np.eye(2))))).all()
    assert np.isfinite(np_(LA.pinv(ft.zeros((2, 3))))).all()


def test_integer_input_becomes_the_default_float():
    assert LA.inv(ft.asarray([[2, 0], [0, 4]])).dtype == ft.float32


def test_namespace_is_the_array_api_extension_with_eig():
    names = ("cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power "
             "matrix_rank matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot "
             "trace vecdot vector_norm solve_triangular lstsq lu_factor lu_solve norm "
             "multi_dot eig eigvals").split()  # fmt: skip
    assert all(callable(getattr(LA, n)) for n in names)


def test_norm_follows_torch_dims():
    a = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(np_(LA.norm(ft.asarray(a))), np.linalg.norm(a.ravel()))
    np.testing.assert_allclose(
        np_(LA.norm(ft.asarray(a), ord=1, dim=(0, 2), keepdim=True)),
        np.linalg.norm(np.moveaxis(a, 1, 0), 1, axis=(-2, -1))[None, :, None],
    )
    np.testing.assert_allclose(
        np_(LA.norm(ft.asarray(a), ord=3, dim=1)), np.linalg.norm(a, 3, axis=1)
    )


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "fn", ["cholesky", "det", "inv", "slogdet", "eigh", "eigvalsh", "matrix_power"]
)
def test_non_square_input_raises_naming_the_function_and_shape(fn):
    f = getattr(LA, fn)
    with pytest.raises(ValueError, match=rf"{fn}: .*square.*\(2, 3\)"):
        f(ft.ones((2, 3)), 2) if fn == "matrix_power" else f(ft.ones((2, 3)))


def test_vectors_are_refused_by_matrix_functions():
    with pytest.raises(ValueError, match=r"svdvals: .*at least 2-d.*\(3,\)"):
        LA.svdvals(ft.ones(3))


def test_half_floats_are_refused():
    with pytest.raises(TypeError, match="inv: x must have dtype float32 or float64"):
        LA.inv(ft.ones((2, 2), dtype=ft.float16))


def test_solve_shape_mismatch():
    with pytest.raises(ValueError, match=r"solve: x2 must have shape \(3,\)"):
        LA.solve(ft.eye(3), ft.ones((2, 2)))


def test_bad_options():
    with pytest.raises(ValueError, match="qr: mode"):
        LA.qr(ft.ones((2, 2)), mode="r")
    with pytest.raises(ValueError, match="matrix_norm: ord"):
        LA.matrix_norm(ft.ones((2, 2)), ord=3)
    with pytest.raises(ValueError, match="cross: axis -1 must have size 3"):
        LA.cross(ft.ones(2), ft.ones(2))
    with pytest.raises(TypeError, match="matrix_power: n must be an int"):
        LA.matrix_power(ft.eye(2), 1.5)


def test_derivatives_of_full_svd_and_wide_qr_raise_as_jax():
    x = ft.asarray(RNG.standard_normal((3, 2)))
    with pytest.raises(NotImplementedError, match="svd: .*full_matrices=False"):
        ft.grad(lambda a: LA.svd(a).U.sum())(x)
    with pytest.raises(NotImplementedError, match="qr: .*m >= n"):
        ft.grad(lambda a: LA.qr(a).R.sum())(ft.asarray(RNG.standard_normal((2, 3))))
    # square: full and reduced coincide, so the derivative exists
    ft.grad(lambda a: LA.svd(a).U.sum())(ft.asarray(RNG.standard_normal((3, 3))))


def test_primitive_shape_errors():
    with pytest.raises(ValueError, match="triangular_solve: b must have 3 rows"):
        d.triangular_solve(np.eye(3), np.ones((2, 2)), left_side=True)
    with pytest.raises(TypeError, match="cholesky: x must have dtype float32 or float64"):
        d.cholesky(np.eye(2, dtype=np.int32))


# ----------------------------------------------------------------------------- oracles


def test_against_torch_linalg():
    torch = pytest.importorskip("torch")
    T = torch.linalg
    a, b = general((2,), 4, 4), RNG.standard_normal((2, 4, 3))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    fa, fb = ft.asarray(a), ft.asarray(b)
    p = spd((2,), 3)
    pairs = [
        (LA.det(fa), T.det(ta)),
        (LA.inv(fa), T.inv(ta)),
        (LA.solve(fa, fb), T.solve(ta, tb)),
        (LA.slogdet(fa).logabsdet, T.slogdet(ta).logabsdet),
        (LA.svdvals(fa), T.svdvals(ta)),
        (LA.pinv(fa), T.pinv(ta)),
        (LA.matrix_norm(fa, ord="nuc"), T.matrix_norm(ta, ord="nuc")),
        (LA.vector_norm(fa, ord=3, axis=(0, 2)), T.vector_norm(ta, ord=3, dim=(0, 2))),
        (LA.norm(fa, ord=-2, dim=(1, 2)), T.norm(ta, ord=-2, dim=(1, 2))),
        (LA.cholesky(ft.asarray(p)), T.cholesky(torch.from_numpy(p))),
        (LA.solve_triangular(fa, fb, upper=True), T.solve_triangular(ta, tb, upper=True)),
        (LA.lu_factor(fa).LU, T.lu_factor(ta).LU),
        (LA.lu_factor(fa).pivots, T.lu_factor(ta).pivots),
        (LA.lu_solve(*LA.lu_factor(fa), fb, adjoint=True),
         T.lu_solve(*T.lu_factor(ta), tb, adjoint=True)),
        (LA.cross(fb[..., :3, :], fb[..., 1:, :], axis=-2),
         T.cross(tb[..., :3, :], tb[..., 1:, :], dim=-2)),
        (LA.matrix_rank(fa), T.matrix_rank(ta)),
    ]  # fmt: skip
    for i, (g, w) in enumerate(pairs):
        np.testing.assert_allclose(np_(g), w.numpy(), rtol=1e-9, atol=1e-9, err_msg=str(i))
    # gradients of det and of eigvalsh, as torch's autograd
    ta.requires_grad_(True)
    T.det(ta).sum().backward()
    np.testing.assert_allclose(np_(ft.grad(lambda x: LA.det(x).sum())(fa)), ta.grad.numpy())
    s = torch.from_numpy(sym_distinct((), 4)).requires_grad_(True)
    (T.eigvalsh(s) * torch.arange(4.0, dtype=s.dtype)).sum().backward()
    got = ft.grad(lambda x: (LA.eigvalsh(x) * ft.arange(4.0, dtype=ft.float64)).sum())(
        ft.asarray(s.detach().numpy())
    )
    sym = 0.5 * (s.grad.numpy() + s.grad.numpy().T)  # torch's gradient, symmetrized
    np.testing.assert_allclose(np_(got), sym, atol=1e-10)


def test_against_jax_gradients():
    jax = pytest.importorskip("jax")
    # float64 in jax is a global switch: set it for this test only (other tests compare
    # against jax's default float32 bits).
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        _check_against_jax(jax)
    finally:
        jax.config.update("jax_enable_x64", was)


def _check_against_jax(jax):
    jnp = jax.numpy
    a = general((), 4, 3)
    w = RNG.standard_normal(3)

    def loss_j(x):
        u, s, vt = jnp.linalg.svd(x, full_matrices=False)
        q, r = jnp.linalg.qr(x)
        return jnp.sum(s * w) + jnp.sum(jnp.abs(r)) + jnp.sum(jnp.linalg.pinv(x) ** 2)

    def loss_f(x):
        s = LA.svdvals(x)
        return ft.sum(s * ft.asarray(w)) + ft.sum(ft.abs(LA.qr(x).R)) + ft.sum(LA.pinv(x) ** 2)

    np.testing.assert_allclose(np_(ft.grad(loss_f)(ft.asarray(a))), jax.grad(loss_j)(a),
                               rtol=1e-8, atol=1e-10)  # fmt: skip
    s = sym_distinct((), 4)

    def eig_j(x):
        wj, vj = jnp.linalg.eigh(x)
        return jnp.sum(wj * jnp.arange(4.0)) + jnp.sum(vj**2 * jnp.arange(16.0).reshape(4, 4))

    def eig_f(x):
        wf, vf = LA.eigh(x)
        ar = ft.arange(16.0, dtype=ft.float64).reshape((4, 4))
        return ft.sum(wf * ft.arange(4.0, dtype=ft.float64)) + ft.sum(vf**2 * ar)

    np.testing.assert_allclose(np_(ft.grad(eig_f)(ft.asarray(s))), jax.grad(eig_j)(s),
                               rtol=1e-8, atol=1e-10)  # fmt: skip


def test_transforms_compose():
    a = ft.asarray(general((3,), 4, 4))
    b = ft.asarray(RNG.standard_normal((3, 4)))
    # vmap over the right-hand side only, and over both
    got = ft.vmap(LA.solve, in_axes=(None, 0))(a[0], b)
    np.testing.assert_allclose(np_(got), np.linalg.solve(np_(a[0]), np_(b).T).T, atol=1e-12)
    got = ft.vmap(LA.solve)(a, b)
    np.testing.assert_allclose(np_(got), np.linalg.solve(np_(a), np_(b)[..., None])[..., 0],
                               atol=1e-12)  # fmt: skip
    # jit of vmap of grad equals eager; the hessian of log|det| is -inv(a).T (x) inv(a).T
    f = ft.vmap(ft.grad(lambda x: LA.slogdet(x).logabsdet))
    np.testing.assert_allclose(np_(ft.jit(f)(a)), np_(f(a)), atol=1e-12)
    np.testing.assert_allclose(np_(f(a)), np.swapaxes(np.linalg.inv(np_(a)), -1, -2), atol=1e-10)
    h = np_(ft.hessian(lambda x: LA.slogdet(x).logabsdet)(a[0]))
    inv = np.linalg.inv(np_(a[0]))
    np.testing.assert_allclose(h, -np.einsum("li,jk->ijkl", inv, inv), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.lists(st.integers(0, 3), max_size=2),
    n=st.integers(0, 5),
    k=st.integers(0, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_solve_and_inv_match_numpy_on_any_shape(batch, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((*batch, n, k))
    if a.size:
        np.testing.assert_allclose(np_(LA.inv(ft.asarray(a))), np.linalg.inv(a), atol=1e-9)
        np.testing.assert_allclose(np_(LA.det(ft.asarray(a))), np.linalg.det(a), rtol=1e-9)
    if a.size and b.size:
        np.testing.assert_allclose(
            np_(LA.solve(ft.asarray(a), ft.asarray(b))), np.linalg.solve(a, b), atol=1e-9
        )
    assert LA.solve(ft.asarray(a), ft.asarray(b)).shape == b.shape


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_keepdims(ord):
    a = RNG.standard_normal((2, 3, 4))
    got = LA.matrix_norm(ft.asarray(a), ord=ord, keepdims=True)
    np.testing.assert_allclose(np_(got), np.linalg.norm(a, ord, axis=(-2, -1), keepdims=True))


def test_vector_norm_keepdims_over_all_dims():
    a = RNG.standard_normal((2, 3))
    got = LA.vector_norm(ft.asarray(a), keepdims=True, ord=1)
    np.testing.assert_allclose(np_(got), np.abs(a).sum(keepdims=True))
