"""Forward mode, linearization and transposition: the machinery under every derivative.

``jvp_rules[prim](primals, tangents, **params) -> (primal_out, tangent_out)``; a tangent
is a tensor or a symbolic ``Zero``. ``transpose_rules[prim](ct, *args, **params)``
returns one cotangent per argument, for the arguments that are ``UndefinedPrimal``
(the linear inputs); ``None`` elsewhere. Reverse mode is ``linearize`` (jvp with the
tangent side staged into a graph by a partially-evaluating ``GraphTrace``) followed by
``backward_pass`` over that linear graph, as in JAX; there is no second autodiff.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..fx import autocast as _fx_autocast
from ..fx import dtypes as dt
from ..fx.core import (
    ShapedArray,
    Tensor,
    Trace,
    Tracer,
    check_tracer,
    get_aval,
    set_current_trace,
)
from ..fx.graph import GraphTrace, Literal, Var

jvp_rules: dict = {}
transpose_rules: dict = {}


# --------------------------------------------------------------------------- zeros


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def like(x) -> Zero:
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self):
        return f"Zero({self.aval})"


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Float and complex values have tangents of their own dtype; integers and bools
    have float0."""
    if dt.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype)
    return ShapedArray(aval.shape, dt.float0)


def is_differentiable(x) -> bool:
    return dt.is_inexact(get_aval(x).dtype)


def zeros(aval: ShapedArray):
    from ..ops import lax

    if aval.dtype == dt.float0:
        return Tensor(np.zeros(aval.shape, dt.float0))
    return lax.full(aval.shape, 0, aval.dtype)


def instantiate(t):
    """A concrete tensor for a possibly symbolic zero."""
    return zeros(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    from ..ops import lax

    return lax.add(a, b)


# ----------------------------------------------------------------------- JVP trace


class JVPTracer(Tracer):
    # ``weak``: the value is weakly typed although its concrete primal cannot say so (a
    # differentiated Python scalar, or what such values compute), as JAX's weak_type.
    __slots__ = ("primal", "tangent", "weak")

    def __init__(self, trace, primal, tangent, weak=False):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.weak = weak

    @property
    def aval(self):
        a = get_aval(self.primal)
        return ShapedArray(a.shape, a.dtype, True) if self.weak else a

    def _concrete(self, what):
        p = self.primal
        return p._concrete(what) if isinstance(p, Tensor) else np.asarray(p)


class JVPTrace(Trace):
    def __init__(self, parent: Trace, name: str = "jvp"):
        self.parent = parent
        self.transform_name = name

    def device_of(self, tracer):
        p = tracer.primal
        return p.device if isinstance(p, Tensor) else None

    def unpack(self, args, where):
        primals, tangents, nonzero = [], [], False
        for a in args:
            if isinstance(a, JVPTracer) and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
                nonzero = nonzero or type(a.tangent) is not Zero
            else:
                if isinstance(a, Tracer):
                    check_tracer(a, where)
                primals.append(a)
                tangents.append(None)
        return primals, tangents, nonzero

    def process_primitive(self, prim, args, params):
        primals, tangents, nonzero = self.unpack(args, prim.name)
        token = set_current_trace(self.parent)
        with token:
            if not nonzero:
                return prim.bind(*primals, **params)
            tangents = [Zero.like(p) if t is None else t for p, t in zip(primals, tangents)]
            try:
                rule = jvp_rules[prim]
            except KeyError:
                raise NotImplementedError(
                    f"primitive {prim.name!r} has no jvp rule (transform: {self.transform_name})"
                ) from None
            out, tout = rule(primals, tangents, **params)
        if any(type(a) is JVPTracer and a.weak for a in args):
            # A primal that cannot carry its own weak type: the abstract-eval rules decide
            # the outputs', as under jit.
            weak = prim.abstract_eval(*map(get_aval, args), **params)
        else:
            weak = None
        if prim.multiple_results:
            weak = [False] * len(out) if weak is None else [w.weak_type for w in weak]
            return [self.wrap(o, t, w) for o, t, w in zip(out, tout, weak)]
        return self.wrap(out, tout, weak is not None and weak.weak_type)

    def wrap(self, primal, tangent, weak=False):
        if type(tangent) is Zero or tangent is None or not is_differentiable(primal):
            return primal
        return JVPTracer(self, primal, tangent, weak)

    def process_custom(self, kind, call, args):
        primals, tangents, nonzero = self.unpack(args, kind)
        with set_current_trace(self.parent):
            if not nonzero:
                return call.bind_with(primals)
            tangents = [Zero.like(p) if t is None else t for p, t in zip(primals, tangents)]
            outs, touts = call.jvp(primals, tangents)
        return [self.wrap(o, t) for o, t in zip(outs, touts)]


# -------------------------------------------------------------------- rule helpers


def defjvp(prim, *jvp_fns: Callable | None):
    """JVP from one function per argument: ``fn(t, *primals, **params)`` gives that argument's
    contribution to the output tangent (``None``: the argument is not differentiable)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        tout = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or type(t) is Zero:
                continue
            contrib = fn(t, *primals, **params)
            tout = contrib if tout is None else add_tangents(tout, contrib)
        return out, (Zero.like(out) if tout is None else tout)

    jvp_rules[prim] = rule
    return rule


def defjvp2(prim, *jvp_fns: Callable | None):
    """Like `defjvp`, but each ``fn(t, ans, *primals, **params)`` also sees the primal output."""

    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        tout = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or type(t) is Zero:
                continue
            contrib = fn(t, ans, *primals, **params)
            tout = contrib if tout is None else add_tangents(tout, contrib)
        return ans, (Zero.like(ans) if tout is None else tout)

    jvp_rules[prim] = rule
    return rule


def defjvp_zero(prim):
    """A primitive whose outputs carry no tangent (comparisons, integer ops, argmax, ...)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero.like(o) for o in out]
        return out, Zero.like(out)

    jvp_rules[prim] = rule
    return rule


