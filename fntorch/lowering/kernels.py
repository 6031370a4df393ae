"""The kernel compiler: ``compile_kernel(spec, target) -> Kernel``, native code for a
``KernelSpec`` on a target.

A compiled kernel is one exported function

    int32 fntorch_kernel(arrays, int64 lo, int64 hi)

where ``arrays`` is what the target's entry ABI passes (on the CPU, the Python tuple
``(*inputs, *outputs)`` of numpy arrays, whose data pointers, sizes and strides the
entry reads straight from the CPython/numpy structs: ``devices/cpu_abi.py``), so a call
is one call with three integer arguments and no per-array work in Python
(``arr.ctypes.data`` alone costs ~1.4 us, LOWERING-NOTES §4). ``[lo, hi)`` is the range
of the flattened outer index the call covers (``hi < 0``: all of it); the target's
threads split that range. It returns 1, having done nothing, when the inputs' innermost
strides do not fit the variant it was compiled for (see below), else 0. Calls under
``PARALLEL_THRESHOLD`` elements keep the GIL (releasing it costs more than they run);
larger ones release it.

Code generation is ``codegen.py`` (the loop nests, variants) and ``codegen_values.py``
(each element's values, narrow floats); this module compiles (through the target),
caches, loads and calls. Calls below
``PARALLEL_THRESHOLD`` use a variant compiled for short loops (``SMALL_TUNING``: the
target's ``compile_object(ir, small=True)``); larger ones the full O3 pipeline, split
across the target's threads in chunks.

>>> import numpy as np
>>> from fntorch.lowering.spec import KernelSpec, KOp
>>> f32 = np.dtype("float32")
>>> spec = KernelSpec(1, 0, (f32,), (KOp("exp", (("in", 0),), (), f32),), (("op", 0),),
...                   (False,))
>>> k = compile_kernel(spec)
>>> out = np.empty(3, f32)
>>> k([np.zeros(3, f32)], [out]); out.tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np

from . import cache as _cache
from .codegen import _Gen
from .codegen_values import _unsupported
from .spec import FUNCTION_NAME, REDUCTIONS, KernelSpec
from .target import Target, default_target

__all__ = ["FUNCTION_NAME", "Kernel", "compile_kernel"]
# Work (elements x passes) below which a call runs on the calling thread only. Handing
# a kernel to the pool costs a lock handoff; measured here, 2^19 instead of 2^16 made the
# W5 MLP step 6% and the W8 scan RNN 9% faster (medians, interleaved A/B), and large
# kernels (W2-W4: 4M elements) still split across the cores.
PARALLEL_THRESHOLD = 1 << 19
# Calls below the threshold run a variant compiled for short loops (O2, no unrolling,
# interleaving or vectorized epilogue; the target's ``compile_object``): those multiply the code
# LLVM optimizes and emits (W5's kernels: 998 ms of LLVM time with unrolling and
# interleaving, 407 ms without), and pay off only over long loops. Large calls get the
# full O3 pipeline. Off: every variant gets the full pipeline.
SMALL_TUNING = True


# ------------------------------------------------------------------------ Kernel
def _variant_of(inputs, rank: int) -> str:
    """One letter per input: its innermost stride is contiguous, 0, or general."""
    if rank == 0:
        return "c" * len(inputs)
    out = []
    for a in inputs:
        s = a.strides[-1]
        if a.shape[-1] <= 1 or s == a.itemsize:
            out.append("c")
        elif s == 0:
            out.append("b")
        else:
            out.append("g")
    return "".join(out)


class Kernel:
    """A compiled ``KernelSpec``: ``kernel(inputs, outputs)`` computes it in place.

    ``inputs``: numpy arrays shaped as the iteration space (any strides, broadcast
    views included); ``outputs``: C-contiguous numpy arrays of the outputs' dtypes, of
    the full shape or, for per-row outputs of row kernels, the row shape. Shapes and
    dtypes are the caller's contract (``check=True`` verifies them, for debugging).
    """

    def __init__(self, spec: KernelSpec, target: Target | None = None):
        target = target or default_target()
        for op in spec.ops:
            if op.prim not in _known():
                raise _unsupported(op.prim)
        self.spec = spec
        self.target = target
        self._fns: dict = {}  # variant -> (GIL-holding function, GIL-releasing function)
        self._lock = threading.Lock()
        rank, k = spec.rank, spec.reduce_rank
        self._split_dims = rank - k if k else max(rank - 1, 1) if rank else 0
        self._passes = 1 + sum(op.prim in REDUCTIONS for op in spec.ops)
        n_in = len(spec.input_dtypes)
        # The array whose size measures the work: an input, else a full-shape output.
        self._src = (
            0
            if n_in
            else n_in + (spec.output_is_row.index(False) if False in spec.output_is_row else 0)
        )
        self._hold = self._release = None  # the variant used last

    # ----------------------------------------------------------- compiling
    def _cache_key(self, variant: str, small: bool = False) -> str:
        tuning = "|small" if small and SMALL_TUNING else ""
        return f"{self.spec.key()}|variant={variant}{tuning}|abi={self.target.entry_abi()}"

    def module(self, variant: str | None = None, name: str = FUNCTION_NAME, small: bool = False):
        """The xDSL module of ``variant`` (default: every input contiguous), its function
        called ``name``; ``small``: the variant for calls below ``PARALLEL_THRESHOLD``."""
        variant = variant or "c" * len(self.spec.input_dtypes)
        abi = self.target.entry_abi()
        return _Gen(self.spec, variant, abi, name, cascade=not small).build().module

    def _compile(self, variant: str, small: bool):
        small = small and SMALL_TUNING
        with self._lock:
            fns = self._fns.get((variant, small))
            if fns is not None:
                return fns

            def build(name: str) -> bytes:
                from .emit import emit_module

                mod = self.module(variant, name, small)
                return self.target.compile_object(str(emit_module(mod)), small=small)

            key = self._cache_key(variant, small)
            fns = self.target.callables(_cache.load_or_build(key, build, self.target))
            self._fns[(variant, small)] = fns
            return fns

    def expects(self, inputs) -> tuple[str, bool] | None:
        """(variant, small) a call with ``inputs`` (arrays shaped as the iteration
        space) will need; None when the inputs do not tell (no inputs)."""
        if self._src >= len(self.spec.input_dtypes):
            return None
        return _variant_of(inputs, self.spec.rank), self._small(inputs[self._src].size)

    def prepare(self, variant: str, small: bool):
        """Compiles (or finds) ``variant`` for small (GIL-holding) or large (GIL-releasing)
        calls and makes it the one tried first; returns that function."""
        hold, release = self._compile(variant, small)
        if small:
            self._hold = hold
            return hold
        self._release = release
        return release

    def as_text(self, variant: str | None = None) -> str:
        """The kernel's xDSL IR (``llvm`` dialect), as xDSL prints it."""
        return str(self.module(variant))

    # -------------------------------------------------------------- calling
    def __call__(self, inputs, outputs, check: bool = False) -> None:
        """Computes the kernel: reads ``inputs``, writes ``outputs`` (see the class doc)."""
        if check:
            self._check(inputs, outputs)
        arrays = (*inputs, *outputs)
        if arrays[self._src].size * self._passes < PARALLEL_THRESHOLD:
            # The compiled function checks its own variant and returns 1 on a mismatch.
            hold = self._hold
            if hold is None or hold(id(arrays), 0, -1):
                self._switch(arrays, True)(id(arrays), 0, -1)
            return
        self._large(arrays)

    def splits(self, size: int) -> bool:
        """Whether a call over ``size`` elements is split over the kernel threads.

        >>> from fntorch.lowering.spec import KOp
        >>> f32 = np.dtype("float32")
        >>> k = Kernel(KernelSpec(1, 0, (f32,), (KOp("neg", (("in", 0),), (), f32),),
        ...                       (("op", 0),), (False,)))
        >>> k.splits(1000), k.splits(1 << 22) == (k.target.num_threads() > 1)
        (False, True)
        """
        return not self._small(size) and self.target.num_threads() > 1

    def _small(self, size: int) -> bool:
        """Whether a call over ``size`` elements keeps the GIL, on the calling thread
        (``__call__`` tests the same inline: it is the hot path)."""
        return size * self._passes < PARALLEL_THRESHOLD

    def _switch(self, arrays, small: bool):
        """``prepare`` for the variant these arrays need."""
        return self.prepare(
            _variant_of(arrays[: len(self.spec.input_dtypes)], self.spec.rank), small
        )

    def _large(self, arrays) -> None:
        release = self._release
        if release is None or release(id(arrays), 0, 0):  # an empty range: the check only
            release = self._switch(arrays, False)
        threads = self.target.num_threads()
        shape = arrays[self._src].shape
        outer = math.prod(shape[: self._split_dims])
        parts = min(threads, outer)
        if parts < 2:
            release(id(arrays), 0, -1)
            return
        self.target.run_split(release, id(arrays), outer, parts)

    def _check(self, inputs, outputs) -> None:
        spec = self.spec
        if len(inputs) != len(spec.input_dtypes) or len(outputs) != len(spec.outputs):
            raise ValueError(
                f"kernel: expected {len(spec.input_dtypes)} inputs and {len(spec.outputs)} "
                f"outputs, got {len(inputs)} and {len(outputs)}"
            )
        shape = None
        for i, (a, dt) in enumerate(zip(inputs, spec.input_dtypes)):
            if not isinstance(a, np.ndarray) or a.dtype != dt or a.ndim != spec.rank:
                raise TypeError(f"kernel: input {i} must be a rank-{spec.rank} {dt} ndarray")
            shape = shape or a.shape
            if a.shape != shape:
                raise ValueError(f"kernel: input {i} has shape {a.shape}, expected {shape}")
        m = spec.rank - spec.reduce_rank
        for o, (a, row) in enumerate(zip(outputs, spec.output_is_row)):
            want = (shape[:m] if row else shape) if shape is not None else None
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                raise TypeError(f"kernel: output {o} must be a C-contiguous ndarray")
            if want is not None and a.shape != want:
                raise ValueError(f"kernel: output {o} has shape {a.shape}, expected {want}")


@functools.cache
def _known() -> frozenset:
    from .rules import KERNEL_PRIMITIVES

    return KERNEL_PRIMITIVES


_kernels = _cache.kernels  # the one in-memory cache (tests clear it by this name)


def compile_kernel(spec: KernelSpec, target: Target | None = None) -> Kernel:
    """The compiled kernel of ``spec`` for ``target`` (default: the host's; memoized in
    memory and on disk).

    Each variant (the inputs' innermost strides: contiguous, broadcast or general) is
    compiled by the first call that needs it, so a kernel only ever called with a
    broadcast bias never compiles the all-contiguous variant.

    >>> import numpy as np
    >>> from fntorch.lowering.spec import KernelSpec, KOp
    >>> f32 = np.dtype("float32")
    >>> spec = KernelSpec(2, 1, (f32,), (KOp("reduce_sum", (("in", 0),), (), f32),),
    ...                   (("op", 0),), (True,))
    >>> out = np.empty(2, f32)
    >>> compile_kernel(spec)([np.ones((2, 3), f32)], [out]); out.tolist()
    [3.0, 3.0]
    """
    target = target or default_target()
    return _cache.memoized(("fused", spec.key(), target), lambda: Kernel(spec, target))
