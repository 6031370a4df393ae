"""The CUDA device kind: CuPy buffers, registered with ``fntorch.fx.device`` on first ask.

``import fntorch`` never imports CuPy: this module registers a *provider* for the
``cuda`` platform (``fx.device.register_provider``), which runs when a CUDA device is
first named (``ft.device("cuda:0")``, ``x.cuda()``, ``ft.default_device("cuda")``) or
listed (``ft.devices()``, ``ft.cuda.is_available()``). It imports CuPy, counts the GPUs
and registers one ``Device("cuda", i)`` per GPU, each with the shared impl table
(``cuda_impls``) and a ``CudaTarget`` (``cuda_target``) for ``jit``. Without CuPy,
naming a CUDA device raises RuntimeError naming the ``cuda`` extra; listing devices
quietly lists none.

Buffers are ``cupy.ndarray``, and ``cuda_bf16.Bf16Array`` for bfloat16, which CuPy
lacks (16-bit storage, fntorch's arithmetic: ``cuda_bf16`` says how). All CuPy arrays report
``cuda:0`` (one buffer type maps to one device in the registry): a second GPU's
buffers are not told apart yet.

DLPack: ``Tensor.__dlpack__`` of a CUDA tensor hands out CuPy's capsule (no copy);
``from_dlpack`` here takes a PyTorch/JAX/CuPy GPU array without a copy.

>>> "cuda" in __import__("fntorch.fx.device", fromlist=["_providers"])._providers
True
"""

from __future__ import annotations

import importlib.util
import threading

import numpy as np

from ..fx.core import Tensor
from ..fx.device import Device, ImplTable, register_device, register_provider
from ..ops._threefry import word_modules
from . import cuda_bf16 as bf16
from .cpu_dispatch import register_fast_binary
from .cuda_eager import binary_ops

MISSING_CUPY = (
    "no CUDA device: CUDA needs CuPy, which is not installed: pip install 'fntorch[cuda]' "
    "(the `cuda` extra installs cupy-cuda13x)"
)
NO_GPU = "no CUDA device: CuPy is installed but finds no CUDA GPU ({why})"

# The one impl table of every CUDA device, filled when the first one registers.
cuda_impls: dict = ImplTable()
_state: dict = {"done": False, "error": None}
_lock = threading.Lock()  # two threads asking at once register the GPUs once


def cupy():
    """The CuPy module, imported on first use; RuntimeError naming the extra without it.

    >>> import importlib.util, pytest
    >>> if importlib.util.find_spec("cupy") is None:
    ...     with pytest.raises(RuntimeError, match="fntorch.cuda"):
    ...         cupy()
    """
    try:
        import cupy as cp
    except ImportError as e:
        raise RuntimeError(MISSING_CUPY) from e
    return cp


def _put(index: int):
    def put(host_array):
        cp = cupy()
        a = np.asarray(host_array)
        with cp.cuda.Device(index):
            return bf16.to_device(cp, a)

    return put


def _to_host(buffer):
    if type(buffer) is bf16.Bf16Array:
        return bf16.to_host(cupy(), buffer)
    return cupy().asnumpy(buffer)


def _provide(explicit: bool) -> str | None:
    """Registers this machine's GPUs once; returns why there are none, or None."""
    if not _state["done"]:
        with _lock:
            if not _state["done"]:
                _state["error"] = _register_all()
                _state["done"] = True
    return _state["error"]


def _register_all() -> str | None:
    """Registers one device per GPU; returns why there is none, or None."""
    if importlib.util.find_spec("cupy") is None:
        return MISSING_CUPY
    try:
        cp = cupy()
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # a driver or runtime that cannot start: no GPU here
        return NO_GPU.format(why=f"{type(e).__name__}: {e}")
    if count == 0:
        return NO_GPU.format(why="0 devices")
    from . import cuda_impls as impls
    from .cuda_target import CudaTarget

    impls.build_impls(cp, cuda_impls)
    targets = [CudaTarget(cuda_impls, i) for i in range(count)]
    # x * 2.0 and x + y of float CuPy buffers: fntorch's kernels launched straight
    # through the driver, not CuPy's ufuncs (W1, eager dispatch: ``cuda_eager``).
    register_fast_binary(cp.ndarray, binary_ops(cp, targets.__getitem__, count))
    word_modules[cp.ndarray] = cp  # eager threefry in CuPy calls, not primitive binds
    for i, target in enumerate(targets):
        dev = Device("cuda", i, cuda_impls, _put(i), _to_host, target)
        # one buffer type, one device: cupy arrays belong to cuda:0 (see the docstring)
        register_device(dev, buffer_types=(cp.ndarray, bf16.Bf16Array) if i == 0 else ())
    return None


register_provider("cuda", _provide)


def from_dlpack(x) -> Tensor:
    """A tensor on the GPU sharing ``x``'s memory (a PyTorch, JAX or CuPy GPU array, or
    anything with ``__dlpack__``): no copy.

    >>> import importlib.util
    >>> if importlib.util.find_spec("cupy") is None:
    ...     print("needs CuPy")  # doctest: +SKIP
    """
    why = _provide(True)
    if why:
        raise RuntimeError(f"from_dlpack: {why}")
    return Tensor(cupy().from_dlpack(x))