def deflinear(prim, transpose_rule: Callable):
    """A primitive linear in all its tensor arguments: its tangent is itself applied to the
    tangents (zeros instantiated); ``transpose_rule(ct, *args, **params)``."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, prim.bind(*map(instantiate, tangents), **params)

    jvp_rules[prim] = rule
    transpose_rules[prim] = transpose_rule
    return rule


# ------------------------------------------------------------------- transposition


class UndefinedPrimal:
    """Marks a linear input of an equation during transposition."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def backward_pass(graph, cts_out: list, on_final=None) -> list:
    """Transposes a linear graph: cotangents of its outputs -> cotangents of its inputs.

    Every equation of a linear graph (from `linearize`) has at least one linear input;
    its other inputs are constants. Work runs under the current trace, so the cotangent
    computation can itself be differentiated or batched. An ``ft.autocast`` policy is
    suspended meanwhile: the transposes keep the dtypes the forward recorded.

    ``on_final(i, ct)``, when given, is called once for each input ``i`` as soon as its
    cotangent is final (no equation left to transpose reads it; ``ct`` may be a
    ``Zero``), so a caller can act on a gradient while the rest is still transposed
    (the tape's post-accumulate-grad hooks, DDP's bucketed all-reduce).

    >>> import fntorch as ft
    >>> f = lambda xs: [2.0 * xs[0] + xs[1] * xs[1]]
    >>> _, g, _ = linearize_flat(f, [ft.asarray(1.0), ft.asarray(3.0)])
    >>> seen = []
    >>> cts = backward_pass(g, [ft.asarray(1.0)], lambda i, ct: seen.append(i))
    >>> [float(c) for c in cts], seen  # b is read last, so its cotangent is final first
    ([2.0, 6.0], [1, 0])
    """
    with _fx_autocast.suspended():
        return _backward_pass(graph, cts_out, on_final)


def _final_at(graph) -> tuple[list, dict]:
    """The inputs no equation reads, and for each equation index the inputs whose
    earliest reader it is: once the transpose has passed that equation (it runs them
    last to first), those inputs' cotangents are final."""
    index = {v.id: i for i, v in enumerate(graph.invars) if isinstance(v, Var)}
    at: dict = {}
    for k, eqn in enumerate(graph.eqns):
        for v in eqn.inputs:
            i = index.pop(v.id, None) if isinstance(v, Var) else None
            if i is not None:
                at.setdefault(k, []).append(i)
    return sorted(index.values()), at


