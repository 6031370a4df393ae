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
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from .cell import scopes as cell_scopes
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
    tape_hook,
)
from .dtypes import WeakScalar

_var_ids = itertools.count()

# ----------------------------------------------------------------------- source lines

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The source of the equation ``eval_graph`` is binding now, innermost last: a graph
# evaluated again (eagerly, or staged by a transform) keeps its equations' lines.
_eqn_sources: list = []


def user_source() -> tuple[str, int] | None:
    """``(file, line)`` of the user's code calling into fntorch now: the innermost stack
    frame outside the fntorch package (or the line of the equation that ``eval_graph``
    is evaluating), None if there is none.

    >>> import os
    >>> os.path.basename(user_source()[0]) != "graph.py"
    True
    """
    if _eqn_sources and _eqn_sources[-1] is not None:
        return _eqn_sources[-1]
    f = sys._getframe(1)
    pkg = _PACKAGE_DIR
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(pkg):
            return (code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def format_source(source) -> str:
    """``file:line`` of an equation's ``source`` (``"?"`` when unknown).

    >>> format_source(("/tmp/model.py", 12))
    '/tmp/model.py:12'
    """
    return "?" if source is None else f"{source[0]}:{source[1]}"


class Var:
    """A value in a graph, known by its abstract value.

    >>> import fntorch as ft
    >>> ft.make_graph(lambda x: x * 2.0)(ft.ones(3)).invars
    [Var(f32[3])]
    """

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self):
        return f"Var({self.aval})"


class Literal:
    """A scalar constant written into an equation.

    >>> import fntorch as ft
    >>> ft.make_graph(lambda x: x * 2.0)(ft.ones(3)).eqns[0].inputs[1].value
    np.float32(2.0)
    """

    __slots__ = ("value", "aval")

    def __init__(self, value, aval: ShapedArray):
        self.value = value
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.value!r})"


@dataclass(eq=False)
class Eqn:
    """One primitive application: ``outputs = primitive[params](*inputs)``.

    ``inputs`` are ``Var``s and ``Literal``s; ``primitive`` is the ``Primitive`` object;
    ``source`` is the user's ``(file, line)`` that staged it (None when not known).

    >>> import fntorch as ft
    >>> e = ft.make_graph(lambda x: x * 2.0)(ft.ones(3)).eqns[0]
    >>> e.primitive.name, e.inputs, e.outputs
    ('mul', [Var(f32[3]), Literal(np.float32(2.0))], [Var(f32[3])])
    """

    primitive: object
    inputs: list
    outputs: list
    params: dict
    source: tuple | None = None

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
        """The abstract values of the flat inputs."""
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        """The abstract values of the flat outputs."""
        return [v.aval for v in self.outvars]

    def live(self, keep=None) -> Graph:
        """This graph less the equations (and consts) its outputs never read;
        ``keep(eqn)`` marks equations that stay regardless (ones with effects).

        >>> import fntorch as ft
        >>> g = ft.make_graph(lambda x: (ft.sin(x), ft.cos(x))[0])(ft.ones(3))
        >>> [e.primitive.name for e in g.live().eqns]
        ['sin']
        """
        live = {v.id for v in self.outvars if isinstance(v, Var)}
        kept = []
        for e in reversed(self.eqns):
            if any(v.id in live for v in e.outputs) or (keep is not None and keep(e)):
                kept.append(e)
                live.update(v.id for v in e.inputs if isinstance(v, Var))
        kept.reverse()
        used = [(v, c) for v, c in zip(self.constvars, self.consts) if v.id in live]
        return Graph(
            list(self.invars), list(self.outvars), kept, [v for v, _ in used], [c for _, c in used]
        )

    def __str__(self):
        return pp_graph(self)

    def pretty(self, source: bool = False) -> str:
        """The listing of ``pp_graph``; with ``source=True`` each equation ends with the
        ``file:line`` of the user's code that staged it.

        >>> import fntorch as ft
        >>> g = ft.make_graph(lambda x: ft.sin(x))(ft.ones(3))
        >>> "<doctest" in g.pretty(source=True).splitlines()[1]
        True
        """
        return pp_graph(self, source=source)

    def __repr__(self):
        return f"Graph(\n{pp_graph(self)}\n)"

    def __call__(self, *args):
        """``eval_graph(self, *args)``: flat inputs in, the list of flat outputs out."""
        return eval_graph(self, *args)


def _fmt_param(v, source=False) -> str:
    if isinstance(v, Graph):
        inner = pp_graph(v, source=source).splitlines()
        return "{\n" + "\n".join("      " + s for s in inner) + "\n    }"
    if isinstance(v, np.dtype):
        return str(v)
    if callable(v):
        return getattr(v, "__name__", type(v).__name__)
    return repr(v)


