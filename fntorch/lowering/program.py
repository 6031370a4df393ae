"""The compiled program: a list of steps over a list of buffers, run without the tracer.

``build_program(plan)`` turns a fusion ``Plan`` into a ``Program``. Every value of the
graph gets a *slot* in a frame (a Python list). Work that depends only on shapes is done
once, when the program is built or a frame is made:

- constants, literals, ``iota`` and every view or library call of constants only are
  computed at build time;
- intermediate kernel and matmul results that never reach the caller live in
  *preallocated* buffers, one set per frame, reused on every call; the views of them a
  kernel reads (broadcasts, transposes) are made once per frame;
- results the caller receives are fresh buffers on every call, never written again
  while the caller can see them: tensors are immutable. Those of 128 KiB to 64 MiB
  are recycled (``steps._Fresh``): a buffer the caller has dropped is written again on
  a later call instead of mapping new pages (BENCHMARKS.md: glibc returns 16-26 MB
  blocks to the system and the next call pays ~6 ms of page faults each).

Views of per-call buffers (inputs, results the caller receives) are made per call, each
chain of them (an expand, a squeeze, a broadcast) by one step, when a step first reads
it; where the root buffer is laid out as at build time, that step is one ``np.ndarray``
call over the root with the strides the chain gave on a stand-in (``steps._view_step``).

A call takes a frame from a small pool (so concurrent calls from several threads each
get their own buffers), copies it, stores the inputs, runs each step (a closure over
slot indices), and returns the output slots.

Donation: inputs named in ``donated`` may be written by a kernel that produces an
output of the same shape and dtype, when the kernel reads that input (if at all) at the
same index and no later step reads it. The caller passes a donated buffer only when
nothing else references it (``jit`` checks), else a read-only view, which is never
reused.
"""

from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from ..fx.core import Tensor
from ..fx.graph import Literal, Var
from .fusion import KernelStep, Plan
from .library import LibrarySteps
from .spec import stash_plan
from .steps import (
    CONST,
    DYN,
    LAYOUT,
    RECYCLE_MAX_BYTES,
    _alloc,
    _kernel_step,
    _unary_step,
    _view_step,
)
from .target import Target, default_target


def _backend(name: str):
    """``compile_kernel`` of the kernel compiler, or the numpy interpreter's."""
    if name != "interpret":
        try:
            from .kernels import compile_kernel

            return compile_kernel
        except ImportError:
            if name == "compiled":
                raise
    from .interpret import compile_kernel

    return compile_kernel


def get_kernel(spec, backend: str = "auto", target: Target | None = None):
    """The compiled kernel of ``spec`` for ``backend`` on ``target`` (the compiler memoizes
    its kernels in the one in-memory cache, ``cache.kernels``; the interpreter's cost
    nothing to make)."""
    return _backend(backend)(spec, target=target)


def _flat_size(st: KernelStep, shape, ident, layouts) -> int | None:
    """The element count when ``st`` may run as a rank-1 kernel over raveled buffers,
    else None: an elementwise kernel of rank >= 2 in iteration order that reads no
    element index, each input a single element or of the full shape and C-contiguous
    (``layouts``: the stand-ins of ``_layout_of``; a view such as a broadcast would be
    copied by the ravel).

    Such kernels then share one compile across shapes and ranks (W5: the SGD update of
    a weight and of a bias; the gradient scalings), and a flat loop is the least code
    for LLVM to optimize. An input that turns out non-contiguous at run time (a
    strided array the caller passed) is copied by the ravel: correct, only slower.
    """
    spec = st.spec
    if spec.reduce_rank or spec.rank < 2 or not ident:
        return None
    refs = [a for op in spec.ops for a in op.args] + list(spec.outputs)
    if any(r[0] == "index" for r in refs) or any(op.prim == "iota" for op in spec.ops):
        return None
    for u, layout in zip(st.inputs, layouts):
        if isinstance(u, Literal) or u.aval.size == 1:
            continue
        if tuple(u.aval.shape) != shape or layout is None or not layout.flags.c_contiguous:
            return None
    return math.prod(shape)


