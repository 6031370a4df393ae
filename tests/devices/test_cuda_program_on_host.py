"""A ``CudaProgram``'s launches on a host stand-in for CuPy: what each kernel launch is
given (its function, grid, block and the parameter block the driver reads), for the
one-launch path (``_direct_call``) and the step-by-step one.

The stand-in's arrays are numpy arrays whose "device" pointer is their host address;
its ``launchKernel`` decodes the parameter block as the kernel would read it: the
buffers' addresses, then the iteration sizes, then each input's strides. The kernels
themselves run on a GPU in ``tests/cuda``.
"""

import ctypes
import types
import weakref

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cpu_impls
from fntorch.devices import cuda_codegen as cg
from fntorch.devices.cuda_launch import release_all
from fntorch.devices.cuda_program import CudaKernel, CudaProgram
from fntorch.lowering.pipeline import plan_graph


class _Array(np.ndarray):
    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    @property
    def _c_contiguous(self):
        return self.flags.c_contiguous


def _on(a):
    return np.ascontiguousarray(a).view(_Array)


class _Target:
    impls = cpu_impls  # the view equations a step reads (transposes, reshapes)

    def __init__(self):
        self.launches, self.variants, self.stream = [], {}, 7
        self.cp = types.SimpleNamespace(
            ndarray=_Array,
            broadcast_to=lambda a, shape: np.broadcast_to(a, shape).view(_Array),
            array=lambda a, copy=True: _on(np.array(a, copy=copy)),
            cuda=types.SimpleNamespace(
                driver=types.SimpleNamespace(launchKernel=self._launch),
                get_current_stream=lambda: types.SimpleNamespace(ptr=self.stream),
            ),
        )
        self._specs = {}

    def cupy(self):
        return self.cp

    def multiprocessors(self):
        return 132

    def kernel(self, spec):
        return CudaKernel(spec, self)

    def kernel_function(self, spec, variant):
        ptr = self.variants.setdefault((spec.key(), variant), 100 + len(self.variants))
        self._specs[ptr] = (spec, variant)
        return types.SimpleNamespace(ptr=ptr)

    def _launch(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        spec, variant = self._specs[fn]
        n_ptrs = len(spec.input_dtypes) + len(spec.outputs)
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))

        def value(i, ctype):
            return ctypes.cast(slots[i], ctypes.POINTER(ctype))[0]

        ptrs = [value(i, ctypes.c_uint64) for i in range(n_ptrs)]
        n_ints = spec.rank * (1 + len(spec.input_dtypes))
        ints = [value(n_ptrs + i, ctypes.c_int64) for i in range(n_ints)]
        self.launches.append(
            dict(variant=variant, grid=(gx, gy, gz), block=(bx, by, bz), stream=stream,
                 ptrs=ptrs, sizes=ints[: spec.rank], strides=ints[spec.rank:])
        )  # fmt: skip


def _program(fun, *args):
    target = _Target()
    graph = ft.make_graph(fun)(*[ft.asarray(a) for a in args])
    return CudaProgram(plan_graph(graph), target), target


def _softmax(x):
    z = ft.exp(x - ft.max(x, axis=-1, keepdims=True))
    return z / ft.sum(z, axis=-1, keepdims=True)


def test_a_one_kernel_program_launches_directly_with_its_buffers_sizes_and_strides():
    x = _on(np.ones((8, 128), np.float32))
    program, target = _program(_softmax, x)
    assert program._direct is not None
    (out,) = program(x)
    (got,) = target.launches
    assert out.shape == (8, 128) and out.dtype == np.float32
    assert got["ptrs"] == [x.data.ptr, out.data.ptr]
    assert got["sizes"] == [8, 128] and got["strides"] == [512, 4]
    assert got["block"] == (cg.WARP * cg.ROWS_PER_BLOCK, 1, 1) and got["stream"] == 7
    assert got["variant"] == cg.row_variant("v" if x.data.ptr % 16 == 0 else "c", 128)


