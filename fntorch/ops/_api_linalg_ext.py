"""``ft.linalg``'s decompositions and solvers, composed from the decomposition primitives.

As JAX's ``jnp.linalg``: ``det`` and ``slogdet`` are ``lu``; ``inv`` and ``solve`` are the
``solve`` primitive (whose derivative reuses its LU factors); ``pinv``, ``lstsq`` and
``matrix_rank`` are ``svd``; none has a rule of its own, so each differentiates, batches
and compiles through the primitives'.
Inputs are stacks of matrices (leading dims a batch); integer and bool inputs become the
default float dtype first, as in JAX; float16/bfloat16 raise ``TypeError`` (no LAPACK
for them). ``eigh`` and ``cholesky`` symmetrize their input, ``(x + x.mT) / 2``, as JAX's
(``symmetrize_input=True``), so their derivatives treat the input as symmetric.
Derivatives follow JAX's rules and share their limits: ``det``/``inv``/``solve`` at a
singular matrix and ``eigh``/``svd`` at repeated eigen/singular values give inf/NaN.
Complex64/complex128 inputs go through every function here but ``lu_solve`` (real
only); ``eigh`` and ``cholesky`` take the Hermitian part ``(x + x^H) / 2``.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from . import _prims_decomp as d
from ._api_common import cast
from ._prims_elementwise import broadcast_shapes
from .api import (
    abs,
    asarray,
    broadcast_to,
    conj,
    expand_dims,
    eye,
    log,
    matmul,
    matrix_transpose,
    max,
    prod,
    sign,
    sum,
    take_along_axis,
    where,
)

__all__ = [
    "EighResult", "QRResult", "SVDResult", "SlogdetResult", "LUFactorResult", "LstsqResult",
    "cholesky", "eigh", "eigvalsh", "qr", "svd", "svdvals", "det", "slogdet", "inv", "solve",
    "solve_triangular", "lu_factor", "lu_solve", "lstsq", "pinv", "matrix_rank",
    "matrix_power",
]  # fmt: skip


class EighResult(NamedTuple):
    """``eigh``'s result: ``eigenvalues`` (ascending) and ``eigenvectors`` (columns).

    >>> import fntorch as ft
    >>> ft.linalg.eigh(ft.eye(2)).eigenvalues.tolist()
    [1.0, 1.0]
    """

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """``qr``'s result: ``Q`` and ``R``.

    >>> import fntorch as ft
    >>> ft.linalg.qr(ft.eye(2)).R.shape
    (2, 2)
    """

    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    """``svd``'s result: ``U``, ``S``, ``Vh``.

    >>> import fntorch as ft
    >>> ft.linalg.svd(ft.eye(2)).S.tolist()
    [1.0, 1.0]
    """

    U: Tensor
    S: Tensor
    Vh: Tensor


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: ``sign`` and ``logabsdet``.

    >>> import fntorch as ft
    >>> ft.linalg.slogdet(ft.eye(2)).sign.item()
    1.0
    """

    sign: Tensor
    logabsdet: Tensor


class LUFactorResult(NamedTuple):
    """``lu_factor``'s result: ``LU`` and 1-based ``pivots``.

    >>> import fntorch as ft
    >>> ft.linalg.lu_factor(ft.eye(2)).pivots.tolist()
    [1, 2]
    """

    LU: Tensor
    pivots: Tensor


class LstsqResult(NamedTuple):
    """``lstsq``'s result: ``solution``, ``residuals``, ``rank``, ``singular_values``.

    >>> import fntorch as ft
    >>> ft.linalg.lstsq(ft.eye(2), ft.ones(2)).rank.item()
    2
    """

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


# --------------------------------------------------------------------------- helpers


def as_float_matrix(
    name: str, x, *, square: bool = False, what: str = "x", complex_ok: bool = False
) -> Tensor:
    """``x`` as a float32/float64 (or, if ``complex_ok``, complex) tensor of rank >= 2
    (square if asked), or the error naming ``name``.

    >>> import fntorch as ft
    >>> as_float_matrix("inv", [[1, 2], [3, 4]]).dtype
    dtype('float32')
    """
    x = as_float(name, x, what, complex_ok)
    shape = tuple(x.shape)
    if x.ndim < 2:
        raise ValueError(
            f"{name}: {what} must be a matrix or a stack of matrices (at least 2-d), "
            f"got shape {shape}"
        )
    if square and shape[-1] != shape[-2]:
        raise ValueError(
            f"{name}: {what} must be a square matrix or a stack of them (..., n, n), "
            f"got shape {shape}"
        )
    return x


