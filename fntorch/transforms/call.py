"""``jit_call``: a jit'ed function reached by another transform stays one compiled call.

Under ``grad``, ``vmap``, ``jvp``, ``make_graph`` or an outer ``jit``, ``ft.jit(f)``
binds ``jit_call(*consts, *args, graph=f's closed graph)`` (JAX's ``pjit``) instead of
tracing ``f`` inline. Its rules derive graphs from ``graph`` and bind ``jit_call`` again
on them, so each derived form is a compiled program of its own:

- eager impl: the graph compiled for the device of the operands (``pipeline.compiled``,
  cached by the graph's structure) and run;
- jvp: partial evaluation of ``jvp(graph)`` (``jvp_control._split_jvp``) into a forward
  call (primal outputs and residuals: under ``linearize`` it runs at once, compiled) and
  a linear call over (residuals, tangents), which is what lands in the linear graph;
- transpose: a call of the transposed linear graph (``jvp_control.transpose_graph``);
- batching: a call of the batched graph (``vmap_control.batch_graph``);
- lowering (``lowering/control.py``): a nested compiled program, the same one an eager
  call of that graph runs.

Derived graphs are memoized per graph object, so a ``grad(jit(f))`` called again traces
nothing but its own outer transform, and its calls find their programs compiled.

>>> import fntorch as ft
>>> f = ft.jit(lambda x: ft.sin(x) * 2.0)
>>> [e.primitive.name for e in ft.make_graph(f)(ft.ones(3)).eqns]
['jit_call']
>>> float(ft.grad(lambda x: f(x).sum())(ft.zeros(3))[0])
2.0
"""

from __future__ import annotations

import weakref

import numpy as np

from ..fx.core import get_aval
from ..fx.device import device_of_operand, get_default_device, universal_impls
from ..fx.graph import eval_graph
from ..ops import _prims_control as pc
from .ad import Zero, is_undefined_primal, jvp_rules, tangent_aval, transpose_rules
from .batching import batch_rules, rule_axis_name
from .jvp_control import _eval_linear, _is_float, _nonzero, _split_jvp, transpose_graph
from .vmap_control import _at_front, batch_graph

call_p = pc.call_p

# graph -> {rule key: derived graph(s)}; dropped with the graph
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _memo(graph, key, make):
    table = _derived.get(graph)
    if table is None:
        table = _derived[graph] = {}
    got = table.get(key)
    if got is None:
        got = table[key] = make()
    return got


# ---------------------------------------------------------------------------- impl


def _call_impl(*args, graph, name):
    """Runs ``graph``'s compiled program on the operands' device."""
    from ..lowering.pipeline import compiled
    from .jit_config import config

    dev = next((d for d in map(device_of_operand, args) if d is not None), None)
    dev = dev or get_default_device()
    if dev.target is None:  # a device without a compiler runs the graph eagerly
        from ..fx.core import Tensor

        outs = eval_graph(graph, *[Tensor(np.asarray(a)) for a in args])
        return [o._value if isinstance(o, Tensor) else np.asarray(o) for o in outs]
    prog = compiled(graph, dev.target, config.kernel_backend)
    bufs = [
        a if isinstance(a, np.ndarray) else np.asarray(a, v.aval.dtype)
        for a, v in zip(args, graph.invars)
    ]
    return prog(*bufs)


universal_impls[call_p] = _call_impl


# ----------------------------------------------------------------------------- jvp


