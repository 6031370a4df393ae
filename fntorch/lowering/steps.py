"""The steps of a compiled program: closures over slot indices of a frame (``program.py``),
and the buffers of the results a caller receives (``_Fresh``).

A step is ``step(env)``: it reads and writes ``env``, a frame (a list of buffers). Each
is built once per program with everything that depends only on shapes bound in, so a
call does no more than index the frame and call the kernel or library function.
"""

from __future__ import annotations

import math
import threading
from functools import partial
from sys import getrefcount

import numpy as np

CONST, LAYOUT, DYN = 0, 1, 2  # a frame slot's kind: value fixed / buffer fixed / per call


def _alloc(slot, shape, dtype, env):
    env[slot] = np.empty(shape, dtype)


def _unary_step(fn, src, out):
    def step(env):
        env[out] = fn(env[src])

    return step


def _chain(fns):
    """``x -> fns[-1](...fns[0](x))``."""
    if len(fns) == 1:
        return fns[0]

    def chain(x):
        for f in fns:
            x = f(x)
        return x

    return chain


def _view_step(root, fns, out, layout):
    """``env[out] = fns applied to env[root]`` (views: ``program._Builder.use``).

    With ``layout`` (the view's shape, dtype, byte offset and strides into a root of
    strides ``root_strides``, measured at build time), a root laid out as expected is
    viewed in one ``np.ndarray`` call, ~0.25 us, where ``np.broadcast_to`` alone takes
    ~2.6 us; any other root (a strided input the caller passed) goes through ``fns``."""
    chain = _chain(fns)
    if layout is None:

        def step(env):
            env[out] = chain(env[root])

        return step
    shape, dtype, offset, strides, root_strides = layout
    ndarray = np.ndarray

    def step_strided(env):
        r = env[root]
        if type(r) is ndarray and r.strides == root_strides:
            env[out] = ndarray(shape, dtype, r, offset, strides)
        else:
            env[out] = chain(r)

    return step_strided


def _call_step(fn, ins, outs, multi):
    if multi:

        def step(env):
            for o, r in zip(outs, fn(*[env[i] for i in ins])):
                env[o] = r

        return step
    (o,) = outs
    if len(ins) == 1:
        (a,) = ins

        def step1(env):
            env[o] = fn(env[a])

        return step1
    if len(ins) == 2:
        a, b = ins

        def step2(env):
            env[o] = fn(env[a], env[b])

        return step2

    def stepn(env):
        env[o] = fn(*[env[i] for i in ins])

    return stepn


def _perm_reshape(perm, shape):
    ident = tuple(perm) == tuple(range(len(perm)))

    def view(x):
        return np.reshape(x if ident else np.transpose(x, perm), shape)

    return view


# Results of at least this many bytes are recycled (glibc's smallest mmap threshold).
RECYCLE_BYTES = 1 << 17
# ... and at most this many: recycled buffers stay allocated (two per result) while the
# program lives, so larger results go back to the _allocator rather than a program
# holding hundreds of MiB that its caller has let go (at the price of page faults).
RECYCLE_MAX_BYTES = 1 << 26


class _Recycled(np.ndarray):
    """The type of the buffers ``_Fresh`` keeps: its list holds one reference to each,
    which ``exclusive`` must tell apart from a caller's."""


def exclusive(buf) -> bool:
    """Whether no one but its holder sees the memory under ``buf``: each array ``buf``
    is a view of is referenced only by the view above it (and a recycled buffer also by
    ``_Fresh``'s list). ``buf``'s own references are the caller's to count. A tensor
    whose buffer fails this may not be donated: writing it would change what a view of
    the same memory (``t.numpy()``, a slice, a reshape returned by ``jit``) shows.

    >>> root = np.zeros(4)
    >>> exclusive(root[:2])  # the view below holds the only reference to ``root``
    False
    >>> exclusive(np.zeros(4)[:2])
    True
    >>> f = _Fresh((1 << 16,), np.float32)
    >>> a = f.take()
    >>> exclusive(a)
    True
    >>> exclusive(a[:2])  # ``a`` still sees that memory
    False
    """
    base = buf.base
    while base is not None:
        # References: the view above's ``base``, this name, getrefcount's argument,
        # and _Fresh's list for a recycled buffer.
        if not isinstance(base, np.ndarray) or getrefcount(base) > 3 + (type(base) is _Recycled):
            return False
        base = base.base
    return True


