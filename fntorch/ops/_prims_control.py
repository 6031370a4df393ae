"""Control-flow primitives: ``cond``, ``while_loop`` and ``scan``, which carry sub-graphs.

Each takes its sub-graphs as params (closed ``Graph`` objects with no consts of their
own: whatever a branch or body closed over is *hoisted* into leading operands, so a
tracer an outer transform owns is an ordinary operand that transform sees):

- ``cond(index, *operands, branches)``: runs ``branches[index]`` on the operands;
  ``index`` is an int32 scalar, clamped into range (``switch``'s semantics; ``cond`` is
  the two-branch case, ``branches = (false_branch, true_branch)``).
- ``while_loop(*cond_consts, *body_consts, *carry, cond_graph, body_graph,
  cond_nconsts, body_nconsts)``: ``carry = body(*body_consts, *carry)`` while
  ``cond(*cond_consts, *carry)`` (a bool scalar) holds.
- ``scan(*consts, *init, *xs, body, num_consts, num_carry, length, reverse)``:
  ``body(*consts, *carry, *x_slices) -> (*carry, *y)`` over the leading axis of ``xs``
  (from the end when ``reverse``); results: the final carry, then the ``y`` stacked.
- ``jit_call(*operands, graph, name)``: ``graph(*operands)``, compiled as a program of
  its own: what ``ft.jit`` binds under another transform (its rules:
  ``transforms/call.py``); ``name`` is the function's, for listings.

The helpers here build such graphs from Python functions (``closed_graph``) and give
several branches one shared list of hoisted operands (``join_consts``).
"""

from __future__ import annotations

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules, get_aval
from ..fx.graph import Graph, Var, hoist_consts, trace_to_graph

__all__ = [
    "cond_p", "while_p", "scan_p", "call_p", "closed_graph", "hoist_consts", "join_consts",
    "avals_str", "same_types",
]  # fmt: skip

cond_p = Primitive("cond", multiple_results=True)
while_p = Primitive("while_loop", multiple_results=True)
scan_p = Primitive("scan", multiple_results=True)
call_p = Primitive("jit_call", multiple_results=True)


# ------------------------------------------------------------------ graph helpers


def avals_str(avals) -> str:
    """``(f32[3], i32[])``: how errors name a list of types."""
    s = ", ".join(ShapedArray(a.shape, a.dtype).str_short() for a in avals)
    return f"({s},)" if len(avals) == 1 else f"({s})"


def same_types(a, b) -> bool:
    """Same shapes and dtypes (weak types are ignored: they never change a value)."""
    return len(a) == len(b) and all(
        tuple(x.shape) == tuple(y.shape) and x.dtype == y.dtype for x, y in zip(a, b)
    )


def closed_graph(fun, in_avals, name: str = "control flow"):
    """Stages ``fun(*tensors) -> (flat outputs, aux)``; returns ``(graph, consts, aux)``
    where the graph takes ``consts`` as its leading inputs (see the module docstring)."""
    g, aux = trace_to_graph(fun, in_avals, name=name)
    g, consts = hoist_consts(g)
    return g, consts, aux


def join_consts(parts) -> tuple[list, list]:
    """``[(graph_i, consts_i)]``, each graph taking its own consts first -> graphs that all
    take the concatenation of every ``consts_i`` first (unused ones ignored)."""
    consts = [c for _, cs in parts for c in cs]
    graphs = []
    for i, (g, cs) in enumerate(parts):
        k = len(cs)
        before = [Var(v.aval) for h, hc in parts[:i] for v in h.invars[: len(hc)]]
        after = [Var(v.aval) for h, hc in parts[i + 1 :] for v in h.invars[: len(hc)]]
        invars = before + list(g.invars[:k]) + after + list(g.invars[k:])
        graphs.append(Graph(invars, list(g.outvars), list(g.eqns)))
    return graphs, consts


# ------------------------------------------------------------------ abstract eval


