"""Graphs: the staged-out form of a function, and the trace that builds them.

A ``Graph`` is JAX's closed jaxpr in PyTorch's clothes: ``invars``, ``outvars``, a list
of ``Eqn`` (primitive, inputs, outputs, params), and ``consts`` (values it closed over,
bound to its constvars). ``GraphTrace`` records primitives applied to its tracers; with
``stage_all=False`` it is a partial evaluator: work that touches none of its tracers is
done at once on the parent trace (how linearize keeps the primal computation out of the
linear graph).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from .core import (
    ShapedArray,
    Tensor,
    Trace,
    Tracer,
    abstract_eval_rules,
    bind_on,
    check_tracer,
    current_trace,
    get_aval,
    set_current_trace,
)

_var_ids = itertools.count()


class Var:
    """A value in a graph, known by its abstract value."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self):
        return f"Var({self.aval})"


class Literal:
    """A scalar constant written into an equation."""

    __slots__ = ("value", "aval")

    def __init__(self, value, aval: ShapedArray):
        self.value = value
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.value!r})"


@dataclass(eq=False)
class Eqn:
    primitive: object
    inputs: list
    outputs: list
    params: dict

    def __repr__(self):
        return f"Eqn({self.primitive.name}, {len(self.inputs)} in, {len(self.outputs)} out)"


@dataclass(eq=False)
class Graph:
    """A staged-out function: flat inputs to flat outputs through primitives.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: ft.sin(x) * 2.0)(ft.ones(3))
    >>> [e.primitive.name for e in g.eqns]
    ['sin', 'mul']
    """

    invars: list
    outvars: list
    eqns: list
    constvars: list = field(default_factory=list)
    consts: list = field(default_factory=list)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_graph(self)

    def __repr__(self):
        return f"Graph(\n{pp_graph(self)}\n)"

    def __call__(self, *args):
        return eval_graph(self, *args)


def _fmt_param(v) -> str:
    if isinstance(v, Graph):
        return "{\n" + "\n".join("      " + s for s in pp_graph(v).splitlines()) + "\n    }"
    if isinstance(v, np.dtype):
        return str(v)
    if callable(v):
        return getattr(v, "__name__", type(v).__name__)
    return repr(v)


def pp_graph(g: Graph) -> str:
    """A readable listing of a graph, one equation per line."""
    names: dict[int, str] = {}

    def name(v) -> str:
        if isinstance(v, Literal):
            return repr(v.value.item() if hasattr(v.value, "item") else v.value)
        if v.id not in names:
            n = len(names)
            s = ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n = n // 26 - 1
                if n < 0:
                    break
            names[v.id] = s
        return names[v.id]

    def decl(v) -> str:
        return f"{name(v)}:{v.aval}"

    head = " ".join(decl(v) for v in g.constvars)
    head = (head + "; " if head else "") + " ".join(decl(v) for v in g.invars)
    lines = [f"{{ lambda {head}. let"]
    for e in g.eqns:
        lhs = " ".join(decl(v) for v in e.outputs)
        params = " ".join(f"{k}={_fmt_param(v)}" for k, v in e.params.items())
        params = f"[{params}]" if params else ""
        args = " ".join(name(v) for v in e.inputs)
        lines.append(f"    {lhs} = {e.primitive.name}{params} {args}")
    lines.append(f"  in ({', '.join(name(v) for v in g.outvars)}) }}")
    return "\n".join(lines)


def eval_graph(graph: Graph, *args) -> list:
    """Runs a graph on flat inputs under the current trace; returns the flat outputs.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: x + 1.0)(ft.zeros(2))
    >>> ft.fx.eval_graph(g, ft.ones(2))[0].tolist()
    [2.0, 2.0]
    """
    if len(args) != len(graph.invars):
        raise TypeError(f"eval_graph: the graph takes {len(graph.invars)} inputs, got {len(args)}")
    env: dict[int, object] = {}
    for v, x in zip(graph.constvars, graph.consts):
        env[v.id] = x
    for v, x in zip(graph.invars, args):
        env[v.id] = x

    def read(v):
        return v.value if isinstance(v, Literal) else env[v.id]

    for e in graph.eqns:
        outs = e.primitive.bind(*map(read, e.inputs), **e.params)
        if e.primitive.multiple_results:
            for v, o in zip(e.outputs, outs):
                env[v.id] = o
        else:
            env[e.outputs[0].id] = outs
    return [read(v) for v in graph.outvars]


