"""A compiled program on a CUDA device: a fusion ``Plan`` run over CuPy buffers.

``lowering``'s ``Program`` is built over numpy buffers (views by ``np.ndarray``, the
ctypes entry, the CPU's threads); the CUDA target builds this one instead
(``CudaTarget.build_program``, which ``compile_graph`` asks for), from the same plan:

- a kernel step whose spec has a GPU form (``cuda_codegen.supports``) is one PTX
  kernel launch on the current stream; its inputs are CuPy views shaped as the
  iteration space (broadcasts and transposes cost no copy: the ``g`` variant reads
  their strides), its outputs fresh CuPy arrays;
- a kernel step without one (a primitive no GPU template computes) runs its equations
  with the device's eager impls;
- library steps (``dot_general`` through cuBLAS, sort, convolution, control flow ...)
  call the device's eager impls (``cuda_impls``);
- index equations (views) are made when a step first reads them.

From its second call on, a program of three steps or more that all stay on the device
replays as one CUDA graph (``cuda_graphs``; ``FNTORCH_CUDA_GRAPHS=0`` turns that off):
one launch instead of one Python call per step. Not yet:
donation (a donated input is never written in place).
"""

from __future__ import annotations

import ctypes
import math
from functools import partial

import numpy as np

from ..fx.graph import Literal
from ..lowering.fusion import KernelStep
from . import cuda_codegen as cg
from . import cuda_graphs
from .cuda_bf16 import BF16, Bf16Array, as_device, bits_of
from .cuda_launch import LOCK, KeptOutputs, Params

