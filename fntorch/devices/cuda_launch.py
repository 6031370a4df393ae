"""Eager ``* + - /`` of float CuPy arrays, launched straight through the driver (W1).

``cpu_dispatch.register_fast_binary`` sends ``x * 1.0001`` of a CUDA tensor past the
general path (promotion, abstract evaluation, impl lookup) to a binary function of two
operands. CuPy's ufuncs cost ~7.8 us of host time a call for a 16-element float32 array
on an H100 (PyTorch's whole eager op ~6.8 us), most of it CuPy's argument handling, not
the launch. ``FastBinary`` instead launches fntorch's own elementwise kernel of the op
(``cuda_codegen``, compiled once per dtype, operand order and alignment) with
``cuLaunchKernel`` (CuPy's ``driver.launchKernel``): its six parameters are written into
a per-thread buffer whose pointer array is made once, and a Python scalar is a device
constant made once per value (``_SCALAR_CACHE_SIZE`` per dtype).

Anything else (broadcasting, strided operands, another GPU's arrays) is CuPy's ufunc, as
before. The kernels are the ones ``jit`` would build for the same op, so the results are
those of the compiled path: IEEE ``+ - * /`` rounded once to the dtype, as CuPy's.

>>> import numpy as np
>>> KERNEL_PRIMS["truediv"]
'div'
"""

from __future__ import annotations

import ctypes
import threading

from ..lowering.spec import KernelSpec, KOp
from . import cuda_codegen as cg
from .cuda_bf16 import to_device

KERNEL_PRIMS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}
_SCALAR_CACHE_SIZE = 256
_N_PARAMS = 6  # a, b, out pointers; the size; a's and b's strides (rank 1)


class _Params(threading.local):
    """One thread's parameter buffer: ``values`` and the pointer array into it."""

    def __init__(self):
        self.values = (ctypes.c_uint64 * _N_PARAMS)()
        base = ctypes.addressof(self.values)
        self.pointers = (ctypes.c_void_p * _N_PARAMS)(*[base + 8 * i for i in range(_N_PARAMS)])
        self.address = ctypes.addressof(self.pointers)


class FastBinary:
    """``op(a, b)`` for a CuPy array and a numpy scalar (either order) or two CuPy arrays,
    the ``register_fast_binary`` contract: our kernel where both operands are C-contiguous
    float16/32/64 of one dtype and shape on ``target``'s GPU, else ``fallback`` (CuPy's
    ufunc)."""

    def __init__(self, name: str, fallback, target):
        self.name, self.fallback, self.target = name, fallback, target
        self._cp = target.cupy()
        self._functions: dict = {}  # (dtype char, variant) -> CUfunction handle
        self._scalars: dict = {}  # the scalar's bytes (their length names the dtype) -> 0-d array
        self._params = _Params()
        self._lock = threading.Lock()
        self._max_grid = target.multiprocessors() * cg.GRID_PER_SM

    def __call__(self, a, b):
        cp = self._cp
        ndarray = cp.ndarray
        if type(a) is ndarray:
            x, other, x_first = a, b, True
        else:
            x, other, x_first = b, a, False
        dtype, index = x.dtype, self.target.index
        if (
            not x.flags.c_contiguous
            or x.data.device_id != index
            or cp.cuda.runtime.getDevice() != index  # the kernels are loaded on ``index``
        ):
            return self.fallback(a, b)
        if type(other) is ndarray:
            if other.dtype is not dtype or other.shape != x.shape or not other.flags.c_contiguous:
                return self.fallback(a, b)
            y, y_letter = other, "v" if other.data.ptr % 16 == 0 else "c"
        elif type(other) is dtype.type:
            y, y_letter = self._scalar(other), "s"
        else:
            return self.fallback(a, b)
        x_letter = "v" if x.data.ptr % 16 == 0 else "c"
        variant = x_letter + y_letter if x_first else y_letter + x_letter
        fn = self._functions.get((dtype.char, variant))
        if fn is None:
            fn = self._function(dtype, variant)
        out = cp.empty(x.shape, dtype)
        n = x.size
        if n == 0:
            return out
        first, second = (x, y) if x_first else (y, x)
        p = self._params
        v = p.values
        v[0], v[1], v[2], v[3] = first.data.ptr, second.data.ptr, out.data.ptr, n
        v[4], v[5] = first.itemsize if first.ndim else 0, second.itemsize if second.ndim else 0
        grid = min(-(-n // (cg.BLOCK * cg.UNROLL)), self._max_grid)
        cp.cuda.driver.launchKernel(
            fn, grid, 1, 1, cg.BLOCK, 1, 1, 0, cp.cuda.get_current_stream().ptr, p.address, 0
        )
        return out

    def _scalar(self, value):
        # Keyed by bits: -0.0 == 0.0, and a NaN equals nothing.
        key = value.tobytes()
        s = self._scalars.get(key)
        if s is None:
            with self._lock:
                if len(self._scalars) >= _SCALAR_CACHE_SIZE:
                    self._scalars.clear()
                with self._cp.cuda.Device(self.target.index):
                    s = self._scalars[key] = to_device(self._cp, value)
        return s

    def _function(self, dtype, variant: str):
        spec = KernelSpec(
            1,
            0,
            (dtype, dtype),
            (KOp(KERNEL_PRIMS[self.name], (("in", 0), ("in", 1)), (), dtype),),
            (("op", 0),),
            (False,),
        )
        fn = self.target.kernel_function(spec, variant).ptr
        self._functions[(dtype.char, variant)] = fn
        return fn


def fast_binaries(cp, target) -> dict:
    """The ``register_fast_binary`` table of ``target``'s GPU: ``FastBinary`` per op,
    CuPy's ufunc behind each."""
    ufuncs = {"add": cp.add, "sub": cp.subtract, "mul": cp.multiply, "truediv": cp.true_divide}
    return {name: FastBinary(name, u, target) for name, u in ufuncs.items()}
