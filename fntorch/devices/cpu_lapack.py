"""LU factorization and triangular solves through the LAPACK and BLAS inside numpy's
OpenBLAS, one call per matrix of a batch.

numpy exposes neither ``getrf`` nor ``trsm``, but its wheels ship OpenBLAS with LAPACKE
and CBLAS exported (``scipy_LAPACKE_sgetrf64_``, ``scipy_cblas_strsm64_``: 64-bit
integers, symbol-suffixed). Calling them through ctypes replaces the vectorized Python
loops of ``cpu_decomp`` (one numpy operation per matrix row): W12's 256 LUs of 64x64
took 41 ms that way. SciPy would give the same routines but is not a dependency; where
numpy's BLAS is not such an OpenBLAS (MKL, Accelerate, a numpy built otherwise), these
functions return None and ``cpu_decomp``'s loops run.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from .cpu_blas import _candidates
from .cpu_threads import get_num_threads, run_split

_ROW_MAJOR = 101
_LEFT, _RIGHT = 141, 142
_UPPER, _LOWER = 121, 122
_NO_TRANS, _TRANS = 111, 112
_NON_UNIT, _UNIT = 131, 132

_I64 = ctypes.c_int64
_P = ctypes.c_void_p
_E = ctypes.c_int  # a CBLAS enum


@functools.cache
def _routines():
    """``{dtype: (getrf, trsm, trsv)}`` from numpy's OpenBLAS, or ``{}`` when it has none."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = {}
        for dtype, c, scalar in ((np.float32, "s", ctypes.c_float),
                                 (np.float64, "d", ctypes.c_double)):  # fmt: skip
            getrf = getattr(lib, f"scipy_LAPACKE_{c}getrf64_", None)
            trsm = getattr(lib, f"scipy_cblas_{c}trsm64_", None)
            trsv = getattr(lib, f"scipy_cblas_{c}trsv64_", None)
            if getrf is None or trsm is None or trsv is None:
                break
            getrf.restype, getrf.argtypes = _I64, [ctypes.c_int, _I64, _I64, _P, _I64, _P]
            trsm.restype = None
            trsm.argtypes = [_E, _E, _E, _E, _E, _I64, _I64, scalar, _P, _I64, _P, _I64]
            trsv.restype = None
            trsv.argtypes = [_E, _E, _E, _E, _I64, _P, _I64, _P, _I64]
            found[np.dtype(dtype)] = (getrf, trsm, trsv)
        if len(found) == 2:
            return found
    return {}


def _each(n: int, call) -> None:
    """``call(i)`` for every matrix ``i < n``; a large batch is split over fntorch's
    threads (ctypes releases the GIL while LAPACK runs)."""

    def part(_key, lo, hi):
        for i in range(lo, hi):
            call(i)

    threads = get_num_threads()
    if threads > 1 and n >= _SPLIT_BATCH:
        run_split(part, 0, n, threads)
    else:
        part(0, 0, n)


# Matrices below which a batch stays on the calling thread: handing chunks to the pool
# costs some tens of microseconds, a few small solves' worth.
_SPLIT_BATCH = 16


def lu_factor(x):
    """``(lu, pivots)`` (0-based, int64) of a stack of float32/float64 matrices by
    LAPACK's getrf, or None where LAPACK is not reachable or the dtype is another.

    >>> out = lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> out is None or (out[0].tolist(), out[1].tolist())
    ([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [1, 1])
    """
    fns = _routines().get(np.asarray(x).dtype)
    if fns is None:
        return None
    getrf = fns[0]
    *batch, m, n = x.shape
    k = min(m, n)
    nb = int(np.prod(batch, dtype=np.int64))  # not -1: a size-0 batch is ambiguous
    a = np.array(x, order="C", copy=True).reshape((nb, m, n))
    piv = np.zeros((a.shape[0], k), np.int64)
    if m and n:
        step_a, step_p = a.strides[0], piv.strides[0]
        pa, pp = a.ctypes.data, piv.ctypes.data
        # info > 0 marks an exactly zero pivot: the factorization completes (that column
        # is not divided), as cpu_decomp's loop and JAX do.
        _each(a.shape[0], lambda i: getrf(_ROW_MAJOR, m, n, pa + i * step_a, n, pp + i * step_p))
    piv -= 1
    return a.reshape((*batch, m, n)), piv.reshape((*batch, k))


