"""jvp, transpose and batching rules of the decomposition primitives.

The jvp rules are JAX's (``jax/_src/lax/linalg.py``), written over fntorch's lax: each
output tangent is a product of the primal factors and the input tangent, built only
from primitives that have transpose rules (``dot_general``, masks as ``mul``,
``triangular_solve`` and ``lu_solve`` in their right-hand sides), so reverse mode needs
no rule of its own. ``solve``'s rule is JAX's for ``jnp.linalg.solve``: the tangent is
``lu_solve`` with the primal's factors, so ``grad`` of a solve costs the transposed solve
with those factors, not ``lu``'s jvp.
Where a primitive reads one triangle of its input (``cholesky``, ``eigh``) its jvp reads
the same triangle of the tangent, mirrored, so the rule is the derivative of the impl
for any tangent; ``ft.linalg`` symmetrizes the input first, as JAX does. For complex
matrices the rules are JAX's complex ones: conjugate transposes (``_H``), real
eigen/singular value tangents, and the phase terms that keep ``qr``'s ``r`` diagonal
real and ``svd``'s ``u``/``vt`` in JAX's gauge; ``eig`` differentiates its eigenvalues
only.

Every primitive maps its last two dims and batches its leading ones, so batching moves
the batch axis to the front (``triangular_solve`` broadcasts an unbatched operand).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_decomp as d
from ..ops import lax
from .ad import Zero, is_undefined_primal, jvp_rules, transpose_rules
from .batching import batch_rules, bdim_at_front

# ---------------------------------------------------------------- matrix helpers


def _mm(a, b):
    """``a @ b`` over matching leading (batch) dims."""
    nb = len(a.shape) - 2
    batch = tuple(range(nb))
    return lax.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _T(x):
    nd = len(x.shape)
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _mask(x, mask):
    """``x`` times a constant ``(m, n)`` mask, broadcast over the batch."""
    return lax.mul(x, np.asarray(mask, get_aval(x).dtype))


def _tril(x, k=0):
    m, n = x.shape[-2:]
    return _mask(x, np.tri(m, n, k))


def _triu(x, k=0):
    m, n = x.shape[-2:]
    return _mask(x, 1 - np.tri(m, n, k - 1))


def _eye(n, dtype):
    return np.eye(n, dtype=dtype)


def _diag(x):
    """The diagonal of a stack of square matrices, ``(..., n)``."""
    nd = len(x.shape)
    return lax.reduce_sum(_mask(x, np.eye(x.shape[-1])), (nd - 1,))


def _H(x):
    """The conjugate transpose (the transpose of a real matrix)."""
    t = _T(x)
    return lax.conj(t) if _is_complex(x) else t


def _is_complex(x) -> bool:
    return dt.is_complex(get_aval(x).dtype)


def _as(x, like):
    """``x`` (real) in ``like``'s dtype (complex for complex ``like``)."""
    dtype = get_aval(like).dtype
    return x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)


def _mirror_lower(t):
    """The symmetric (Hermitian) matrix whose lower triangle is ``t``'s: what the impls
    read (LAPACK reads only the real part of a Hermitian matrix's diagonal)."""
    low = _tril(t, -1)
    diag = _mask(t, np.eye(t.shape[-1]))
    if _is_complex(t):
        diag = lax.mul(lax.add(diag, lax.conj(diag)), np.asarray(0.5, get_aval(t).dtype))
    return lax.add(lax.add(low, diag), _H(low))


def _permutation_matrix(perm, dtype):
    """``P`` with ``P @ x = x[perm]`` (rows), one-hot: a product that transposes."""
    m = perm.shape[-1]
    return lax.convert_element_type(lax.eq(_col(perm), np.arange(m, dtype=d.PIVOT_DTYPE)), dtype)


def _row(v):  # (..., n) -> (..., 1, n)
    return lax.expand_dims(v, (len(v.shape) - 1,))


def _col(v):  # (..., n) -> (..., n, 1)
    return lax.expand_dims(v, (len(v.shape),))


def _safe_reciprocal_gaps(diffs, n, dtype):
    """``1 / diffs`` off the diagonal, 0 on it (no NaN from the diagonal's zeros)."""
    eye = _eye(n, dtype)
    return lax.sub(lax.div(np.asarray(1, dtype), lax.add(diffs, eye)), eye)


# ------------------------------------------------------------------------- cholesky


def _cholesky_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    L = d.cholesky_p.bind(x)
    if type(t) is Zero:
        return L, Zero.like(L)
    # L_dot = L phi(L^-1 S_dot L^-H), phi: the lower triangle with its diagonal halved
    # (Murray, arXiv:1602.07527).
    s = _mirror_lower(t)
    Lc = lax.conj(L) if _is_complex(L) else L  # X L^H = S is X conj(L)^T = S
    tmp = d.triangular_solve(Lc, s, left_side=False, lower=True, transpose_a=True)
    inner = d.triangular_solve(L, tmp, left_side=True, lower=True)
    n = x.shape[-1]
    phi = _mask(inner, np.tri(n, n, -1) + 0.5 * np.eye(n))
    return L, _mm(L, phi)


