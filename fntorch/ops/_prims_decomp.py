"""Matrix decomposition primitives and their abstract-eval rules (see docs/primitives.md).

The minimal set, as JAX's ``lax.linalg``: ``cholesky``, ``eigh``, ``qr``, ``svd``, ``lu``,
``triangular_solve`` and ``eig``, plus the two solves: ``lu_solve`` (the solve with
``lu``'s factors, linear in the right-hand side, transposed by the transposed solve with
the same factors) and ``solve``, whose jvp factors once and differentiates through
``lu_solve`` (JAX's ``custom_linear_solve`` for ``jnp.linalg.solve``), never through
``lu``'s jvp. Everything else of ``ft.linalg`` (det, inv, slogdet, pinv, lstsq,
matrix_rank, the norms) is Python over these and holds no rules.
Each acts on the last two dims; leading dims are a batch. ``lu``, the solves and
``triangular_solve`` also take complex64/complex128 (their rules hold for complex values
as they are: the transposes are transposes, JAX's convention); ``eig`` takes real or
complex matrices and returns complex eigenvalues and eigenvectors. The Hermitian and
unitary factorizations (cholesky, eigh, qr, svd) take complex matrices too (eigenvalues
and singular values real; Hermitian inputs read as LAPACK reads them: the lower
triangle and the real part of the diagonal), with JAX's complex rules.
"""

from __future__ import annotations

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules

__all__ = [
    "cholesky_p", "eigh_p", "qr_p", "svd_p", "lu_p", "triangular_solve_p", "eig_p",
    "lu_solve_p", "solve_p",
    "cholesky", "eigh", "qr", "svd", "lu", "triangular_solve", "eig", "lu_solve", "solve",
]  # fmt: skip

_FLOATS = (dt.float32, dt.float64)
_INEXACT = _FLOATS + dt.complex_dtypes
PIVOT_DTYPE = dt.int32
_real_dtype = dt.real_dtype


def check_matrix(name: str, x, *, square: bool = False, what: str = "x", complex_ok=False):
    """Checks that ``x`` (an abstract value or array) is a float32/float64 (or, if
    ``complex_ok``, complex64/complex128) stack of matrices (square if asked); returns
    its ``(batch, m, n)``.

    >>> import numpy as np
    >>> check_matrix("cholesky", np.zeros((2, 3, 3)), square=True)
    ((2,), 3, 3)
    """
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(
            f"{name}: {what} must be a matrix or a stack of matrices (at least 2-d), "
            f"got shape {shape}"
        )
    if square and shape[-1] != shape[-2]:
        raise ValueError(
            f"{name}: {what} must be a square matrix or a stack of them (..., n, n), "
            f"got shape {shape}"
        )
    if x.dtype not in (_INEXACT if complex_ok else _FLOATS):
        allowed = "float32 or float64" + (" (or complex64, complex128)" if complex_ok else "")
        raise TypeError(f"{name}: {what} must have dtype {allowed}, got {x.dtype}")
    return shape[:-2], shape[-2], shape[-1]


def _flag(name, what, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: {what} must be a bool, got {value!r}")


# ------------------------------------------------------------------------- cholesky
cholesky_p = Primitive("cholesky")


def _cholesky_abstract(x):
    # Reads the lower triangle only (LAPACK's potrf); NaN where x is not positive definite.
    check_matrix("cholesky", x, square=True, complex_ok=True)
    return ShapedArray(tuple(x.shape), x.dtype)


abstract_eval_rules[cholesky_p] = _cholesky_abstract


# ----------------------------------------------------------------------------- eigh
eigh_p = Primitive("eigh", multiple_results=True)


def _eigh_abstract(x):
    # Outputs (eigenvalues ascending, eigenvectors as columns); reads the lower triangle.
    batch, n, _ = check_matrix("eigh", x, square=True, complex_ok=True)
    return [ShapedArray((*batch, n), _real_dtype(x.dtype)), ShapedArray(tuple(x.shape), x.dtype)]


abstract_eval_rules[eigh_p] = _eigh_abstract


# ------------------------------------------------------------------------------- qr
qr_p = Primitive("qr", multiple_results=True)


def _qr_abstract(x, *, full_matrices):
    _flag("qr", "full_matrices", full_matrices)
    batch, m, n = check_matrix("qr", x, complex_ok=True)
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


abstract_eval_rules[qr_p] = _qr_abstract


# ------------------------------------------------------------------------------ svd
svd_p = Primitive("svd", multiple_results=True)


def _svd_abstract(x, *, full_matrices, compute_uv):
    # Outputs (s descending,) or (s, u, vt) with x = u @ diag(s) @ vt.
    _flag("svd", "full_matrices", full_matrices)
    _flag("svd", "compute_uv", compute_uv)
    batch, m, n = check_matrix("svd", x, complex_ok=True)
    k = min(m, n)
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    mu, nv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, mu), x.dtype), ShapedArray((*batch, nv, n), x.dtype)]


