"""A captured program's input and result copies as one launch each, not one call each.

A replayed CUDA graph (``cuda_graphs``) reads its inputs from static buffers and leaves
its results in buffers it writes again next time, so every replay copies the inputs in
and the results out. One ``cudaMemcpyAsync`` per buffer costs several microseconds of
host time each: W11's training step has ~210 inputs (weights, optimizer state, batch)
and as many results, and on an H200 its replay spent 2.1 ms on the GPU but 4.7-7 ms
of wall time, most of it in 419 copy calls and 210 ``cupy.empty``.

Here the copies are two launches of a gather-copy kernel:

- **in**: the static inputs are views into one block. The sources' addresses (the only
  thing that changes between calls) go to the kernel as a by-value parameter of up to
  ``CHUNK`` pointers (cuLaunchKernel copies parameters at the launch, so the host buffer
  is free again at once); destinations and sizes are a device table made at capture. An
  input that is not a C-contiguous CuPy array of the captured size gets its source set
  to its own static buffer (a copy onto itself: nothing moves) and is copied on its own.
- **out**: one ``cupy.empty`` block per call receives every C-contiguous result at a
  256-byte-aligned offset; the kernel's table (sources, offsets, sizes) is fixed at
  capture and the block's address is a parameter. The results are views of the block,
  so the block lives while any of them does.

Each entry is one ``blockIdx.y``; its bytes are grid-strided over ``blockIdx.x`` in 16-byte
words when source, destination and size allow, else byte by byte.

The kernel is CUDA C compiled by NVRTC through ``cupy.RawKernel`` (CuPy's own kernels
need NVRTC too): a memory copy has no element math for the xDSL templates to share.
Where it cannot be built, every buffer is copied with a call of its own, as before
(``why_not`` says why).

>>> layout([4, 1000, 0, 3])
([0, 256, 1280, 1280], 1536)
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from .cuda_bf16 import as_device
from .cuda_launch import Params

CHUNK = 256  # source pointers per launch (2 KiB of the 4 KiB of kernel parameters)
ALIGN = 256
THREADS = 256
MAX_BLOCKS_X = 64

_SOURCE = r"""
struct Sources { unsigned long long p[CHUNK]; };

struct alignas(16) Word { unsigned long long lo, hi; };

__device__ void copy_one(const char* src, char* dst, unsigned long long n) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((((unsigned long long)src | (unsigned long long)dst | n) & 15) == 0) {
        const Word* s = (const Word*)src;
        Word* d = (Word*)dst;
        for (unsigned long long i = t; i < n / 16; i += stride) d[i] = s[i];
    } else {
        for (unsigned long long i = t; i < n; i += stride) dst[i] = src[i];
    }
}

// entry i of this launch: src.p[i] -> (dst, nbytes) = table[2 i], table[2 i + 1]
extern "C" __global__ void fntorch_copy_in(Sources src, const unsigned long long* table, int n) {
    int i = blockIdx.y;
    if (i >= n || src.p[i] == table[2 * i]) return;
    copy_one((const char*)src.p[i], (char*)table[2 * i], table[2 * i + 1]);
}