def test_a_layout_is_worked_out_once_and_a_new_one_gets_its_own_block():
    x = _on(np.ones((8, 128), np.float32))
    program, target = _program(_softmax, x)
    program(x)
    program(_on(np.full((8, 128), 2.0, np.float32)))
    assert len(target.variants) == 1  # the same layout: the same kernel and block
    odd = _on(np.zeros(8 * 128 + 1, np.float32))[1:].reshape(8, 128)
    wide = _on(np.ones((8, 256), np.float32))[:, ::2]  # strided: its strides are passed
    program(odd)
    program(wide)
    *_, unaligned, strided = target.launches
    assert unaligned["variant"] != strided["variant"]
    assert strided["variant"].startswith("g") and strided["strides"] == [1024, 8]
    assert strided["ptrs"][0] == wide.data.ptr
    assert len({id(b) for b in program.kernels[0]._fns}) == len(target.variants)


def test_outputs_are_the_programs_outvars_in_order_and_shape():
    x = _on(np.arange(24, dtype=np.float64).reshape(4, 6))

    def f(v):
        e = ft.exp(v)
        return ft.sum(e, axis=-1, keepdims=True), e, ft.sum(e, axis=-1)

    program, target = _program(f, x)
    assert program._direct is not None
    a, b, c = program(x)
    assert a.shape == (4, 1) and b.shape == (4, 6) and c.shape == (4,)
    (got,) = target.launches
    assert got["ptrs"][0] == x.data.ptr
    assert set(got["ptrs"][1:]) == {a.data.ptr, b.data.ptr, c.data.ptr}
    assert a.reshape(4).data.ptr == c.data.ptr  # one row output, two shapes


def test_a_constant_operand_rides_along_as_a_device_array():
    c = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = _on(np.ones((4, 8), np.float32))
    program, target = _program(lambda v: v * ft.asarray(c), x)
    assert program._direct is not None
    (out,) = program(x)
    (got,) = target.launches
    (const,) = program._consts.values()
    np.testing.assert_array_equal(const, c)
    assert got["ptrs"][0] != got["ptrs"][1] and const.data.ptr in got["ptrs"][:2]
    assert x.data.ptr in got["ptrs"][:2] and got["ptrs"][2] == out.data.ptr


def test_a_full_reduction_beside_its_elementwise_output_is_one_launch():
    x = _on(np.ones((4, 8), np.float32))
    program, target = _program(lambda v: (ft.exp(v), ft.sum(ft.exp(v))), x)
    assert program._direct is not None
    e, s = program(x)
    assert e.shape == (4, 8) and s.shape == () and len(target.launches) == 1


@pytest.mark.parametrize(
    "fun, args",
    [
        (lambda x, b: x + b, (np.ones((4, 8), np.float32), np.ones(8, np.float32))),
        (lambda x: x.T * 2.0, (np.ones((4, 8), np.float32),)),
        (
            lambda x: (ft.sum(x * 2.0, axis=-1, keepdims=True), x * 3.0),
            (np.ones((4, 6)),),
        ),
    ],
    ids=["broadcast-operand", "transposed-operand", "two-steps"],
)
def test_what_one_launch_cannot_take_runs_step_by_step(fun, args):
    program, target = _program(fun, *args)
    assert program._direct is None
    outs = program(*[_on(a) for a in args])
    want = fun(*[ft.asarray(a) for a in args])
    want = want if isinstance(want, tuple) else (want,)
    assert [o.shape for o in outs] == [w.shape for w in want]
    assert target.launches


def test_a_host_array_input_leaves_the_direct_path():
    x = np.ones((8, 128), np.float32)
    program, target = _program(_softmax, x)
    assert program._direct((x,)) is None and not target.launches


def test_an_output_the_caller_let_go_of_is_written_again_by_the_next_call():
    x = _on(np.ones((8, 128), np.float32))
    program, target = _program(_softmax, x)
    first = weakref.ref(program(x)[0])  # the output is dropped at once: kept for the next
    assert program(x)[0] is first()
    held = program(x)[0]
    again = program(x)[0]
    assert held is first() and again is not held  # a held output is never written
    assert target.launches[-1]["ptrs"][-1] == again.data.ptr
    del again
    view = held[1:]  # the array dropped but a view of it alive: its memory stays
    del held
    assert program(x)[0] is not view.base


def test_another_stream_or_empty_cache_gets_fresh_outputs():
    x = _on(np.ones((8, 128), np.float32))
    program, target = _program(_softmax, x)
    first = weakref.ref(program(x)[0])
    target.stream = 9  # CuPy's pool hands a block back on its own stream only
    program(x)
    assert first() is None  # let go of, not written
    second = weakref.ref(program(x)[0])
    assert second() is not None
    release_all()  # ft.cuda.empty_cache
    assert second() is None