def solve_triangular(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    """``op(a) @ x = b`` (or ``x @ op(a) = b``) by BLAS trsm per matrix, reading only the
    named triangle; None where BLAS is not reachable or the dtypes are other.

    >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> x = solve_triangular(a, np.array([[2.0], [3.0]]), left_side=True, lower=True,
    ...                      transpose_a=False, unit_diagonal=False)
    >>> x is None or x.tolist()
    [[1.0], [2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    fns = _routines().get(b.dtype)
    if fns is None or a.dtype != b.dtype:
        return None
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    nb = int(np.prod(batch, dtype=np.int64))  # not -1: a size-0 batch is ambiguous
    a = np.ascontiguousarray(np.broadcast_to(a, (*batch, *a.shape[-2:])))
    a = a.reshape((nb, *a.shape[-2:]))
    x = np.array(np.broadcast_to(b, (*batch, *b.shape[-2:])), order="C", copy=True)
    x = x.reshape((nb, *b.shape[-2:]))
    m, n = x.shape[1:]
    step_a, step_x = a.strides[0], x.strides[0]
    pa, px = a.ctypes.data, x.ctypes.data
    if x.size:
        solve = _solver(fns, m, n, left_side=left_side, lower=lower, transpose_a=transpose_a,
                        unit_diagonal=unit_diagonal)  # fmt: skip
        _each(x.shape[0], lambda i: solve(pa + i * step_a, px + i * step_x))
    return x.reshape((*batch, m, n))


def _solver(fns, m, n, *, left_side, lower, transpose_a, unit_diagonal):
    """``solve(pa, px)``: one triangular solve in place on the C-ordered ``(m, n)`` matrix
    at ``px``, ``a`` square (side ``m`` or ``n``) at ``pa``."""
    trsm, trsv = fns[1], fns[2]
    lda = m if left_side else n
    if (n == 1) if left_side else (m == 1):
        # One right-hand side: trsv, without trsm's packing (3x faster at 64x64). For
        # x @ op(a) = b, solve op(a)^T x^T = b^T: the other transpose.
        args = (
            _ROW_MAJOR,
            _LOWER if lower else _UPPER,
            _TRANS if transpose_a == left_side else _NO_TRANS,
            _UNIT if unit_diagonal else _NON_UNIT,
            lda,
        )
        return lambda pa, px: trsv(*args, pa, lda, px, 1)
    args = (
        _ROW_MAJOR,
        _LEFT if left_side else _RIGHT,
        _LOWER if lower else _UPPER,
        _TRANS if transpose_a else _NO_TRANS,
        _UNIT if unit_diagonal else _NON_UNIT,
        m,
        n,
        1.0,
    )
    return lambda pa, px: trsm(*args, pa, lda, px, n)


def lu_solve(lu, permutation, b, *, transpose_a):
    """``op(a) @ x = b`` from ``lu(a)``'s packed ``lu`` and row ``permutation``: the two
    triangular solves of each matrix in one pass over the batch, the rows permuted by
    numpy (before them, or after for the transposed solve); None where BLAS is not
    reachable or the dtypes are other.

    >>> lu = np.array([[3.0, 4.0], [1 / 3, 2 / 3]])  # lu([[1, 2], [3, 4]])
    >>> x = lu_solve(lu, np.array([1, 0]), np.array([[5.0], [11.0]]), transpose_a=False)
    >>> x is None or np.round(x, 12).tolist()
    [[1.0], [2.0]]
    """
    lu, b = np.asarray(lu), np.asarray(b)
    fns = _routines().get(b.dtype)
    if fns is None or lu.dtype != b.dtype:
        return None
    *batch, n, k = b.shape
    nb = int(np.prod(batch, dtype=np.int64))
    a = np.ascontiguousarray(lu).reshape((nb, n, n))
    rows = np.asarray(permutation, np.intp).reshape((nb, n, 1))
    b = b.reshape((nb, n, k))
    # the copy the solve writes into (take_along_axis's result need not be C-ordered)
    x = b if transpose_a else np.take_along_axis(b, rows, axis=1)
    x = np.array(x, order="C", copy=True)
    if x.size:
        kw = dict(left_side=True, transpose_a=transpose_a)
        unit_lower = _solver(fns, n, k, lower=True, unit_diagonal=True, **kw)
        upper = _solver(fns, n, k, lower=False, unit_diagonal=False, **kw)
        first, second = (upper, unit_lower) if transpose_a else (unit_lower, upper)
        step_a, step_x = a.strides[0], x.strides[0]
        pa, px = a.ctypes.data, x.ctypes.data

        def solve(i):
            first(pa + i * step_a, px + i * step_x)
            second(pa + i * step_a, px + i * step_x)

        _each(nb, solve)
    if transpose_a:  # x = P^T w: row i of w is row permutation[i] of x
        x = np.take_along_axis(x, inverse_permutation(rows, axis=1), axis=1)
    return x.reshape((*batch, n, k))


def inverse_permutation(perm, axis=-1):
    """The permutation that undoes ``perm`` along ``axis``: its stable argsort, which
    also gives every array that is no permutation one deterministic answer (a batching
    test shuffles ``lu_solve``'s operands).

    >>> inverse_permutation(np.array([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    return np.argsort(perm, axis=axis, kind="stable")
