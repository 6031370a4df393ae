"""A compiled CUDA program replayed as one CUDA graph.

A ``CudaProgram`` call walks its steps in Python: one kernel launch or CuPy call per
step, each costing several microseconds of host time. A small training step (W5: 15
kernels, 8 matrix products) is then host-bound: the GPU waits on Python. CUDA graphs
fix that: the program's launches are recorded once by stream capture and replayed by
one ``cudaGraphLaunch`` per call. This is what ``torch.cuda.graphs`` and JAX's
``--xla_gpu_enable_command_buffer`` do.

A graph replays the addresses it was recorded with, so a captured program owns its
memory:

- a private CuPy ``MemoryPool`` serves every allocation of the capture (intermediates
  and results); nothing else allocates from it, so no other array can ever sit where
  a replay writes. Before capturing, one warm-up run on the capture stream under that
  pool leaves its free lists holding the blocks the capture asks for, so the capture
  itself needs no ``cudaMalloc``;
- the inputs are copied into *static* buffers of the pool before each replay, and the
  results out of it after into a fresh block of the caller's pool: tensors are
  immutable, and the next replay writes the same result buffers again. Each direction
  is one gather-copy launch per 256 buffers (``cuda_graph_copies``), not one
  ``cudaMemcpyAsync`` per buffer: W11's step has ~210 of each, and on an H200 its
  replay took 2.1 ms of GPU time but 4.7-7 ms of wall time with a call per copy.

Only programs whose steps are all known to run on the device without touching the host
are captured (``capturable``): kernel steps with a GPU form, and library steps of the
primitives in ``DEVICE_ONLY`` with no Python-scalar operand. A host read during capture
would fail, and a host-to-device copy (a Python scalar made a CuPy array) would be
recorded from a staging buffer that is reused after the capture: a replay would then
read stale memory. Anything else (control flow, the host route of complex numbers,
sort) runs step by step as before. A capture that fails anyway (an error from CUDA
while recording) leaves the program uncaptured; ``CudaProgram.graph_status`` says why.

A replay's copies cost device bandwidth, so a program whose inputs and outputs are large
against its number of launches (``BYTES_PER_STEP``) is not captured: a single GELU
kernel on 1 GiB gains nothing from one launch instead of one, and pays 2 GiB of copies.

Capture is on by default (``FNTORCH_CUDA_GRAPHS=0`` in the environment turns it off):
``tests/cuda`` passes with it on an H100, and W5's compiled step went from 1.8 ms step by
step to 0.2 ms replayed. Each captured program keeps its pool (its intermediates and
static buffers) for as long as the program lives, as a ``torch.cuda.CUDAGraph`` does.

>>> sorted(DEVICE_ONLY)[:3]
['argmax', 'argmin', 'broadcast_in_dim']
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..fx.graph import Literal
from .cuda_bf16 import BF16, as_device
from .cuda_graph_copies import CopiesIn, CopiesOut, copy_into

# Library primitives whose CUDA impls are CuPy kernels and cuBLAS calls only, with no
# host read and no host-to-device copy (given device-array operands).
DEVICE_ONLY = frozenset(
    {
        "argmax", "argmin", "broadcast_in_dim", "concatenate", "conv_general_dilated",
        "convert_element_type", "copy", "dot_general", "expand_dims", "gather", "iota",
        "pad", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum", "reduce_window_max",
        "reduce_window_min", "reduce_window_sum", "reshape", "rev", "scatter_add",
        "select_n", "slice", "squeeze", "stop_gradient", "transpose",
    }
)  # fmt: skip
# A replay copies every input into the graph's buffers and every result out: at ~2 TB/s
# of device copy that is ~0.5 us a MiB, against ~4 us of host time a launch saves. A
# program moving more than this many bytes per step runs step by step (H100, replayed:
# W2's one GELU kernel on 1 GiB took 2.2 ms, 970 GB/s against a 2,960 GB/s copy).
BYTES_PER_STEP = 4 * 2**20
# A replay is three launches (the copies in, the graph, the copies out): a program of
# fewer steps launches them itself (W3's one softmax kernel at (8, 1024) on an H100:
# 23 us of host time a call replayed).
MIN_STEPS = 3
# Library primitives whose Python-scalar operands become kernel arguments, never a
# host-to-device copy: ``pad`` fills with its padding value (CuPy's ``fill``: a kernel
# argument, or ``cudaMemsetAsync`` for zero). W11's compiled step pads 12 times.
SCALAR_OPERANDS_OK = frozenset({"pad"})
# Calls made step by step before a program is captured (the first call compiles and
# warms cuBLAS; capturing then costs one more run).
CAPTURE_AT_CALL = 2


def enabled() -> bool:
    """Whether CUDA-graph capture is on (by default; ``FNTORCH_CUDA_GRAPHS=0`` turns it
    off).

    >>> isinstance(enabled(), bool)
    True
    """
    return os.environ.get("FNTORCH_CUDA_GRAPHS", "1") != "0"


def capturable(plan, kernel_step_supported) -> str | None:
    """Why ``plan`` cannot be captured, or None when it can.

    ``kernel_step_supported(step)``: whether a kernel step has a GPU form (else it would
    run its equations eagerly, which this module does not vet).
    """
    from ..lowering.fusion import KernelStep

    g = plan.graph
    if len(plan.steps) < MIN_STEPS:
        return f"{len(plan.steps)} steps: fewer launches than a replay's {MIN_STEPS}"
    if any(getattr(v.aval, "dtype", None) == BF16 for v in (*g.invars, *g.outvars)):
        return "bfloat16 operands (held as cuda_bf16.Bf16Array, not copied in and out)"
    eqns = list(plan.views.values())
    for st in plan.steps:
        if isinstance(st, KernelStep):
            if not kernel_step_supported(st):
                return "a kernel step without a GPU form"
        else:
            eqns.append(st.eqn)
    for eqn in eqns:
        name = eqn.primitive.name
        if name not in DEVICE_ONLY:
            return f"library step {name!r}"
        if name not in SCALAR_OPERANDS_OK and any(isinstance(u, Literal) for u in eqn.inputs):
            return f"library step {name!r} with a Python scalar operand"
    moved = sum(_nbytes(v.aval) for v in (*g.invars, *g.outvars))
    if moved > BYTES_PER_STEP * len(plan.steps):
        return (
            f"its inputs and outputs ({moved / 2**20:.0f} MiB) would take longer to copy "
            f"in and out of the graph's buffers than its {len(plan.steps)} launches save"
        )
    return None


def _nbytes(aval) -> int:
    n = np.dtype(aval.dtype).itemsize
    for d in aval.shape:
        n *= int(d)
    return n


class CapturedGraph:
    """One program's CUDA graph with its static input and result buffers.

    ``CapturedGraph.capture(program, bufs)`` records ``program`` (a ``CudaProgram``) on
    inputs shaped as ``bufs``; ``graph(*bufs)`` replays it on the current stream.
    """

    def __init__(self, cp, graph, pool, stream, copies, results, kinds):
        self._cp, self._graph, self._pool, self._stream = cp, graph, pool, stream
        self._copies, self._results, self._kinds = copies, results, kinds
        self._lock = threading.Lock()  # one replay at a time: the buffers are shared
        self._last_stream = None

    @classmethod
    def capture(cls, program, bufs):
        """A ``CapturedGraph`` of ``program``, or raises what CUDA said."""
        cp = program._cp
        pool = cp.cuda.MemoryPool()
        stream = cp.cuda.Stream(non_blocking=True)
        cp.cuda.Device().synchronize()  # the inputs were written on another stream
        with cp.cuda.using_allocator(pool.malloc), stream:
            on_gpu = [as_device(cp, b) for b in bufs]
            copies_in = CopiesIn(cp, [(b.shape, b.dtype) for b in on_gpu])
            statics = copies_in.statics
            for static, b in zip(statics, on_gpu):
                copy_into(cp, static, b, stream)
            program.run_steps(statics)  # warm-up: primes the pool's free lists
            stream.synchronize()
            stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
            try:
                results = program.run_steps(statics)
            except BaseException:
                try:
                    stream.end_capture()
                except Exception:
                    pass
                raise
            graph = stream.end_capture()
        consts = {id(c) for c in program._consts.values()}
        kinds = []
        for r in results:
            if not isinstance(r, cp.ndarray) or id(r) in consts:
                kinds.append("shared")  # a constant or a host value: never written again
            else:
                kinds.append("batched" if r.flags.c_contiguous else "alone")
        batched = [r for r, k in zip(results, kinds) if k == "batched"]
        copies_out = CopiesOut(cp, batched)
        return cls(cp, graph, pool, stream, (copies_in, copies_out), results, kinds)

    def __call__(self, *bufs):
        cp = self._cp
        if not self._lock.acquire(blocking=False):
            return None  # another thread is replaying: the caller runs the steps
        try:
            stream = cp.cuda.get_current_stream()
            last = self._last_stream
            if last is not None and last.ptr != stream.ptr:
                last.synchronize()  # its replay must be done with the static buffers
            self._last_stream = stream
            copies_in, copies_out = self._copies
            copies_in(bufs, stream)
            self._graph.launch(stream)
            views = iter(copies_out(stream))
            outs = []
            for r, kind in zip(self._results, self._kinds):
                if kind == "shared":
                    outs.append(r)
                elif kind == "batched":
                    outs.append(next(views))
                else:
                    out = cp.empty(r.shape, r.dtype)
                    copy_into(cp, out, r, stream)
                    outs.append(out)
            return outs
        finally:
            self._lock.release()