def pp_graph(g: Graph, source: bool = False) -> str:
    """A readable listing of a graph, one equation per line (what ``str(graph)`` gives).

    >>> import fntorch as ft
    >>> print(pp_graph(ft.make_graph(lambda x: ft.sin(x) * 2.0)(ft.ones(3))))
    { lambda a:f32[3]. let
        b:f32[3] = sin a
        c:f32[3] = mul b 2.0
      in (c) }
    """
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
        params = " ".join(f"{k}={_fmt_param(v, source)}" for k, v in e.params.items())
        params = f"[{params}]" if params else ""
        args = " ".join(name(v) for v in e.inputs)
        where = f"  # {format_source(e.source)}" if source else ""
        lines.append(f"    {lhs} = {e.primitive.name}{params} {args}{where}")
    lines.append(f"  in ({', '.join(name(v) for v in g.outvars)}) }}")
    return "\n".join(lines)


def eval_graph(graph: Graph, *args) -> list:
    """Runs a graph on flat inputs under the current trace; returns the flat outputs.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: x + 1.0)(ft.zeros(2))
    >>> ft.fx.eval_graph(g, ft.ones(2))[0].tolist()
    [2.0, 2.0]
    """
    if not isinstance(graph, Graph):
        raise TypeError(
            f"eval_graph: graph must be an ft.fx.Graph (from ft.make_graph), "
            f"got {type(graph).__name__}"
        )
    if len(args) != len(graph.invars):
        raise TypeError(f"eval_graph: the graph takes {len(graph.invars)} inputs, got {len(args)}")
    env: dict[int, object] = {}
    for v, x in zip(graph.constvars, graph.consts):
        env[v.id] = x
    for v, x in zip(graph.invars, args):
        env[v.id] = x

    def read(v):
        return v.value if isinstance(v, Literal) else env[v.id]

    sources = _eqn_sources
    for e in graph.eqns:
        sources.append(e.source)
        try:
            outs = e.primitive.bind(*map(read, e.inputs), **e.params)
        finally:
            sources.pop()
        if e.primitive.multiple_results:
            for v, o in zip(e.outputs, outs):
                env[v.id] = o
        else:
            env[e.outputs[0].id] = outs
    return [read(v) for v in graph.outvars]


# ------------------------------------------------------------------------ custom calls


class _CustomCall:
    """The head of a staged custom call's equation (``custom_call``). Its params: the
    call (``call``: the user's function and rules), its ``kind``, and ``graph``, its
    function staged, whose first ``num_consts`` inputs are the call's consts. Binding it
    hands the call to the current trace again, so a graph evaluated under a transform (a
    ``cond`` branch under ``grad``, ``eval_graph`` of ``make_graph``'s graph) applies the
    custom rules; compiling inlines ``graph`` (``inline_custom_calls``). Not a
    ``Primitive``: no rule table has an entry for it.

    >>> import fntorch as ft
    >>> f = ft.custom_jvp(ft.sin)
    >>> f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))  # doctest: +ELLIPSIS
    <function <lambda> at ...>
    >>> g = ft.make_graph(f)(ft.asarray(1.0))
    >>> g.eqns[0].primitive.name
    'custom_call'
    >>> float(ft.grad(lambda x: eval_graph(g, x)[0])(ft.asarray(1.0)))
    3.0
    """

    name = "custom_call"
    multiple_results = True

    def bind(self, *args, kind, call, graph, num_consts):
        return call.bind_with(list(args[num_consts:]))

    def __repr__(self):
        return self.name


custom_call = _CustomCall()


def inline_custom_calls(graph: Graph) -> Graph:
    """``graph`` with every ``custom_call`` equation replaced by its staged function's
    equations, in its sub-graphs too (control flow's branches and bodies): what compiling
    needs, since no rule table has custom calls. ``graph`` itself when it has none.

    >>> import fntorch as ft
    >>> f = ft.custom_jvp(lambda x: ft.sin(x) * 2.0)
    >>> f.defjvp(lambda p, t: (f(p[0]), t[0]))  # doctest: +ELLIPSIS
    <function <lambda> at ...>
    >>> g = inline_custom_calls(ft.make_graph(f)(ft.asarray(1.0)))
    >>> [e.primitive.name for e in g.eqns]
    ['sin', 'mul']
    """
    if not _has_custom_calls(graph):
        return graph
    env: dict[int, object] = {}

    def read(v):
        return v if isinstance(v, Literal) else env.get(v.id, v)

    eqns = []
    for e in graph.eqns:
        ins = [read(v) for v in e.inputs]
        if e.primitive is custom_call:
            sub = inline_custom_calls(e.params["graph"])
            local = {v.id: x for v, x in zip(sub.invars, ins)}

            def read_local(v, local=local):
                return v if isinstance(v, Literal) else local.get(v.id, v)

            for se in sub.eqns:
                outs = [Var(v.aval) for v in se.outputs]
                eqns.append(
                    Eqn(
                        se.primitive, [read_local(v) for v in se.inputs], outs, se.params, se.source
                    )
                )
                local.update((v.id, o) for v, o in zip(se.outputs, outs))
            env.update((v.id, read_local(o)) for v, o in zip(e.outputs, sub.outvars))
        else:
            params = {k: _inline_param(p) for k, p in e.params.items()}
            eqns.append(Eqn(e.primitive, ins, list(e.outputs), params, e.source))
    outvars = [read(v) for v in graph.outvars]
    return Graph(list(graph.invars), outvars, eqns, list(graph.constvars), list(graph.consts))