def _call_jvp(primals, tangents, *, graph, name):
    nonzero = tuple(_nonzero(t) and _is_float(get_aval(p)) for p, t in zip(primals, tangents))
    out_avals = graph.out_avals
    if not any(nonzero):
        outs = call_p.bind(*primals, graph=graph, name=name)
        return outs, [Zero.like(o) for o in outs]
    n_out = len(out_avals)
    fg, fconsts, lg, srcs = _memo(
        graph, ("jvp", nonzero), lambda: _split_jvp(graph, list(nonzero), lambda k: True)
    )
    outs = call_p.bind(*fconsts, *primals, graph=fg, name=name)
    pouts, res = outs[:n_out], outs[n_out:]
    keep = [_is_float(a) for a in out_avals]

    def linear():
        avals = [
            graph.in_avals[s[1]] if s[0] == "in" else fg.out_avals[n_out + s[1]]
            if s[0] == "out" else get_aval(s[1])
            for s in srcs
        ]  # fmt: skip
        avals += [tangent_aval(a) for a, m in zip(graph.in_avals, nonzero) if m]
        n_res = len(srcs)

        def fun(*xs):
            return _eval_linear(lg, list(xs[:n_res]), list(xs[n_res:]), out_avals, keep), None

        lin, consts, _ = pc.closed_graph(fun, avals, name="jvp")
        return lin, consts

    lin, lconsts = _memo(graph, ("linear", nonzero), linear)
    lin_args = [
        primals[s[1]] if s[0] == "in" else res[s[1]] if s[0] == "out" else s[1] for s in srcs
    ]
    t_in = [t for t, m in zip(tangents, nonzero) if m]
    t_outs = iter(call_p.bind(*lconsts, *lin_args, *t_in, graph=lin, name=name))
    return pouts, [next(t_outs) if k else Zero.like(p) for p, k in zip(pouts, keep)]


jvp_rules[call_p] = _call_jvp


def _call_transpose(cts, *args, graph, name):
    linear = tuple(is_undefined_primal(a) for a in args)
    known = [a for a, m in zip(args, linear) if not m]
    out_avals = graph.out_avals
    # Outputs whose cotangent is a symbolic zero stay zero in the transposed graph (not a
    # zeros buffer): inputs that reach only them get a symbolic zero back.
    keep = tuple(_is_float(a) and type(c) is not Zero for c, a in zip(cts, out_avals))
    ct_in = [c for c, k in zip(cts, keep) if k]

    def transposed():
        avals = [a for a, m in zip(graph.in_avals, linear) if not m]
        avals += [tangent_aval(a) for a, k in zip(out_avals, keep) if k]
        n_known = len(avals) - len(ct_in)

        reached = []  # per linear input: whether its cotangent is not structurally zero

        def fun(*xs):
            cs = iter(xs[n_known:])
            full = [next(cs) if k else Zero(tangent_aval(a)) for a, k in zip(out_avals, keep)]
            got = transpose_graph(graph, list(linear), list(xs[:n_known]), full)
            reached[:] = [type(c) is not Zero for c in got]
            return [c for c in got if type(c) is not Zero], None

        tg, consts, _ = pc.closed_graph(fun, avals, name="transpose")
        return tg, consts, tuple(reached)

    tg, tconsts, reached = _memo(graph, ("transpose", linear, keep), transposed)
    # An input no output depends on gets a symbolic zero, not a zeros buffer: the tape
    # leaves such a cell's ``.grad`` None, as PyTorch does.
    res = iter(call_p.bind(*tconsts, *known, *ct_in, graph=tg, name=name) if any(reached) else ())
    lin = iter(zip(reached, (a for a, m in zip(args, linear) if m)))
    out = []
    for m in linear:
        if not m:
            out.append(None)
            continue
        r, a = next(lin)
        out.append(next(res) if r else Zero(tangent_aval(a.aval)))
    return out


transpose_rules[call_p] = _call_transpose


# ------------------------------------------------------------------------ batching


def _call_batch(axis_size, args, dims, *, graph, name):
    args, dims = _at_front(list(args), list(dims))
    force = [False] * len(graph.outvars)
    bg, bconsts, out_dims = _memo(
        graph,
        ("vmap", axis_size, tuple(dims), rule_axis_name()),
        lambda: batch_graph(graph, axis_size, dims, force),
    )
    return call_p.bind(*bconsts, *args, graph=bg, name=name), list(out_dims)


batch_rules[call_p] = _call_batch
