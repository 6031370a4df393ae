"""The CUDA device's eager ``* + - /``: fntorch's own elementwise kernels, launched
straight through the driver.

W1 (eager dispatch) is ``x = x * 1.0001 + 0.5`` on 16 floats, a thousand times: the
arithmetic is free, each op is its host cost. Measured on an H100 (the probe behind
this change's closing note, microseconds an op, min / median): CuPy's ufunc with a
numpy scalar 14.1 / 15.1, this module's handler alone 11.2 / 11.4, a whole fntorch op
10.7 / 11.8 and PyTorch's ``x * 1.0001`` 9.7 / 11.1; ``cupy.ndarray`` for the result
plus ``cuLaunchKernel`` from a ready parameter block (``cuda_launch``), the floor of
this route, 7.8 / 8.0. In ``python -m benchmarks --device cuda`` W1's ratio to PyTorch
went from 0.75 with CuPy's ufuncs (10.8 against 8.1 us) to 0.99 (11.9 against 11.8, a
slower host CPU that day: compare ratios, not times). Session 8 had tried the
same launch and measured no gain: its Python around the launch cost what the launch saved.
This one is written for the launch: one flat handler per operator, the kernel entry
found by dtype identity and one dict lookup, three parameter slots written. A result of
up to ``KEEP_BYTES`` is written into one of its entry's two last results where nothing
else holds them (``cuda_launch.KeptOutputs`` says when that is safe), instead of a new
``cupy.ndarray`` (~1.6 us): W1 on an H100 went from 7.6 us an op (PyTorch 7.6 in the
same run) to 5.4 (PyTorch 7.5).

The kernel is the jit's elementwise template (``cuda_codegen``), one spec per operator
and dtype, over the operands flattened to one axis; the scalar is a by-value parameter
(variant ``k``), so ``x * 2.0`` needs no device copy of ``2.0``. float16/32/64 only;
results are bit for bit CuPy's (IEEE operations on the same values; float16 computed in
float32 and rounded once, as CuPy's ``float16`` does). Anything else (an operand that
is not C-contiguous, two shapes that differ, a buffer on another GPU than the current
one, an empty one) goes to the CuPy ufunc, as before.

>>> sorted(OPERATORS)
['add', 'mul', 'sub', 'truediv']
"""

from __future__ import annotations

import builtins
import ctypes
import threading
from sys import getrefcount

import numpy as np

from ..fx.core import Tensor
from ..lowering.spec import KernelSpec, KOp
from . import cuda_codegen as cg
from .cpu_dispatch import device_binary
from .cuda_launch import ALONE, Params, allocation

# fntorch's operator name -> (the kernel's primitive, CuPy's ufunc name).
OPERATORS = {
    "add": ("add", "add"),
    "sub": ("sub", "subtract"),
    "mul": ("mul", "multiply"),
    "truediv": ("div", "true_divide"),
}
_F16, _F32, _F64 = (np.dtype(c) for c in "efd")
_U16 = np.dtype(np.uint16)
# A by-value float parameter's ctypes slot, by dtype (float16 goes as its bits).
_SLOTS = {_F16: ctypes.c_uint16, _F32: ctypes.c_float, _F64: ctypes.c_double}
_MAX_LAUNCHES = 4096  # kept (layout, size) entries per dtype: past it, start again
# Results up to this size are kept for the next launch of their entry (two each, per
# thread): ``cupy.ndarray`` for a result is ~2 us, a third of an op of W1. They stay
# with their thread's entries (``ft.cuda.empty_cache`` does not reach them).
KEEP_BYTES = 1 << 14


def _spec(prim: str, dtype) -> KernelSpec:
    """``in0 <prim> in1`` over one axis of ``dtype``."""
    op = KOp(prim, (("in", 0), ("in", 1)), (), dtype)
    return KernelSpec(1, 0, (dtype, dtype), (op,), (("op", 0),), (False,))


def binary_ops(cp, target_of, gpus: int) -> dict:
    """The CUDA device's fast-path handlers for ``register_fast_binary``: name ->
    ``handler(buffer, other, reflected)``. ``target_of(i)`` is GPU ``i``'s
    ``CudaTarget`` (it compiles and loads the kernels); ``gpus`` the number of GPUs
    (with one, a buffer is always on the current device and that check is skipped)."""
    return {name: _binary(cp, target_of, gpus, prim, getattr(cp, uf))
            for name, (prim, uf) in OPERATORS.items()}  # fmt: skip


