"""Matrix products for compiled programs and eager impls: small ones on one BLAS thread.

OpenBLAS threads a product above ~2^18 multiply-adds, and after every threaded call its
worker threads spin (``sched_yield`` in a loop) for about 2^28 cycles, ~0.1 s, waiting
for the next one. On a machine with few cores that spinning takes a core from whatever
runs next: the compiled kernels of the same program, or the next call. On W6 (2 cores)
the one large product is (128, 784) x (784, 64); threaded, it took 91-105 us against
151-169 us on one thread, but the whole W6 call took 1.53-1.93 ms with it threaded
against 1.14-1.47 ms with it on one thread: the large kernel after the product runs
beside the spinning worker. So a product below ``ONE_THREAD_MACS`` runs with OpenBLAS
set to one thread: it saves less by threading than the spinning costs after it, in eager
impls and compiled programs alike (see ``matmul``).

Larger products keep OpenBLAS's threads. Splitting them into row blocks over fntorch's
own threads (``cpu_threads.run_split``, one BLAS thread per block) was tried: it held
up better when other processes held the cores (W11's compiled step, a median of 132 ms
against 402 ms with OpenBLAS's threads at a load of 1.5), but on a quieter machine it
lost (W11 90 against 64 ms, W5 6.5 against 4.5 ms, W9 25 against 11 ms: each block packs
the shared operand again, and a threaded OpenBLAS call by anyone else in the process,
numpy's own, leaves its workers spinning on the core the second block needs).

The thread count is set through the two functions OpenBLAS exports for it, found in the
OpenBLAS library numpy loaded, and restored after each product, so numpy calls outside
fntorch keep OpenBLAS's threads. threadpoolctl does the same in general, but its
``limit`` took ~280 us an entry here (it inspects every loaded library; W6's small
products take ~5 us), and it is not one of the project's dependencies. Where numpy's
BLAS is not OpenBLAS (MKL, Accelerate), the products call ``np.matmul`` unchanged.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import threading

import numpy as np

__all__ = ["Products"]

# Multiply-adds below which a product runs on one BLAS thread (~0.4 ms on one core
# here): W6's product (6.4M) is below it; W5's large ones (33M-51M) and W9's (1G) above.
ONE_THREAD_MACS = 1 << 24
# In a compiled program whose kernels all run on the calling thread, products from this
# size on keep OpenBLAS's threads: nothing of fntorch's waits beside a spinning worker.
# W8's scanned RNN (products of 2M multiply-adds, a program of small kernels) took 20-22
# against 26-27 ms a call on the quiet machine (one process, alternating), and 42-45
# against 32-33 ms with another process spinning on one of the two cores: the benchmark
# runs quiet, and numpy's own products always take the threads. Programs that split
# their kernels (W10's) keep one BLAS thread below ``ONE_THREAD_MACS``: with threads
# there, under that load, W10's compiled epoch took 286 against 134 ms.
THREADED_MACS = 1 << 20

# (get, set) of numpy's OpenBLAS, by the symbol names its builds export: numpy 2's
# scipy-openblas wheels, numpy 1's openblas64_ wheels, and a system OpenBLAS.
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


def _candidates():
    """Paths of the OpenBLAS numpy may have loaded: its wheel's own copy, else whatever
    OpenBLAS the process mapped (a numpy linked against a system OpenBLAS)."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    yield from sorted(glob.glob(os.path.join(libs, "*openblas*")))
    try:
        with open("/proc/self/maps") as maps:
            yield from sorted({ln.split()[-1] for ln in maps if "openblas" in ln and "/" in ln})
    except OSError:
        pass


@functools.cache
def _openblas():
    """``(get, set)`` of numpy's OpenBLAS thread count, or ``None`` when numpy's BLAS is
    not OpenBLAS."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


class _OneThread:
    """OpenBLAS on one thread while any fntorch product runs, restored after the last
    one (a count, so products on several Python threads at once restore the user's
    setting, not each other's)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = 1

    def __enter__(self):
        get, put = _openblas()
        with self.lock:
            if self.depth == 0:
                self.saved = get()
                if self.saved != 1:
                    put(1)
            self.depth += 1

    def __exit__(self, *exc):
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.saved != 1:
                _openblas()[1](self.saved)


_one_thread = _OneThread()


class Products:
    """The matrix products of one compiled program: ``matmul``'s, small ones on one BLAS
    thread. ``one_thread`` is set when the program is built if it splits a kernel over
    fntorch's threads: such a program keeps one BLAS thread below ``ONE_THREAD_MACS``,
    any other one only below ``THREADED_MACS``.

    >>> p = Products(); p.one_thread = True
    >>> a = np.ones((4, 3), np.float32)
    >>> p.matmul(a, a.T, np.empty((4, 4), np.float32))[0].tolist()
    [3.0, 3.0, 3.0, 3.0]
    """

    __slots__ = ("one_thread",)

    def __init__(self):
        self.one_thread = False

    def matmul(self, a, b, out):
        """``np.matmul(a, b, out=out)``, on one BLAS thread when the product is small
        (see the module's docstring and ``matmul``); returns ``out``. In a program that
        splits none of its kernels, products from ``THREADED_MACS`` on keep OpenBLAS's
        threads (see ``THREADED_MACS``)."""
        if self.one_thread:
            return matmul(a, b, out)
        return matmul(a, b, out, THREADED_MACS)


def matmul(a, b, out=None, one_thread_below: int = ONE_THREAD_MACS):
    """``np.matmul(a, b, out=out)``, on one BLAS thread when the product is below
    ``one_thread_below`` multiply-adds (``ONE_THREAD_MACS`` for eager impls and the
    programs that split kernels; ``Products`` says when else).

    Beyond the spinning after a call (above), OpenBLAS's threaded gemm waits at barriers
    for its workers: when other processes hold the cores, a worker runs late and every
    small product waits for it. On the 2-core machine under a neighbour's test run the
    digits CNN's compiled epoch (products of 0.1M-5M multiply-adds) took 0.7 s with
    OpenBLAS's threads and 0.1 s with one; when the machine is quiet, one thread is as
    fast for these sizes.

    >>> a = np.ones((4, 3), np.float32)
    >>> matmul(a, a.T)[0].tolist()
    [3.0, 3.0, 3.0, 3.0]
    """
    macs = a.shape[-1] * (out.size if out is not None else _out_size(a, b))
    if macs >= one_thread_below or _openblas() is None:
        return np.matmul(a, b, out=out)
    with _one_thread:
        return np.matmul(a, b, out=out)


def _out_size(a, b) -> int:
    # plain arithmetic for the shapes fntorch's impls pass (np.broadcast_shapes and
    # np.prod cost ~5 us a product: more than a small product itself)
    if a.ndim == 2 and b.ndim == 2:
        return a.shape[0] * b.shape[1]
    if a.ndim == 3 and b.ndim == 3:
        return (b.shape[0] if a.shape[0] == 1 else a.shape[0]) * a.shape[1] * b.shape[2]
    if a.ndim < 2 or b.ndim < 2:
        return max(a.size // max(a.shape[-1], 1), 1) * (b.shape[-1] if b.ndim > 1 else 1)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return int(np.prod(batch, dtype=np.int64)) * a.shape[-2] * b.shape[-1]
