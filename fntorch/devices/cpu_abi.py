"""The CPU target's kernel entry ABI and launch: how a compiled kernel finds its arrays.

Every compiled kernel (fused or template) is one exported function
``int32 f(PyObject *arrays, int64 lo, int64 hi)`` taking the Python tuple
``(*inputs, *outputs)`` of numpy arrays and reading each array's data pointer, sizes and
byte strides straight from the CPython/numpy structs at the offsets ``_abi()`` returns
(checked on probe objects first); code generation reads the offsets from the target.
A call is then one ctypes call with three integer arguments (``callables``). This is
the part of code generation that belongs to the host's buffers: a device whose buffers
are not numpy arrays passes its kernels their pointers another way.

>>> off = _abi(); len(off), all(o > 0 for o in off)
(4, True)
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np


@functools.cache
def _abi() -> tuple[int, int, int, int]:
    """Byte offsets of ``data``, ``dimensions`` and ``strides`` in a numpy ndarray object,
    and of the first item of a tuple object.

    numpy's ``PyArrayObject_fields`` is ``PyObject_HEAD; char *data; int nd;
    npy_intp *dimensions; npy_intp *strides; ...``. The layout is checked on probe
    arrays (data pointer and nd first, which are read inside the object, then the
    shape and strides they point to) and a mismatch raises: no kernel would be safe.
    """
    head = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    items = head + ctypes.sizeof(ctypes.c_ssize_t)  # PyTupleObject: PyObject_VAR_HEAD
    off = (head, head + 16, head + 24, items)
    for probe in (np.empty((3, 5), np.float32)[:, ::2], np.empty((2, 1, 7), np.int8)[::-1]):
        base = id(probe)
        ok = (
            ctypes.c_void_p.from_address(base + off[0]).value == probe.ctypes.data
            and ctypes.c_int.from_address(base + head + 8).value == probe.ndim
        )
        if ok:
            dims = ctypes.c_void_p.from_address(base + off[1]).value
            strides = ctypes.c_void_p.from_address(base + off[2]).value
            n = probe.ndim
            ok = (
                tuple((ctypes.c_ssize_t * n).from_address(dims)) == probe.shape
                and tuple((ctypes.c_ssize_t * n).from_address(strides)) == probe.strides
            )
        pair = (probe, off)
        ok = ok and all(
            ctypes.c_void_p.from_address(id(pair) + items + 8 * i).value == id(pair[i])
            for i in range(2)
        )
        if not ok:
            raise RuntimeError(
                "compile_kernel: numpy's ndarray (or the tuple) struct does not have the "
                f"expected layout (numpy {np.__version__}); compiled kernels cannot be called "
                "here. "
                "Use ft.config.update('kernel_backend', 'interpret')."
            )
    return off


_SIG = (ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_HOLD, _RELEASE = ctypes.PYFUNCTYPE(*_SIG), ctypes.CFUNCTYPE(*_SIG)


def callables(addr: int):
    """``(hold, release)``: the compiled function at ``addr`` (kernels' and templates'
    ``int32 f(arrays, lo, hi)``) called keeping the GIL, and releasing it. Small calls
    keep it (releasing it costs more than they run); large ones release it, so other
    Python threads and the pool's workers run meanwhile.

    >>> from fntorch.devices import cpu_llvm as cpu
    >>> obj = cpu.compile_object("define i32 @fntorch_doc_sum(ptr %a, i64 %lo, i64 %hi) {\\n"
    ...                          "  %s = add i64 %lo, %hi\\n  %t = trunc i64 %s to i32\\n"
    ...                          "  ret i32 %t\\n}\\n")
    >>> hold, release = callables(cpu.load(obj, "fntorch_doc_sum"))
    >>> hold(0, 2, 3), release(0, 2, 3)
    (5, 5)
    """
    return _HOLD(addr), _RELEASE(addr)
