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
driver call): ``CudaKernel.bind``'s launch writes and launches under it, while
``cuda_eager``'s hot path keeps a block per thread instead. ``KeptOutputs`` hands a
launch last call's output buffers once the caller has let go of them.

>>> p = Params(ctypes.c_uint64(0), ctypes.c_float(0.5))
>>> p.values[0].value = 7
>>> [v.value for v in p.values], p.address == ctypes.addressof(p.pointers)
([7, 0.5], True)
"""

from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from sys import getrefcount

LOCK = threading.Lock()


class Params:
    """A kernel's parameter block: ``values`` (ctypes objects, written before each
    launch) and ``address``, the address of the array of pointers to them that
    ``cuLaunchKernel`` takes. The first ``pointers`` parameters (buffer addresses, 64
    bits each) come before ``values`` and live in one array, ``addresses``: a launch
    writes them all with one slice assignment (three slots: 0.2 us against 0.6 for three
    ``.value`` writes).

    >>> p = Params(ctypes.c_int64(3), pointers=2)
    >>> p.addresses[:] = [16, 32]
    >>> [v.value for v in p.values]
    [16, 32, 3]
    """

    def __init__(self, *values, pointers: int = 0):
        self.addresses = (ctypes.c_uint64 * pointers)()
        lead = [ctypes.c_uint64.from_buffer(self.addresses, 8 * i) for i in range(pointers)]
        self.values = (*lead, *values)
        self.pointers = (ctypes.c_void_p * len(self.values))(*map(ctypes.addressof, self.values))
        self.address = ctypes.addressof(self.pointers)


# What ``sys.getrefcount`` reads of a list's element that nothing else holds (calibrated
# here, as the interpreter counts, rather than assumed): ``getrefcount(kept[j]) == ALONE``
# and ``getrefcount(allocation(kept[j])) == ALONE`` say a kept buffer is free to write.
_held = [object()]
ALONE = sys.getrefcount(_held[0])
_KEPT: weakref.WeakSet = weakref.WeakSet()


class KeptOutputs:
    """A launch's output buffers of the last call, written again by the next one once
    the caller let go of them.

    CuPy's ``ndarray(shape, dtype)`` costs ~2 us of host time (its pool's bookkeeping and
    the array object), a third of a one-kernel jit call, where PyTorch allocates in C++
    inside its ops. A launch's outputs have fixed shapes, so ``take`` hands back
    last call's buffers when nothing but this object refers to them (array and memory
    alike: a view or a DLPack export keeps them) and the stream is the same: what CuPy's
    pool would hand back for the same size, stream-ordered as it is. At most one call's
    outputs are kept; ``ft.cuda.empty_cache`` lets go of them (``release_all``). Threads
    sharing one must take under a lock (``CudaKernel.bind``'s launch takes under
    ``LOCK``): between one's check and its taking, another would see the buffer free.

    >>> kept = KeptOutputs(lambda shape, dtype: bytearray(8), [((2,), "float32")])
    >>> a = kept.take(0)[0]
    >>> kept.take(0)[0] is a  # ``a`` still holds the first: another buffer
    False
    >>> last = id(kept.take(0)[0])  # nothing holds that one once this line is done...
    >>> id(kept.take(0)[0]) == last  # ...so the next launch writes it again
    True
    """

    __slots__ = ("_new", "_specs", "_bufs", "_stream", "__weakref__")

    def __init__(self, new, specs):
        self._new, self._specs = new, tuple(specs)
        self._bufs = [None] * len(self._specs)
        self._stream = None
        _KEPT.add(self)

    def take(self, stream) -> list:
        """Output buffers for a launch on ``stream`` (a stream's pointer)."""
        bufs = self._bufs
        if stream != self._stream:
            self._stream = stream
            bufs[:] = [None] * len(bufs)
        for j, spec in enumerate(self._specs):
            # (None reads as immortal or widely held: never ALONE)
            if getrefcount(bufs[j]) != ALONE or getrefcount(allocation(bufs[j])) != ALONE:
                bufs[j] = self._new(*spec)
        return bufs[:]

    def release(self) -> None:
        """Lets go of the kept buffers (their memory goes back to the pool)."""
        self._bufs[:] = [None] * len(self._bufs)


def allocation(a):
    """The allocation behind CuPy array ``a`` (its views and exports hold it too); ``a``
    itself for a stand-in without one."""
    try:
        return a.data.mem
    except AttributeError:
        return a


def release_all() -> None:
    """Every ``KeptOutputs`` lets go of its buffers (``ft.cuda.empty_cache``)."""
    for kept in list(_KEPT):
        kept.release()
