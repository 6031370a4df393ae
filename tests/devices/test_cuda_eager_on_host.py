"""The CUDA device's eager ``* + - /`` handlers (``cuda_eager``) on a host stand-in for
CuPy.

The stand-in's "device" pointers are host addresses, and its ``launchKernel`` does what
the elementwise kernel does, reading the parameter block the driver would read: so the
variants, the operands' order, the by-value scalars (float16 as bits), the sizes,
strides and grids, the fallbacks and the per-thread blocks are checked without a GPU.
The kernels themselves run in ``tests/cuda/test_cuda.py``.
"""

import ctypes
import threading
import types
import weakref

import numpy as np
import pytest

from fntorch.devices import cuda_codegen as cg
from fntorch.devices import cuda_eager
from fntorch.fx.core import Tensor

NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide}
VALUE = {"float32": ctypes.c_float, "float64": ctypes.c_double, "float16": ctypes.c_uint16}


class _Array(np.ndarray):
    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data, device_id=0)

    @property
    def _c_contiguous(self):
        return self.flags.c_contiguous


def _fake(sms=132):
    functions, launches = {}, []

    class Kernel:
        def __init__(self, spec):
            self.spec = spec

        def function(self, variant):
            key = (self.spec.ops[0].prim, np.dtype(self.spec.input_dtypes[0]), variant)
            ptr = functions.setdefault(key, len(functions) + 1)
            return types.SimpleNamespace(ptr=ptr)

    target = types.SimpleNamespace(kernel=Kernel, multiprocessors=lambda: sms)

    def launch(fn, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        prim, dtype, variant = next(k for k, v in functions.items() if v == fn)
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))

        def slot(i, ctype):
            return ctypes.cast(ptrs[i], ctypes.POINTER(ctype))[0]

        n = slot(3, ctypes.c_int64)
        operands = []
        for i, c in enumerate(variant):
            assert slot(4 + i, ctypes.c_int64) == (0 if c == "k" else dtype.itemsize)
            if c == "k":
                raw = slot(i, VALUE[dtype.name])
                value = np.uint16(raw).view(np.float16) if dtype.name == "float16" else raw
                operands.append(dtype.type(value))
                continue
            addr = slot(i, ctypes.c_uint64)
            assert (addr % 16 == 0) == (c == "v"), (variant, addr)
            raw = (ctypes.c_char * (n * dtype.itemsize)).from_address(addr)
            operands.append(np.frombuffer(raw, dtype))
        out = NUMPY[prim](*operands).astype(dtype)
        ctypes.memmove(slot(2, ctypes.c_uint64), out.ctypes.data, out.nbytes)
        launches.append((prim, variant, n, gx, bx))

    cp = types.SimpleNamespace(
        ndarray=_Array,
        add=np.add,
        subtract=np.subtract,
        multiply=np.multiply,
        true_divide=np.true_divide,
        cuda=types.SimpleNamespace(
            runtime=types.SimpleNamespace(getDevice=lambda: 0),
            driver=types.SimpleNamespace(launchKernel=launch),
            get_current_stream=lambda: types.SimpleNamespace(ptr=0),
        ),
    )
    return cuda_eager.binary_ops(cp, lambda i: target, 1), launches


def _on(a):
    return np.array(a).view(_Array)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPS))
def test_every_layout_launches_the_kernel_and_gives_numpys_values(dtype, name):
    handlers, launches = _fake()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(37).astype(dtype)
    b = (rng.standard_normal(37) + 3).astype(dtype)
    x, odd = _on(a), _on(np.concatenate([a[:1], a]))[1:]  # odd: past a 16-byte boundary
    op, h = OPS[name], handlers[name]
    for v, host, tag in ((x, a, "v"), (odd, a, "c")):
        for s in (1.0001, 3, -0.5, 70000.0):
            want = op(host, dtype(s))
            np.testing.assert_array_equal(h(v, s, False), want)
            assert launches[-1][1] == tag + "k"
            np.testing.assert_array_equal(h(v, s, True), op(dtype(s), host))
            assert launches[-1][1] == "k" + tag
        y = Tensor(_on(b))
        np.testing.assert_array_equal(h(v, y, False), op(host, b))
        assert launches[-1][1] == tag + "v"
        np.testing.assert_array_equal(h(v, y, True), op(b, host))
        assert launches[-1][1] == "v" + tag
    assert all(n == 37 and gx == cg.elementwise_grid(37, 132) and bx == cg.BLOCK
               for *_, n, gx, bx in launches)  # fmt: skip


def test_what_the_kernel_does_not_take_goes_to_the_ufunc_or_the_general_path():
    handlers, launches = _fake()
    mul = handlers["mul"]
    m = _on(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(mul(m.T, 2.0, False), np.arange(12).reshape(3, 4).T * 2)
    row = Tensor(_on(np.ones(4, np.float32)))
    np.testing.assert_array_equal(mul(m, row, False), m)  # shapes differ: broadcast by the ufunc
    assert launches == []
    assert mul(_on(np.ones(3, np.int32)), 2.0, False) is None  # not a float: general path
    assert mul(m, Tensor(_on(np.ones((3, 4)))), False) is None  # float64 with float32
    assert mul(m, Tensor(np.ones((3, 4), np.float32)), False) is None  # a host buffer
    assert mul(m, 10**400, False) is None  # no float holds it: the general path words it
    assert mul(m, "2", False) is None
    assert launches == []


def test_each_thread_writes_its_own_parameter_blocks():
    handlers, _ = _fake()
    add = handlers["add"]
    x = _on(np.zeros(8, np.float32))
    add(x, 1.0, False)
    mine = add.tables()[0][("vk", 8, 0)]
    seen = []
    t = threading.Thread(target=lambda: seen.append((add(x, 2.0, False), add.tables())))
    t.start()
    t.join()
    ((out, theirs),) = seen
    np.testing.assert_array_equal(out, np.full(8, 2.0, np.float32))
    assert theirs[0][("vk", 8, 0)][2] != mine[2]  # another block (address)


def test_a_small_result_let_go_of_is_written_again_and_a_held_one_never():
    handlers, launches = _fake()
    mul = handlers["mul"]
    x = _on(np.arange(16, dtype=np.float32))
    first = weakref.ref(mul(x, 2.0, False))  # dropped at once: kept for the next launch
    again = mul(x, 3.0, False)
    assert again is first()
    np.testing.assert_array_equal(again, np.arange(16) * 3.0)
    other = mul(x, 4.0, False)  # ``again`` is held: the second kept buffer, or a new one
    assert other is not again
    np.testing.assert_array_equal(again, np.arange(16) * 3.0)  # untouched
    view = other[2:]  # the result dropped, a view of it alive: its memory is held
    del other
    np.testing.assert_array_equal(mul(x, 5.0, False), np.arange(16) * 5.0)
    np.testing.assert_array_equal(view, np.arange(2, 16) * 4.0)  # not written
    y = mul(x.reshape(4, 4), 2.0, False)  # same size, another shape: its own buffer
    assert y.shape == (4, 4)
    big = _on(np.ones(cuda_eager.KEEP_BYTES // 4 + 1, np.float32))
    ref = weakref.ref(mul(big, 2.0, False))
    assert ref() is None  # past KEEP_BYTES: never kept