def _strong(avals) -> list:
    return [ShapedArray(a.shape, a.dtype) for a in avals]


def _cond_abstract(index, *operands, branches):
    if tuple(index.shape) != () or index.dtype != dt.int32:
        raise TypeError(
            f"cond: the branch index must be an int32 scalar, got "
            f"{ShapedArray(index.shape, index.dtype)}"
        )
    if not branches:
        raise ValueError("cond: expected at least one branch")
    for i, g in enumerate(branches):
        if not same_types(g.in_avals, operands):
            raise TypeError(
                f"cond: branch {i} takes {avals_str(g.in_avals)} but the operands are "
                f"{avals_str(operands)}"
            )
    first = branches[0].out_avals
    for i, g in enumerate(branches[1:], 1):
        if not same_types(first, g.out_avals):
            raise TypeError(
                "cond: every branch must return the same types; branch 0 returns "
                f"{avals_str(first)} but branch {i} returns {avals_str(g.out_avals)}"
            )
    return _strong(first)


abstract_eval_rules[cond_p] = _cond_abstract


def carry_mismatch(where: str, what: str, carry_in, carry_out) -> TypeError:
    return TypeError(
        f"{where}: {what} must return a carry of the same structure, shapes and dtypes as "
        f"its input carry; the carry is {carry_in} but {what} returned {carry_out}"
    )


def _while_abstract(*args, cond_graph, body_graph, cond_nconsts, body_nconsts):
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts :]
    if not same_types(cond_graph.in_avals, [*cc, *carry]):
        raise TypeError(
            f"while_loop: the cond graph takes {avals_str(cond_graph.in_avals)} but gets "
            f"{avals_str([*cc, *carry])}"
        )
    outs = cond_graph.out_avals
    if len(outs) != 1 or tuple(outs[0].shape) != () or outs[0].dtype != dt.bool_:
        raise TypeError(f"while_loop: cond_fun must return a bool scalar, got {avals_str(outs)}")
    if not same_types(body_graph.in_avals, [*bc, *carry]):
        raise TypeError(
            f"while_loop: the body graph takes {avals_str(body_graph.in_avals)} but gets "
            f"{avals_str([*bc, *carry])}"
        )
    if not same_types(body_graph.out_avals, carry):
        raise carry_mismatch(
            "while_loop", "body_fun", avals_str(carry), avals_str(body_graph.out_avals)
        )
    return _strong(carry)


abstract_eval_rules[while_p] = _while_abstract


def _scan_abstract(*args, body, num_consts, num_carry, length, reverse):
    consts = args[:num_consts]
    carry = args[num_consts : num_consts + num_carry]
    xs = args[num_consts + num_carry :]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ValueError(
                f"scan: every xs operand needs a leading axis of the scan length {length}, "
                f"got {ShapedArray(x.shape, x.dtype)}"
            )
    x_avals = [ShapedArray(tuple(x.shape[1:]), x.dtype) for x in xs]
    if not same_types(body.in_avals, [*consts, *carry, *x_avals]):
        raise TypeError(
            f"scan: the body takes {avals_str(body.in_avals)} but gets "
            f"{avals_str([*consts, *carry, *x_avals])}"
        )
    outs = body.out_avals
    if not same_types(outs[:num_carry], carry):
        raise carry_mismatch("scan", "the body", avals_str(carry), avals_str(outs[:num_carry]))
    ys = [ShapedArray((length, *a.shape), a.dtype) for a in outs[num_carry:]]
    return _strong(carry) + ys


abstract_eval_rules[scan_p] = _scan_abstract


def _call_abstract(*operands, graph, name):
    operands = [o if hasattr(o, "dtype") else get_aval(o) for o in operands]  # Python scalars
    if not same_types(graph.in_avals, operands):
        raise TypeError(
            f"jit_call({name}): the graph takes {avals_str(graph.in_avals)} but the operands "
            f"are {avals_str(operands)}"
        )
    return list(graph.out_avals)


abstract_eval_rules[call_p] = _call_abstract
