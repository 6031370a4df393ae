"""Batching rules of the control-flow primitives (cond, while_loop, scan).

Sub-graphs are batched by tracing them under a ``BatchTrace`` into new graphs
(``batch_graph``); every batched value inside is kept at axis 0. A carry of a loop is
batched where it starts batched or where a step makes it so (found by iterating to a
fixpoint, as JAX does); the others, a loop counter say, stay unbatched.

- ``cond`` with an unbatched index: one cond of batched branches, whose outputs are
  batched where any branch's is. With a batched index
  (a per-lane predicate): every branch runs on every lane and ``select_n`` picks.
- ``while_loop`` with an unbatched predicate: one loop of the batched body. With a
  batched predicate: loop while any lane's predicate holds; a step leaves the carry of
  finished lanes as it is (``select_n`` on the per-lane predicate; every carry batched).
- ``scan``: the batched body; batched ``xs`` carry their batch axis at 1 (the scan
  axis stays first), so stacked ``ys`` come out batched at 1.
"""

from __future__ import annotations

from ..fx.core import ShapedArray, current_trace, set_current_trace
from ..fx.graph import eval_graph
from ..ops import _prims_control as pc
from ..ops import lax
from .batching import (
    BatchTrace,
    BatchTracer,
    batch_rules,
    bdim_at_front,
    moveaxis,
    rule_axis_name,
)


def run_batched(g, axis_size: int, vals, dims, force):
    """Evaluates ``g`` on ``vals`` (batch axes ``dims``: 0 or None) under a fresh batch
    trace; returns ``(outs, out_dims)``, outputs batched at 0 (always, where ``force``)."""
    trace = BatchTrace(current_trace(), axis_size, "vmap", rule_axis_name())
    ins = [v if d is None else BatchTracer(trace, v, d) for v, d in zip(vals, dims)]
    try:
        with set_current_trace(trace):
            outs = eval_graph(g, *ins)
        res, out_dims = [], []
        for o, f in zip(outs, force):
            if isinstance(o, BatchTracer) and o._trace is trace:
                res.append(moveaxis(o.val, o.bdim, 0))
                out_dims.append(0)
            elif f:
                res.append(bdim_at_front(o, None, axis_size))
                out_dims.append(0)
            else:
                res.append(o)
                out_dims.append(None)
    finally:
        trace.dead = True
    return res, out_dims


def batch_graph(g, axis_size: int, dims, force):
    """``g`` batched (see ``run_batched``): ``(graph, consts, out_dims)``."""
    avals = [
        a if d is None else ShapedArray((axis_size, *a.shape), a.dtype)
        for a, d in zip(g.in_avals, dims)
    ]

    def fun(*xs):
        return run_batched(g, axis_size, xs, dims, force)

    return pc.closed_graph(fun, avals, name="vmap")


def _at_front(vals, dims):
    """Batch axes moved to 0; the new dims (0 or None)."""
    out = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return out, [None if d is None else 0 for d in dims]


def _lane_select(pred, new, old):
    """Per lane: ``new`` where ``pred`` (shape ``(axis_size,)``), else ``old``."""
    out = []
    for n, o in zip(new, old):
        which = lax.broadcast_in_dim(pred, tuple(n.shape), (0,))
        out.append(lax.select_n(which, o, n))
    return out


def _dims(batched):
    return [0 if b else None for b in batched]


def _batched_carries(body, axis_size, before, batched, after=()):
    """Which carries are batched: those of ``batched`` and those one step of ``body``
    (inputs: ``before`` dims, the carries, ``after`` dims) batches, to a fixpoint; and
    ``batch_graph``'s result for the body with those carries batched (forced, with the
    other outputs left as they come)."""
    while True:
        dims = [*before, *_dims(batched), *after]
        force = batched + [False] * (len(body.outvars) - len(batched))
        res = batch_graph(body, axis_size, dims, force)
        new = [b or d is not None for b, d in zip(batched, res[2])]
        if new == batched:
            return batched, res
        batched = new


# ---------------------------------------------------------------------------------- cond