# ------------------------------------------------------------------------ staging trace


class GraphTracer(Tracer):
    # Not "var": that name is Tensor.var (the variance), which a tracer must keep.
    __slots__ = ("graph_var",)

    def __init__(self, trace, var: Var):
        self._trace = trace
        self.graph_var = var

    @property
    def aval(self):
        return self.graph_var.aval


class GraphTrace(Trace):
    """Records primitives into a Graph.

    ``stage_all=True`` stages every primitive (make_graph, jit); ``False`` stages only
    primitives that touch this trace's tracers and evaluates the rest on the parent.
    """

    def __init__(self, parent: Trace, stage_all: bool = True, name: str = "make_graph"):
        self.parent = parent
        self.stage_all = stage_all
        self.transform_name = name
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}

    def device_of(self, tracer):
        return None

    def new_arg(self, aval: ShapedArray) -> GraphTracer:
        v = Var(aval)
        self.invars.append(v)
        return GraphTracer(self, v)

    def lift(self, x, prim_name="value"):
        """The graph input standing for ``x``: its var, a literal, or a new constvar."""
        if isinstance(x, GraphTracer) and x._trace is self:
            return x.graph_var
        if isinstance(x, Tracer):
            check_tracer(x, prim_name)
        elif isinstance(x, (np.generic, bool, int, float)) or (
            isinstance(x, np.ndarray) and x.ndim == 0
        ):
            return Literal(x, get_aval(x))
        elif type(x) is Tensor and x.ndim == 0 and isinstance(x._value, (np.ndarray, np.generic)):
            # Scalar constants are written into the equation, as JAX does.
            return Literal(x._value[()], get_aval(x))
        var = self._const_ids.get(id(x))
        if var is None:
            var = Var(get_aval(x).strong())
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        if not self.stage_all and not any(
            isinstance(a, GraphTracer) and a._trace is self for a in args
        ):
            return bind_on(self.parent, prim, args, params)
        inputs = [self.lift(a, prim.name) for a in args]
        try:
            rule = abstract_eval_rules[prim]
        except KeyError:
            raise NotImplementedError(
                f"primitive {prim.name!r} has no abstract-eval rule"
            ) from None
        with set_current_trace(self.parent):
            out_avals = rule(*[v.aval for v in inputs], **params)
        if not prim.multiple_results:
            out_avals = [out_avals]
        outs = [Var(a) for a in out_avals]
        self.eqns.append(Eqn(prim, inputs, outs, dict(params)))
        tracers = [GraphTracer(self, v) for v in outs]
        return tracers if prim.multiple_results else tracers[0]

    def to_graph(self, outputs) -> Graph:
        outvars = [self.lift(o) for o in outputs]
        return Graph(
            list(self.invars), outvars, list(self.eqns), list(self.constvars), list(self.consts)
        )


def trace_to_graph(fun, in_avals, *, name: str = "make_graph", stage_all: bool = True):
    """Stages ``fun`` (flat tensors in, flat tensors out) at ``in_avals``.

    Returns ``(graph, out_tree_info)`` where the second item is whatever ``fun`` returned
    besides its flat outputs (``fun`` returns ``(flat_outs, aux)``).
    """
    trace = GraphTrace(current_trace(), stage_all=stage_all, name=name)
    args = [trace.new_arg(a) for a in in_avals]
    try:
        with set_current_trace(trace):
            outs, aux = fun(*args)
        graph = trace.to_graph(outs)
    finally:
        trace.dead = True
    return graph, aux


def is_tensor_like(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic))
