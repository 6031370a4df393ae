"""Batching rules of the control-flow primitives (cond, while_loop, scan).

Sub-graphs are batched by tracing them under a ``BatchTrace`` into new graphs
(``batch_graph``); every batched value inside is kept at axis 0. Carries of loops are
always batched (a carry that starts unbatched may become batched after one step).

- ``cond`` with an unbatched index: one cond of batched branches. With a batched index
  (a per-lane predicate): every branch runs on every lane and ``select_n`` picks.
- ``while_loop`` with an unbatched predicate: one loop of the batched body. With a
  batched predicate: loop while any lane's predicate holds; a step leaves the carry of
  finished lanes as it is (``select_n`` on the per-lane predicate).
- ``scan``: the batched body; batched ``xs`` carry their batch axis at 1 (the scan
  axis stays first), so stacked ``ys`` come out batched at 1.
"""

from __future__ import annotations

from ..fx.core import ShapedArray, current_trace, set_current_trace
from ..fx.graph import eval_graph
from ..ops import _prims_control as pc
from ..ops import lax
from .batching import BatchTrace, BatchTracer, batch_rules, bdim_at_front, moveaxis


def run_batched(g, axis_size: int, vals, dims, force):
    """Evaluates ``g`` on ``vals`` (batch axes ``dims``: 0 or None) under a fresh batch
    trace; returns ``(outs, out_dims)``, outputs batched at 0 (always, where ``force``)."""
    trace = BatchTrace(current_trace(), axis_size, "vmap")
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


# ---------------------------------------------------------------------------------- cond


def _cond_batch(axis_size, args, dims, *, branches):
    index, idim = args[0], dims[0]
    ops, op_dims = _at_front(args[1:], dims[1:])
    n_out = len(branches[0].outvars)
    if idim is not None:
        # A per-lane index: run every branch, pick per lane.
        idx = lax.clamp(0, moveaxis(index, idim, 0), len(branches) - 1)
        per = [run_batched(g, axis_size, ops, op_dims, [True] * n_out)[0] for g in branches]
        out = []
        for k in range(n_out):
            which = lax.broadcast_in_dim(idx, tuple(per[0][k].shape), (0,))
            out.append(lax.select_n(which, *[p[k] for p in per]))
        return out, [0] * n_out
    parts = [batch_graph(g, axis_size, op_dims, [True] * n_out)[:2] for g in branches]
    graphs, consts = pc.join_consts(parts)
    return pc.cond_p.bind(index, *consts, *ops, branches=tuple(graphs)), [0] * n_out


batch_rules[pc.cond_p] = _cond_batch


# ---------------------------------------------------------------------------- while_loop


def _while_batch(axis_size, args, dims, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    vals, vdims = _at_front(args, dims)
    cc, bc = vals[:ncc], vals[ncc : ncc + nbc]
    carry = [bdim_at_front(x, d, axis_size) for x, d in zip(vals[ncc + nbc :], vdims[ncc + nbc :])]
    nk = len(carry)
    cg, cgc, (pdim,) = batch_graph(cond_graph, axis_size, vdims[:ncc] + [0] * nk, [False])
    bg, bgc, _ = batch_graph(body_graph, axis_size, vdims[ncc : ncc + nbc] + [0] * nk, [True] * nk)
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
        return outs, [0] * nk
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
    carry = [bdim_at_front(x, d, axis_size) for x, d in zip(args[nc : nc + nk], dims[nc : nc + nk])]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(args[nc + nk :], dims[nc + nk :])]
    x_dims = [None if d is None else 0 for d in dims[nc + nk :]]
    n_out = len(body.outvars)
    bg, bconsts, _ = batch_graph(body, axis_size, c_dims + [0] * nk + x_dims, [True] * n_out)
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
    return outs, [0] * nk + [1] * (n_out - nk)


batch_rules[pc.scan_p] = _scan_batch
