"""What the compiler asks of a device: the ``Target`` a ``Device`` holds.

``lowering`` turns a graph into a program of kernels and library steps without knowing
which device runs it: everything that depends on the device kind is asked of the
target handed to ``compile_graph(graph, target)``, the ``target`` of the device the
program's inputs live on (``jit`` picks it). The CPU's is ``devices/cpu_target.py``
(numpy buffers, MCJIT, a ctypes entry, a thread pool, OpenBLAS); a CUDA target would
answer the same questions with CuPy buffers, PTX and launches.

What stays here is target-neutral: the passes, fusion, the kernel specs and the xDSL
kernel templates (the loop nests and math every target shares). A kernel's entry,
where it reads its arrays' pointers, sizes and strides, is built from the target's
``entry_abi``.

>>> t = default_target()
>>> isinstance(t, Target), t.name
(True, 'cpu')
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Target(Protocol):
    """The device-kind-specific half of compiling and running a graph.

    - ``name``: the kind, for messages; ``impls``: the device's eager impl table, which
      the program's library steps (sort, convolution, ...) call on its buffers.
    - ``cache_id()``: a string naming the code this target runs (the machine, its
      compiler's sources): part of every on-disk cache key.
    - ``compile_object(ir_text, small)``: LLVM IR text -> loadable code (bytes, what the
      disk cache stores); ``load(code, name)``: the address of function ``name`` in it.
    - ``entry_abi()``: what a kernel's entry reads to find its arrays (for the CPU, the
      byte offsets of an ndarray's data, dims, strides and of a tuple's items);
      ``callables(addr)``: ``(hold, release)``, the entry called on ``(arrays, lo, hi)``
      keeping and releasing the GIL.
    - ``num_threads()``, ``run_split(fn, key, outer, parts)``: the threads a large call
      is split over.
    - ``products()``: a new object whose ``matmul(a, b, out)`` runs a program's matrix
      products and whose ``one_thread`` the program sets when it splits kernels.
    - ``adopt``: None, or a function making a program's output (a host array) the
      device's buffer.
    """

    name: str
    impls: dict
    adopt: object

    def cache_id(self) -> str: ...

    def compile_object(self, ir_text: str, small: bool = False) -> bytes: ...

    def load(self, code: bytes, name: str) -> int: ...

    def entry_abi(self) -> tuple: ...

    def callables(self, addr: int) -> tuple: ...

    def num_threads(self) -> int: ...

    def run_split(self, fn, key: int, outer: int, parts: int) -> None: ...

    def products(self): ...


def default_target() -> Target:
    """The host device's target: what ``compile_graph`` compiles for when no device is
    named (the CPU).

    >>> default_target().name
    'cpu'
    """
    from ..fx.device import host_device

    return host_device().target