abstract_eval_rules[svd_p] = _svd_abstract


# ------------------------------------------------------------------------------- lu
lu_p = Primitive("lu", multiple_results=True)


def _lu_abstract(x):
    # Outputs (lu, pivots, permutation) as JAX's: ``lu`` holds L (unit diagonal, below)
    # and U; row i of P @ x is row permutation[i] of x; pivots are LAPACK's, 0-based.
    batch, m, n = check_matrix("lu", x, complex_ok=True)
    return [
        ShapedArray(tuple(x.shape), x.dtype),
        ShapedArray((*batch, min(m, n)), PIVOT_DTYPE),
        ShapedArray((*batch, m), PIVOT_DTYPE),
    ]


abstract_eval_rules[lu_p] = _lu_abstract


# ------------------------------------------------------------------ triangular_solve
triangular_solve_p = Primitive("triangular_solve")


def _triangular_solve_abstract(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    # Solves op(a) @ x = b (left_side) or x @ op(a) = b, op(a) = a.T if transpose_a;
    # reads only a's triangle named by ``lower`` (and not its diagonal if unit_diagonal).
    name = "triangular_solve"
    for what, v in (("left_side", left_side), ("lower", lower), ("transpose_a", transpose_a),
                    ("unit_diagonal", unit_diagonal)):  # fmt: skip
        _flag(name, what, v)
    batch, m, _ = check_matrix(name, a, square=True, what="a", complex_ok=True)
    bbatch, bm, bn = check_matrix(name, b, what="b", complex_ok=True)
    if a.dtype != b.dtype:
        raise TypeError(f"{name}: a and b must share one dtype, got {a.dtype} and {b.dtype}")
    if bbatch != batch:
        raise ValueError(
            f"{name}: a and b must have the same batch dims, got shapes {tuple(a.shape)} "
            f"and {tuple(b.shape)}"
        )
    if (bm if left_side else bn) != m:
        side = "rows" if left_side else "columns"
        raise ValueError(
            f"{name}: b must have {m} {side} to match a of shape {tuple(a.shape)} "
            f"(left_side={left_side}), got shape {tuple(b.shape)}"
        )
    return ShapedArray(tuple(b.shape), b.dtype)


abstract_eval_rules[triangular_solve_p] = _triangular_solve_abstract


# ------------------------------------------------------------------------------ eig
eig_p = Primitive("eig", multiple_results=True)


def _eig_abstract(x, *, vectors):
    # Outputs [eigenvalues] or [eigenvalues, right eigenvectors as columns], complex
    # (LAPACK's geev order; each vector of unit norm with its largest component real).
    _flag("eig", "vectors", vectors)
    batch, n, _ = check_matrix("eig", x, square=True, complex_ok=True)
    c = dt.complex_dtype(x.dtype)
    w = ShapedArray((*batch, n), c)
    return [w, ShapedArray(tuple(x.shape), c)] if vectors else [w]


abstract_eval_rules[eig_p] = _eig_abstract


# --------------------------------------------------------------------- lu_solve, solve
lu_solve_p = Primitive("lu_solve")
solve_p = Primitive("solve")


def _check_rhs(name, a, b, what="a"):
    """``b`` as a right-hand side ``(..., n, k)`` of the square ``a`` ``(..., n, n)``."""
    batch, n, _ = check_matrix(name, a, square=True, what=what, complex_ok=True)
    bbatch, bn, _ = check_matrix(name, b, what="b", complex_ok=True)
    if a.dtype != b.dtype:
        raise TypeError(f"{name}: {what} and b must share one dtype, got {a.dtype} and {b.dtype}")
    if bbatch != batch or bn != n:
        raise ValueError(
            f"{name}: b must have shape (*batch, {n}, k) with the batch dims of {what} "
            f"{tuple(a.shape)}, got shape {tuple(b.shape)}"
        )
    return batch, n


def _lu_solve_abstract(lu, permutation, b, *, transpose_a):
    # Solves op(a) @ x = b for the a that lu(a) factors into ``lu`` and ``permutation``
    # (a[permutation] = L @ U); op(a) = a.T if transpose_a (no conjugation). Linear in b.
    _flag("lu_solve", "transpose_a", transpose_a)
    batch, n = _check_rhs("lu_solve", lu, b, what="lu")
    if permutation.dtype != PIVOT_DTYPE:
        raise TypeError(
            f"lu_solve: permutation must be {PIVOT_DTYPE} (lu's third result), got "
            f"{permutation.dtype}"
        )
    if tuple(permutation.shape) != (*batch, n):
        raise ValueError(
            f"lu_solve: permutation must have shape {(*batch, n)} to match lu of shape "
            f"{tuple(lu.shape)}, got shape {tuple(permutation.shape)}"
        )
    return ShapedArray(tuple(b.shape), b.dtype)


abstract_eval_rules[lu_solve_p] = _lu_solve_abstract


def _solve_abstract(a, b):
    # Solves a @ x = b; a singular a gives inf/NaN, as lu and lu_solve would. Linear in b
    # (transpose: the solve with a.T).
    _check_rhs("solve", a, b)
    return ShapedArray(tuple(b.shape), b.dtype)


abstract_eval_rules[solve_p] = _solve_abstract


# --------------------------------------------------------------- lax-style wrappers


def cholesky(x):
    """Lower Cholesky factor of ``x`` (its lower triangle is read); NaN where ``x`` is
    not positive definite.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 0.0], [2.0, 9.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.8284271247461903]]
    """
    return cholesky_p.bind(x)


def eigh(x):
    """``[eigenvalues, eigenvectors]`` of a symmetric ``x`` (its lower triangle is read),
    eigenvalues ascending.

    >>> import numpy as np
    >>> w, v = eigh(np.array([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist()
    [1.0, 2.0]
    """
    return eigh_p.bind(x)


def qr(x, full_matrices: bool = False):
    """``[q, r]`` with ``x = q @ r``; ``q`` is ``(..., m, k)`` with ``k = min(m, n)``, or
    ``(..., m, m)`` if ``full_matrices``.

    >>> import numpy as np
    >>> q, r = qr(np.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    return qr_p.bind(x, full_matrices=bool(full_matrices))


def svd(x, full_matrices: bool = False, compute_uv: bool = True):
    """``[s, u, vt]`` with ``x = u @ diag(s) @ vt`` (``[s]`` unless ``compute_uv``), ``s``
    descending.

    >>> import numpy as np
    >>> svd(np.diag([1.0, 3.0]), compute_uv=False)[0].tolist()
    [3.0, 1.0]
    """
    return svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def lu(x):
    """``[lu, pivots, permutation]``: LU factorization with partial pivoting, as JAX's
    ``lax.linalg.lu`` (``P @ x = L @ U``, ``P`` the rows ``permutation``).

    >>> import numpy as np
    >>> lu(np.array([[1.0, 2.0], [3.0, 4.0]]))[2].tolist()
    [1, 0]
    """
    return lu_p.bind(x)


def triangular_solve(a, b, left_side=False, lower=False, transpose_a=False, unit_diagonal=False):
    """``x`` with ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``, ``a`` triangular,
    ``op(a) = a.T`` if ``transpose_a`` (JAX's ``lax.linalg.triangular_solve``).

    >>> import numpy as np
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
    ...                  left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        unit_diagonal=bool(unit_diagonal),
    )


def eig(x, vectors: bool = True):
    """``[w, v]`` (or ``[w]``): the eigenvalues and right eigenvectors of a general square
    ``x``, complex, in LAPACK's order.

    >>> import numpy as np
    >>> eig(np.array([[0.0, -1.0], [1.0, 0.0]]), vectors=False)[0].tolist()
    [1j, -1j]
    """
    return eig_p.bind(x, vectors=bool(vectors))


def lu_solve(lu, permutation, b, transpose_a: bool = False):
    """``x`` with ``op(a) @ x = b`` from ``lu(a)``'s ``lu`` and ``permutation``
    (``op(a) = a.T`` if ``transpose_a``); ``b`` is ``(..., n, k)`` with ``lu``'s batch.

    >>> import numpy as np
    >>> f = lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu_solve(f[0], f[2], np.array([[5.0], [11.0]])).tolist()
    [[1.0], [2.0]]
    """
    return lu_solve_p.bind(lu, permutation, b, transpose_a=bool(transpose_a))


def solve(a, b):
    """``x`` with ``a @ x = b``, ``b`` ``(..., n, k)`` with ``a``'s batch dims.

    >>> import numpy as np
    >>> solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([[2.0], [2.0]])).tolist()
    [[1.0], [0.5]]
    """
    return solve_p.bind(a, b)
