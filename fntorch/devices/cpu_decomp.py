"""CPU (numpy) impls of the decomposition primitives, batched over leading dims.

``cholesky``, ``eigh``, ``qr``, ``svd`` and ``eig`` are numpy.linalg's (LAPACK, batched by
numpy's gufuncs). numpy has no LU and no triangular solve: ``lu``, ``triangular_solve``
and the solves call getrf and trsm/trsv in numpy's OpenBLAS (``cpu_lapack``) where it
exports them, else run partial-pivoting Gaussian elimination and substitution, each a
loop over one matrix dim whose steps are vectorized over the batch. Like JAX (and unlike
numpy), a matrix the factorization fails on gives NaNs, never an exception: these are
pure functions, and one bad matrix of a batch or of a jit'ed program must not stop the
others.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_decomp as d
from . import cpu_lapack
from ._device import cpu_impls


def _nan_on_failure(fn, x):
    """``fn(x)`` (a list of ``n_out`` arrays); where LAPACK fails on the batch, ``fn`` per
    matrix, with NaNs for those it fails on."""
    try:
        return fn(x)
    except np.linalg.LinAlgError:
        pass
    batch = x.shape[:-2]
    flat = x.reshape((int(np.prod(batch, dtype=np.int64)), *x.shape[-2:]))
    ok = None
    for i in range(flat.shape[0]):
        try:
            ok = fn(flat[i])
            break
        except np.linalg.LinAlgError:
            continue
    if ok is None:  # fails on every matrix: shapes from a harmless one
        ok = [np.full_like(o, np.nan) for o in fn(np.eye(*x.shape[-2:], dtype=x.dtype))]
    outs = [np.empty((flat.shape[0], *o.shape), o.dtype) for o in ok]
    for i in range(flat.shape[0]):
        try:
            res = fn(flat[i])
        except np.linalg.LinAlgError:
            res = [np.full_like(o, np.nan) for o in ok]
        for o, r in zip(outs, res):
            o[i] = r
    return [o.reshape((*batch, *o.shape[1:])) for o in outs]


def _cholesky(x):
    x = np.asarray(x)
    (out,) = _nan_on_failure(lambda a: [np.linalg.cholesky(a)], x)
    return out.astype(x.dtype, copy=False)


cpu_impls[d.cholesky_p] = _cholesky


def _eigh(x):
    x = np.asarray(x)
    w, v = _nan_on_failure(lambda a: list(np.linalg.eigh(a, UPLO="L")), x)
    return [w.astype(dt.real_dtype(x.dtype), copy=False), v.astype(x.dtype, copy=False)]


cpu_impls[d.eigh_p] = _eigh


def _qr(x, *, full_matrices):
    x = np.asarray(x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    if x.size == 0:  # LAPACK refuses empty matrices: q is the identity's first k columns
        q = np.broadcast_to(np.eye(m, k, dtype=x.dtype), (*batch, m, k)).copy()
        return [q, np.zeros((*batch, k, n), x.dtype)]
    mode = "complete" if full_matrices else "reduced"
    q, r = _nan_on_failure(lambda a: list(np.linalg.qr(a, mode=mode)), x)
    return [q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)]


cpu_impls[d.qr_p] = _qr


def _svd(x, *, full_matrices, compute_uv):
    x = np.asarray(x)
    *batch, m, n = x.shape
    k = min(m, n)
    if x.size == 0:
        s = np.zeros((*batch, k), dt.real_dtype(x.dtype))
        if not compute_uv:
            return [s]
        mu, nv = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, mu, dtype=x.dtype), (*batch, m, mu)).copy()
        vt = np.broadcast_to(np.eye(nv, n, dtype=x.dtype), (*batch, nv, n)).copy()
        return [s, u, vt]
    if not compute_uv:
        (s,) = _nan_on_failure(lambda a: [np.linalg.svd(a, compute_uv=False)], x)
        return [s.astype(dt.real_dtype(x.dtype), copy=False)]
    u, s, vt = _nan_on_failure(lambda a: list(np.linalg.svd(a, full_matrices=full_matrices)), x)
    return [s.astype(dt.real_dtype(x.dtype), copy=False), u.astype(x.dtype, copy=False),
            vt.astype(x.dtype, copy=False)]  # fmt: skip


cpu_impls[d.svd_p] = _svd


def lu_factor_batched(x):
    """``(lu, pivots, permutation)`` of a stack of matrices by Gaussian elimination with
    partial pivoting (LAPACK getrf's choices: the first largest ``|pivot|``; a zero
    column is skipped, not divided).

    >>> lu, piv, perm = lu_factor_batched(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu.tolist(), piv.tolist(), perm.tolist()
    ([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [1, 1], [1, 0])
    """
    a = np.array(x, copy=True)
    *batch, m, n = a.shape
    k = min(m, n)
    nb = int(np.prod(batch, dtype=np.int64))
    a = a.reshape((nb, m, n))
    rows = np.arange(nb)
    pivots = np.zeros((nb, k), d.PIVOT_DTYPE)
    perm = np.broadcast_to(np.arange(m, dtype=d.PIVOT_DTYPE), (nb, m)).copy()
    for j in range(k):
        p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)
        pivots[:, j] = p
        # swap rows j and p of every matrix (and of the permutation)
        row_j, row_p = a[rows, j].copy(), a[rows, p].copy()
        a[rows, j], a[rows, p] = row_p, row_j
        pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = pp, pj
        piv = a[:, j, j]
        safe = np.where(piv == 0, 1, piv)
        scale = np.where((piv == 0)[:, None], 0, a[:, j + 1 :, j] / safe[:, None])
        a[:, j + 1 :, j] = np.where((piv == 0)[:, None], a[:, j + 1 :, j], scale)
        a[:, j + 1 :, j + 1 :] -= scale[:, :, None] * a[:, j : j + 1, j + 1 :]
    return (
        a.reshape((*batch, m, n)),
        pivots.reshape((*batch, k)),
        perm.reshape((*batch, m)),
    )


def _lu(x):
    x = np.asarray(x)
    got = cpu_lapack.lu_factor(x)
    if got is None:
        return list(lu_factor_batched(x))
    lu, piv = got
    return [lu, piv.astype(d.PIVOT_DTYPE), pivot_permutation(piv, x.shape[-2])]


def pivot_permutation(pivots, m):
    """The row permutation that the row swaps ``pivots`` (0-based, in order) make (the
    CUDA device's ``lu`` uses it on cuSOLVER's pivots too).

    >>> pivot_permutation(np.array([1, 1]), 2).tolist()
    [1, 0]
    """
    *batch, k = pivots.shape
    piv = pivots.reshape((int(np.prod(batch, dtype=np.int64)), k))
    rows = np.arange(piv.shape[0])
    perm = np.broadcast_to(np.arange(m, dtype=d.PIVOT_DTYPE), (piv.shape[0], m)).copy()
    for j in range(k):
        p = piv[:, j]
        pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = pp, pj
    return perm.reshape((*batch, m))


cpu_impls[d.lu_p] = _lu


def solve_triangular_batched(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    """Solves ``op(a) @ x = b`` (or ``x @ op(a) = b``) by substitution, reading only the
    triangle of ``a`` that ``lower`` names. A zero on the diagonal gives inf/NaN.

    >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> solve_triangular_batched(a, np.array([[2.0], [3.0]]), left_side=True, lower=True,
    ...                          transpose_a=False, unit_diagonal=False).tolist()
    [[1.0], [2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        m = a.shape[-1]
        t = t.copy()
        t[..., np.arange(m), np.arange(m)] = 1
    low = lower
    if transpose_a:
        t, low = np.swapaxes(t, -1, -2), not low
    if not left_side:  # x @ T = b  <=>  T.T @ x.T = b.T
        t, low, b = np.swapaxes(t, -1, -2), not low, np.swapaxes(b, -1, -2)
    m = t.shape[-1]
    x = np.zeros(b.shape, b.dtype)
    order = range(m) if low else range(m - 1, -1, -1)
    for i in order:
        done = slice(0, i) if low else slice(i + 1, m)
        acc = b[..., i, :] - (t[..., i : i + 1, done] @ x[..., done, :])[..., 0, :]
        x[..., i, :] = acc / t[..., i, i, None]
    return x if left_side else np.swapaxes(x, -1, -2)


def _triangular_solve(a, b, **params):
    out = cpu_lapack.solve_triangular(a, b, **params)
    if out is None:
        out = solve_triangular_batched(a, b, **params)
    return np.ascontiguousarray(out, dtype=np.asarray(b).dtype)


cpu_impls[d.triangular_solve_p] = _triangular_solve


def lu_solve_batched(lu, permutation, b, *, transpose_a):
    """Solves ``op(a) @ x = b`` from ``a``'s packed ``lu`` and row ``permutation``
    (``a[permutation] = L @ U``) by two triangular solves, the rows permuted before them
    (or, for ``a.T``, after).

    >>> lu = np.array([[3.0, 4.0], [1 / 3, 2 / 3]])  # lu([[1, 2], [3, 4]])
    >>> x = lu_solve_batched(lu, np.array([1, 0]), np.array([[5.0], [11.0]]), transpose_a=False)
    >>> np.round(x, 12).tolist()
    [[1.0], [2.0]]
    """
    lu, b = np.asarray(lu), np.asarray(b)
    rows = np.broadcast_to(np.asarray(permutation, np.intp)[..., None], b.shape)

    def tri(rhs, lower):
        return _triangular_solve(lu, rhs, left_side=True, lower=lower,
                                 transpose_a=transpose_a, unit_diagonal=lower)  # fmt: skip

    if not transpose_a:  # a = P^T L U: permute, then L y = P b, U x = y
        return tri(tri(np.take_along_axis(b, rows, axis=-2), True), False)
    w = tri(tri(b, False), True)  # U^T L^T (P x) = b
    return np.take_along_axis(w, cpu_lapack.inverse_permutation(rows, axis=-2), axis=-2)


def _lu_solve(lu, permutation, b, *, transpose_a):
    out = cpu_lapack.lu_solve(lu, permutation, b, transpose_a=transpose_a)
    if out is None:
        out = lu_solve_batched(lu, permutation, b, transpose_a=transpose_a)
    return out


cpu_impls[d.lu_solve_p] = _lu_solve


def _solve(a, b):
    # lu, then lu_solve: the same values solve's jvp computes for its primal
    lu, _, perm = _lu(a)
    return _lu_solve(lu, perm, b, transpose_a=False)


cpu_impls[d.solve_p] = _solve


def _eig(x, *, vectors):
    x = np.asarray(x)
    c = np.result_type(x.dtype, np.complex64)
    if x.size == 0:
        w = np.zeros(x.shape[:-1], c)
        return [w, np.zeros(x.shape, c)] if vectors else [w]
    # Eigenvalues alone also through geev with vectors: LAPACK's order of the eigenvalues
    # may differ between the two modes, and eig's jvp (which needs the vectors) must see
    # the order the primal had.
    w, v = _nan_on_failure(lambda a: list(np.linalg.eig(a)), x)
    w = w.astype(c, copy=False)
    return [w, v.astype(c, copy=False)] if vectors else [w]


cpu_impls[d.eig_p] = _eig
