"""Fusion: partitions a graph into kernel launches and library calls.

``partition(graph)`` walks the equations in order and builds a ``Plan``:

- **kernel groups**: maximal groups of elementwise primitives the kernel compiler
  supports (``lowering_table[prim].kernel``). A group has one *logical* shape ``L`` (the
  shape of its full values) and, once it holds a reduction, the reduced axes ``A``: it
  is then a *row kernel* whose iteration space is ``L`` permuted so that ``A`` is last
  (``perm = kept + A``; for last-axis reductions ``perm`` is the identity). Elementwise
  work after a reduction joins the same kernel when it only uses per-row values
  broadcast along the row, so softmax and layernorm are one kernel each. Per-row work
  (``max`` -> ``is_finite`` -> ``select``; ``var + eps`` -> ``rsqrt``) stays in the
  kernel as per-row ops.
- **index** primitives (broadcast_in_dim, transpose, reshape, squeeze, expand_dims,
  slice, rev, iota) are never steps: a kernel reads its inputs through numpy views
  (strides), so broadcasts and transposes on a group's inputs cost no copy.
- **library steps**: every other primitive, in order (dot_general as one BLAS matmul,
  float sums over leading axes as a BLAS column sum, ``is_column_sum``, the rest
  through their CPU impls), and the complex-valued equations of primitives without a
  complex rule (``rules_complex.fuses_complex``: pow, reduce_prod, ...); the other
  complex ones are kernel ops on (re, im) pairs. Gather, scatter*, scans and
  reduce_window whose dtypes a kernel template supports are ``TemplateStep``s (a
  library step that carries a ``spec_special`` spec: one compiled template kernel,
  ``templates.py``).

A group is *sealed* (closed to new ops) as soon as any other step reads one of its
values; it is placed in the step order at that moment, which keeps the order a valid
schedule: everything a group reads was produced by a step placed before it. The one
exception keeps that invariant: an elementwise op of a sealed group's shape that reads
only that group's values still joins it (``sealed_source``).

>>> import fntorch as ft
>>> from fntorch.lowering.passes import run_passes
>>> g = ft.make_graph(lambda x: ft.softmax(x, axis=-1))(ft.ones((4, 8)))
>>> print(partition(run_passes(g)).summary())
kernel  reduce_max sub exp reduce_sum div  [rank 2, row over 1 dim]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..fx.core import primitives
from ..fx.graph import Eqn, Graph, Literal, Var
from .rules_complex import fuses_complex
from .spec import KernelSpec, KOp
from .spec_special import spec_for
from .table import lowering_table

FULL, ROW = "full", "row"


@dataclass(eq=False)
class Group:
    """A kernel group under construction (see the module docstring)."""

    shape: tuple  # logical shape L of its full values
    axes: tuple = ()  # reduced logical axes A; () for an elementwise group
    ops: list = field(default_factory=list)  # [(index, eqn, level)]
    level: dict = field(default_factory=dict)  # var id -> FULL / ROW
    absorbed: set = field(default_factory=set)  # (id(eqn), pos): row broadcasts read in-kernel
    form: dict = field(default_factory=dict)  # var id -> form of a per-row value
    sealed: bool = False

    @property
    def kept(self) -> tuple:
        return tuple(d for d in range(len(self.shape)) if d not in self.axes)

    @property
    def perm(self) -> tuple:
        return self.kept + tuple(self.axes)

    @property
    def rows(self) -> tuple:
        return tuple(self.shape[d] for d in self.kept)

    @property
    def iter_shape(self) -> tuple:
        return tuple(self.shape[d] for d in self.perm)


@dataclass(eq=False)
class KernelStep:
    """One kernel launch. ``inputs``: the vars (or literals) read, each viewed as
    ``logical_shape`` (numpy broadcasting) then transposed by ``perm``; ``outputs``:
    ``(var, is_row)``; a full output is written in the iteration order and seen by
    the graph through the inverse permutation."""

    spec: KernelSpec
    eqns: list
    logical_shape: tuple
    perm: tuple
    inputs: list
    outputs: list

    @property
    def iter_shape(self) -> tuple:
        return tuple(self.logical_shape[d] for d in self.perm)

    @property
    def rows(self) -> tuple:
        return self.iter_shape[: self.spec.rank - self.spec.reduce_rank]


@dataclass(eq=False)
class LibraryStep:
    """One call outside the kernels (BLAS matmul, im2col conv, a CPU impl)."""

    eqn: Eqn


@dataclass(eq=False)
class TemplateStep(LibraryStep):
    """A library step computed by one template kernel (``templates.py``) of ``spec``;
    the program keeps the CPU impl when the kernel compiler is not available."""

    spec: object = None


def _library_step(e: Eqn) -> LibraryStep:
    """A ``TemplateStep`` where a template handles ``e`` (non-empty values), else a
    plain ``LibraryStep``."""
    if lowering_table[e.primitive].kind == "template" and not any(
        isinstance(v, Var) and 0 in v.aval.shape for v in (*e.inputs, *e.outputs)
    ):
        spec = spec_for(e.primitive.name, [v.aval for v in e.inputs], e.params)
        if spec is not None:
            return TemplateStep(e, spec)
    return LibraryStep(e)


@dataclass(eq=False)
class Plan:
    """The partitioned graph: ``steps`` in execution order; ``views`` maps a var id to
    the index equation that makes it (materialized as a numpy view where needed)."""

    graph: Graph
    steps: list
    views: dict

    @property
    def kernels(self) -> list:
        return [s for s in self.steps if isinstance(s, KernelStep)]

    @property
    def library_calls(self) -> list:
        return [s for s in self.steps if isinstance(s, LibraryStep)]

    def summary(self) -> str:
        """One line per step: its kind and the primitives it computes."""
        lines = []
        for s in self.steps:
            if isinstance(s, KernelStep):
                names = " ".join(e.primitive.name for e in s.eqns)
                k = s.spec.reduce_rank
                kind = f"row over {k} dim{'s' if k > 1 else ''}" if k else "elementwise"
                lines.append(f"kernel  {names}  [rank {s.spec.rank}, {kind}]")
            elif isinstance(s, TemplateStep):
                lines.append(f"kernel  {s.eqn.primitive.name}  [template]")
            else:
                lines.append(f"library {s.eqn.primitive.name}")
        return "\n".join(lines)


# ---------------------------------------------------------------- classification


def _kind(e: Eqn, allowed) -> str:
    entry = lowering_table[e.primitive]
    if entry.kind == "view":
        return "index"
    if e.primitive.multiple_results or not entry.kernel:
        return "library"
    if allowed is not None and e.primitive not in allowed:
        return "library"
    if entry.kind == "reduction" and not e.params.get("axes"):
        return "library"
    if any(isinstance(v, Var) and 0 in v.aval.shape for v in (*e.inputs, *e.outputs)):
        return "library"  # empty arrays: nothing to compute, the impls know the shapes
    if _complex_valued(e) and not fuses_complex(e.primitive.name):
        # Kernels carry complex values as (re, im) pairs through the rules of
        # ``rules_complex``; a primitive without one there runs on the host impl.
        return "library"
    return "kernel"


_COLUMN_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))


def _complex_valued(e: Eqn) -> bool:
    return any(np.dtype(v.aval.dtype).kind == "c" for v in (*e.inputs, *e.outputs))


def is_column_sum(e: Eqn, complex_too: bool = False) -> bool:
    """A float ``reduce_sum`` over leading axes, the rest at least 8 wide (bias gradients);
    with ``complex_too``, a complex one as well.

    A row kernel would read such a sum's rows down strided columns, one element per
    vector; BLAS's gemv (``ones @ x``, in the program) streams the rows instead: measured
    6 us against 650 us for (128, 512), 2 against 43 for (32, 256). Complex ones are
    library steps too, numpy's sum (20 against 190 us for (128, 512) complex64), never
    gemv: its complex products would make (inf + 0j) * 1 NaN in the imaginary part.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: ft.sum(x, axis=0))(ft.ones((4, 16)))
    >>> is_column_sum(g.eqns[0])
    True
    """
    if not lowering_table[e.primitive].sum:
        return False
    x = e.inputs[0]
    return column_sum_shape(x.aval.dtype, x.aval.shape, e.params["axes"], complex_too)


def column_sum_shape(dtype, shape, axes, complex_too: bool = False) -> bool:
    """``is_column_sum``'s test on a sum's operand dtype, shape and axes (the CUDA impl
    asks it of arrays).

    >>> column_sum_shape(np.float32, (4, 16), (0,)), column_sum_shape(np.float32, (4, 16), (1,))
    (True, False)
    """
    axes, shape = tuple(axes), tuple(shape)
    k = len(axes)
    dtypes = _COLUMN_SUM_DTYPES + (_COMPLEX_DTYPES if complex_too else ())
    return (
        np.dtype(dtype) in dtypes
        and 0 < k < len(shape)
        and axes == tuple(range(k))
        and int(np.prod(shape[:k])) >= 2
        and int(np.prod(shape[k:])) >= 8
    )


def _apply_chain(form: tuple, shape: tuple, chain: list):
    """The *form* of a per-row value after index equations: per dim of the result, the
    row dim it follows (None: constant along it). None when the chain is not a pure
    re-arrangement of the row value (a slice, a reversal, a mixing reshape)."""
    m, shape = list(form), list(shape)
    for e in chain:
        name, p = lowering_table[e.primitive].view, e.params
        if name == "expand_dims":
            for d in p["dimensions"]:
                m.insert(d, None)
                shape.insert(d, 1)
        elif name == "reshape":
            new = list(p["new_sizes"])
            if [s for s in shape if s != 1] != [s for s in new if s != 1]:
                return None
            src = iter([r for r, s in zip(m, shape) if s != 1])
            m = [next(src) if s != 1 else None for s in new]
            shape = new
        elif name == "broadcast_in_dim":
            out = list(p["shape"])
            nm: list = [None] * len(out)
            for i, d in enumerate(p["broadcast_dimensions"]):
                nm[d] = m[i] if shape[i] == out[d] else None
            m, shape = nm, out
        elif name == "transpose":
            m = [m[i] for i in p["permutation"]]
            shape = [shape[i] for i in p["permutation"]]
        elif name == "squeeze":
            if any(shape[d] != 1 for d in p["dimensions"]):
                return None
            m = [r for i, r in enumerate(m) if i not in p["dimensions"]]
            shape = [s for i, s in enumerate(shape) if i not in p["dimensions"]]
        else:
            return None
    return tuple(m), tuple(shape)


def _row_broadcast_ok(g: Group, form: tuple, shape: tuple, chain: list) -> bool:
    """Whether ``chain`` applied to a per-row value of ``g`` (of ``form``), then numpy
    broadcasting to ``g.shape``, reads the row value at the row's index everywhere: a
    broadcast of it along the reduced axes."""
    got = _apply_chain(form, shape, chain)
    if got is None:
        return False
    m, shape = got
    nd = len(g.shape)
    if len(m) > nd:
        return False
    m = (None,) * (nd - len(m)) + m
    rows = g.rows
    kept = g.kept
    for d in range(nd):
        if d in g.axes:
            if m[d] is not None and rows[m[d]] != 1:
                return False
        elif m[d] != kept.index(d) and g.shape[d] != 1:
            return False
    return True


def _row_form(g: Group, out_shape: tuple, forms: list):
    """The form of an elementwise op's result from its per-row operands' forms (each
    right-aligned to the result), or None when the result is not a per-row value."""
    nd = len(out_shape)
    out: list = [None] * nd
    for form in forms:
        if len(form) > nd:
            return None
        for d, j in enumerate((None,) * (nd - len(form)) + tuple(form)):
            if j is None:
                continue
            if out[d] is not None and out[d] != j:
                return None
            out[d] = j
    rows = g.rows
    seen = [j for j in out if j is not None]
    if seen != sorted(set(seen)):
        return None  # a transposed row value: not a reshape of the row buffer
    if any(j is None and s != 1 for j, s in zip(out, out_shape)):
        return None  # varies along a non-row dim
    if any(rows[j] != 1 and j not in seen for j in range(len(rows))):
        return None
    if any(out_shape[d] != rows[j] for d, j in enumerate(out) if j is not None):
        return None
    return tuple(out)


class _Partitioner:
    def __init__(self, graph: Graph, kernel_names):
        self.graph = graph
        self.kernel_names = kernel_names
        self.views: dict[int, Eqn] = {}
        self.group_of: dict[int, Group] = {}
        self.steps: list = []
        self.open: list[Group] = []

    def chain(self, v):
        """(root, index equations from the root to ``v``)."""
        ch = []
        while isinstance(v, Var) and v.id in self.views:
            e = self.views[v.id]
            ch.append(e)
            if not e.inputs:
                break
            v = e.inputs[0]
        ch.reverse()
        if ch and not ch[0].inputs:  # iota: a view of nothing
            return None, ch
        return v, ch

    def root_group(self, v):
        r, _ = self.chain(v)
        return self.group_of.get(r.id) if isinstance(r, Var) else None

    def seal(self, g: Group):
        if not g.sealed:
            g.sealed = True
            self.open.remove(g)
            self.steps.append(g)

    def seal_inputs(self, e: Eqn):
        for v in e.inputs:
            g = self.root_group(v)
            if g is not None:
                self.seal(g)

    # ------------------------------------------------------------ elementwise ops

    def level_for(self, g: Group, e: Eqn):
        """(level, absorbed positions, form) if ``e`` can join ``g``, else None."""
        s = tuple(e.outputs[0].aval.shape)
        if s == g.shape:
            absorbed = []
            for pos, u in enumerate(e.inputs):
                if isinstance(u, Literal):
                    continue
                r, ch = self.chain(u)
                if r is None or self.group_of.get(r.id) is not g:
                    continue
                lv = g.level[r.id]
                if not ch and lv == FULL:
                    continue
                if lv == ROW and _row_broadcast_ok(g, g.form[r.id], r.aval.shape, ch):
                    absorbed.append(pos)
                    continue
                return None
            return FULL, absorbed, None
        if not g.axes:
            return None
        # A per-row op: every operand a per-row value of g (or a literal).
        forms, absorbed = [], []
        for pos, u in enumerate(e.inputs):
            if isinstance(u, Literal):
                continue
            r, ch = self.chain(u)
            if r is None or self.group_of.get(r.id) is not g or g.level[r.id] != ROW:
                return None
            got = _apply_chain(g.form[r.id], r.aval.shape, ch)
            if got is None:
                return None
            forms.append(got[0])
            if ch:
                absorbed.append(pos)
        form = _row_form(g, s, forms)
        return None if form is None else (ROW, absorbed, form)

    def add(self, g: Group, idx: int, e: Eqn, level: str, absorbed=(), form=None):
        g.ops.append((idx, e, level))
        for pos in absorbed:
            g.absorbed.add((id(e), pos))
        for v in e.outputs:
            g.level[v.id] = level
            self.group_of[v.id] = g
            if level == ROW:
                g.form[v.id] = form if form is not None else tuple(range(len(v.aval.shape)))

    def merge(self, g: Group, h: Group) -> bool:
        if h.sealed or h is g or h.shape != g.shape:
            return False
        if g.axes and h.axes and g.axes != h.axes:
            return False
        g.axes = g.axes or h.axes
        g.ops = sorted(g.ops + h.ops, key=lambda t: t[0])
        g.level.update(h.level)
        g.absorbed |= h.absorbed
        g.form.update(h.form)
        for vid in h.level:
            self.group_of[vid] = g
        self.open.remove(h)
        return True

    def reads_directly(self, e: Eqn, h: Group) -> bool:
        """Whether ``e`` reads ``h``'s values only as full values, through no view."""
        for u in e.inputs:
            if isinstance(u, Var) and self.root_group(u) is h:
                if u.id in self.views or h.level[u.id] != FULL:
                    return False
        return True

    def place_elementwise(self, idx: int, e: Eqn):
        cands = []
        for u in e.inputs:
            g = self.root_group(u)
            if g is not None and not g.sealed and g not in cands:
                cands.append(g)
        for g in cands:
            got = self.level_for(g, e)
            if got is None:
                continue
            level, absorbed, form = got
            for h in cands:
                if h is not g and not (
                    level == FULL and self.reads_directly(e, h) and self.merge(g, h)
                ):
                    self.seal(h)
            # Inputs from sealed groups are plain buffers.
            self.add(g, idx, e, level, absorbed, form)
            return
        g = self.sealed_source(e)
        if g is not None:
            self.add(g, idx, e, FULL)
            return
        self.seal_inputs(e)
        g = Group(tuple(e.outputs[0].aval.shape))
        self.open.append(g)
        self.add(g, idx, e, FULL)

    def sealed_source(self, e: Eqn):
        """The sealed elementwise group ``e`` can still join: one of its shape that holds
        every operand ``e`` reads (as full values, through no view). The group runs
        before every step that could read ``e``, so it may compute ``e`` too: an
        optimizer's scalar step-count math, cut off from its group by the first
        parameter-shaped op that reads it, stays one kernel instead of two per
        parameter."""
        found = None
        for u in e.inputs:
            if isinstance(u, Literal):
                continue
            g = self.group_of.get(u.id)
            if g is None or not g.sealed or g.axes or g.level.get(u.id) != FULL:
                return None
            if u.id in self.views or (found is not None and g is not found):
                return None
            found = g
        if found is None or tuple(e.outputs[0].aval.shape) != found.shape:
            return None
        return found

    # ----------------------------------------------------------------- reductions

    def place_reduction(self, idx: int, e: Eqn):
        x = e.inputs[0]
        axes = tuple(e.params["axes"])
        shape = tuple(x.aval.shape)
        r, ch = self.chain(x)
        if not ch and is_column_sum(e, complex_too=True):
            self.seal_inputs(e)
            self.steps.append(LibraryStep(e))
            return
        g = self.group_of.get(r.id) if isinstance(r, Var) else None
        if (
            g is not None
            and not g.sealed
            and not ch
            and g.level.get(x.id) == FULL
            and (g.shape == shape and (not g.axes or g.axes == axes))
        ):
            g.axes = axes
            self.add(g, idx, e, ROW)
            return
        self.seal_inputs(e)
        g = Group(shape, axes)
        self.open.append(g)
        self.add(g, idx, e, ROW)

    def run(self) -> Plan:
        for idx, e in enumerate(self.graph.eqns):
            kind = _kind(e, self.kernel_names)
            if kind == "index":
                self.views[e.outputs[0].id] = e
            elif kind == "library":
                self.seal_inputs(e)
                self.steps.append(_library_step(e))
            elif lowering_table[e.primitive].kind == "reduction":
                self.place_reduction(idx, e)
            else:
                self.place_elementwise(idx, e)
        for g in list(self.open):
            self.seal(g)
        needs = self.needs_buffer()
        steps = [self.finalize(s, needs) if isinstance(s, Group) else s for s in self.steps]
        return Plan(self.graph, steps, self.views)

    # ------------------------------------------------------------------ finalize

    def needs_buffer(self) -> set:
        """Ids of the vars whose value must exist as a buffer (not only inside a kernel)."""
        needs = {v.id for v in self.graph.outvars if isinstance(v, Var)}
        for e in reversed(self.graph.eqns):
            out_id = e.outputs[0].id
            is_view = out_id in self.views
            g = self.group_of.get(out_id)
            for pos, u in enumerate(e.inputs):
                if not isinstance(u, Var):
                    continue
                if is_view:
                    if out_id in needs:
                        needs.add(u.id)
                elif g is None:
                    needs.add(u.id)
                elif self.group_of.get(u.id) is not g and (id(e), pos) not in g.absorbed:
                    needs.add(u.id)
        return needs

    def finalize(self, g: Group, needs: set) -> KernelStep:
        refs: dict[int, tuple] = {}
        inputs: list = []
        in_index: dict = {}
        ops: list = []
        for _, e, _level in g.ops:
            args = []
            for pos, u in enumerate(e.inputs):
                if isinstance(u, Literal):
                    args.append(("lit", np.asarray(u.value)[()]))
                elif u.id in refs:
                    args.append(refs[u.id])
                elif (id(e), pos) in g.absorbed:
                    r, _ = self.chain(u)
                    args.append(refs[r.id])
                else:
                    if u.id not in in_index:
                        in_index[u.id] = len(inputs)
                        inputs.append(u)
                    args.append(("in", in_index[u.id]))
            params = tuple(sorted((k, v) for k, v in e.params.items() if k != "axes"))
            out = e.outputs[0]
            refs[out.id] = ("op", len(ops))
            ops.append(KOp(e.primitive.name, tuple(args), params, np.dtype(out.aval.dtype)))
        outputs = []
        for _, e, level in g.ops:
            v = e.outputs[0]
            if v.id in needs:
                outputs.append((v, level == ROW))
        spec = KernelSpec(
            rank=len(g.shape),
            reduce_rank=len(g.axes),
            input_dtypes=tuple(np.dtype(u.aval.dtype) for u in inputs),
            ops=tuple(ops),
            outputs=tuple(refs[v.id] for v, _ in outputs),
            output_is_row=tuple(r for _, r in outputs),
        )
        return KernelStep(spec, [e for _, e, _ in g.ops], g.shape, g.perm, inputs, outputs)


def partition(graph: Graph, kernel_names=None) -> Plan:
    """Partitions ``graph`` (after ``passes.run_passes``) into kernel and library steps.

    ``kernel_names``: names of the primitives a kernel may compute, a restriction of the
    entries whose ``lowering_table[prim].kernel`` holds (default: all of those).
    """
    if kernel_names is None:
        allowed = None
    else:
        allowed = {primitives[n] for n in kernel_names if n in primitives}
    return _Partitioner(graph, allowed).run()
