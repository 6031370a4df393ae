"""The decompositions and solves on the GPU: cuSOLVER through ``cupy.linalg``.

``eigh``, ``qr``, ``svd`` and ``solve`` are ``cupy.linalg``'s (cuSOLVER's syevd/syevj,
geqrf/orgqr, gesvd/gesvdj and getrf/getrs, batched where CuPy batches them); the
triangular solves (``triangular_solve``, ``lu_solve``'s two) are ``cupy.linalg.solve`` of
the triangle, batched in one call, where the CPU substitutes (trsm): the same solution
within rounding. Results equal the CPU's within rounding, and for the eigen- and
singular vectors and ``qr``'s factors up to each vector's sign (a complex one's phase),
which is the solver's choice: cuSOLVER's need not be LAPACK's, as JAX's GPU results
need not be its CPU's. A matrix cuSOLVER fails on (it says so when CuPy is asked to
raise), and empty inputs, take the host, which gives the failed matrix NaNs.

``lu`` is cuSOLVER's getrf through ``cupyx.scipy.linalg.lu_factor``, which factors one
matrix a call (a batch is a loop of them). ``eig`` stays on the host: CuPy 14's
``cupy.linalg.eig`` (cuSOLVER's Xgeev) has not been checked against LAPACK's eigenvalue
order and vector normalization, which ``eig``'s contract fixes.

>>> sorted(p.name for p in solver_impls(np, {}))  # numpy for CuPy: no getrf, no lu
['eigh', 'lu_solve', 'qr', 'solve', 'svd', 'triangular_solve']
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_decomp as d


def _raising():
    """CuPy reads cuSOLVER's status only when asked to raise; numpy (standing in for
    CuPy in the tests) raises by itself."""
    try:
        import cupyx
    except ImportError:
        return contextlib.nullcontext
    return functools.partial(cupyx.errstate, linalg="raise")


def solver_impls(cp, host: dict) -> dict:
    """The GPU impls of the decompositions CuPy has, each falling back to ``host[prim]``
    (the CPU impl through the host) for empty inputs and matrices cuSOLVER fails on."""
    raising = _raising()

    def guarded(prim, native):
        fallback = host.get(prim)

        def run(*args, **params):
            if fallback is not None and any(a.size == 0 for a in args):
                return fallback(*args, **params)
            try:
                with raising():
                    return native(*args, **params)
            except np.linalg.LinAlgError:  # what CuPy raises too
                if fallback is None:
                    raise
                return fallback(*args, **params)

        return run

    tri = _triangular_solve(cp)
    natives = {
        d.eigh_p: _eigh(cp),
        d.qr_p: _qr(cp),
        d.svd_p: _svd(cp),
        d.solve_p: lambda a, b: cp.linalg.solve(a, b).astype(b.dtype, copy=False),
        d.triangular_solve_p: tri,
        d.lu_solve_p: _lu_solve(cp, tri),
    }
    lu = _lu(cp)
    if lu is not None:
        natives[d.lu_p] = lu
    return {prim: guarded(prim, native) for prim, native in natives.items()}


def _eigh(cp):
    def eigh(x):
        # UPLO="L": the lower triangle is the matrix, as LAPACK's syevd reads it
        w, v = cp.linalg.eigh(x, UPLO="L")
        return [w.astype(dt.real_dtype(x.dtype), copy=False), v.astype(x.dtype, copy=False)]

    return eigh


def _per_matrix(cp, fn, x):
    """``fn`` (a list of outputs) over a stack of matrices: in one call where CuPy takes
    a stack, else one matrix at a time."""
    if x.ndim == 2:
        return fn(x)
    try:
        return fn(x)
    except np.linalg.LinAlgError:
        raise
    except Exception:  # an older CuPy: 2-d matrices only
        batch = x.shape[:-2]
        flat = x.reshape((-1, *x.shape[-2:]))
        outs = [fn(a) for a in flat]
        return [cp.stack(o).reshape((*batch, *o[0].shape)) for o in zip(*outs)]


def _qr(cp):
    def qr(x, *, full_matrices):
        mode = "complete" if full_matrices else "reduced"
        q, r = _per_matrix(cp, lambda a: list(cp.linalg.qr(a, mode=mode)), x)
        return [q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)]

    return qr


def _svd(cp):
    def svd(x, *, full_matrices, compute_uv):
        real = dt.real_dtype(x.dtype)
        if not compute_uv:
            return [cp.linalg.svd(x, compute_uv=False).astype(real, copy=False)]
        u, s, vt = cp.linalg.svd(x, full_matrices=full_matrices)
        return [s.astype(real, copy=False), u.astype(x.dtype, copy=False),
                vt.astype(x.dtype, copy=False)]  # fmt: skip

    return svd


def _lu(cp):
    """``lu`` through ``cupyx.scipy.linalg.lu_factor`` (cuSOLVER's getrf: LAPACK's partial
    pivoting, 0-based pivots), one matrix a call; the permutation from the pivots on the
    host (``min(m, n)`` swaps of ``m`` indices). None for numpy standing in for CuPy."""
    if getattr(cp, "__name__", None) != "cupy":
        return None
    from cupyx.scipy.linalg import lu_factor

    from .cpu_decomp import pivot_permutation

    def lu(x):
        *batch, m, n = x.shape
        parts = [lu_factor(a, check_finite=False) for a in x.reshape((-1, m, n))]
        packed = cp.stack([p[0] for p in parts]).astype(x.dtype, copy=False).reshape(x.shape)
        pivots = cp.asnumpy(cp.stack([p[1] for p in parts])).astype(d.PIVOT_DTYPE)
        pivots = pivots.reshape((*batch, min(m, n)))
        return [packed, cp.asarray(pivots), cp.asarray(pivot_permutation(pivots, m))]

    return lu


def _triangular_solve(cp):
    def triangular_solve(a, b, *, left_side, lower, transpose_a, unit_diagonal):
        t = cp.tril(a) if lower else cp.triu(a)  # the other triangle is not read
        if unit_diagonal:
            t = _unit(cp, t)
        if transpose_a:
            t = cp.swapaxes(t, -1, -2)
        if left_side:
            x = cp.linalg.solve(t, b)
        else:  # x @ t = b  <=>  t.T @ x.T = b.T
            x = cp.swapaxes(cp.linalg.solve(cp.swapaxes(t, -1, -2), cp.swapaxes(b, -1, -2)), -1, -2)
        return cp.ascontiguousarray(x).astype(b.dtype, copy=False)

    return triangular_solve


def _unit(cp, t):
    """``t`` with ones on its diagonal."""
    m = t.shape[-1]
    eye = cp.eye(m, dtype=t.dtype)
    return t * (1 - eye) + eye


def _lu_solve(cp, tri):
    def lu_solve(lu, permutation, b, *, transpose_a):
        # a[permutation] = L @ U: two triangular solves, the rows permuted before them
        # (or, for a.T, after), as the CPU's lu_solve_batched
        rows = cp.broadcast_to(permutation.astype(np.intp)[..., None], b.shape)

        def solve(rhs, lower):
            return tri(lu, rhs, left_side=True, lower=lower, transpose_a=transpose_a,
                       unit_diagonal=lower)  # fmt: skip

        if not transpose_a:
            return solve(solve(cp.take_along_axis(b, rows, axis=-2), True), False)
        w = solve(solve(b, False), True)
        return cp.take_along_axis(w, cp.argsort(rows, axis=-2), axis=-2)

    return lu_solve