def _cond_batch(axis_size, args, dims, *, branches):
    index, idim = args[0], dims[0]
    ops, op_dims = _at_front(args[1:], dims[1:])
    n_out = len(branches[0].outvars)
    if idim is not None:
        # A per-lane index: run every branch on every lane, pick per lane. A branch sees
        # its operands as constants on the lanes that do not take it, so reverse mode
        # sends no ``0 * inf = nan`` back through them (as JAX does).
        idx = lax.clamp(0, moveaxis(index, idim, 0), len(branches) - 1)
        ops = [bdim_at_front(x, d, axis_size) for x, d in zip(ops, op_dims)]
        per, frozen = [], [lax.stop_gradient(x) for x in ops]
        for i, g in enumerate(branches):
            live = _lane_select(lax.eq(idx, i), ops, frozen)
            per.append(run_batched(g, axis_size, live, [0] * len(ops), [True] * n_out)[0])
        out = []
        for k in range(n_out):
            which = lax.broadcast_in_dim(idx, tuple(per[0][k].shape), (0,))
            out.append(lax.select_n(which, *[p[k] for p in per]))
        return out, [0] * n_out
    batched = [False] * n_out
    for g in branches:
        out_dims = batch_graph(g, axis_size, op_dims, [False] * n_out)[2]
        batched = [b or d is not None for b, d in zip(batched, out_dims)]
    parts = [batch_graph(g, axis_size, op_dims, batched)[:2] for g in branches]
    graphs, consts = pc.join_consts(parts)
    outs = pc.cond_p.bind(index, *consts, *ops, branches=tuple(graphs))
    return outs, _dims(batched)


batch_rules[pc.cond_p] = _cond_batch


# ---------------------------------------------------------------------------- while_loop


def _while_batch(axis_size, args, dims, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    vals, vdims = _at_front(args, dims)
    cc, bc = vals[:ncc], vals[ncc : ncc + nbc]
    cdims, bdims, kdims = vdims[:ncc], vdims[ncc : ncc + nbc], vdims[ncc + nbc :]
    nk = len(kdims)
    batched, (bg, bgc, _) = _batched_carries(
        body_graph, axis_size, bdims, [d is not None for d in kdims]
    )
    cg, cgc, (pdim,) = batch_graph(cond_graph, axis_size, cdims + _dims(batched), [False])
    if pdim is not None:  # every lane keeps its own carry
        batched = [True] * nk
        cg, cgc, _ = batch_graph(cond_graph, axis_size, cdims + _dims(batched), [False])
        bg, bgc, _ = batch_graph(body_graph, axis_size, bdims + _dims(batched), batched)
    carry = [
        bdim_at_front(x, d, axis_size) if b else x
        for x, d, b in zip(vals[ncc + nbc :], kdims, batched)
    ]
    if pdim is None:
        outs = pc.while_p.bind(
            *cgc,
            *cc,
            *bgc,
            *bc,
            *carry,
            cond_graph=cg,
            body_graph=bg,
            cond_nconsts=len(cgc) + ncc,
            body_nconsts=len(bgc) + nbc,
        )
        return outs, _dims(batched)
    # A per-lane predicate: loop while any lane runs; finished lanes keep their carry.
    n_c, n_b = len(cgc) + ncc, len(bgc) + nbc

    def any_lane(*xs):
        return [lax.reduce_or(eval_graph(cg, *xs)[0], (0,))], None

    def masked_body(*xs):
        c_consts, b_consts, old = xs[:n_c], xs[n_c : n_c + n_b], list(xs[n_c + n_b :])
        pred = eval_graph(cg, *c_consts, *old)[0]
        new = eval_graph(bg, *b_consts, *old)
        return _lane_select(pred, new, old), None

    c_in = cg.in_avals
    new_cg, ncgc, _ = pc.closed_graph(any_lane, c_in, name="vmap")
    new_bg, nbgc, _ = pc.closed_graph(masked_body, c_in[:n_c] + bg.in_avals, name="vmap")
    outs = pc.while_p.bind(
        *ncgc,
        *cgc,
        *cc,
        *nbgc,
        *cgc,
        *cc,
        *bgc,
        *bc,
        *carry,
        cond_graph=new_cg,
        body_graph=new_bg,
        cond_nconsts=len(ncgc) + n_c,
        body_nconsts=len(nbgc) + n_c + n_b,
    )
    return outs, [0] * nk


batch_rules[pc.while_p] = _while_batch


# ---------------------------------------------------------------------------------- scan


def _scan_batch(axis_size, args, dims, *, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    consts, c_dims = _at_front(args[:nc], dims[:nc])
    k_dims = dims[nc : nc + nk]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(args[nc + nk :], dims[nc + nk :])]
    x_dims = [None if d is None else 0 for d in dims[nc + nk :]]
    batched, (bg, bconsts, out_dims) = _batched_carries(
        body, axis_size, c_dims, [d is not None for d in k_dims], x_dims
    )
    carry = [
        bdim_at_front(x, d, axis_size) if b else x
        for x, d, b in zip(args[nc : nc + nk], k_dims, batched)
    ]
    outs = pc.scan_p.bind(
        *bconsts,
        *consts,
        *carry,
        *xs,
        body=bg,
        num_consts=len(bconsts) + nc,
        num_carry=nk,
        length=length,
        reverse=reverse,
    )
    y_dims = [None if d is None else 1 for d in out_dims[nk:]]
    return outs, _dims(batched) + y_dims


batch_rules[pc.scan_p] = _scan_batch