def as_float(name: str, x, what: str = "x", complex_ok: bool = False) -> Tensor:
    """``x`` as a tensor of float32/float64 (ints and bools: the default float), or
    complex64/complex128 if ``complex_ok``."""
    x = x if isinstance(x, Tensor) else asarray(x)
    if dt.is_integer(x.dtype) or x.dtype == dt.bool_:
        return cast(x, dt.default_float)
    if complex_ok and dt.is_complex(x.dtype):
        return x
    if x.dtype not in (dt.float32, dt.float64):
        also = ", complex64, complex128" if complex_ok else ""
        raise TypeError(
            f"{name}: {what} must have dtype float32 or float64{also} (or an integer dtype), "
            f"got {x.dtype}"
        )
    return x


def _same_dtype(x1: Tensor, x2: Tensor):
    dtype = dt.result_type(x1.dtype, x2.dtype)
    return cast(x1, dtype), cast(x2, dtype)


def _symmetrize(x):
    return (x + _adjoint(x)) / 2


def _adjoint(x):
    """The conjugate transpose of a stack of matrices (the transpose for real ones)."""
    t = matrix_transpose(x)
    return conj(t) if dt.is_complex(x.dtype) else t


def _broadcast_batch(name, a, b):
    """``a`` and ``b`` with their batch dims (all but the last two) broadcast together."""
    try:
        batch = broadcast_shapes(name, tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise ValueError(
            f"{name}: the batch dims of shapes {tuple(a.shape)} and {tuple(b.shape)} "
            "cannot be broadcast together"
        ) from None
    return (broadcast_to(a, (*batch, *a.shape[-2:])), broadcast_to(b, (*batch, *b.shape[-2:])))


def _diag(x):
    n = x.shape[-1]
    idx = np.arange(n)
    return x[..., idx, idx]


def _parity(pivots, dtype):
    """(-1) to the number of row swaps LAPACK's pivots make."""
    dtype = dt.real_dtype(dtype)  # the sign's arithmetic is real; it multiplies complexes
    swaps = sum(cast(pivots != np.arange(pivots.shape[-1], dtype=pivots.dtype), dtype), axis=-1)
    return 1 - 2 * (swaps % 2)


# -------------------------------------------------------------------- decompositions


@_autocast_op("cholesky")
def cholesky(x, /, *, upper: bool = False) -> Tensor:
    """Cholesky factor of a symmetric positive-definite ``x``: lower ``L`` with
    ``x = L @ L.mT`` (or upper ``U = L.mT``); NaN where ``x`` is not positive definite.

    >>> import fntorch as ft
    >>> ft.linalg.cholesky(ft.asarray([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    x = as_float_matrix("cholesky", x, square=True, complex_ok=True)
    L = d.cholesky(_symmetrize(x))
    return _adjoint(L) if upper else L


def eigh(x, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric ``x``.

    >>> import fntorch as ft
    >>> ft.linalg.eigh(ft.asarray([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    x = as_float_matrix("eigh", x, square=True, complex_ok=True)
    w, v = d.eigh(_symmetrize(x))
    return EighResult(w, v)


def eigvalsh(x, /) -> Tensor:
    """Eigenvalues (ascending) of a symmetric ``x``.

    >>> import fntorch as ft
    >>> ft.linalg.eigvalsh(ft.asarray([[2.0, 0.0], [0.0, -1.0]])).tolist()
    [-1.0, 2.0]
    """
    x = as_float_matrix("eigvalsh", x, square=True, complex_ok=True)
    return d.eigh(_symmetrize(x))[0]


def qr(x, /, *, mode: str = "reduced") -> QRResult:
    """``Q, R`` with ``x = Q @ R``: ``mode="reduced"`` gives ``Q`` ``(..., m, k)``,
    ``k = min(m, n)``; ``"complete"`` gives ``(..., m, m)``. Derivatives: m >= n, reduced.

    >>> import fntorch as ft
    >>> q, r = ft.linalg.qr(ft.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = as_float_matrix("qr", x, complex_ok=True)
    q, r = d.qr(x, full_matrices=mode == "complete")
    return QRResult(q, r)


def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """``U, S, Vh`` with ``x = U @ diag(S) @ Vh``, ``S`` descending. Derivatives of ``U``
    and ``Vh`` need ``full_matrices=False`` unless ``x`` is square (as JAX's).

    >>> import fntorch as ft
    >>> ft.linalg.svd(ft.asarray([[3.0, 0.0], [0.0, -2.0]])).S.tolist()
    [3.0, 2.0]
    """
    x = as_float_matrix("svd", x, complex_ok=True)
    s, u, vt = d.svd(x, full_matrices=bool(full_matrices))
    return SVDResult(u, s, vt)


def svdvals(x, /) -> Tensor:
    """Singular values of ``x``, descending.

    >>> import fntorch as ft
    >>> ft.linalg.svdvals(ft.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = as_float_matrix("svdvals", x, complex_ok=True)
    return d.svd(x, compute_uv=False)[0]


# ----------------------------------------------------------------------- determinants


def det(x, /) -> Tensor:
    """Determinant of a square ``x`` (the product of its LU factor's diagonal, signed by
    the pivots).

    >>> import fntorch as ft
    >>> ft.linalg.det(ft.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=ft.float64)).item()
    -2.0
    """
    x = as_float_matrix("det", x, square=True, complex_ok=True)
    lu, pivots, _ = d.lu(x)
    return _parity(pivots, x.dtype) * prod(_diag(lu), axis=-1)


def slogdet(x, /) -> SlogdetResult:
    """Sign and log of the absolute value of the determinant (sign 0 and -inf for a
    singular ``x``).

    >>> import fntorch as ft
    >>> s, l = ft.linalg.slogdet(ft.asarray([[-2.0, 0.0], [0.0, 1.0]]))
    >>> s.item(), round(l.item(), 4)
    (-1.0, 0.6931)
    """
    x = as_float_matrix("slogdet", x, square=True, complex_ok=True)
    lu, pivots, _ = d.lu(x)
    diag = _diag(lu)
    mag = abs(diag)
    if dt.is_complex(x.dtype):
        # diag / |diag|, not sign(diag): the sign primitive's derivative is zero (JAX's),
        # but a complex determinant's phase moves with x (JAX's slogdet rule).
        phase = where(mag == 0, 0, diag / where(mag == 0, 1, mag))
    else:
        phase = sign(diag)
    s = _parity(pivots, x.dtype) * prod(phase, axis=-1)
    return SlogdetResult(s, sum(log(mag), axis=-1))


# ------------------------------------------------------------------------------ solve


@_autocast_op("inv")
def inv(x, /) -> Tensor:
    """Inverse of a square ``x`` (inf/NaN where it is singular).

    >>> import fntorch as ft
    >>> ft.linalg.inv(ft.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = as_float_matrix("inv", x, square=True, complex_ok=True)
    return d.solve(x, broadcast_to(eye(x.shape[-1], dtype=x.dtype), tuple(x.shape)))


def solve(x1, x2, /) -> Tensor:
    """``x`` with ``x1 @ x = x2`` (the standard's rules: a 1-d ``x2`` is one vector; else
    ``x2`` is ``(..., n, k)`` and the batch dims broadcast).

    >>> import fntorch as ft
    >>> ft.linalg.solve(ft.asarray([[2.0, 0.0], [0.0, 4.0]]), ft.asarray([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    a = as_float_matrix("solve", x1, square=True, what="x1", complex_ok=True)
    b = as_float("solve", x2, "x2", complex_ok=True)
    a, b = _same_dtype(a, b)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, axis=-1)
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(
            f"solve: x2 must have shape ({n},) or (..., {n}, k) to match x1 of shape "
            f"{tuple(a.shape)}, got shape {tuple(x2.shape if hasattr(x2, 'shape') else ())}"
        )
    out = d.solve(*_broadcast_batch("solve", a, b))
    return out[..., 0] if vector else out


def solve_triangular(A, B, /, *, upper: bool, left: bool = True, unitriangular: bool = False):
    """``X`` with ``A @ X = B`` (``left``) or ``X @ A = B``, ``A`` triangular (only the
    triangle that ``upper`` names is read), as ``torch.linalg.solve_triangular``.

    >>> import fntorch as ft
    >>> A = ft.asarray([[2.0, 1.0], [0.0, 1.0]])
    >>> ft.linalg.solve_triangular(A, ft.asarray([[3.0], [1.0]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    a = as_float_matrix("solve_triangular", A, square=True, what="A", complex_ok=True)
    b = as_float_matrix("solve_triangular", B, what="B", complex_ok=True)
    a, b = _same_dtype(a, b)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise ValueError(
            f"solve_triangular: B of shape {tuple(b.shape)} does not match A of shape "
            f"{tuple(a.shape)} (left={left})"
        )
    a, b = _broadcast_batch("solve_triangular", a, b)
    return d.triangular_solve(a, b, left_side=bool(left), lower=not upper,
                              unit_diagonal=bool(unitriangular))  # fmt: skip


def lu_factor(A, /) -> LUFactorResult:
    """``LU, pivots`` of ``A`` with partial pivoting, as ``torch.linalg.lu_factor``:
    ``pivots`` are LAPACK's, 1-based int32 (row ``i`` was swapped with ``pivots[i] - 1``).

    >>> import fntorch as ft
    >>> ft.linalg.lu_factor(ft.asarray([[1.0, 2.0], [3.0, 4.0]])).pivots.tolist()
    [2, 2]
    """
    a = as_float_matrix("lu_factor", A, complex_ok=True)
    lu, pivots, _ = d.lu(a)
    return LUFactorResult(lu, pivots + np.int32(1))


def _swap_rows(b, pivots, order):
    """``b`` with rows ``i`` and ``pivots[..., i]`` swapped, for ``i`` in ``order``."""
    m = b.shape[-2]
    rows = np.arange(m, dtype=pivots.dtype)[:, None]
    for i in order:
        p = expand_dims(expand_dims(pivots[..., i], axis=-1), axis=-1)  # (..., 1, 1)
        row_i = b[..., i : i + 1, :]
        row_p = take_along_axis(b, broadcast_to(p, (*p.shape[:-1], b.shape[-1])), axis=-2)
        b = where(rows == i, row_p, where(rows == p, row_i, b))
    return b


def lu_solve(LU, pivots, B, /, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """``X`` with ``A @ X = B`` from ``lu_factor(A)`` (``adjoint``: ``A.mH @ X = B``;
    ``left=False``: ``X @ A = B``), as ``torch.linalg.lu_solve``; real or complex.

    >>> import fntorch as ft
    >>> A = ft.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, piv = ft.linalg.lu_factor(A)
    >>> ft.linalg.lu_solve(LU, piv, ft.asarray([[5.0], [11.0]])).tolist()
    [[1.0], [2.0]]
    """
    lu = as_float_matrix("lu_solve", LU, square=True, what="LU", complex_ok=True)
    b = as_float_matrix("lu_solve", B, what="B", complex_ok=True)
    lu, b = _same_dtype(lu, b)
    pivots = pivots if isinstance(pivots, Tensor) else asarray(pivots)
    n = lu.shape[-1]
    if not dt.is_integer(pivots.dtype) or tuple(pivots.shape[-1:]) != (n,):
        raise ValueError(
            f"lu_solve: pivots must be integers of shape (..., {n}) to match LU of shape "
            f"{tuple(lu.shape)}, got {pivots.dtype} of shape {tuple(pivots.shape)}"
        )
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise ValueError(
            f"lu_solve: B of shape {tuple(b.shape)} does not match LU of shape "
            f"{tuple(lu.shape)} (left={left})"
        )
    if left:
        return _lu_solve_op(lu, pivots, b, "H" if adjoint else "N")
    # X @ op(A) = B  <=>  op(A).mT @ X.mT = B.mT, where A.mT is "T" and (A.mH).mT = conj(A)
    xt = _lu_solve_op(lu, pivots, matrix_transpose(b), "C" if adjoint else "T")
    return matrix_transpose(xt)


def _lu_solve_op(lu, pivots, b, op):
    """``op(A) @ X = B`` for ``A = P L U`` packed in ``lu``: op "N" (A), "T" (A.mT), "H"
    (A.mH) or "C" (conj(A)); the conjugated ones through conj(B) and conj(X)."""
    if op in ("H", "C") and dt.is_complex(b.dtype):
        return conj(_lu_solve_op(lu, pivots, conj(b), "T" if op == "H" else "N"))
    n = lu.shape[-1]
    lu, b = _broadcast_batch("lu_solve", lu, b)
    piv = broadcast_to(cast(pivots, dt.int32) - np.int32(1), (*b.shape[:-2], n))
    # LAPACK's row swaps, applied in order to 0..n-1, give lu's row permutation
    rows = broadcast_to(np.arange(n, dtype=np.int32)[:, None], (*b.shape[:-2], n, 1))
    perm = _swap_rows(rows, piv, range(n))[..., 0]
    return d.lu_solve(lu, perm, b, transpose_a=op in ("T", "H"))


# -------------------------------------------------------------------------------- svd


def _default_rtol(x, rtol):
    if rtol is None:
        real = dt.real_dtype(x.dtype)
        return np.asarray(np.finfo(real).eps * builtins.max(x.shape[-2:]), real)
    return rtol


def _cutoff(s, rtol):
    """``rtol`` (a number, or an array broadcast against the batch) times the largest
    singular value, shaped to compare with ``s``."""
    rtol = rtol if isinstance(rtol, Tensor) else asarray(rtol, dtype=s.dtype)
    rtol = cast(rtol, s.dtype)
    top = max(s, axis=-1, keepdims=True) if s.shape[-1] else s[..., :1]
    return expand_dims(rtol, axis=-1) * top if rtol.ndim else rtol * top


def matrix_rank(x, /, *, rtol=None) -> Tensor:
    """Number of singular values above ``rtol`` times the largest (default ``rtol``:
    ``max(m, n) * eps``), as the standard's; int64.

    >>> import fntorch as ft
    >>> ft.linalg.matrix_rank(ft.asarray([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    x = as_float_matrix("matrix_rank", x, complex_ok=True)
    s = d.svd(x, compute_uv=False)[0]
    return sum(cast(s > _cutoff(s, _default_rtol(x, rtol)), dt.int64), axis=-1)


@_autocast_op("pinv")
def pinv(x, /, *, rtol=None) -> Tensor:
    """Moore-Penrose pseudo-inverse through the SVD; singular values at most ``rtol``
    times the largest count as zero (default ``max(m, n) * eps``, as the standard's).

    >>> import fntorch as ft
    >>> ft.linalg.pinv(ft.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    x = as_float_matrix("pinv", x, complex_ok=True)
    s, u, vt = d.svd(x, full_matrices=False)
    keep = s > _cutoff(s, _default_rtol(x, rtol))
    # The inner where keeps 1/s finite where it is dropped, so its derivative is too.
    s_inv = where(keep, 1 / where(keep, s, 1), 0)
    s_inv = cast(s_inv, x.dtype)
    return matmul(_adjoint(vt) * expand_dims(s_inv, axis=-2), _adjoint(u))


def lstsq(a, b, /, rcond=None) -> LstsqResult:
    """Least-squares solution of ``a @ x = b`` through the SVD, as ``numpy.linalg.lstsq``
    but batched: ``solution, residuals, rank, singular_values``. ``residuals`` (squared
    column norms of ``b - a @ x``) are computed when ``m > n``, else empty (its shape
    cannot depend on the rank under ``jit``, as in JAX).

    >>> import fntorch as ft
    >>> a = ft.asarray([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> ft.linalg.lstsq(a, ft.asarray([1.0, 2.0, 3.0])).solution.tolist()
    [1.0, 2.0]
    """
    a = as_float_matrix("lstsq", a, what="a", complex_ok=True)
    b = as_float("lstsq", b, "b", complex_ok=True)
    a, b = _same_dtype(a, b)
    m, n = a.shape[-2:]
    vector = b.ndim == 1
    bm = expand_dims(b, axis=-1) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != m:
        raise ValueError(
            f"lstsq: b must have shape ({m},) or (..., {m}, k) to match a of shape "
            f"{tuple(a.shape)}, got shape {tuple(b.shape)}"
        )
    a, bm = _broadcast_batch("lstsq", a, bm)
    s, u, vt = d.svd(a, full_matrices=False)
    keep = s > _cutoff(s, _default_rtol(a, rcond))
    s_inv = cast(where(keep, 1 / where(keep, s, 1), 0), a.dtype)
    x = matmul(_adjoint(vt), expand_dims(s_inv, axis=-1) * matmul(_adjoint(u), bm))
    rank = sum(cast(keep, dt.int64), axis=-1)
    if m > n:
        r = abs(bm - matmul(a, x)) if dt.is_complex(a.dtype) else bm - matmul(a, x)
        residuals = sum(r * r, axis=-2)
    else:
        residuals = asarray(np.zeros((0,), dt.real_dtype(a.dtype)))
    if vector:
        x = x[..., 0]
        residuals = residuals[..., 0] if m > n else residuals
    return LstsqResult(x, residuals, rank, s)


def matrix_power(x, n: int, /) -> Tensor:
    """``x`` multiplied by itself ``n`` times (``n = 0``: the identity; ``n < 0``: powers
    of ``inv(x)``), by repeated squaring.

    >>> import fntorch as ft
    >>> ft.linalg.matrix_power(ft.asarray([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: n must be an int, got {n!r}")
    x = x if isinstance(x, Tensor) else asarray(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"matrix_power: x must be a square matrix or a stack of them (..., n, n), "
            f"got shape {tuple(x.shape)}"
        )
    n = int(n)
    if n == 0:
        return broadcast_to(eye(x.shape[-1], dtype=x.dtype), tuple(x.shape))
    if n < 0:
        x, n = inv(x), -n
    out = None
    while n:
        if n & 1:
            out = x if out is None else matmul(out, x)
        n >>= 1
        if n:
            x = matmul(x, x)
    return out