def _broadcast_flat(buf, size):
    return np.broadcast_to(buf.reshape(-1), (size,))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _adapter(shape, perm):
    """``buf`` viewed as the kernel's iteration space: broadcast to ``shape``, permuted."""
    ident = perm == tuple(range(len(perm)))

    def view(buf):
        v = np.broadcast_to(buf, shape)
        return v if ident else v.transpose(perm)

    return view


class Program:
    """A compiled graph: ``program(*flat_input_buffers) -> list of output buffers``."""

    def __init__(
        self,
        n_inputs,
        proto,
        setup,
        steps,
        out_slots,
        kernels,
        plan,
        products,
        listing=(),
        adopt=None,
    ):
        self.n_inputs = n_inputs
        self._proto = proto  # frame template after the inputs: constants filled in
        self._setup = setup  # per-frame work: preallocation and views of it
        self._steps = steps
        self._out_slots = out_slots
        get = (
            (lambda env: [env[out_slots[0]]]) if len(out_slots) == 1
            else (lambda env: list(operator.itemgetter(*out_slots)(env))) if out_slots
            else (lambda env: [])
        )  # fmt: skip
        if adopt is not None:  # the target's outputs are its own buffers, not host arrays
            get = _adopting(get, adopt)
        self._get_outputs = get
        self.kernels = kernels
        self.plan = plan
        self.products = products  # the target's products(): how matrix products run
        # (label, compiled kernel or sub-program) in step order: what ``as_text`` prints
        self.listing = list(listing)
        self._pool: list = []

    def new_frame(self) -> list:
        env = [None] * self.n_inputs + list(self._proto)
        for f in self._setup:
            f(env)
        return env[self.n_inputs :]

    def __call__(self, *bufs):
        pool = self._pool
        tpl = pool.pop() if pool else self.new_frame()
        try:
            env = [*bufs, *tpl]
            for f in self._steps:
                f(env)
            return self._get_outputs(env)
        finally:
            pool.append(tpl)

    @property
    def n_steps(self) -> int:
        return len(self._steps)


def _adopting(get, adopt):
    def get_adopted(env):
        return [adopt(b) for b in get(env)]

    return get_adopted