jvp_rules[d.cholesky_p] = _cholesky_jvp


# ----------------------------------------------------------------------------- eigh


def _eigh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    w, v = d.eigh_p.bind(x)
    if type(t) is Zero:
        return [w, v], [Zero.like(w), Zero.like(v)]
    n = x.shape[-1]
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal (repeated eigenvalues: inf, as JAX).
    F = _safe_reciprocal_gaps(lax.sub(_row(w), _col(w)), n, get_aval(w).dtype)
    vh_dx_v = _mm(_mm(_H(v), _mirror_lower(t)), v)
    dv = _mm(v, lax.mul(_as(F, v), vh_dx_v))
    dw = _diag(vh_dx_v)
    return [w, v], [lax.real(dw) if _is_complex(dw) else dw, dv]


jvp_rules[d.eigh_p] = _eigh_jvp


# ------------------------------------------------------------------------------- qr


def _qr_jvp(primals, tangents, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = d.qr_p.bind(x, full_matrices=full_matrices)
    if type(dx) is Zero:
        return [q, r], [Zero.like(q), Zero.like(r)]
    m, n = x.shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            f"qr: the derivative is implemented for m >= n and reduced q only (as JAX's); "
            f"got shape {tuple(x.shape)} with full_matrices={full_matrices}"
        )
    # Townsend, "Differentiating the QR decomposition" (JAX's qr_jvp_rule).
    dx_rinv = d.triangular_solve(r, dx)  # dx @ r^-1
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    do = lax.sub(low, _H(low))  # skew-Hermitian
    if _is_complex(x):
        # The imaginary part of the diagonal keeps r's diagonal real (LAPACK's choice).
        diag = _mask(qt_dx_rinv, np.eye(n))
        do = lax.add(do, lax.mul(lax.sub(diag, lax.conj(diag)), np.asarray(0.5, get_aval(x).dtype)))
    dq = lax.add(_mm(q, lax.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(lax.sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


jvp_rules[d.qr_p] = _qr_jvp


# ------------------------------------------------------------------------------ svd


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (x,), (dA,) = primals, tangents
    m, n = x.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"svd: the derivative of u and vt is implemented for full_matrices=False only "
            f"(as JAX's); got shape {tuple(x.shape)} with full_matrices=True"
        )
    s, U, Vt = d.svd_p.bind(x, full_matrices=False, compute_uv=True)
    outs = [s, U, Vt] if compute_uv else [s]
    if type(dA) is Zero:
        return outs, [Zero.like(o) for o in outs]
    dtype = get_aval(x).dtype  # complex for complex x; s is real
    real = get_aval(s).dtype
    k = min(m, n)
    V = _H(Vt)
    dS = _mm(_mm(_H(U), dA), V)
    ds = _diag(dS)
    ds = lax.real(ds) if _is_complex(ds) else ds
    if not compute_uv:
        return outs, [ds]
    s_row = _row(s)
    # F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal.
    F = _safe_reciprocal_gaps(lax.mul(lax.add(s_row, _T(s_row)), lax.sub(s_row, _T(s_row))),
                              k, real)  # fmt: skip
    F = _as(F, dS)
    s_rowc = _as(s_row, dS)
    dSS = lax.mul(s_rowc, dS)  # dS @ diag(s)
    SdS = lax.mul(_T(s_rowc), dS)  # diag(s) @ dS
    zero_s = lax.convert_element_type(lax.eq(s, np.asarray(0, real)), real)
    s_inv = lax.sub(lax.div(np.asarray(1, real), lax.add(s, zero_s)), zero_s)
    s_inv_mat = _as(lax.mul(_row(s_inv), _eye(k, real)), dS)
    # Zero for real dtypes; the imaginary part of dS's diagonal for complex ones.
    dUdV_diag = lax.mul(lax.mul(np.asarray(0.5, dtype), lax.sub(dS, _H(dS))), s_inv_mat)
    dU = _mm(U, lax.add(lax.mul(F, lax.add(dSS, _H(dSS))), dUdV_diag))
    dV = _mm(V, lax.mul(F, lax.add(SdS, _H(SdS))))
    if m > n:
        dAV = _mm(dA, V)
        dU = lax.add(dU, lax.div(lax.sub(dAV, _mm(U, _mm(_H(U), dAV))), s_rowc))
    if n > m:
        dAhU = _mm(_H(dA), U)
        dV = lax.add(dV, lax.div(lax.sub(dAhU, _mm(V, _mm(Vt, dAhU))), s_rowc))
    return outs, [ds, dU, _H(dV)]


jvp_rules[d.svd_p] = _svd_jvp


# ------------------------------------------------------------------------------- lu


def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = d.lu_p.bind(a)
    outs = [lu, pivots, perm]
    zeros = [Zero.like(pivots), Zero.like(perm)]
    if type(a_dot) is Zero:
        return outs, [Zero.like(lu), *zeros]
    *batch, m, n = a.shape
    k = min(m, n)
    dtype = get_aval(a).dtype
    nd = len(a.shape)
    # P @ a_dot as a product with the one-hot permutation matrix (linear, transposable).
    x = _mm(_permutation_matrix(perm, dtype), a_dot)
    zero = np.asarray(0, dtype)
    cfg = [(0, 0, 0)] * nd
    # L: (m, m) unit lower, its first k columns from lu; U: (n, n) upper, identity past k.
    l_cols = lax.slice(lu, (0,) * nd, (*batch, m, k))
    l = lax.pad(_tril(l_cols, -1), zero, cfg[:-1] + [(0, m - k, 0)])
    l = lax.add(l, _eye(m, dtype))
    u_rows = lax.slice(lu, (0,) * nd, (*batch, k, n))
    u = lax.pad(_triu(u_rows), zero, cfg[:-2] + [(0, n - k, 0), (0, 0, 0)])
    u = lax.add(u, np.pad(np.eye(n - k, dtype=dtype), ((k, 0), (k, 0))))
    la = d.triangular_solve(l, x, left_side=True, lower=True, unit_diagonal=True)
    lau = d.triangular_solve(u, la, left_side=False, lower=False)
    lu_dot = lax.add(_mm(l, _tril(lau, -1)), _mm(_triu(lau), u))
    return outs, [lu_dot, *zeros]


jvp_rules[d.lu_p] = _lu_jvp


# ------------------------------------------------------------------ triangular_solve


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (ga, gb) = primals, tangents
    ans = d.triangular_solve_p.bind(a, b, **params)
    tout = None
    if type(gb) is not Zero:
        tout = d.triangular_solve_p.bind(a, gb, **params)
    if type(ga) is not Zero:
        tout = _add(tout, _triangular_solve_jvp_a(ga, ans, a, **params))
    return ans, (Zero.like(ans) if tout is None else tout)


def _add(a, b):
    return b if a is None else lax.add(a, b)


def _triangular_solve_jvp_a(ga, ans, a, *, left_side, lower, transpose_a, unit_diagonal):
    # d(op(a)^-1 b) = -op(a)^-1 op(da) x, with da read from the triangle the impl reads;
    # the products are ordered by which is cheaper (JAX's rule).
    m, n = ans.shape[-2:]
    k = 1 if unit_diagonal else 0
    ga = _tril(ga, -k) if lower else _triu(ga, k)
    ga = lax.neg(ga)
    ga = _T(ga) if transpose_a else ga
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)  # fmt: skip

    def a_inverse(rhs):
        return d.triangular_solve_p.bind(a, rhs, **params)

    if left_side:
        return a_inverse(_mm(ga, ans)) if m > n else _mm(a_inverse(ga), ans)
    return a_inverse(_mm(ans, ga)) if m < n else _mm(ans, a_inverse(ga))


jvp_rules[d.triangular_solve_p] = _triangular_solve_jvp


def _triangular_solve_transpose(ct, a, b, *, transpose_a, **params):
    if is_undefined_primal(a):
        raise NotImplementedError(
            "triangular_solve: transposing with respect to the matrix a is not linear"
        )
    if type(ct) is Zero:
        return [None, Zero(ct.aval)]
    return [None, d.triangular_solve_p.bind(a, ct, transpose_a=not transpose_a, **params)]


transpose_rules[d.triangular_solve_p] = _triangular_solve_transpose


# --------------------------------------------------------------------- lu_solve, solve


def _lu_solve_jvp(primals, tangents, *, transpose_a):
    (lu, perm, b), (dlu, _, db) = primals, tangents
    x = d.lu_solve_p.bind(lu, perm, b, transpose_a=transpose_a)
    tout = None
    if type(db) is not Zero:
        tout = d.lu_solve_p.bind(lu, perm, db, transpose_a=transpose_a)
    if type(dlu) is not Zero:
        tout = _add(tout, _lu_solve_jvp_lu(dlu, x, lu, perm, transpose_a))
    return x, (Zero.like(x) if tout is None else tout)


def _lu_solve_jvp_lu(dlu, x, lu, perm, transpose_a):
    # a = P^T L U (P: the rows perm), so da = P^T (dL U + L dU) with dL, dU the triangles
    # of dlu that lu_solve reads, and dx = -op(a)^-1 op(da) x.
    dl, du = _tril(dlu, -1), _triu(dlu)
    u = _triu(lu)
    if not transpose_a:  # dx = -U^-1 (L^-1 dL U x + dU x)
        y = d.triangular_solve(lu, _mm(dl, _mm(u, x)), left_side=True, lower=True,
                               unit_diagonal=True)  # fmt: skip
        return lax.neg(d.triangular_solve(lu, lax.add(y, _mm(du, x)), left_side=True))
    # op(da) x = da^T x = dU^T L^T P x + U^T dL^T P x
    px = _mm(_permutation_matrix(perm, get_aval(x).dtype), x)
    l = lax.add(_tril(lu, -1), _eye(lu.shape[-1], get_aval(lu).dtype))
    dax = lax.add(_mm(_T(du), _mm(_T(l), px)), _mm(_T(u), _mm(_T(dl), px)))
    return lax.neg(d.lu_solve_p.bind(lu, perm, dax, transpose_a=True))


jvp_rules[d.lu_solve_p] = _lu_solve_jvp


def _lu_solve_transpose(ct, lu, perm, b, *, transpose_a):
    if is_undefined_primal(lu):
        raise NotImplementedError("lu_solve: transposing with respect to lu is not linear")
    if type(ct) is Zero:
        return [None, None, Zero(b.aval)]
    # (a^-1)^T = (a^T)^-1: the other solve with the same factors (no conjugation)
    return [None, None, d.lu_solve_p.bind(lu, perm, ct, transpose_a=not transpose_a)]


transpose_rules[d.lu_solve_p] = _lu_solve_transpose


def _solve_jvp(primals, tangents):
    # JAX's jnp.linalg.solve (custom_linear_solve): one factorization of the primal a
    # serves the primal and the tangent, dx = a^-1 (db - da x). a's tangent never meets
    # lu's jvp, and reverse mode transposes lu_solve into the transposed solve with the
    # same factors: dA = -(a^-T ct) x^T.
    (a, b), (da, db) = primals, tangents
    lu, _, perm = d.lu_p.bind(a)
    x = d.lu_solve_p.bind(lu, perm, b, transpose_a=False)
    rhs = None if type(db) is Zero else db
    if type(da) is not Zero:
        dax = _mm(da, x)
        rhs = lax.neg(dax) if rhs is None else lax.sub(rhs, dax)
    if rhs is None:
        return x, Zero.like(x)
    return x, d.lu_solve_p.bind(lu, perm, rhs, transpose_a=False)


jvp_rules[d.solve_p] = _solve_jvp


def _solve_transpose(ct, a, b):
    # Linear in b where a solve is applied to a tangent (a jvp rule's, a custom rule's):
    # the solve with a.T (no conjugation).
    if is_undefined_primal(a):
        raise NotImplementedError("solve: transposing with respect to the matrix a is not linear")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, d.solve_p.bind(_T(a), ct)]