// entry i: (src, offset, nbytes) = table[3 i .. 3 i + 2] -> base + offset
extern "C" __global__ void fntorch_copy_out(const unsigned long long* table, int n,
                                            unsigned long long base) {
    int i = blockIdx.y;
    if (i >= n) return;
    copy_one((const char*)table[3 * i], (char*)(base + table[3 * i + 1]), table[3 * i + 2]);
}
""".replace("CHUNK", str(CHUNK))


def layout(nbytes) -> tuple[list, int]:
    """Offsets of buffers of ``nbytes`` packed into one block, each ``ALIGN``-aligned, and
    the block's size."""
    offsets, end = [], 0
    for n in nbytes:
        offsets.append(end)
        end += -(-int(n) // ALIGN) * ALIGN
    return offsets, max(end, ALIGN)


why_not: list = []  # why the copy kernels could not be built, for a look at a GPU run


@functools.cache
def _kernels(cp, device: int):
    """The two copy kernels' function handles on ``device`` (compiled once), or None
    where NVRTC cannot build them: the copies are then one call per buffer, as before."""
    try:
        with cp.cuda.Device(device):
            return tuple(
                cp.RawKernel(_SOURCE, name).kernel.ptr
                for name in ("fntorch_copy_in", "fntorch_copy_out")
            )
    except Exception as e:  # noqa: BLE001 - any failure to compile or load: the old path
        why_not.append(f"{type(e).__name__}: {e}")
        return None


def _blocks(sizes) -> int:
    return max(1, min(MAX_BLOCKS_X, -(-max(sizes, default=0) // (16 * THREADS))))


class CopiesIn:
    """Copies call inputs into the static buffers it made (``statics``, views of one
    block) with one launch per ``CHUNK`` inputs."""

    def __init__(self, cp, shapes_dtypes):
        self._cp = cp
        sizes = [int(np.prod(s)) * np.dtype(d).itemsize for s, d in shapes_dtypes]
        offsets, total = layout(sizes)
        self.block = cp.empty(total, np.uint8)
        base = self.block.data
        self.statics = [
            cp.ndarray(s, d, memptr=base + o) for (s, d), o in zip(shapes_dtypes, offsets)
        ]
        self._sizes = sizes
        self._dtypes = [a.dtype for a in self.statics]
        self._dst = [a.data.ptr for a in self.statics]
        fns = _kernels(cp, cp.cuda.Device().id)
        self._fn = fns and fns[0]
        self._launches = []
        for start in range(0, len(sizes) if self._fn else 0, CHUNK):
            part = slice(start, start + CHUNK)
            table = np.array(
                [v for pair in zip(self._dst[part], sizes[part]) for v in pair], np.uint64
            )
            dev = cp.asarray(table) if table.size else cp.zeros(2, np.uint64)
            launch = Params(
                (ctypes.c_uint64 * CHUNK)(),
                ctypes.c_uint64(dev.data.ptr),
                ctypes.c_int32(len(self._dst[part])),
            )
            self._launches.append((start, dev, launch, _blocks(sizes[part])))

    def __call__(self, bufs, stream) -> None:
        cp = self._cp
        ndarray, launch_kernel = cp.ndarray, cp.cuda.driver.launchKernel
        alone = [] if self._fn else list(range(len(self.statics)))
        dst, sizes, dtypes = self._dst, self._sizes, self._dtypes
        for start, _table, launch, gx in self._launches:
            n = launch.values[2].value
            # W11's ~200 parameters and optimizer leaves: the host time before the graph
            # starts, so attributes only (``_c_contiguous``, not ``flags``: an object a call)
            src = []
            for i in range(start, start + n):
                b = bufs[i]
                if (
                    type(b) is ndarray
                    and b._c_contiguous
                    and b.nbytes == sizes[i]
                    and (b.dtype is dtypes[i] or b.dtype == dtypes[i])
                ):
                    src.append(b.data.ptr)
                else:
                    src.append(dst[i])  # copied onto itself: the kernel skips it
                    alone.append(i)
            if n:
                launch.values[0][:n] = src
                launch_kernel(self._fn, gx, n, 1, THREADS, 1, 1, 0, stream.ptr, launch.address, 0)
        for i in alone:
            copy_into(cp, self.statics[i], as_device(cp, bufs[i]), stream)


class CopiesOut:
    """Copies the results a graph leaves in ``results`` out to one fresh block per call
    (one launch per ``CHUNK`` results); ``__call__`` returns views of it, one per result."""

    def __init__(self, cp, results):
        self._cp = cp
        self._shapes = [(r.shape, r.dtype) for r in results]
        sizes = [r.nbytes for r in results]
        self._offsets, self._total = layout(sizes)
        fns = _kernels(cp, cp.cuda.Device().id)
        self._fn = fns and fns[1]
        self._results = None if self._fn else list(results)  # copied one by one
        self._launches = []
        for start in range(0, len(results) if self._fn else 0, CHUNK):
            part = slice(start, start + CHUNK)
            rows = [
                (r.data.ptr, o, n)
                for r, o, n in zip(results[part], self._offsets[part], sizes[part])
            ]
            table = np.array([v for row in rows for v in row], np.uint64)
            dev = cp.asarray(table) if table.size else cp.zeros(3, np.uint64)
            launch = Params(
                ctypes.c_uint64(dev.data.ptr), ctypes.c_int32(len(rows)), ctypes.c_uint64(0)
            )
            self._launches.append((dev, launch, _blocks(sizes[part])))

    def __call__(self, stream) -> list:
        cp = self._cp
        if not self._shapes:
            return []
        if self._results is not None:
            outs = [cp.empty(r.shape, r.dtype) for r in self._results]
            for out, r in zip(outs, self._results):
                copy_into(cp, out, r, stream)
            return outs
        block = cp.empty(self._total, np.uint8)
        base = block.data
        for _table, launch, gx in self._launches:
            n = launch.values[1].value
            launch.values[2].value = base.ptr
            if n:
                cp.cuda.driver.launchKernel(
                    self._fn, gx, n, 1, THREADS, 1, 1, 0, stream.ptr, launch.address, 0
                )
        ndarray = cp.ndarray
        return [
            ndarray(shape, dtype, memptr=base + off)
            for (shape, dtype), off in zip(self._shapes, self._offsets)
        ]


_MEMCPY_DEVICE_TO_DEVICE = 3


def copy_into(cp, dst, src, stream) -> None:
    """``dst[...] = src`` on ``stream``: one device-to-device ``cudaMemcpyAsync`` where
    both are C-contiguous of one dtype (``dst`` always is), else a CuPy copy kernel."""
    if src.flags.c_contiguous and src.dtype == dst.dtype and src.shape == dst.shape:
        cp.cuda.runtime.memcpyAsync(
            dst.data.ptr, src.data.ptr, dst.nbytes, _MEMCPY_DEVICE_TO_DEVICE, stream.ptr
        )
    else:
        dst[...] = src
