"""The batched replay copies (``cuda_graph_copies``) on a host stand-in for CuPy.

The stand-in's "device" pointers are host addresses and its ``launchKernel`` does what
the two CUDA kernels do, reading the same parameter buffers the driver would: so the
packing of pointers, tables, offsets and chunks is checked here; the kernels' CUDA C is
compiled and run only on a GPU (``tests/cuda/test_cuda_graphs.py``).
"""

import ctypes
import types

import numpy as np
import pytest

from fntorch.devices import cuda_graph_copies as gc


class _Ptr:
    def __init__(self, owner, ptr):
        self.owner, self.ptr = owner, ptr

    def __add__(self, off):
        return _Ptr(self.owner, self.ptr + int(off))


class _Array(np.ndarray):
    @property
    def data(self):
        base = self if self.base is None or not isinstance(self.base, np.ndarray) else self.base
        return _Ptr(base, self.ctypes.data)

    @property
    def _c_contiguous(self):  # CuPy's attribute (``flags`` builds an object a call)
        return self.flags.c_contiguous


def _wrap(a):
    return np.array(a, copy=True).view(_Array)


def _fake_cupy(launches):
    cp = types.SimpleNamespace()
    cp.ndarray = _Array

    def ndarray_at(shape, dtype, memptr):
        owner = memptr.owner
        off = memptr.ptr - owner.ctypes.data
        flat = np.asarray(owner).view(np.uint8).reshape(-1)
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return flat[off : off + n].view(dtype).reshape(shape).view(_Array)

    def make(shape, dtype=np.float64, memptr=None):
        if memptr is not None:
            return ndarray_at(shape, dtype, memptr)
        return np.zeros(shape, dtype).view(_Array)

    def launch(fn, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        launches.append((fn, gy))
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        if fn == "in":
            src = ctypes.cast(ptrs[0], ctypes.POINTER(ctypes.c_uint64))
            table = ctypes.cast(
                ctypes.cast(ptrs[1], ctypes.POINTER(ctypes.c_uint64))[0],
                ctypes.POINTER(ctypes.c_uint64),
            )
            n = ctypes.cast(ptrs[2], ctypes.POINTER(ctypes.c_int32))[0]
            assert gy == n
            for i in range(n):
                if src[i] != table[2 * i]:
                    ctypes.memmove(table[2 * i], src[i], table[2 * i + 1])
        else:
            table = ctypes.cast(
                ctypes.cast(ptrs[0], ctypes.POINTER(ctypes.c_uint64))[0],
                ctypes.POINTER(ctypes.c_uint64),
            )
            n = ctypes.cast(ptrs[1], ctypes.POINTER(ctypes.c_int32))[0]
            base = ctypes.cast(ptrs[2], ctypes.POINTER(ctypes.c_uint64))[0]
            assert gy == n
            for i in range(n):
                ctypes.memmove(base + table[3 * i + 1], table[3 * i], table[3 * i + 2])

    cp.empty = lambda shape, dtype=np.float64: np.empty(shape, dtype).view(_Array)
    cp.zeros = lambda shape, dtype=np.float64: make(shape, dtype)
    cp.ndarray = _Array  # ``type(b) is cp.ndarray`` holds for the stand-in's arrays
    cp.asarray = _wrap
    cp.array = lambda a, copy=True: _wrap(np.array(a, copy=True))
    cp.cuda = types.SimpleNamespace(
        Device=lambda: types.SimpleNamespace(id=0),
        driver=types.SimpleNamespace(launchKernel=launch),
        runtime=types.SimpleNamespace(
            memcpyAsync=lambda dst, src, n, kind, stream: ctypes.memmove(dst, src, n)
        ),
    )
    cp._make = make
    return cp


@pytest.fixture
def fake(monkeypatch):
    launches = []
    monkeypatch.setattr(gc, "_kernels", lambda cp, device: ("in", "out"))
    cp = _fake_cupy(launches)
    # ``_Array(shape, dtype, memptr=...)`` is how the module makes views of its blocks
    monkeypatch.setattr(cp, "ndarray", _Array)
    monkeypatch.setattr(_Array, "__new__", _array_new(cp))
    return cp, launches


def _array_new(cp):
    def new(cls, shape, dtype=np.float64, memptr=None, **kw):
        if memptr is None:
            return np.ndarray.__new__(cls, shape, dtype, **kw)
        return cp._make(shape, dtype, memptr)

    return new


def test_layout_aligns_every_buffer():
    offsets, total = gc.layout([1, 256, 257, 0, 8])
    assert offsets == [0, 256, 512, 1024, 1024] and total == 1280
    assert gc.layout([]) == ([], gc.ALIGN)


@pytest.mark.parametrize("n", [1, 3, gc.CHUNK + 5])
def test_inputs_and_results_are_copied_in_one_launch_per_chunk(fake, n):
    cp, launches = fake
    rng = np.random.default_rng(n)
    shapes = [(), (3,), (2, 5), (7,)]
    dtypes = [np.float32, np.float64, np.int32, np.float16]
    specs = [(shapes[i % 4], np.dtype(dtypes[i % 4])) for i in range(n)]
    copies_in = gc.CopiesIn(cp, specs)
    start = copies_in.block.data.ptr
    assert all((a.data.ptr - start) % gc.ALIGN == 0 for a in copies_in.statics)
    bufs = [_wrap((rng.standard_normal(s) * 100).astype(d)) for s, d in specs]
    # one non-contiguous input, and one a host scalar: copied on their own
    if n > 2:
        wide = _wrap(np.zeros((2, 10), specs[2][1]))
        wide[:, ::2] = np.asarray(bufs[2])
        bufs[2] = wide[:, ::2]
    if n > 1 and specs[0][0] == ():
        bufs[0] = specs[0][1].type(-0.0)
    alone = []
    real_copy_into = gc.copy_into
    gc.copy_into = lambda cp, dst, src, stream: (
        alone.append(1),
        real_copy_into(cp, dst, src, stream),
    )
    try:
        copies_in(bufs, types.SimpleNamespace(ptr=0))
    finally:
        gc.copy_into = real_copy_into
    assert len(launches) == -(-n // gc.CHUNK)
    assert len(alone) == (n > 2) + (n > 1)  # only the strided input and the host scalar
    for static, b in zip(copies_in.statics, bufs):
        np.testing.assert_array_equal(np.asarray(static), np.asarray(b))
        assert np.signbit(np.asarray(static)).tolist() == np.signbit(np.asarray(b)).tolist()

    launches.clear()
    results = [_wrap(np.asarray(s) + 1) for s in copies_in.statics]
    copies_out = gc.CopiesOut(cp, results)
    outs = copies_out(types.SimpleNamespace(ptr=0))
    assert len(launches) == -(-n // gc.CHUNK)
    for o, r in zip(outs, results):
        assert o.shape == r.shape and o.dtype == r.dtype
        np.testing.assert_array_equal(np.asarray(o), np.asarray(r))
    # a second call: a fresh block, the first call's outputs untouched
    for r in results:
        r[...] = 0
    again = copies_out(types.SimpleNamespace(ptr=0))
    assert all(not np.any(np.asarray(a)) for a in again)
    assert any(np.any(np.asarray(o)) for o in outs)


def test_no_results_make_no_block(fake):
    cp, launches = fake
    assert gc.CopiesOut(cp, [])(types.SimpleNamespace(ptr=0)) == [] and not launches


def test_without_the_kernels_every_buffer_is_copied_alone(fake, monkeypatch):
    # NVRTC unable to build the kernels: the copies are one call per buffer, as before
    cp, launches = fake
    monkeypatch.setattr(gc, "_kernels", lambda cp, device: None)
    specs = [((3,), np.dtype(np.float32)), ((), np.dtype(np.float64))]
    copies_in = gc.CopiesIn(cp, specs)
    bufs = [_wrap(np.arange(3, dtype=np.float32)), _wrap(np.float64(-0.0))]
    copies_in(bufs, types.SimpleNamespace(ptr=0))
    for static, b in zip(copies_in.statics, bufs):
        np.testing.assert_array_equal(np.asarray(static), np.asarray(b))
    outs = gc.CopiesOut(cp, bufs)(types.SimpleNamespace(ptr=0))
    for o, b in zip(outs, bufs):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(b))
        assert o.ctypes.data != b.ctypes.data
    assert not launches