def _inline_param(p):
    if isinstance(p, Graph):
        return inline_custom_calls(p)
    if isinstance(p, (list, tuple)) and any(isinstance(q, Graph) for q in p):
        return type(p)(_inline_param(q) for q in p)
    return p


def _has_custom_calls(graph: Graph) -> bool:
    for e in graph.eqns:
        if e.primitive is custom_call:
            return True
        for p in e.params.values():
            subs = p if isinstance(p, (list, tuple)) else (p,)
            if any(isinstance(q, Graph) and _has_custom_calls(q) for q in subs):
                return True
    return False


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

    >>> import fntorch as ft
    >>> from fntorch.fx.core import set_current_trace
    >>> trace = GraphTrace(ft.fx.current_trace())
    >>> x = trace.new_arg(ft.fx.ShapedArray((2,), ft.float32))
    >>> with set_current_trace(trace):
    ...     y = ft.exp(x)
    >>> [e.primitive.name for e in trace.to_graph([y]).eqns]
    ['exp']
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
        """None: a staged value has no device until the graph runs."""
        return None

    def new_arg(self, aval: ShapedArray) -> GraphTracer:
        """A new graph input of abstract value ``aval``, as a tracer of this trace."""
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
            if isinstance(x, WeakScalar):
                # The aval keeps the mark; the graph and its lowering get a plain scalar.
                return Literal(x[()], get_aval(x))
            return Literal(x, get_aval(x))
        elif type(x) is Tensor and x.ndim == 0 and isinstance(x._value, (np.ndarray, np.generic)):
            # Scalar constants are written into the equation, as JAX does.
            return Literal(x._value[()], get_aval(x))
        elif (
            isinstance(x, Tensor)
            and isinstance(x._value, Tracer)
            and not (x._taped and cell_scopes and cell_scopes[-1].trace is not self)
        ):
            # A cell read under a jit trace stands for its traced value (an implicit input).
            # A taped one read by a transform inside the jit (a residual of the vjp that
            # ``create_graph=True`` records) stays itself, as in eager: a constant whose
            # later uses the jit's tape records.
            return self.lift(x._value, prim_name)
        var = self._const_ids.get(id(x))
        if var is None:
            var = Var(get_aval(x).strong())
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        """Appends an equation (its outputs from the abstract-eval rule) and returns
        tracers for the outputs; unstaged work goes to the parent trace."""
        if cell_scopes and cell_scopes[-1].trace is self and tape_hook[0] is not None:
            for a in args:  # a jit trace's own tape: a cell that requires grad was read
                if isinstance(a, Tensor) and not isinstance(a, Tracer) and a._taped:
                    return tape_hook[0](prim, args, params)
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
        self.eqns.append(Eqn(prim, inputs, outs, dict(params), user_source()))
        tracers = [GraphTracer(self, v) for v in outs]
        return tracers if prim.multiple_results else tracers[0]

    def process_custom(self, kind, call, args):
        """A custom call (custom_jvp, custom_vjp, checkpoint): staged as one equation that
        keeps its rules (``custom_call``), where every primitive is staged; where only this
        trace's work is (``stage_all=False``), inlined if it touches this trace's tracers
        and handed to the parent otherwise, as a primitive would be."""
        if not self.stage_all:
            if any(map(self.is_own, args)):
                return call.inline(*args)
            with set_current_trace(self.parent):
                return call.bind_with(list(args))
        if call.closes_over_tracers():
            # Its functions read values of a live transform: an equation evaluated later
            # (a graph run again under grad) would find them gone, so it is inlined.
            return call.inline(*args)
        avals = [get_aval(a) for a in args]
        g, _ = trace_to_graph(lambda *xs: (call.inline(*xs), None), avals, name=kind)
        closed, consts = hoist_consts(g)  # closed as control flow's graphs are
        inputs = [self.lift(c, kind) for c in consts] + [self.lift(a, kind) for a in args]
        params = {"kind": kind, "call": call, "graph": closed, "num_consts": len(consts)}
        outs = [Var(v.aval) for v in g.outvars]
        self.eqns.append(Eqn(custom_call, inputs, outs, params, user_source()))
        return [GraphTracer(self, v) for v in outs]

    def to_graph(self, outputs) -> Graph:
        """The Graph of everything recorded, with ``outputs`` as its outputs."""
        outvars = [self.lift(o) for o in outputs]
        return Graph(
            list(self.invars), outvars, list(self.eqns), list(self.constvars), list(self.consts)
        )


def hoist_consts(g: Graph) -> tuple[Graph, list]:
    """``g`` with its consts turned into leading inputs, and those consts (how control
    flow's graphs and staged custom calls are closed).

    >>> import fntorch as ft, numpy as np
    >>> g = ft.make_graph(lambda x: x * np.arange(3.0, dtype=np.float32))(ft.ones(3))
    >>> closed, consts = hoist_consts(g)
    >>> len(closed.invars), len(consts), closed.constvars
    (2, 1, [])
    """
    if not g.constvars:
        return g, []
    return Graph(list(g.constvars) + list(g.invars), list(g.outvars), list(g.eqns)), list(g.consts)


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
