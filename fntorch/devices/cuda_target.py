"""The CUDA target: what ``lowering`` asks of a GPU to compile and run a program.

``compile_graph(graph, target)`` asks a target with a ``build_program`` for its own
program: this one builds a ``cuda_program.CudaProgram`` from the same fusion plan as the
CPU's. Kernels are the GPU forms of the templates (``cuda_codegen``), compiled to PTX by
llvmlite's NVPTX backend (``cuda_nvptx``) for the device's compute capability, cached
on disk like the CPU's objects (``lowering.cache``: the key holds ``cache_id()``,
which names the capability and this room's CUDA sources), loaded by CuPy
(``cupy.cuda.function.Module``) and launched on the current stream. Matrix products
are ``cupy.einsum`` (cuBLAS); the other library steps are the device's eager impls.

The CPU-only parts of the protocol (``entry_abi``, ``callables``, the thread pool)
answer for a target whose kernels are not called through ctypes: they are not used.

>>> t = CudaTarget({}, 0)
>>> t.name, t.num_threads()
('cuda', 1)
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

# The sources the PTX depends on besides lowering's own (``lowering/cache.py``).
SOURCES = ("cuda_codegen.py", "cuda_nvptx.py")


@functools.cache
def _sources_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


class _Products:
    """A program's matrix products on the GPU (``cupy.matmul``: cuBLAS)."""

    one_thread = False

    def matmul(self, a, b, out=None):
        import cupy as cp

        return cp.matmul(a, b, out=out)


class CudaTarget:
    """Compiles kernels to PTX for GPU ``index`` and runs programs on CuPy buffers.

    ``compute_capability`` (e.g. ``"90"``) may be given, for emitting PTX without a GPU
    (the CPU-side tests); otherwise it is read from the device on first use.

    >>> CudaTarget({}, 0, compute_capability="90").cache_id().startswith("cuda:nvptx64")
    True
    """

    def __init__(self, impls: dict, index: int, compute_capability: str | None = None):
        self.impls = impls
        self.index = index
        self.adopt = None  # programs' outputs are CuPy arrays already
        self.name = "cuda"
        self._cc = compute_capability
        self._modules: list = []  # loaded modules stay alive with their functions
        self._sms = None
        self._cupy_device = None

    def __repr__(self):
        return f"CudaTarget(cuda:{self.index})"

    @staticmethod
    def cupy():
        from .cuda_device import cupy

        return cupy()

    def compute_capability(self) -> str:
        """The device's compute capability as CuPy spells it (``"90"`` on an H200)."""
        if self._cc is None:
            self._cc = str(self.cupy().cuda.Device(self.index).compute_capability)
        return self._cc

    def multiprocessors(self) -> int:
        """The device's streaming multiprocessor count (sizes the launch grids)."""
        if self._sms is None:
            cp = self.cupy()
            attrs = cp.cuda.Device(self.index).attributes
            self._sms = int(attrs.get("MultiProcessorCount", 80))
        return self._sms

    # ------------------------------------------------------------ the protocol
    def cache_id(self) -> str:
        """The capability (``cuda_nvptx.target_id``) and this room's CUDA sources."""
        from . import cuda_nvptx

        return f"{cuda_nvptx.target_id(self.compute_capability())}:{_sources_digest()}"

    def compile_object(self, ir_text: str, small: bool = False) -> bytes:
        """PTX (as bytes, what the disk cache stores) of ``ir_text``."""
        from . import cuda_nvptx

        return cuda_nvptx.compile_ptx(ir_text, self.compute_capability()).encode()

    def load(self, code: bytes, name: str):
        """The CuPy function ``name`` of PTX ``code``, loaded on this device."""
        cp = self.cupy()
        with cp.cuda.Device(self.index):
            mod = cp.cuda.function.Module()
            mod.load(code)
            self._modules.append(mod)
            return mod.get_function(name)

    def entry_abi(self) -> tuple:
        """Not a ctypes entry: a GPU kernel takes its pointers, sizes and strides as
        parameters (``cuda_codegen``)."""
        return ("cuda-params-v1",)

    def callables(self, addr) -> tuple:
        """A loaded kernel is called through CuPy, never through ctypes."""
        return (addr, addr)

    def num_threads(self) -> int:
        """One: the host thread only launches."""
        return 1

    def run_split(self, fn, key: int, outer: int, parts: int) -> None:
        """Runs ``fn(key, 0, -1)`` on the calling thread (a launch is never split)."""
        fn(key, 0, -1)

    def products(self):
        """Matrix products through cuBLAS (``cupy.matmul``)."""
        return _Products()

    # ------------------------------------------------------------- CUDA's own
    def synchronize(self) -> None:
        """Waits for every kernel and copy queued on this GPU (``ft.cuda.synchronize``)."""
        dev = self._cupy_device
        if dev is None:
            dev = self._cupy_device = self.cupy().cuda.Device(self.index)
        dev.synchronize()

    def properties(self) -> dict:
        """The CUDA runtime's device properties (name, memory, capability)."""
        return self.cupy().cuda.runtime.getDeviceProperties(self.index)

    def memory_allocated(self) -> int:
        """Bytes held by live buffers in CuPy's memory pool (``ft.cuda.memory_allocated``)."""
        with self.cupy().cuda.Device(self.index):
            return int(self.cupy().get_default_memory_pool().used_bytes())

    def empty_cache(self) -> None:
        """Returns the pool's unused blocks to the driver (``ft.cuda.empty_cache``), with
        the outputs kernels kept for their next launch (``cuda_launch.KeptOutputs``)."""
        from .cuda_launch import release_all

        release_all()
        with self.cupy().cuda.Device(self.index):
            self.cupy().get_default_memory_pool().free_all_blocks()

    def kernel(self, spec):
        """The ``CudaKernel`` of ``spec`` on this target (memoized in memory)."""
        from ..lowering import cache
        from .cuda_program import CudaKernel

        return cache.memoized(("cuda", spec.key(), self), lambda: CudaKernel(spec, self))

    def kernel_function(self, spec, variant: str):
        """The loaded CuPy function of ``spec``'s ``variant``: from memory, the disk
        cache, or compiled now."""
        from ..lowering import cache
        from . import cuda_codegen

        def build(name: str) -> bytes:
            return self.compile_object(cuda_codegen.kernel_ir(spec, variant, name))

        key = f"cuda|{spec.key()}|variant={variant}|abi={self.entry_abi()}"
        return cache.load_or_build(key, build, self)

    def build_program(self, plan, donated=(), backend: str = "auto"):
        """The ``CudaProgram`` of ``plan`` (``compile_graph`` calls this)."""
        from .cuda_program import CudaProgram

        return CudaProgram(plan, self)