transpose_rules[d.solve_p] = _solve_transpose


# ------------------------------------------------------------------------------ eig


def _eig_jvp(primals, tangents, *, vectors):
    # JAX's rule (arXiv:1701.00392, eq. 4.60): dw = diag(V^-1 dA V). Eigenvectors have no
    # derivative here, as in JAX: their phase is LAPACK's choice, not a smooth function.
    (a,), (a_dot,) = primals, tangents
    if vectors and type(a_dot) is not Zero:
        raise NotImplementedError(
            "eig: derivatives of the eigenvectors are not implemented (as in JAX), only of "
            "the eigenvalues: use ft.linalg.eigvals, or eigh for a symmetric matrix"
        )
    outs = d.eig_p.bind(a, vectors=vectors)
    if type(a_dot) is Zero:
        return outs, [Zero.like(o) for o in outs]
    w, v = d.eig_p.bind(a, vectors=True)
    c = get_aval(v).dtype
    lu, _, perm = d.lu(v)  # one factorization for the tangent and its transpose
    vinv_da = d.lu_solve(lu, perm, lax.convert_element_type(a_dot, c))
    nd = len(a.shape)
    w_dot = lax.reduce_sum(lax.mul(vinv_da, _T(v)), (nd - 1,))
    return [w], [w_dot]


jvp_rules[d.eig_p] = _eig_jvp


# ---------------------------------------------------------------------------- batch


def _front_batch(prim, axis_size, args, dims, **params):
    args = [bdim_at_front(x, b, axis_size) for x, b in zip(args, dims)]
    out = prim.bind(*args, **params)
    return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


for _p in (d.cholesky_p, d.eigh_p, d.qr_p, d.svd_p, d.lu_p, d.triangular_solve_p, d.eig_p,
           d.lu_solve_p, d.solve_p):  # fmt: skip
    batch_rules[_p] = partial(_front_batch, _p)