class _Builder(LibrarySteps):
    def __init__(self, plan: Plan, donated, backend, target: Target):
        self.plan = plan
        g = plan.graph
        self.graph = g
        self.backend = backend
        self.target = target
        self.n_in = len(g.invars)
        self.slot: dict[int, int] = {}
        self.kind: list[int] = []
        self.probe: list = []  # a frame built alongside, to try views on real buffers
        self.setup: list = []
        self.steps: list = []
        # Views of the inputs, made before every other step: right after a big matmul
        # the same view costs 30-46 us instead of 2-3 (the caches are full of BLAS).
        self.prologue: list = []
        self.kernels: list = []
        self.listing: list = []
        self.products = target.products()
        for i, v in enumerate(g.invars):
            self.slot[v.id] = i
            self.kind.append(DYN)
            self.probe.append(None)
        self.donated = {i for i in donated if i < self.n_in}
        self.layout: dict[int, np.ndarray] = {}  # DYN slot -> stand-in (see _layout_of)
        # DYN slot -> (root slot, view functions): a view of a per-call buffer, made by
        # one step when a step first reads it (``use``), so a chain of views (expand,
        # squeeze, broadcast) costs one step, and a view nothing reads costs none.
        self.lazy: dict[int, tuple] = {}
        self.prepare: list = []  # (kernel, variant, small) to compile before the first run
        self.escapes = self._escaping()
        self.last_use = self._last_uses()
        self.const_of = {v.id: c for v, c in zip(g.constvars, g.consts)}
        # Inputs a library call reads: its result may be a view of them, so they are
        # never donated.
        self.library_read = {
            r.id
            for s in plan.library_calls
            for r in map(self._root, s.eqn.inputs)
            if isinstance(r, Var)
        }

    # ----------------------------------------------------------------- analysis

    def _escaping(self) -> set:
        """Vars whose buffer may be (a view of) a buffer handed to the caller."""
        esc = {v.id for v in self.graph.outvars if isinstance(v, Var)}
        lib = {id(s.eqn) for s in self.plan.library_calls}
        for e in reversed(self.graph.eqns):
            if e.outputs[0].id in self.plan.views or id(e) in lib:
                if any(v.id in esc for v in e.outputs):
                    esc.update(v.id for v in e.inputs if isinstance(v, Var))
        return esc

    def _root(self, v):
        while isinstance(v, Var) and v.id in self.plan.views and self.plan.views[v.id].inputs:
            v = self.plan.views[v.id].inputs[0]
        return v

    def _last_uses(self) -> dict:
        last: dict[int, int] = {}
        for i, s in enumerate(self.plan.steps):
            ins = s.inputs if isinstance(s, KernelStep) else s.eqn.inputs
            for v in ins:
                r = self._root(v)
                if isinstance(r, Var):
                    last[r.id] = i
        for v in self.graph.outvars:
            r = self._root(v)
            if isinstance(r, Var):
                last[r.id] = len(self.plan.steps)
        return last

    # ------------------------------------------------------------------ slots

    def new_slot(self, kind, value=None) -> int:
        self.kind.append(kind)
        self.probe.append(value)
        return len(self.kind) - 1

    def const_slot(self, value) -> int:
        return self.new_slot(CONST, value)

    def unary_view(self, fn, src: int) -> int:
        """A slot holding ``fn(env[src])`` (a view): made at build time, per frame, or
        per call, the earliest the source allows."""
        k = self.kind[src]
        if k == CONST:
            return self.const_slot(fn(self.probe[src]))
        if k == LAYOUT:
            src_val = self.probe[src]
            val = fn(src_val)
            if val.size == 0 or np.may_share_memory(val, src_val):
                out = self.new_slot(LAYOUT, val)
                self.setup.append(_unary_step(fn, src, out))
                return out
        out = self.new_slot(DYN)
        root, fns = self.lazy.get(src, (src, ()))
        self.lazy[out] = (root, (*fns, fn))
        if src in self.layout:
            try:
                self.layout[out] = fn(self.layout[src])
            except Exception:  # noqa: BLE001 - only a guess for precompiling; see _layout_of
                pass
        return out

    def use(self, slot: int) -> int:
        """``slot``, made ready for a step to read: a view not yet made gets its step,
        right here (or in the prologue, for a view of an input)."""
        lazy = self.lazy.pop(slot, None)
        if lazy is not None:
            root, fns = lazy
            step = _view_step(root, fns, slot, self._view_layout(root, slot))
            (self.prologue if root < self.n_in else self.steps).append(step)
        return slot

    def _view_layout(self, root: int, slot: int):
        """``(shape, dtype, offset, strides, root_strides)`` of view ``slot`` into
        ``root``'s buffer, read off their stand-ins (``_layout_of``; ``unary_view`` makes
        a view's stand-in from its source's); None when the view may not be a plain
        strided view of a C-contiguous root (it would copy)."""
        base, val = self._layout_of(root, None), self.layout.get(slot)
        if base is None or base.size == 0 or base.ndim == 0 or not base.flags.c_contiguous:
            return None
        if not isinstance(val, np.ndarray) or val.size == 0:
            return None
        offset = val.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if not np.may_share_memory(val, base) or offset < 0:
            return None
        return val.shape, val.dtype, offset, val.strides, base.strides

    def fresh_slot(self, shape, dtype) -> int:
        """A slot for a result the caller receives: a fresh buffer on every call."""
        slot = self.new_slot(DYN)
        self._stand_in(slot, shape, dtype)
        return slot

    def _stand_in(self, slot: int, shape, dtype) -> None:
        """Records a zero buffer of ``shape`` (C-contiguous, as inputs, library results
        and ``take()``'s results are) as ``slot``'s stand-in (``_layout_of``). None above
        ``RECYCLE_MAX_BYTES``: there a view costs nothing beside the kernel that reads
        it, and a view chain that copies would copy the stand-in at build time too."""
        if math.prod(shape) * np.dtype(dtype).itemsize <= RECYCLE_MAX_BYTES:
            self.layout[slot] = np.zeros(shape, dtype)  # pages untouched

    def _layout_of(self, slot: int, var):
        """An array laid out as ``slot``'s buffer will be at run time (a zero buffer of
        the same shape and strides), or None. A dynamic value of a graph var is taken to
        be C-contiguous (inputs, library results and kernel outputs are); views of it
        follow by applying the view to that stand-in. Used to guess which variant each
        kernel will need, so it can be compiled before the first run, and to make views
        by strides (``_view_layout``, which checks the layout at run time)."""
        if self.kind[slot] != DYN:
            return self.probe[slot]
        if slot not in self.layout and isinstance(var, Var) and self.slot.get(var.id) == slot:
            self._stand_in(slot, var.aval.shape, var.aval.dtype)
        return self.layout.get(slot)

    def value(self, v) -> int:
        """The slot of graph value ``v``, materializing views on first use."""
        if isinstance(v, Literal):
            return self.const_slot(np.asarray(v.value))
        s = self.slot.get(v.id)
        if s is not None:
            self._layout_of(s, v)  # for views of it (``_view_layout``)
            return s
        if v.id in self.const_of:
            c = self.const_of[v.id]
            s = self.const_slot(c._value if isinstance(c, Tensor) else np.asarray(c))
        elif v.id in self.plan.views:
            e = self.plan.views[v.id]
            fn = partial(self.target.impls[e.primitive], **e.params)
            if e.inputs:
                src = self.value(e.inputs[0])
                self._layout_of(src, e.inputs[0])
                s = self.unary_view(fn, src)
            else:
                s = self.const_slot(fn())
        else:
            raise AssertionError(f"value {v} is read before it is computed")
        self.slot[v.id] = s
        return s

    # ------------------------------------------------------------------ steps

    def kernel(self, idx: int, st: KernelStep):
        shape, perm = tuple(st.logical_shape), tuple(st.perm)
        ident = perm == tuple(range(len(perm)))
        srcs = [self.value(u) for u in st.inputs]
        src_layouts = [self._layout_of(src, u) for src, u in zip(srcs, st.inputs)]
        flat = _flat_size(st, shape, ident, src_layouts)
        kern = get_kernel(st.spec._replace(rank=1) if flat else st.spec, self.backend, self.target)
        self.kernels.append(kern)
        self.listing.append((" ".join(e.primitive.name for e in st.eqns), kern))
        splits = getattr(kern, "splits", None)  # optional, like prepare: else one thread
        self.products.one_thread |= splits is not None and splits(math.prod(shape))
        adapt = _adapter(shape, perm)
        in_slots = []
        for u, src in zip(st.inputs, srcs):
            same = not isinstance(u, Literal) and tuple(u.aval.shape) == shape and ident
            if flat:
                view = np.ravel if same else partial(_broadcast_flat, size=flat)
                in_slots.append(self.unary_view(view, src))
            else:
                in_slots.append(src if same else self.unary_view(adapt, src))
        layouts = [self._layout_of(s, None) for s in in_slots]
        in_slots = [self.use(s) for s in in_slots]
        if hasattr(kern, "prepare") and all(a is not None for a in layouts):
            expected = kern.expects(layouts)
            if expected is not None:
                self.prepare.append((kern, *expected))
        it_shape, rows = st.iter_shape, st.rows
        out_slots, fresh = [], []
        for v, is_row in st.outputs:
            oshape = rows if is_row else it_shape
            dtype = np.dtype(v.aval.dtype)
            if v.id in self.escapes:
                donor = self._donor(idx, st, oshape, dtype, is_row)
                if flat:
                    oshape = (flat,)
                    if donor is not None:  # an input position is its slot
                        donor = self.use(self.unary_view(np.ravel, donor))
                slot = self.fresh_slot(oshape, dtype)
                fresh.append((slot, oshape, dtype, donor))
            else:
                oshape = (flat,) if flat else oshape
                slot = self.new_slot(LAYOUT, np.empty(oshape, dtype))
                self.setup.append(partial(_alloc, slot, oshape, dtype))
            out_slots.append(slot)
        self.steps.append(_kernel_step(kern, in_slots, out_slots, fresh))
        inv = _inverse(perm)
        for (v, is_row), slot in zip(st.outputs, out_slots):
            if flat:
                self.slot[v.id] = self.unary_view(partial(np.reshape, shape=it_shape), slot)
            elif is_row and tuple(v.aval.shape) != tuple(rows):  # a keepdims-like form
                self.slot[v.id] = self.unary_view(partial(np.reshape, shape=v.aval.shape), slot)
            elif is_row or ident:
                self.slot[v.id] = slot
            else:
                self.slot[v.id] = self.unary_view(partial(np.transpose, axes=inv), slot)

    def _donor(self, idx, st: KernelStep, shape, dtype, is_row):
        """A donated input slot this kernel output may reuse, or None."""
        if is_row or st.perm != tuple(range(len(st.perm))) or stash_plan(st.spec):
            return None  # a stashing row kernel writes outputs before its last read
        for i in sorted(self.donated):
            v = self.graph.invars[i]
            if v.aval.shape != shape or np.dtype(v.aval.dtype) != dtype:
                continue
            if (
                v.id in self.escapes
                or v.id in self.library_read
                or (self.last_use.get(v.id, -1) > idx)
            ):
                continue
            # The kernel may read it, but only at the index it writes.
            if any(self._root(u) is v and u is not v for u in st.inputs):
                continue
            self.donated.discard(i)
            return i
        return None

    def build(self) -> Program:
        for idx, st in enumerate(self.plan.steps):
            if isinstance(st, KernelStep):
                self.kernel(idx, st)
            else:
                self.library(st)
        _prepare_all(self.prepare)
        out_slots = [self.use(self.value(v)) for v in self.graph.outvars]
        proto = [p if k == CONST else None for p, k in zip(self.probe, self.kind)][self.n_in :]
        # Setup steps index the full frame; the frame kept in the pool drops the inputs.
        steps = self.prologue + self.steps
        return Program(
            self.n_in,
            proto,
            self.setup,
            steps,
            out_slots,
            self.kernels,
            self.plan,
            self.products,
            self.listing,
            self.target.adopt,
        )


def _prepare_all(pairs) -> None:
    """Compiles (or loads) each kernel's expected variant now, before the first run.

    One at a time, on this thread: llvmlite runs one LLVM call at a time (a process-wide
    lock), so a second compiling thread only overlaps LLVM with the Python that builds
    the next kernel's IR; measured on W5's cold first call, that overlap saved nothing
    beyond the machine's noise (the GIL handoffs between LLVM's many calls eat it)."""
    for k, v, small in dict.fromkeys(pairs):
        k.prepare(v, small)


def build_program(
    plan: Plan, target: Target | None = None, *, donated=(), backend: str = "auto"
) -> Program:
    """The ``Program`` running ``plan`` on ``target`` (default: the host's); ``donated``:
    flat input positions whose buffers outputs may reuse; ``backend``: ``"auto"`` (the
    kernel compiler when importable), ``"compiled"`` or ``"interpret"``."""
    return _Builder(plan, donated, backend, target or default_target()).build()
