"""Cases of ``eig`` and of the decomposition primitives on complex matrices (see
tests/cases/__init__.py and tests/cases/decomp.py).

``eig``'s inputs are ``P diag(w) P^-1`` with eigenvalues at least 0.5 apart and a
well-conditioned ``P``, so LAPACK's order of the eigenvalues holds under the small
perturbations of finite differences; its eigenvalues are checked by every contract, its
eigenvectors (no derivative, as in JAX) by impl, vmap and jit. ``lu``,
``triangular_solve``, ``lu_solve`` and ``solve`` on complex matrices are checked by every
contract (their rules are complex as they are), and so are ``cholesky``, tall ``qr`` and
the singular values of ``svd`` (JAX's rules with conjugate transposes); ``eigh``'s and
``svd``'s complex eigen/singular vectors have a phase LAPACK picks, so those cases are
checked by impl, vmap and jit, and their gradients of phase-free functions against
JAX's (tests/ops/test_linalg_complex.py).
"""

from __future__ import annotations

import numpy as np

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_decomp as d

from . import Case
from .decomp import (
    _batch,
    _lu_draw,
    _lu_solve_draw,
    _lu_solve_ref,
    _rng,
    _side,
    _solve_draw,
    _solve_ref,
    _spread,
    _triangular_solve_draw,
    _triangular_solve_ref,
)
from .decomp import _svd_ref as real_svd_ref

COMPLEX = (dt.complex64, dt.complex128)
ALL = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_TOL = dict(rtol=1e-4, atol=1e-4)


def _cnormal(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _eig_draw(vectors):
    def draw(data, dtype):
        rng, batch, n = _rng(data), _batch(data), _side(data, "n")
        w = _spread(rng, batch, n, -1.0)
        if dt.is_complex(dtype):
            w = w + 1j * _spread(rng, batch, n, -1.0)
        p = np.eye(n) + 0.3 * rng.uniform(-1, 1, (*batch, n, n))
        x = (p * w[..., None, :]) @ np.linalg.inv(p) if n else np.zeros((*batch, 0, 0))
        x = x.real if not dt.is_complex(dtype) else x
        return [x.astype(dtype)], dict(vectors=vectors)

    return draw


def _eig_ref(x, *, vectors):
    c = np.result_type(x.dtype, np.complex64)
    if x.size == 0:
        w, v = np.zeros(x.shape[:-1], c), np.zeros(x.shape, c)
    else:
        w, v = np.linalg.eig(x)
    return [w.astype(c), v.astype(c)] if vectors else [w.astype(c)]


def _complex(draw):
    """A real draw made complex: the same real parts plus random imaginary ones."""

    def out(data, dtype):
        args, params = draw(data, dt.real_dtype(dtype))
        rng = _rng(data)
        return [a + 0.5j * rng.uniform(-1, 1, np.shape(a)) for a in args], params

    return out


def _lu_ref(x):
    # Partial pivoting by modulus: the dominant diagonal's margin makes LAPACK's
    # |re| + |im| choose the same rows.
    *batch, m, n = x.shape
    flat = np.array(x, np.complex128).reshape((int(np.prod(batch, dtype=np.int64)), m, n))
    outs = []
    for a in flat:
        perm, piv = list(range(m)), []
        for j in range(min(m, n)):
            p = j + int(np.argmax(np.abs(a[j:, j])))
            piv.append(p)
            a[[j, p]] = a[[p, j]]
            perm[j], perm[p] = perm[p], perm[j]
            if a[j, j] != 0:
                a[j + 1 :, j] /= a[j, j]
                a[j + 1 :, j + 1 :] -= np.outer(a[j + 1 :, j], a[j, j + 1 :])
        outs.append((a, piv, perm))
    k = min(m, n)
    return [
        np.array([o[0] for o in outs]).reshape((*batch, m, n)),
        np.array([o[1] for o in outs], np.int32).reshape((*batch, k)),
        np.array([o[2] for o in outs], np.int32).reshape((*batch, m)),
    ]


def _hermitian(positive):
    def draw(data, dtype):
        rng, batch, n = _rng(data), _batch(data), _side(data, "n")
        a = _cnormal(rng, (*batch, n, n))
        h = a @ np.conj(np.swapaxes(a, -1, -2))
        h = h + (n + 1) * np.eye(n) if positive else h - n * np.eye(n)
        return [h.astype(dtype)], {}

    return draw


def _general(params, tall=False):
    def draw(data, dtype):
        rng, batch = _rng(data), _batch(data)
        n = _side(data, "n")
        m = n + _side(data, "extra rows", 0, 2) if tall else _side(data, "m")
        return [_cnormal(rng, (*batch, m, n)).astype(dtype)], dict(params)

    return draw


def _qr_ref(x, *, full_matrices):
    m, n = x.shape[-2:]
    if x.size == 0:
        k = m if full_matrices else min(m, n)
        return [np.broadcast_to(np.eye(m, k), (*x.shape[:-2], m, k)).astype(x.dtype),
                np.zeros((*x.shape[:-2], k, n), x.dtype)]  # fmt: skip
    return list(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))


def _svd_ref(x, *, full_matrices, compute_uv):
    if x.size == 0:
        return real_svd_ref(x, full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False)]
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return [s, u, vt]


CASES = [
    Case(d.eig_p, _eig_draw(False), _eig_ref, ALL, name="eig_values", diff_args=(0,), **_TOL),
    Case(d.eig_p, _eig_draw(True), _eig_ref, ALL, **_TOL),
    Case(d.lu_p, _complex(_lu_draw(dominant=True)), _lu_ref, COMPLEX, name="lu_complex",
         diff_args=(0,), **_TOL),
    Case(d.triangular_solve_p, _complex(_triangular_solve_draw), _triangular_solve_ref,
         COMPLEX, name="triangular_solve_complex", diff_args=(0, 1), linear_args=(1,),
         extra={"const_args": (0,)}, **_TOL),
    Case(d.lu_solve_p, _lu_solve_draw(_lu_ref, imag=True), _lu_solve_ref,
         COMPLEX, name="lu_solve_complex", diff_args=(0, 2), linear_args=(2,),
         extra={"const_args": (0, 1)}, **_TOL),
    Case(d.solve_p, _complex(_solve_draw), _solve_ref, COMPLEX, name="solve_complex",
         diff_args=(0, 1), linear_args=(1,), extra={"const_args": (0,)}, **_TOL),
    Case(d.cholesky_p, _hermitian(True), lambda x: np.linalg.cholesky(x), COMPLEX,
         name="cholesky_complex", diff_args=(0,), **_TOL),
    Case(d.eigh_p, _hermitian(False), lambda x: list(np.linalg.eigh(x, UPLO="L")), COMPLEX,
         name="eigh_complex", **_TOL),
    Case(d.qr_p, _general(dict(full_matrices=False)), _qr_ref, COMPLEX, name="qr_complex",
         **_TOL),
    Case(d.qr_p, _general(dict(full_matrices=False), tall=True), _qr_ref, COMPLEX,
         name="qr_complex_tall", diff_args=(0,), **_TOL),
    Case(d.svd_p, _general(dict(full_matrices=False, compute_uv=True)), _svd_ref, COMPLEX,
         name="svd_complex", **_TOL),
    Case(d.svd_p, _general(dict(full_matrices=False, compute_uv=False)), _svd_ref, COMPLEX,
         name="svd_values_complex", diff_args=(0,), **_TOL),
]  # fmt: skip