def _backward_pass(graph, cts_out: list, on_final=None) -> list:
    consts = {v.id: c for v, c in zip(graph.constvars, graph.consts)}
    ct_env: dict[int, object] = {}

    def write(v, ct):
        if ct is None or type(ct) is Zero or isinstance(v, Literal) or v.id in consts:
            return
        ct_env[v.id] = add_tangents(ct_env[v.id], ct) if v.id in ct_env else ct

    def final(indices):
        for i in indices:
            v = graph.invars[i]
            on_final(i, ct_env.get(v.id, Zero(tangent_aval(v.aval))))

    for v, ct in zip(graph.outvars, cts_out):
        write(v, ct)
    if on_final is not None:
        unread, final_at = _final_at(graph)
        final(unread)
    for k in reversed(range(len(graph.eqns))):
        eqn = graph.eqns[k]
        cts = [ct_env.pop(v.id, None) for v in eqn.outputs]
        if not all(c is None for c in cts):
            _transpose_eqn(eqn, cts, consts, write)
        if on_final is not None and k in final_at:
            final(final_at[k])
    return [
        ct_env.get(v.id, Zero(tangent_aval(v.aval))) if isinstance(v, Var) else None
        for v in graph.invars
    ]


def _transpose_eqn(eqn, cts, consts, write) -> None:
    args = []
    for v in eqn.inputs:
        if isinstance(v, Literal):
            args.append(v.value)
        elif v.id in consts:
            args.append(consts[v.id])
        else:
            args.append(UndefinedPrimal(v.aval))
    prim = eqn.primitive
    try:
        rule = transpose_rules[prim]
    except KeyError:
        raise NotImplementedError(
            f"primitive {prim.name!r} has no transpose rule (transform: vjp/grad); "
            "it appeared applied to a tangent, so it must be linear"
        ) from None
    if prim.multiple_results:
        ct = [Zero(tangent_aval(v.aval)) if c is None else c for v, c in zip(eqn.outputs, cts)]
    else:
        ct = cts[0]
    cts_in = rule(ct, *args, **eqn.params)
    for v, a, c in zip(eqn.inputs, args, cts_in):
        if type(a) is UndefinedPrimal:
            write(v, c)


# -------------------------------------------------------------------- linearize


def jvp_flat(fun, primals: list, tangents: list, name="jvp", weak=None):
    """Runs ``fun`` (flat list -> flat list) in a fresh JVP trace; ``weak[i]`` marks a
    primal that stands for a Python scalar, which promotion must not let widen a tensor."""
    from ..fx.core import current_trace

    trace = JVPTrace(current_trace(), name)
    weak = weak or [False] * len(primals)
    ins = [
        JVPTracer(trace, p, t, w) if type(t) is not Zero and is_differentiable(p) else p
        for p, t, w in zip(primals, tangents, weak)
    ]
    try:
        with set_current_trace(trace):
            outs = fun(ins)
        pouts, touts = [], []
        for o in outs:
            if isinstance(o, JVPTracer) and o._trace is trace:
                pouts.append(o.primal)
                touts.append(o.tangent)
            else:
                if isinstance(o, Tracer):
                    check_tracer(o, name)
                pouts.append(o)
                touts.append(Zero.like(o))
    finally:
        trace.dead = True
    return pouts, touts


def linearize_flat(fun, primals: list, name="vjp", weak=None):
    """``fun``'s primal outputs and its linear map, staged as a Graph over tangent inputs.

    Returns ``(primal_outs, graph)``; the graph's invars are the tangents of the
    differentiable primals, in order (others get no invar), its outvars the output
    tangents (``None`` where an output has no tangent).
    """
    from ..fx.core import current_trace

    lin = GraphTrace(current_trace(), stage_all=False, name=name)
    diff = [is_differentiable(p) for p in primals]
    tangents = [
        lin.new_arg(tangent_aval(get_aval(p))) if d else Zero.like(p) for p, d in zip(primals, diff)
    ]
    try:
        with set_current_trace(lin):
            pouts, touts = jvp_flat(fun, primals, tangents, name, weak)
        outvars = []
        for t in touts:
            if type(t) is Zero:
                outvars.append(None)
            else:
                outvars.append(lin.lift(t, name))
        graph = lin.to_graph([])
        graph.outvars = outvars
    finally:
        lin.dead = True
    return pouts, graph, diff


def graph_outvars_transpose(graph, cts):
    """`backward_pass` where outvars may be ``None`` (outputs with no tangent)."""
    pairs = [(v, c) for v, c in zip(graph.outvars, cts) if v is not None]
    sub = type(graph)(
        graph.invars, [v for v, _ in pairs], graph.eqns, graph.constvars, graph.consts
    )
    return backward_pass(sub, [c for _, c in pairs])