def _binary(cp, target_of, gpus, prim, ufunc):
    """One operator's handler. Written flat for W1: locals and closure cells only, the
    kernel entry found by dtype identity and one dict lookup, three parameter slots
    written and one driver call. The entries (and so the parameter blocks, which
    ``cuLaunchKernel`` reads while this thread lets go of the GIL) are per thread."""
    ndarray, device_now = cp.ndarray, cp.cuda.runtime.getDevice
    launch_kernel, current_stream = cp.cuda.driver.launchKernel, cp.cuda.get_current_stream
    py_float, py_int, tensor, block = builtins.float, builtins.int, Tensor, cg.BLOCK
    local = threading.local()

    def tables():
        got = local.tables = ({}, {}, {})  # float32, float64, float16
        return got

    def build(table, dtype, variant, n, dev):
        target = target_of(dev)
        fn = target.kernel(_spec(prim, dtype)).function(variant)
        item = dtype.itemsize
        params = Params(
            *[_SLOTS[dtype]() if c == "k" else ctypes.c_uint64() for c in variant],
            ctypes.c_uint64(),  # the result
            ctypes.c_int64(n),
            *[ctypes.c_int64(0 if c == "k" else item) for c in variant],
        )
        if len(table) >= _MAX_LAUNCHES:
            table.clear()
        grid = cg.elementwise_grid(n, target.multiprocessors())
        # small results only are kept: a big one's allocation is nothing beside its kernel
        kept = [None, None, None] if n * item <= KEEP_BYTES else None
        # the block itself rides along: its slots live as long as it does
        got = (fn.ptr, grid, params.address, *params.values[:3], params, kept)
        table[(variant, n, dev)] = got
        return got

    def handler(v, other, reflected):
        dtype = v.dtype
        try:
            f32, f64, f16 = local.tables
        except AttributeError:
            f32, f64, f16 = tables()
        if dtype is _F32:  # numpy's dtypes are singletons: no hash
            table = f32
        elif dtype is _F64:
            table = f64
        elif dtype is _F16:
            table = f16
        else:
            return None  # not a float dtype: the general path
        n = v.size
        if not n or not v._c_contiguous:
            return device_binary(ufunc, v, other, reflected)
        data = v.data
        dev = 0
        if gpus > 1:
            dev = device_now()
            if data.device_id != dev:
                return device_binary(ufunc, v, other, reflected)  # CuPy words it
        ptr = data.ptr
        t = type(other)
        if t is py_float and dtype is not _F16:
            s = other  # the slot's C cast rounds as dtype.type(other) does
        elif t is py_float or t is py_int:
            try:
                s = dtype.type(other)
            except OverflowError:
                return None
            if dtype is _F16:
                s = int(s.view(_U16))
        elif t is tensor:
            o = other._value
            if type(o) is not ndarray or o.dtype is not dtype:
                return None
            od = o.data
            if o.shape != v.shape or not o._c_contiguous or od.device_id != data.device_id:
                return device_binary(ufunc, v, other, reflected)
            a, b = (od.ptr, ptr) if reflected else (ptr, od.ptr)
            variant = ("c" if a & 15 else "v") + ("c" if b & 15 else "v")
            return launch(table, dtype, variant, n, dev, v.shape, a, b)
        else:
            return None
        if reflected:
            return launch(table, dtype, "kc" if ptr & 15 else "kv", n, dev, v.shape, s, ptr)
        return launch(table, dtype, "ck" if ptr & 15 else "vk", n, dev, v.shape, ptr, s)

    def launch(table, dtype, variant, n, dev, shape, a, b):
        got = table.get((variant, n, dev))
        if got is None:
            got = build(table, dtype, variant, n, dev)
        fn, grid, address, s0, s1, s2, _, kept = got
        stream = current_stream().ptr
        if kept is None:
            out = ndarray(shape, dtype)
        else:  # the two last results, written again once let go of (``KeptOutputs``)
            if kept[2] != stream:
                kept[:] = [None, None, stream]
            for j in (0, 1):  # (the count of kept[j] with no local bound to it: ALONE)
                if (
                    getrefcount(kept[j]) == ALONE
                    and getrefcount(allocation(kept[j])) == ALONE
                    and kept[j].shape == shape
                ):
                    out = kept[j]
                    break
            else:
                out = ndarray(shape, dtype)
                kept[0], kept[1] = out, kept[0]
        s0.value = a
        s1.value = b
        s2.value = out.data.ptr
        launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, stream, address, 0)
        return out

    # This thread's entries, for a look (tests/cuda/test_cuda.py): float32, float64, float16.
    handler.tables = lambda: getattr(local, "tables", None) or tables()
    return handler