class _Fresh:
    """Buffers of one shape and dtype for a result the caller receives.

    ``take()`` returns a view of a buffer that nothing outside this object references
    any more (the caller dropped the tensor and every view of it), else of a new one;
    the last two buffers are kept, so a training loop that feeds each result to the
    next call, dropping the one before, is served from two buffers. References are
    counted by CPython (``sys.getrefcount``), so a buffer anyone can still read is never
    written. The caller gets a view, not the buffer itself, so that ``jit``'s own count
    (is a donated argument referenced elsewhere?) does not see this object's reference.

    >>> f = _Fresh((1 << 16,), np.float32)
    >>> a = f.take(); b = f.take()
    >>> np.shares_memory(a, b)
    False
    >>> address = a.ctypes.data
    >>> del a
    >>> f.take().ctypes.data == address  # the dropped one, written again
    True
    """

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype
        self.bufs: list = []
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            bufs = self.bufs
            for i in range(len(bufs)):
                if getrefcount(bufs[i]) == 2:  # the list and getrefcount's argument
                    buf = bufs.pop(i)
                    break
            else:
                buf = _Recycled(self.shape, self.dtype)  # owns its memory: views' base
            bufs.insert(0, buf)
            del bufs[2:]
            return buf.view(np.ndarray)


def _allocator(shape, dtype):
    """``take()`` for a fresh result: recycled when large (``_Fresh``).

    >>> type(_allocator((1 << 16,), np.float32)).__name__  # 256 KiB
    'method'
    >>> type(_allocator((1 << 25,), np.float32)).__name__  # 128 MiB: plain np.empty
    'partial'
    """
    if RECYCLE_BYTES <= math.prod(shape) * np.dtype(dtype).itemsize <= RECYCLE_MAX_BYTES:
        return _Fresh(shape, dtype).take
    return partial(np.empty, shape, dtype)


def _template_step(kern, ins, outs):
    """A template kernel's step; ``outs``: ``(slot, shape, dtype, fresh)`` per output."""
    if len(outs) > 1:
        takes = [(slot, _allocator(shape, dtype) if fresh else None)
                 for slot, shape, dtype, fresh in outs]  # fmt: skip

        def step_multi(env):
            for slot, take in takes:
                if take is not None:
                    env[slot] = take()
            kern([env[i] for i in ins], [env[slot] for slot, _ in takes])

        return step_multi
    ((out, shape, dtype, fresh),) = outs
    if fresh:
        take = _allocator(shape, dtype)

        def step(env):
            env[out] = buf = take()
            kern([env[i] for i in ins], [buf])

        return step

    def step_pre(env):
        kern([env[i] for i in ins], [env[out]])

    return step_pre


def _matmul_step(matmul, a, b, out, shape, dtype, fresh):
    if fresh:
        take = _allocator(shape, dtype)

        def step(env):
            env[out] = matmul(env[a], env[b], out=take())

        return step

    def step_pre(env):
        matmul(env[a], env[b], out=env[out])

    return step_pre


def _kernel_step(kern, in_slots, out_slots, fresh):
    if not fresh:

        def step(env):
            kern([env[i] for i in in_slots], [env[o] for o in out_slots])

        return step
    allocs = [(s, _allocator(shape, dtype), shape, dtype, d) for s, shape, dtype, d in fresh]
    if all(d is None for *_, d in fresh):
        takes = [(s, take) for s, take, *_ in allocs]

        def step_fresh(env):
            for s, take in takes:
                env[s] = take()
            kern([env[i] for i in in_slots], [env[o] for o in out_slots])

        return step_fresh

    def step_donate(env):
        for s, take, shape, dtype, donor in allocs:
            buf = env[donor] if donor is not None else None
            if (
                buf is not None
                and buf.flags.writeable
                and buf.flags.c_contiguous
                and (buf.shape == shape and buf.dtype == dtype)
            ):
                env[s] = buf
            else:
                env[s] = take()
        kern([env[i] for i in in_slots], [env[o] for o in out_slots])

    return step_donate
