"""Matrix products on the GPU as one strided-batched cuBLAS call, made directly.

``cupy.matmul`` reaches the same cuBLAS routine, but CuPy's cuBLAS bindings refuse
to run while a stream is being captured into a CUDA graph (their ``setStream`` raises
NotImplementedError: "calling cuBLAS API during stream capture is currently
unsupported"), so a program with a matrix product could never be replayed as a graph
(``cuda_graphs``); cuBLAS itself captures fine, as PyTorch's CUDA graphs show. CuPy
also spends more host time per call than the cuBLAS call costs on small matrices.
``gemm`` calls ``cublasSetStream_v2`` and ``cublas{S,D}gemmStridedBatched`` through
ctypes, in the libcublas CuPy has loaded (found in ``/proc/self/maps``) and on CuPy's
handle, on the current stream, reading transposed operands in place (cuBLAS's op
flags) rather than copying them.

cuBLAS is column-major: a row-major ``C = A @ B`` is the column-major ``C^T = B^T A^T``,
and a row-major matrix is its transpose read column-major, so the call passes ``B``
before ``A`` and no operand moves.

``usable`` checks once, on small products against ``cupy.matmul``, that the call here
computes the right thing, and ``gemm`` is used only where it does (elsewhere, and
off Linux, ``cupy.matmul`` runs and such programs are not captured).

>>> gemm_dtypes()
('float32', 'float64')
"""

from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np

_N, _T = 0, 1  # CUBLAS_OP_N, CUBLAS_OP_T
_ROUTINES = {"float32": "cublasSgemmStridedBatched", "float64": "cublasDgemmStridedBatched"}


def gemm_dtypes() -> tuple:
    """The dtypes ``gemm`` computes (the others go through ``cupy.matmul``)."""
    return tuple(_ROUTINES)


def _operand(x):
    """``(x, op, ld, batch_stride)`` of a ``(batch, rows, cols)`` array for cuBLAS: read in
    place when each matrix is C- or F-contiguous and the batch evenly strided, else a
    C-contiguous copy."""
    nb, r, c = x.shape
    item = x.itemsize
    sb, sr, sc = x.strides
    even = nb == 1 or sb == r * c * item
    if even and (sc == item or c == 1) and (sr == c * item or r == 1):
        return x, _N, max(c, 1), r * c
    if even and (sr == item or r == 1) and (sc == r * item or c == 1):
        return x, _T, max(r, 1), r * c
    return _operand(x.copy(order="C"))


@functools.cache
def _constants(dtype):
    # alpha = 1 and beta = 0 on the host, alive for the process: cuBLAS reads them at
    # the call (pointer mode host), and a captured graph keeps the values read then.
    return np.ones((), dtype), np.zeros((), dtype)


_handles = threading.local()


def _handle(cp) -> int:
    """This thread's cuBLAS handle for the current device. CuPy's getter refuses to run
    while a stream is being captured, so the handle is fetched on a first call outside
    capture (``usable`` makes one) and kept."""
    dev = cp.cuda.runtime.getDevice()
    got = getattr(_handles, "by_device", None)
    if got is None:
        got = _handles.by_device = {}
    h = got.get(dev)
    if h is None:
        h = got[dev] = cp.cuda.device.get_cublas_handle()
    return h


@functools.cache
def _library():
    """libcublas as CuPy loaded it, with the two entry points typed."""
    import cupy as cp

    cp.cuda.device.get_cublas_handle()  # CuPy loads libcublas on first use
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/libcublas.so" in line}
    if not paths:
        raise OSError("libcublas is not loaded in this process")
    lib = ctypes.CDLL(sorted(paths)[0])
    P, I, L = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
    lib.cublasSetStream_v2.argtypes = [P, P]
    for name in _ROUTINES.values():
        fn = getattr(lib, name)
        fn.argtypes = [P, I, I, I, I, I, P, P, I, L, P, I, L, P, P, I, L, I]
        fn.restype = I
    lib.cublasSetStream_v2.restype = I
    return lib


def _call(cp, a, b):
    nb, m, k = a.shape
    n = b.shape[2]
    out = cp.empty((nb, m, n), a.dtype)
    if out.size == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    a, op_a, lda, stride_a = _operand(a)
    b, op_b, ldb, stride_b = _operand(b)
    one, zero = _constants(a.dtype)
    lib = _library()
    handle = _handle(cp)
    status = lib.cublasSetStream_v2(handle, cp.cuda.get_current_stream().ptr)
    if status == 0:
        status = getattr(lib, _ROUTINES[a.dtype.name])(
            handle, op_b, op_a, n, m, k, one.ctypes.data,
            b.data.ptr, ldb, stride_b, a.data.ptr, lda, stride_a,
            zero.ctypes.data, out.data.ptr, n, m * n, nb,
        )  # fmt: skip
    if status != 0:
        raise RuntimeError(f"gemm: cuBLAS returned status {status}")
    return out


why_not: list = []  # why ``usable`` said no, for a look at a GPU run


@functools.cache
def usable(cp) -> bool:
    """Whether the direct call computes products as ``cupy.matmul`` does here (checked
    once, on small float32 and float64 products with transposed operands)."""
    try:
        rng = np.random.default_rng(0)
        for dtype in gemm_dtypes():
            a = cp.asarray(rng.standard_normal((2, 3, 5)).astype(dtype))
            b = cp.asarray(rng.standard_normal((2, 4, 5)).astype(dtype))
            bt = b.transpose(0, 2, 1)
            got, want = cp.asnumpy(_call(cp, a, bt)), cp.asnumpy(cp.matmul(a, bt))
            if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                why_not.append(f"{dtype}: the direct call computed another product")
                return False
        return True
    except Exception as e:  # noqa: BLE001 - an older CuPy without these bindings: cupy.matmul
        why_not.append(f"{type(e).__name__}: {e}")
        return False


def gemm(cp, a, b):
    """``a @ b`` for ``(batch, m, k)`` and ``(batch, k, n)`` CuPy arrays of one dtype in
    ``gemm_dtypes()`` (2-d operands are one batch), on the current stream; None where
    the direct call is not usable (the caller then uses ``cupy.matmul``)."""
    if a.dtype.name not in _ROUTINES or a.dtype != b.dtype or not usable(cp):
        return None
    if a.ndim == 2:
        return _call(cp, a[None], b[None])[0]
    return _call(cp, a, b)
