"""The CPU target: what ``lowering`` asks of the CPU to compile and run a program.

Each question is answered by one module of this room: LLVM's native code generation
and the process's one MCJIT engine (``cpu_llvm``), the ctypes entry over numpy's
structs (``cpu_abi``), the thread pool (``cpu_threads``) and OpenBLAS for matrix
products (``cpu_blas``). The CPU device holds a ``CpuTarget`` (``_device.py``); a
second device whose buffers are numpy arrays underneath (tests' fake device) may hold
one of its own, with its impls and ``adopt``, and reuse the same compiler.

>>> from fntorch.fx.device import host_device
>>> t = host_device().target
>>> t.name, t.cache_id().startswith("cpu:")
('cpu', True)
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

# cpu_llvm imports llvmlite (~20 ms): only on a first compile or cache load
from . import cpu_abi, cpu_blas, cpu_threads

# This room's sources the compiled code depends on: editing one rebuilds the kernels
# (lowering's own sources are in ``lowering/cache.py``'s key).
SOURCES = ("cpu_llvm.py", "cpu_abi.py")


@functools.cache
def _sources_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


class CpuTarget:
    """Compiles kernels for this machine's CPU and runs them on numpy buffers.

    ``impls``: the eager impl table library steps call; ``adopt``: None, or what turns
    a program's output array into the device's buffer; ``name``: for messages.

    >>> from fntorch.devices import cpu_impls
    >>> t = CpuTarget(cpu_impls)
    >>> t.name, t.num_threads() >= 1, t.adopt is None
    ('cpu', True, True)
    """

    def __init__(self, impls: dict, adopt=None, name: str = "cpu"):
        self.impls = impls
        self.adopt = adopt
        self.name = name

    def __repr__(self):
        return f"CpuTarget({self.name!r})"

    def cache_id(self) -> str:
        """The machine (triple, CPU name, features) and this compiler's sources."""
        from . import cpu_llvm

        return f"{cpu_llvm.target_id()}:{_sources_digest()}"

    def compile_object(self, ir_text: str, small: bool = False) -> bytes:
        """Object code for ``ir_text`` (``cpu_llvm.compile_object``)."""
        from . import cpu_llvm

        return cpu_llvm.compile_object(ir_text, small=small)

    def load(self, code: bytes, name: str) -> int:
        """The address of ``name`` in ``code``, loaded into the process's MCJIT engine."""
        from . import cpu_llvm

        return cpu_llvm.load(code, name)

    def entry_abi(self) -> tuple:
        """Byte offsets of an ndarray's data, dims and strides, and of a tuple's items."""
        return cpu_abi._abi()

    def callables(self, addr: int) -> tuple:
        """``(hold, release)``: the entry at ``addr`` as ctypes functions."""
        return cpu_abi.callables(addr)

    def num_threads(self) -> int:
        """The threads a large kernel call is split over (``cpu_threads``)."""
        return cpu_threads.get_num_threads()

    def run_split(self, fn, key: int, outer: int, parts: int) -> None:
        """``fn(key, lo, hi)`` over ``[0, outer)`` on ``parts`` threads."""
        cpu_threads.run_split(fn, key, outer, parts)

    def products(self):
        """A program's matrix products: OpenBLAS, one-threaded when small (``cpu_blas``)."""
        return cpu_blas.Products()