U16 = np.dtype(np.uint16)
_RESHAPES = frozenset({"reshape", "squeeze", "expand_dims"})  # views a fresh output as is


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class CudaKernel:
    """One kernel step's spec, compiled per input variant on first use.

    ``kernel(inputs, outputs, sizes)``: CuPy arrays shaped as the iteration space
    ``sizes`` in, fresh C-contiguous outputs (full or per-row) written.

    >>> import fntorch as ft
    >>> x = ft.ones(5).cuda()  # doctest: +SKIP
    >>> ft.jit(lambda v: v * 2.0).lower(x)._entry.program.kernels[0]  # doctest: +SKIP
    <fntorch.devices.cuda_program.CudaKernel object at ...>
    """

    def __init__(self, spec, target):
        self.spec, self.target = spec, target
        self._fns: dict = {}

    def function(self, variant: str):
        fn = self._fns.get(variant)
        if fn is None:
            fn = self._fns[variant] = self.target.kernel_function(self.spec, variant)
        return fn

    def as_text(self, variant: str | None = None) -> str:
        """The kernel's LLVM IR for ``variant`` (default: every input contiguous)."""
        return cg.kernel_ir(self.spec, variant or "c" * len(self.spec.input_dtypes))

    def __call__(self, inputs, outputs, sizes) -> None:
        self.bind(sizes)(inputs, outputs)

    def bind(self, sizes, fresh=()):
        """``launch(inputs, outputs=None) -> outputs`` for the iteration space ``sizes``,
        which a compiled program's step never changes: the grid, the block and the size
        arguments are worked out here, once, and the variant, function and parameter
        block (sizes and strides filled in, ``cuda_launch``) once per layout of the
        inputs (which are contiguous, and at which 16-byte alignment; the strides of
        those that are not). Without ``outputs`` the launch allocates them as ``fresh``
        says (their ``(shape, dtype)``s: last call's buffers where the caller let go of
        them, ``cuda_launch.KeptOutputs``) and returns them; it launches nothing and
        returns None when an input is not a CuPy array. A launch costs the buffers'
        addresses, a dict lookup, one slice assignment and ``cuLaunchKernel``, in one
        Python frame: the host time before the kernel starts is what a call of a
        memory-bound jit kernel waits for."""
        spec = self.spec
        rank = spec.rank
        sizes = tuple(int(s) for s in sizes)
        m = rank - spec.reduce_rank
        rows, total = math.prod(sizes[:m]), math.prod(sizes)  # np.prod: ~3 us a call
        cp = self.target.cupy()
        ndarray = cp.ndarray
        fresh = tuple((tuple(sh), np.dtype(d)) for sh, d in fresh)
        if (rows if spec.reduce_rank else total) == 0:
            return lambda inputs, outputs=None: outputs or [ndarray(*f) for f in fresh]
        sms = self.target.multiprocessors()
        if spec.reduce_rank:
            block = cg.WARP * cg.ROWS_PER_BLOCK
            grid = max(1, min(-(-rows // cg.ROWS_PER_BLOCK), sms * cg.ROW_GRID_PER_SM))
        else:
            block, grid = cg.BLOCK, cg.elementwise_grid(total, sms)
        n_ptrs = len(spec.input_dtypes) + len(spec.outputs)
        launch_kernel, current_stream = cp.cuda.driver.launchKernel, cp.cuda.get_current_stream
        acquire, release = LOCK.acquire, LOCK.release
        layouts: dict = {}
        kept = KeptOutputs(ndarray, fresh)

        def layout(inputs, key):
            variant = cg.variant_of(inputs, len(inputs), m if spec.reduce_rank else 0)
            if spec.reduce_rank:
                variant = cg.row_variant(variant, total // rows)
            tail = list(sizes)
            for a in inputs:
                tail += a.strides if a.ndim == rank else (0,) * rank
            params = Params(*map(ctypes.c_int64, tail), pointers=n_ptrs)
            got = layouts[key] = (self.function(variant).ptr, params)
            return got

        def launch(inputs, outputs=None):
            ptrs, key = [], []
            for a in inputs:
                if type(a) is not ndarray:
                    return None  # a host value: the caller's slower path places it
                p = a.data.ptr
                ptrs.append(p)
                key.append(p & 15 if a._c_contiguous else a.strides)
            key = tuple(key)
            got = layouts.get(key)
            if got is None:
                got = layout(inputs, key)
            fn, params = got  # the block itself: cuLaunchKernel reads memory it owns
            stream = current_stream().ptr
            # The block is this kernel's, shared by threads (``cuda_launch``), and so are
            # the kept outputs: a thread holds what it took before another one looks.
            acquire()
            try:
                if outputs is None:
                    outputs = kept.take(stream)
                for b in outputs:
                    ptrs.append(b.data.ptr)
                params.addresses[:] = ptrs
                launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params.address, 0)
            finally:
                release()
            return outputs

        return launch


class CudaProgram:
    """``program(*flat_input_buffers) -> list of output buffers`` on one CUDA device.

    >>> import fntorch as ft
    >>> f = ft.jit(lambda v: ft.softmax(v, axis=-1))
    >>> type(f.lower(ft.ones((2, 3)).cuda())._entry.program).__name__  # doctest: +SKIP
    'CudaProgram'
    """

    def __init__(self, plan, target):
        cp = target.cupy()
        self.plan, self.target, self._cp = plan, target, cp
        g = plan.graph
        self.n_inputs = len(g.invars)
        self._consts = {v.id: _on_device(cp, c) for v, c in zip(g.constvars, g.consts)}
        self.kernels, self.listing, self._steps = [], [], []
        for st in plan.steps:
            if isinstance(st, KernelStep) and cg.supports(st.spec):
                k = target.kernel(st.spec)
                self.kernels.append(k)
                self.listing.append((st.spec.key(), k))
                self._steps.append(self._launch_step(st, k))
            elif isinstance(st, KernelStep):
                self._steps.append(partial(self._eager_group, st=st))
            else:
                self._steps.append(partial(self._eqn, eqn=st.eqn))
        self._direct = self._direct_call()
        # CUDA-graph capture (``cuda_graphs``): counted calls until the capture, None once
        # tried; ``graph_status`` says where the program stands.
        self._graph, self._calls = None, None
        if cuda_graphs.enabled():
            why = cuda_graphs.capturable(plan, lambda st: cg.supports(st.spec))
        else:
            why = "capture is off (FNTORCH_CUDA_GRAPHS=0)"
        if why is None:
            self._calls, self.graph_status = 0, "not captured yet"
        else:
            self.graph_status = f"not captured: {why}"

    @property
    def n_steps(self) -> int:
        return len(self._steps)

    # ------------------------------------------------------------------ running
    def _read(self, env, v):
        if isinstance(v, Literal):
            return v.value
        got = env.get(v.id)
        if got is None:
            eqn = self.plan.views.get(v.id)
            if eqn is None:
                raise KeyError(f"CudaProgram: value {v} has no producer")
            self._eqn(env, eqn)
            got = env[v.id]
        return got

    def _eqn(self, env, eqn):
        impl = self.target.impls[eqn.primitive]
        outs = impl(*[self._read(env, u) for u in eqn.inputs], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outputs, outs):
                env[v.id] = o
        else:
            env[eqn.outputs[0].id] = outs

    def _eager_group(self, env, st):
        for eqn in st.eqns:
            self._eqn(env, eqn)

    def _launch_step(self, st, kernel):
        """A closure running kernel step ``st``: what depends on shapes only (the
        iteration shape, the outputs' shapes and dtypes, literal operands as device
        scalars) is worked out here, once."""
        cp = self._cp
        shape, perm = tuple(st.logical_shape), tuple(st.perm)
        ident = perm == tuple(range(len(perm)))
        inv = _inverse(perm)
        it_shape = tuple(shape[d] for d in perm)
        ins = [
            (None, bits_of(_on_device(cp, np.asarray(u.value, dtype))))
            if isinstance(u, Literal)
            else (u, np.dtype(dtype))
            for u, dtype in zip(st.inputs, st.spec.input_dtypes)
        ]
        fresh = _fresh(st, it_shape)
        wrap = [w for _, _, w in fresh]  # bfloat16 results: the kernel writes their bits
        outs = [
            (var.id, not is_row and not ident, tuple(var.aval.shape)) for var, is_row in st.outputs
        ]
        read, ndarray, broadcast = self._read, cp.ndarray, cp.broadcast_to
        run = kernel.bind(it_shape, [(sh, dtype) for sh, dtype, _ in fresh])

        def launch(env):
            views = []
            for u, const in ins:
                a = const if u is None else bits_of(read(env, u))
                if not isinstance(a, ndarray):
                    a = bits_of(_on_device(cp, np.asarray(a, const)))
                if a.shape != shape:
                    a = broadcast(a, shape)
                views.append(a if ident else a.transpose(perm))
            bufs = run(views)
            for (vid, permuted, aval_shape), out, w in zip(outs, bufs, wrap):
                if permuted:
                    out = out.transpose(inv)
                out = out if out.shape == aval_shape else out.reshape(aval_shape)
                env[vid] = Bf16Array(out) if w else out

        return launch

    def _direct_call(self):
        """``call(bufs) -> outputs | None`` for a program that is one kernel launch on its
        own inputs (W2's GELU, W3's softmax, W4's layer norm: most of what a jit of a
        memory-bound function compiles to), else None. Everything ``run_steps`` decides
        per call is decided here: each kernel input is a program input (or constant) of
        the iteration shape, unpermuted, not bfloat16; each program output is a kernel
        output or a reshape of one (a kept dimension). The call then picks its inputs,
        launches and reshapes, with no environment, views or step closures in between;
        it answers None (and the program runs step by step) when an input is not a CuPy
        array. Where the inputs and outputs are the kernel's own, in order, the call is
        the kernel's launch itself."""
        plan, g = self.plan, self.plan.graph
        if len(plan.steps) != 1 or len(self.kernels) != 1:
            return None
        st = plan.steps[0]
        shape = tuple(st.logical_shape)
        if tuple(st.perm) != tuple(range(len(shape))):
            return None
        where = {v.id: i for i, v in enumerate(g.invars)}
        picks = []
        for u, dtype in zip(st.inputs, st.spec.input_dtypes):
            if isinstance(u, Literal) or np.dtype(dtype) == BF16:
                return None
            if tuple(u.aval.shape) != shape:
                return None  # a broadcast operand: the step's views make it
            picks.append(where.get(u.id, self._consts.get(u.id)))
            if picks[-1] is None:
                return None
        produced = {var.id: k for k, (var, _) in enumerate(st.outputs)}
        fresh = [(sh, dtype) for sh, dtype, bf16 in _fresh(st, shape) if not bf16]
        if len(fresh) != len(st.outputs):
            return None  # a bfloat16 result: the step's closure wraps its bits
        order = []
        for v in g.outvars:
            if isinstance(v, Literal):
                return None
            eqn = plan.views.get(v.id)
            if eqn is not None and eqn.primitive.name in _RESHAPES:
                src = eqn.inputs[0]  # a kept dimension of a row output: the same buffer
                k = None if isinstance(src, Literal) else produced.get(src.id)
            else:
                k = produced.get(v.id)
            if k is None:
                return None
            sh = tuple(v.aval.shape)
            order.append((k, sh if sh != fresh[k][0] else None))
        run = self.kernels[0].bind(shape, fresh)
        constant = [not isinstance(i, int) for i in picks]  # else a CuPy array
        same = [(k, None) for k, _ in enumerate(fresh)]
        if not any(constant) and picks == list(range(len(g.invars))) and order == same:
            return run  # W3's case: the program's inputs and outputs are the kernel's

        def call(bufs):
            outs = run([i if c else bufs[i] for i, c in zip(picks, constant)])
            if outs is None:
                return None
            return [outs[k] if sh is None else outs[k].reshape(sh) for k, sh in order]

        return call

    def run_steps(self, bufs) -> list:
        """The outputs of one step-by-step run on input buffers ``bufs`` (CuPy arrays,
        or host values where an output is a literal)."""
        g = self.plan.graph
        env = dict(self._consts)
        for v, b in zip(g.invars, bufs):
            env[v.id] = b
        for run in self._steps:
            run(env)
        return [self._read(env, v) for v in g.outvars]

    def __call__(self, *bufs):
        if self._direct is not None:
            outs = self._direct(bufs)
            if outs is not None:
                return outs
        cp = self._cp
        outs = None
        if self._graph is not None:
            outs = self._graph(*bufs)
        elif self._calls is not None:
            self._calls += 1
            if self._calls >= cuda_graphs.CAPTURE_AT_CALL:
                self._calls = None  # one try
                outs = self._capture(bufs)
        if outs is None:
            outs = self.run_steps(bufs)
        on_device = (cp.ndarray, Bf16Array)
        return [
            o if isinstance(o, on_device) else _on_device(cp, np.asarray(o, v.aval.dtype))
            for o, v in zip(outs, self.plan.graph.outvars)
        ]

    def _capture(self, bufs):
        """Captures this program as a CUDA graph and replays it on ``bufs``; None (and
        ``graph_status`` says why) where it cannot."""
        try:
            self._graph = cuda_graphs.CapturedGraph.capture(self, bufs)
        except Exception as e:  # CUDA refused something while recording: run step by step
            self.graph_status = f"capture failed: {type(e).__name__}: {e}"
            return None
        self.graph_status = "captured"
        return self._graph(*bufs)


def _on_device(cp, c):
    """A graph constant as a CuPy array (it may be one already: made on the GPU while
    tracing under ``ft.default_device("cuda")``)."""
    return as_device(cp, getattr(c, "_value", c))


def _fresh(st, it_shape):
    """``(shape, dtype, bfloat16?)`` of each output kernel step ``st`` writes over
    iteration shape ``it_shape`` (a row output: its leading dims); a bfloat16 result is
    written as its 16 bits."""
    m = st.spec.rank - st.spec.reduce_rank
    out = []
    for o, (_, is_row) in enumerate(st.outputs):
        dtype = np.dtype(_out_dtype(st.spec, o))
        bf16 = dtype == BF16
        out.append((it_shape[:m] if is_row else it_shape, U16 if bf16 else dtype, bf16))
    return out


def _out_dtype(spec, o):
    from ..lowering.spec import _out_dtype as out_dtype

    return out_dtype(spec, o)
