"""Cases of the decomposition primitives (see tests/cases/__init__.py).

Inputs are built from their factors so that the derivatives exist and are well
conditioned: symmetric matrices with eigenvalues at least 0.5 apart, matrices with
singular values at least 0.5 apart, and, for ``lu``, row-shuffled column diagonally
dominant matrices, whose pivots are the shuffled diagonal by a wide margin (a small
perturbation never changes a pivot, so finite differences see one branch). Entries a
primitive must not read (the triangle ``cholesky``, ``eigh`` and ``triangular_solve``
ignore) are junk. References: numpy.linalg for what numpy has; for ``lu`` a plain
per-matrix loop written from the definition, for ``triangular_solve`` ``np.linalg.solve``
of the triangle, for ``lu_solve`` ``np.linalg.solve`` of the matrix rebuilt from ``lu``
and the permutation (so finite differences in ``lu`` move that matrix). The solves'
matrices are row-shuffled diagonally dominant ones (well conditioned, pivoting).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_decomp as d

from . import Case

FLOATS = (dt.float32, dt.float64)


def _rng(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))


def _batch(data):
    return tuple(data.draw(st.lists(st.integers(0, 2), max_size=2), label="batch"))


def _side(data, label, lo=0, hi=4):
    return data.draw(st.integers(lo, hi), label=label)


def _orthogonal(rng, batch, n):
    q, r = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _junk_upper(rng, a):
    n = a.shape[-1]
    return a + np.triu(rng.uniform(-5, 5, a.shape), 1) if n else a


def _spread(rng, batch, k, lo):
    """``k`` values per matrix, at least 0.5 apart, from ``lo`` up, in random order."""
    base = lo + 0.5 * np.arange(k) + rng.uniform(0, 0.4, (*batch, k))
    return rng.permuted(base, axis=-1) if k else base


# ------------------------------------------------------------------------- cholesky


def _cholesky_draw(data, dtype):
    rng, batch, n = _rng(data), _batch(data), _side(data, "n")
    q = _orthogonal(rng, batch, n)
    w = _spread(rng, batch, n, 1.0)
    spd = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return [_junk_upper(rng, spd).astype(dtype)], {}


def _cholesky_ref(x):
    return np.linalg.cholesky(np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2))


# ----------------------------------------------------------------------------- eigh


def _eigh_draw(data, dtype):
    rng, batch, n = _rng(data), _batch(data), _side(data, "n")
    q = _orthogonal(rng, batch, n)
    w = _spread(rng, batch, n, -1.0)
    sym = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return [_junk_upper(rng, sym).astype(dtype)], {}


def _eigh_ref(x):
    w, v = np.linalg.eigh(x, UPLO="L")
    return [w, v]


# ------------------------------------------------------------------------------- qr


def _qr_draw(shape):
    def draw(data, dtype):
        rng, batch = _rng(data), _batch(data)
        n = _side(data, "n")
        m = n + _side(data, "extra rows", 0, 2) if shape == "tall" else _side(data, "m")
        full = shape == "any" and data.draw(st.booleans(), label="full_matrices")
        return [rng.standard_normal((*batch, m, n)).astype(dtype)], dict(full_matrices=full)

    return draw


def _qr_ref(x, *, full_matrices):
    m, n = x.shape[-2:]
    if x.size == 0:
        k = m if full_matrices else min(m, n)
        q = np.broadcast_to(np.eye(m, k), (*x.shape[:-2], m, k))
        return [q, np.zeros((*x.shape[:-2], k, n))]
    return list(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))


# ------------------------------------------------------------------------------ svd


def _svd_draw(full_matrices=False, compute_uv=True):
    def draw(data, dtype):
        rng, batch = _rng(data), _batch(data)
        m, n = _side(data, "m"), _side(data, "n")
        k = min(m, n)
        u = _orthogonal(rng, batch, m)[..., :k]
        v = _orthogonal(rng, batch, n)[..., :k]
        s = _spread(rng, batch, k, 0.5)
        x = (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)
        return [x.astype(dtype)], dict(full_matrices=full_matrices, compute_uv=compute_uv)

    return draw


def _svd_ref(x, *, full_matrices, compute_uv):
    *batch, m, n = x.shape
    k = min(m, n)
    if x.size == 0:
        mu, nv = (m, n) if full_matrices else (k, k)
        s = np.zeros((*batch, k))
        u = np.broadcast_to(np.eye(m, mu), (*batch, m, mu))
        vt = np.broadcast_to(np.eye(nv, n), (*batch, nv, n))
        return [s, u, vt] if compute_uv else [s]
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False)]
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return [s, u, vt]


# ------------------------------------------------------------------------------- lu


def _lu_draw(dominant):
    def draw(data, dtype):
        rng, batch = _rng(data), _batch(data)
        m, n = _side(data, "m"), _side(data, "n")
        x = rng.uniform(-1, 1, (*batch, m, n))
        if dominant:
            k = min(m, n)
            signs = rng.choice([-1.0, 1.0], (*batch, k))
            idx = np.arange(k)
            x[..., idx, idx] = signs * (3.0 * m + 1)
            x = rng.permuted(x, axis=-2) if m else x  # shuffles the rows of each matrix
        return [x.astype(dtype)], {}

    return draw


def _lu_one(a):
    a = np.array(a, np.float64)
    m, n = a.shape
    perm = list(range(m))
    pivots = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        pivots.append(p)
        a[[j, p]] = a[[p, j]]
        perm[j], perm[p] = perm[p], perm[j]
        if a[j, j] != 0:
            for i in range(j + 1, m):
                a[i, j] /= a[j, j]
                a[i, j + 1 :] -= a[i, j] * a[j, j + 1 :]
    return a, np.array(pivots, np.int32), np.array(perm, np.int32)


def _lu_ref(x):
    *batch, m, n = x.shape
    flat = np.asarray(x).reshape((int(np.prod(batch, dtype=np.int64)), m, n))
    res = [_lu_one(a) for a in flat]
    shapes = ((m, n), (min(m, n),), (m,))
    dtypes = (np.float64, np.int32, np.int32)
    return [
        np.array([r[i] for r in res], dtypes[i]).reshape((*batch, *shapes[i])) for i in range(3)
    ]


# ------------------------------------------------------------------ triangular_solve


def _triangular_solve_draw(data, dtype):
    rng, batch = _rng(data), _batch(data)
    m, n = _side(data, "m"), _side(data, "n")
    flags = {
        k: data.draw(st.booleans(), label=k)
        for k in ("left_side", "lower", "transpose_a", "unit_diagonal")
    }
    # Entries of size 1 to 2 everywhere (and so on the diagonal, however a batch test
    # shuffles them); the other triangle is read by nobody.
    a = rng.uniform(1, 2, (*batch, m, m)) * rng.choice([-1.0, 1.0], (*batch, m, m))
    a = a / max(m, 1)
    a[..., np.arange(m), np.arange(m)] = np.sign(a[..., np.arange(m), np.arange(m)]) * 1.5
    b_shape = (*batch, m, n) if flags["left_side"] else (*batch, n, m)
    b = rng.standard_normal(b_shape)
    return [a.astype(dtype), b.astype(dtype)], flags


def _triangular_solve_ref(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    wide = np.result_type(a, b, np.float64)  # complex128 for complex operands
    a, b = np.asarray(a, wide), np.asarray(b, wide)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1.0
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if b.size == 0:
        return np.zeros(b.shape)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


# ------------------------------------------------------------------ lu_solve, solve


def _well_conditioned(rng, batch, n, imag=False):
    """Rows of a diagonally dominant matrix (2 on the diagonal, the rest of each row
    summing below 1) in a random order, so that ``lu`` pivots; complex if ``imag``."""
    off = rng.uniform(-1, 1, (*batch, n, n))
    if imag:
        off = (off + 1j * rng.uniform(-1, 1, off.shape)) / np.sqrt(2)
    a = off / max(n, 1) + 2 * np.eye(n)
    return rng.permuted(a, axis=-2) if a.size else a


def _lu_solve_draw(lu_ref=None, imag=False):
    def draw(data, dtype):
        rng, batch, n, k = _rng(data), _batch(data), _side(data, "n"), _side(data, "k")
        lu, _, perm = (lu_ref or _lu_ref)(_well_conditioned(rng, batch, n, imag))
        b = rng.standard_normal((*batch, n, k))
        if imag:
            b = b + 1j * rng.standard_normal(b.shape)
        transpose_a = data.draw(st.booleans(), label="transpose_a")
        return [lu.astype(dtype), perm, b.astype(dtype)], dict(transpose_a=transpose_a)

    return draw


def _lu_solve_ref(lu, permutation, b, *, transpose_a):
    wide = np.result_type(lu, b, np.float64)
    lu, b = np.asarray(lu, wide), np.asarray(b, wide)
    n = lu.shape[-1]
    if b.size == 0:
        return np.zeros(b.shape, wide)
    a = np.empty_like(lu)  # a[permutation] = L @ U
    rows = np.broadcast_to(np.asarray(permutation)[..., None], lu.shape)
    np.put_along_axis(a, rows, (np.tril(lu, -1) + np.eye(n)) @ np.triu(lu), axis=-2)
    return np.linalg.solve(np.swapaxes(a, -1, -2) if transpose_a else a, b)


def _solve_draw(data, dtype):
    rng, batch, n, k = _rng(data), _batch(data), _side(data, "n"), _side(data, "k")
    return [_well_conditioned(rng, batch, n).astype(dtype),
            rng.standard_normal((*batch, n, k)).astype(dtype)], {}  # fmt: skip


def _solve_ref(a, b):
    wide = np.result_type(a, b, np.float64)
    if np.size(b) == 0:
        return np.zeros(np.shape(b), wide)
    return np.linalg.solve(np.asarray(a, wide), np.asarray(b, wide))


_TOL = dict(rtol=1e-4, atol=1e-4)

CASES = [
    Case(d.cholesky_p, _cholesky_draw, _cholesky_ref, FLOATS, diff_args=(0,), **_TOL),
    Case(d.eigh_p, _eigh_draw, _eigh_ref, FLOATS, diff_args=(0,), **_TOL),
    Case(d.qr_p, _qr_draw("tall"), _qr_ref, FLOATS, diff_args=(0,), **_TOL),
    Case(d.qr_p, _qr_draw("any"), _qr_ref, FLOATS, name="qr_any_shape", **_TOL),
    Case(d.svd_p, _svd_draw(), _svd_ref, FLOATS, diff_args=(0,), **_TOL),
    Case(d.svd_p, _svd_draw(compute_uv=False), _svd_ref, FLOATS, diff_args=(0,),
         name="svd_values", **_TOL),
    Case(d.svd_p, _svd_draw(full_matrices=True), _svd_ref, FLOATS, name="svd_full", **_TOL),
    Case(d.lu_p, _lu_draw(dominant=True), _lu_ref, FLOATS, diff_args=(0,), **_TOL),
    Case(d.lu_p, _lu_draw(dominant=False), _lu_ref, FLOATS, name="lu_any", **_TOL),
    Case(d.triangular_solve_p, _triangular_solve_draw, _triangular_solve_ref, FLOATS,
         diff_args=(0, 1), linear_args=(1,), extra={"const_args": (0,)}, **_TOL),
    Case(d.lu_solve_p, _lu_solve_draw(), _lu_solve_ref, FLOATS, diff_args=(0, 2),
         linear_args=(2,), extra={"const_args": (0, 1)}, **_TOL),
    Case(d.solve_p, _solve_draw, _solve_ref, FLOATS, diff_args=(0, 1),
         linear_args=(1,), extra={"const_args": (0,)}, **_TOL),
]  # fmt: skip
