"""The CUDA device's eager ``* + - /``: fntorch's own elementwise kernels, launched
straight through the driver.

W1 (eager dispatch) is ``x = x * 1.0001 + 0.5`` on 16 floats, a thousand times: the
arithmetic is free, each op is its host cost. CuPy's ufunc call took 9.4-9.9 us an op
on an H100 and PyTorch's ``x * 1.0001`` 9-10; a kernel of fntorch's launched by
``cuLaunchKernel`` from a ready parameter block (``cuda_launch``), plus ``cupy.ndarray``
for the result, 5.8-6.0 (the probe behind this change's closing note). Session 8 had
tried the same launch and measured no gain: its path around the launch cost ~5 us of
Python. This one is written for the launch: one closure per operator, a dict lookup
for the kernel, its grid and its parameter block, keyed by layout, dtype, size and
device.

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

import ctypes

import numpy as np

from ..lowering.spec import KernelSpec, KOp
from . import cuda_codegen as cg
from .cuda_launch import Params, launcher

# fntorch's operator name -> (the kernel's primitive, CuPy's ufunc name).
OPERATORS = {
    "add": ("add", "add"),
    "sub": ("sub", "subtract"),
    "mul": ("mul", "multiply"),
    "truediv": ("div", "true_divide"),
}
_F16 = np.dtype(np.float16)
_U16 = np.dtype(np.uint16)
# A by-value float parameter's ctypes slot, by dtype (float16 goes as its bits).
_SLOTS = {np.dtype(np.float16): ctypes.c_uint16, np.dtype(np.float32): ctypes.c_float,
          np.dtype(np.float64): ctypes.c_double}  # fmt: skip
_MAX_LAUNCHES = 4096  # kept (layout, dtype, size, device) entries: past it, start again


def _spec(prim: str, dtype) -> KernelSpec:
    """``in0 <prim> in1`` over one axis of ``dtype``."""
    op = KOp(prim, (("in", 0), ("in", 1)), (), dtype)
    return KernelSpec(1, 0, (dtype, dtype), (op,), (("op", 0),), (False,))


def binary_ops(cp, target_of) -> dict:
    """The CUDA device's fast-path operators for ``register_fast_binary``: name ->
    ``op(a, b)``, where one of ``a``, ``b`` is a CuPy array and the other a numpy scalar
    of its dtype or a CuPy array of its dtype. ``target_of(i)`` is GPU ``i``'s
    ``CudaTarget`` (it compiles and loads the kernels)."""
    return {name: _binary(cp, target_of, prim, getattr(cp, uf))
            for name, (prim, uf) in OPERATORS.items()}  # fmt: skip


def _binary(cp, target_of, prim, ufunc):
    ndarray, device_now, launch = cp.ndarray, cp.cuda.runtime.getDevice, launcher(cp)
    kernels: dict = {}

    def build(key):
        variant, dtype, n, dev = key
        target = target_of(dev)
        fn = target.kernel(_spec(prim, dtype)).function(variant)
        grid = cg.elementwise_grid(n, target.multiprocessors())
        item = dtype.itemsize
        params = Params(
            *[_SLOTS[dtype]() if c == "k" else ctypes.c_uint64() for c in variant],
            ctypes.c_uint64(),  # the result
            ctypes.c_int64(n),
            *[ctypes.c_int64(0 if c == "k" else item) for c in variant],
        )
        if len(kernels) >= _MAX_LAUNCHES:
            kernels.clear()
        got = kernels[key] = (fn.ptr, grid, params)
        return got

    def op(a, b):
        x = a if type(a) is ndarray else b
        n = x.size
        if not n or not x._c_contiguous:
            return ufunc(a, b)
        dev = device_now()
        data = x.data
        if data.device_id != dev:
            return ufunc(a, b)  # CuPy says which device is wrong
        ptr = data.ptr
        if type(a) is not ndarray:  # scalar <op> array
            s = a
            if x.dtype is _F16:
                s = int(s.view(_U16))
            variant, values = "kc" if ptr & 15 else "kv", [s, ptr]
        elif type(b) is ndarray:
            bd = b.data
            if b.shape != x.shape or not b._c_contiguous or bd.device_id != dev:
                return ufunc(a, b)
            bp = bd.ptr
            variant = ("c" if ptr & 15 else "v") + ("c" if bp & 15 else "v")
            values = [ptr, bp]
        else:
            s = b
            if x.dtype is _F16:
                s = int(s.view(_U16))
            variant, values = "ck" if ptr & 15 else "vk", [ptr, s]
        key = (variant, x.dtype, n, dev)
        got = kernels.get(key)
        if got is None:
            got = build(key)
        fn, grid, params = got
        out = ndarray(x.shape, x.dtype)
        values.append(out.data.ptr)
        launch(fn, grid, cg.BLOCK, params, values)
        return out

    op.kernels = kernels  # what it has launched, for a look (tests/cuda/test_cuda.py)
    return op
