"""Kernel launches straight through the driver: ``cuLaunchKernel`` by CuPy's binding of
it, with parameters laid out once.

CuPy's ``Function.__call__`` turns every argument from a Python object into a parameter
on each launch; on an H100 that launch of a four-parameter kernel took 5.7 us of host
time, against 3.6 for ``cupy.cuda.driver.launchKernel`` given a ready parameter block
(the probe behind the W1 rows in the closing note of this change). So a kernel's
parameters live in ``Params``: one ctypes value per parameter and the array of their
addresses, which ``cuLaunchKernel`` reads. It copies the values at the call, so a block
is written again for the next launch at once; ``LOCK`` keeps two threads from writing
one block between each other's writes and launch (the binding lets go of the GIL in the
driver call). ``cuda_eager``'s hot path keeps a block per thread instead.

>>> p = Params(ctypes.c_uint64(0), ctypes.c_float(0.5))
>>> p.values[0].value = 7
>>> [v.value for v in p.values], p.address == ctypes.addressof(p.pointers)
([7, 0.5], True)
"""

from __future__ import annotations

import ctypes
import threading

LOCK = threading.Lock()


class Params:
    """A kernel's parameter block: ``values`` (ctypes objects, written before each
    launch) and ``address``, the address of the array of pointers to them that
    ``cuLaunchKernel`` takes.

    >>> Params(ctypes.c_int64(3)).values[0].value
    3
    """

    def __init__(self, *values):
        self.values = values
        self.pointers = (ctypes.c_void_p * len(values))(*map(ctypes.addressof, values))
        self.address = ctypes.addressof(self.pointers)


def launcher(cp):
    """``launch(function_ptr, grid, block, params, values)``: writes ``values`` into the
    first parameters of ``params`` and launches the kernel on the current stream (CuPy's,
    as its own kernels use), ``grid`` and ``block`` one-dimensional.

    >>> class Driver:
    ...     def launchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    ...         calls.append((f, gx, bx, stream))
    >>> class Stream:
    ...     ptr = 9
    >>> class Cuda:
    ...     driver = Driver()
    ...     get_current_stream = staticmethod(lambda: Stream)
    >>> class Cp:
    ...     cuda = Cuda()
    >>> calls, p = [], Params(ctypes.c_uint64(0), ctypes.c_int64(16))
    >>> launcher(Cp)(1234, 1, 256, p, (4096,))
    >>> calls, p.values[0].value
    ([(1234, 1, 256, 9)], 4096)
    """
    launch_kernel, current_stream = cp.cuda.driver.launchKernel, cp.cuda.get_current_stream
    acquire, release = LOCK.acquire, LOCK.release  # ~0.2 us less than ``with LOCK``

    def launch(fn, grid, block, params, values):
        slots = params.values
        acquire()
        try:
            for i, v in enumerate(values):
                slots[i].value = v
            launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, current_stream().ptr, params.address, 0)
        finally:
            release()

    return launch
