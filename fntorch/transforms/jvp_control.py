"""JVP and transpose rules of the control-flow primitives (cond, while_loop, scan).

Reverse mode is ``linearize + transpose``, so a jvp rule must keep the primal work out
of the linear graph. ``cond`` and ``scan`` do that by partial evaluation of their
sub-graphs (JAX's ``_cond_partial_eval`` / ``_scan_partial_eval``, in their simplest
form): each sub-graph is linearized symbolically (``_split_jvp``), giving

- a *forward* graph: the primal outputs plus the residuals the tangent needs, and
- a *linear* graph: the tangent outputs from the residuals and the input tangents.

The rule binds a forward cond/scan (primal values only: under ``linearize`` it runs at
once) and then a tangent cond/scan over (residuals, tangents), which is linear in the
tangents, so it is what lands in the linear graph. A scan stacks its residuals as extra
``ys``; the tangent scan reads them as ``xs``; its transpose is a reverse scan of the
transposed body. ``while_loop`` has no such split (its trip count is unknown until it
runs, so residuals cannot be stacked): its jvp carries primals and tangents together,
and its transpose raises, as in JAX.
"""

from __future__ import annotations

from ..fx import dtypes as dt
from ..fx.core import ShapedArray, current_trace, get_aval, set_current_trace
from ..fx.graph import Graph, GraphTrace, GraphTracer, Literal, eval_graph
from ..ops import _prims_control as pc
from .ad import (
    Zero,
    add_tangents,
    backward_pass,
    instantiate,
    is_undefined_primal,
    jvp_flat,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros,
)

REVERSE_WHILE_MESSAGE = (
    "Reverse-mode differentiation (grad, vjp) does not work for ft.while_loop, or for "
    "ft.fori_loop with traced (dynamic) bounds: the number of iterations is not known "
    "before the loop runs, so its intermediates cannot be kept. Use ft.scan, or "
    "ft.fori_loop with static (Python int) lower and upper, which lowers to a scan; "
    "forward mode (ft.jvp, ft.jacfwd) works on while_loop as it is."
)


def _nonzero(t) -> bool:
    return t is not None and type(t) is not Zero


def _is_float(aval) -> bool:
    return dt.is_inexact(aval.dtype)


def _zeros_like_aval(aval):
    return zeros(tangent_aval(ShapedArray(aval.shape, aval.dtype)))


# ------------------------------------------------------------------ partial evaluation


def _linearize_graph(g: Graph, primals, nonzero):
    """``g``'s primal outputs at ``primals`` and its linear map in the tangents of the
    positions ``nonzero``, staged as a graph whose consts are the residuals."""
    lin = GraphTrace(current_trace(), stage_all=False, name="linearize")
    tangents = [
        lin.new_arg(tangent_aval(get_aval(p))) if m else Zero.like(p)
        for p, m in zip(primals, nonzero)
    ]
    try:
        with set_current_trace(lin):
            pouts, touts = jvp_flat(lambda xs: eval_graph(g, *xs), list(primals), tangents)
        outvars = [None if type(t) is Zero else lin.lift(t, "linearize") for t in touts]
        lg = lin.to_graph([])
        # A tangent that dies inside (a stop_gradient of a max, as in relu) must not keep
        # its residuals alive: the forward program would compute and store them for a
        # linear program that never reads them.
        lg.outvars = outvars
        lg = lg.live()
    finally:
        lin.dead = True
    return pouts, lg


def _split_jvp(g: Graph, nonzero, direct):
    """Partial evaluation of jvp(g) (see the module docstring).

    ``direct(k)``: whether input ``k`` of ``g`` is available as it is to the tangent
    computation (else a residual equal to it is an output of the forward graph).
    Returns ``(fwd_graph, fwd_consts, lin_graph, sources)``: ``fwd_graph`` maps g's
    inputs to g's outputs plus the residuals; ``sources`` says, per const of
    ``lin_graph``, where its value comes from: ``("in", k)`` input k, ``("out", j)``
    the forward graph's residual output j, or ``("const", value)``.
    """
    nonzero = [m and _is_float(a) for m, a in zip(nonzero, g.in_avals)]
    box = {}

    def fwd(*xs):
        pouts, lg = _linearize_graph(g, xs, nonzero)
        trace = current_trace()
        position = {v.id: k for k, v in enumerate(trace.invars)}
        sources, res = [], []
        for c in lg.consts:
            if isinstance(c, GraphTracer) and c._trace is trace:
                k = position.get(c.graph_var.id)
                if k is not None and direct(k):
                    sources.append(("in", k))
                else:
                    sources.append(("out", len(res)))
                    res.append(c)
            else:
                sources.append(("const", c))
        box["lin"], box["sources"] = lg, sources
        return list(pouts) + res, None

    fg, fconsts, _ = pc.closed_graph(fwd, g.in_avals, name="jvp")
    return fg, fconsts, box["lin"], box["sources"]


def _eval_linear(lg: Graph, residuals, tangents, out_avals, keep):
    """Runs the linear graph; returns the tangents of the outputs ``keep`` selects,
    zeros instantiated (a graph output must be a value)."""
    live = [v for v in lg.outvars if v is not None]
    sub = Graph(list(lg.constvars) + list(lg.invars), live, lg.eqns)
    got = iter(eval_graph(sub, *residuals, *tangents))
    outs = []
    for v, a, k in zip(lg.outvars, out_avals, keep):
        t = next(got) if v is not None else None
        if k:
            outs.append(_zeros_like_aval(a) if t is None else t)
    return outs


# ------------------------------------------------------------------------- transposition


def transpose_graph(g: Graph, linear, known, cts):
    """Cotangents of the inputs ``linear`` marks, of a graph linear in them, given the
    values of the other inputs (``known``, in order) and the output cotangents.

    Equations that read only known values are evaluated first (a tangent body may
    compute zeros or residual-only values); the rest go through ``backward_pass``.
    """
    env = {v.id: (v, c) for v, c in zip(g.constvars, g.consts)}
    it = iter(known)
    lin_vars = []
    for v, m in zip(g.invars, linear):
        if m:
            lin_vars.append(v)
        else:
            env[v.id] = (v, next(it))
    lin_eqns = []
    for e in g.eqns:
        if all(isinstance(u, Literal) or u.id in env for u in e.inputs):
            vals = [u.value if isinstance(u, Literal) else env[u.id][1] for u in e.inputs]
            outs = e.primitive.bind(*vals, **e.params)
            outs = outs if e.primitive.multiple_results else [outs]
            for v, o in zip(e.outputs, outs):
                env[v.id] = (v, o)
        else:
            lin_eqns.append(e)
    constvars = [v for v, _ in env.values()]
    consts = [c for _, c in env.values()]
    sub = Graph(lin_vars, list(g.outvars), lin_eqns, constvars, consts)
    return backward_pass(sub, list(cts))


# ---------------------------------------------------------------------------------- cond


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], list(primals[1:])
    tans = list(tangents[1:])
    nonzero = [_nonzero(t) and _is_float(get_aval(p)) for p, t in zip(ops, tans)]
    out_avals = branches[0].out_avals
    n_out = len(out_avals)
    parts = [_split_jvp(g, nonzero, lambda k: True) for g in branches]
    res_avals = [fg.out_avals[n_out:] for fg, *_ in parts]
    op_avals = [get_aval(x) for x in ops]

    # Forward cond: each branch also outputs every branch's residuals (zeros but its own).
    fwd = []
    for i, (fg, fc, _, _) in enumerate(parts):

        def fun(*xs, fg=fg, fc=fc, i=i):
            outs = eval_graph(fg, *fc, *xs)
            full = list(outs[:n_out])
            for j, avals in enumerate(res_avals):
                full += outs[n_out:] if j == i else [zeros(a.strong()) for a in avals]
            return full, None

        fwd.append(pc.closed_graph(fun, op_avals, name="jvp")[:2])
    graphs, consts = pc.join_consts(fwd)
    outs = pc.cond_p.bind(index, *consts, *ops, branches=tuple(graphs))
    pouts, res_all = outs[:n_out], outs[n_out:]

    # Tangent cond over (residuals, direct residuals, tangents): linear in the tangents.
    direct = [
        [ops[s[1]] if s[0] == "in" else s[1] for s in srcs if s[0] != "out"] for *_, srcs in parts
    ]
    t_in = [t for t, m in zip(tans, nonzero) if m]
    keep = [_is_float(a) for a in out_avals]
    n_res = len(res_all)
    n_dir = [len(d) for d in direct]
    offsets = [sum(len(a) for a in res_avals[:i]) for i in range(len(parts))]
    avals = [get_aval(x) for x in res_all] + [get_aval(x) for d in direct for x in d]
    avals += [tangent_aval(get_aval(t)) for t in t_in]
    lin = []
    for i, (_, _, lg, srcs) in enumerate(parts):

        def fun(*xs, lg=lg, srcs=srcs, i=i):
            start = n_res + sum(n_dir[:i])
            mine = iter(xs[start : start + n_dir[i]])
            res = [xs[offsets[i] + s[1]] if s[0] == "out" else next(mine) for s in srcs]
            return _eval_linear(lg, res, xs[n_res + sum(n_dir) :], out_avals, keep), None

        lin.append(pc.closed_graph(fun, avals, name="jvp")[:2])
    graphs, consts = pc.join_consts(lin)
    flat_direct = [x for d in direct for x in d]
    t_outs = iter(
        pc.cond_p.bind(index, *consts, *res_all, *flat_direct, *t_in, branches=tuple(graphs))
    )
    touts = [next(t_outs) if k else Zero.like(p) for p, k in zip(pouts, keep)]
    return pouts, touts


jvp_rules[pc.cond_p] = _cond_jvp


def _cond_transpose(cts, index, *ops, branches):
    linear = [is_undefined_primal(a) for a in ops]
    known = [a for a, m in zip(ops, linear) if not m]
    out_avals = branches[0].out_avals
    keep = [_is_float(a) for a in out_avals]
    ct_in = [
        _zeros_like_aval(a) if type(c) is Zero else c for c, a, k in zip(cts, out_avals, keep) if k
    ]
    lin_avals = [tangent_aval(a.aval) for a, m in zip(ops, linear) if m]
    avals = [get_aval(x) for x in known] + [get_aval(c) for c in ct_in]
    parts = []
    for g in branches:

        def fun(*xs, g=g):
            kv, cs = xs[: len(known)], iter(xs[len(known) :])
            full = [next(cs) if k else Zero(tangent_aval(a)) for a, k in zip(out_avals, keep)]
            got = transpose_graph(g, linear, kv, full)
            return [zeros(a) if type(c) is Zero else c for c, a in zip(got, lin_avals)], None

        parts.append(pc.closed_graph(fun, avals, name="transpose")[:2])
    graphs, consts = pc.join_consts(parts)
    res = iter(pc.cond_p.bind(index, *consts, *known, *ct_in, branches=tuple(graphs)))
    return [None] + [next(res) if m else None for m in linear]


transpose_rules[pc.cond_p] = _cond_transpose


# ---------------------------------------------------------------------------------- scan


def _scan_jvp(primals, tangents, *, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc : nc + nk], primals[nc + nk :]
    in_avals = body.in_avals
    # Every float carry gets a tangent: whether it is zero changes from step to step.
    nonzero = [_nonzero(t) and _is_float(a) for t, a in zip(tangents, in_avals)]
    nonzero[nc : nc + nk] = [_is_float(a) for a in in_avals[nc : nc + nk]]
    # Consts and xs reach the tangent scan as they are; carries only through the stack.
    fg, fconsts, lg, srcs = _split_jvp(body, nonzero, lambda k: k < nc or k >= nc + nk)
    n_out = len(body.outvars)
    outs = pc.scan_p.bind(
        *fconsts,
        *consts,
        *init,
        *xs,
        body=fg,
        num_consts=len(fconsts) + nc,
        num_carry=nk,
        length=length,
        reverse=reverse,
    )
    pouts, stacked = outs[:n_out], outs[n_out:]

    # Tangent scan: consts (residuals, tangents), carry tangents, xs (stacked residuals,
    # residual xs, tangents).
    res_c = [
        consts[s[1]] if s[0] == "in" else s[1]
        for s in srcs
        if s[0] == "const" or (s[0] == "in" and s[1] < nc)
    ]
    res_x = [xs[s[1] - nc - nk] for s in srcs if s[0] == "in" and s[1] >= nc + nk]
    t_c = [t for t, m in zip(tangents[:nc], nonzero[:nc]) if m]
    t_k = [
        instantiate(t) if _nonzero(t) else _zeros_like_aval(a)
        for t, a, m in zip(tangents[nc : nc + nk], in_avals[nc : nc + nk], nonzero[nc : nc + nk])
        if m
    ]
    t_x = [t for t, m in zip(tangents[nc + nk :], nonzero[nc + nk :]) if m]
    groups = [res_c, t_c, t_k]
    slice_avals = (
        [v.aval for v in fg.outvars[n_out:]]
        + [in_avals[s[1]] for s in srcs if s[0] == "in" and s[1] >= nc + nk]
        + [tangent_aval(in_avals[k]) for k in range(nc + nk, len(in_avals)) if nonzero[k]]
    )
    avals = [get_aval(x) for x in res_c] + [get_aval(t) for t in t_c + t_k] + slice_avals
    keep = [m for m in nonzero[nc : nc + nk]] + [_is_float(a) for a in body.out_avals[nk:]]
    counts = [len(res_c), len(t_c), len(t_k), len(stacked), len(res_x), len(t_x)]

    def tangent_body(*xs_):
        it = iter(xs_)
        rc, tc, tk, rs, rx, tx = ([next(it) for _ in range(n)] for n in counts)
        rc, rs, rx = iter(rc), iter(rs), iter(rx)
        res = []
        for s in srcs:
            if s[0] == "out":
                res.append(next(rs))
            elif s[0] == "in" and s[1] >= nc + nk:
                res.append(next(rx))
            else:
                res.append(next(rc))
        return _eval_linear(lg, res, tc + tk + tx, body.out_avals, keep), None

    tg, tconsts, _ = pc.closed_graph(tangent_body, avals, name="jvp")
    t_outs = iter(
        pc.scan_p.bind(
            *tconsts,
            *[x for grp in groups for x in grp],
            *stacked,
            *res_x,
            *t_x,
            body=tg,
            num_consts=len(tconsts) + len(res_c) + len(t_c),
            num_carry=len(t_k),
            length=length,
            reverse=reverse,
        )
    )
    touts = [next(t_outs) if k else Zero.like(p) for p, k in zip(pouts, keep)]
    return pouts, touts


jvp_rules[pc.scan_p] = _scan_jvp


def _scan_transpose(cts, *args, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc : nc + nk], args[nc + nk :]
    c_lin = [is_undefined_primal(a) for a in consts]
    x_lin = [is_undefined_primal(a) for a in xs]
    # A linear scan's carry is a tangent: linear even where its init is a known zero.
    linear = c_lin + [True] * nk + x_lin
    in_avals, out_avals = body.in_avals, body.out_avals
    known_c = [a for a, m in zip(consts, c_lin) if not m]
    known_x = [a for a, m in zip(xs, x_lin) if not m]
    carry_avals = [tangent_aval(a) for a in in_avals[nc : nc + nk]]
    acc_avals = [tangent_aval(a) for a, m in zip(in_avals[:nc], c_lin) if m]
    ct_carry = [zeros(a) if type(c) is Zero else c for c, a in zip(cts[:nk], carry_avals)]
    ct_ys = [
        zeros(ShapedArray((length, *a.shape), tangent_aval(a).dtype)) if type(c) is Zero else c
        for c, a in zip(cts[nk:], out_avals[nk:])
    ]
    acc0 = [zeros(a) for a in acc_avals]
    x_avals = [in_avals[nc + nk + i] for i, m in enumerate(x_lin) if not m]
    lin_x_avals = [tangent_aval(in_avals[nc + nk + i]) for i, m in enumerate(x_lin) if m]
    avals = (
        [get_aval(x) for x in known_c]
        + carry_avals
        + acc_avals
        + x_avals
        + [tangent_aval(a) for a in out_avals[nk:]]
    )
    counts = [len(known_c), nk, len(acc0), len(known_x), len(ct_ys)]

    def ct_body(*xs_):
        it = iter(xs_)
        kc, cc, acc, kx, cy = ([next(it) for _ in range(n)] for n in counts)
        got = transpose_graph(body, linear, kc + kx, cc + cy)
        g_c, g_k, g_x = got[: len(acc)], got[len(acc) : len(acc) + nk], got[len(acc) + nk :]
        new_acc = [instantiate(add_tangents(a, g)) for a, g in zip(acc, g_c)]
        new_k = [zeros(a) if type(g) is Zero else g for g, a in zip(g_k, carry_avals)]
        new_x = [zeros(a) if type(g) is Zero else g for g, a in zip(g_x, lin_x_avals)]
        return new_k + new_acc + new_x, None

    tg, tconsts, _ = pc.closed_graph(ct_body, avals, name="transpose")
    outs = pc.scan_p.bind(
        *tconsts,
        *known_c,
        *ct_carry,
        *acc0,
        *known_x,
        *ct_ys,
        body=tg,
        num_consts=len(tconsts) + len(known_c),
        num_carry=nk + len(acc0),
        length=length,
        reverse=not reverse,
    )
    ct_init, ct_consts, ct_xs = (
        outs[:nk],
        iter(outs[nk : nk + len(acc0)]),
        iter(outs[nk + len(acc0) :]),
    )
    return (
        [next(ct_consts) if m else None for m in c_lin]
        + [c if is_undefined_primal(a) else None for c, a in zip(ct_init, init)]
        + [next(ct_xs) if m else None for m in x_lin]
    )


transpose_rules[pc.scan_p] = _scan_transpose


# ---------------------------------------------------------------------------- while_loop


def _under_linearize(tangents) -> bool:
    """Whether a tangent is being staged by linearize (a partially-evaluating trace)."""
    return any(isinstance(t, GraphTracer) and not t._trace.stage_all for t in tangents)


def _while_jvp(primals, tangents, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, init = primals[:ncc], primals[ncc : ncc + nbc], primals[ncc + nbc :]
    bct, it = tangents[ncc : ncc + nbc], tangents[ncc + nbc :]
    carry_avals = body_graph.in_avals[nbc:]
    nz_b = [_nonzero(t) and _is_float(get_aval(p)) for t, p in zip(bct, bc)]
    nz_k = [_is_float(a) for a in carry_avals]
    t_b = [t for t, m in zip(bct, nz_b) if m]
    t_k = [
        instantiate(t) if _nonzero(t) else _zeros_like_aval(a)
        for t, a, m in zip(it, carry_avals, nz_k)
        if m
    ]
    nk = len(init)

    def body(*xs):
        b, tb = xs[:nbc], iter(xs[nbc : nbc + len(t_b)])
        k, tk = xs[nbc + len(t_b) : nbc + len(t_b) + nk], iter(xs[nbc + len(t_b) + nk :])
        p_in = list(b) + list(k)
        t_in = [next(tb) if m else Zero.like(p) for p, m in zip(b, nz_b)]
        t_in += [next(tk) if m else Zero.like(p) for p, m in zip(k, nz_k)]
        pouts, touts = jvp_flat(lambda v: eval_graph(body_graph, *v), p_in, t_in)
        ts = [
            _zeros_like_aval(a) if type(t) is Zero else t
            for t, a, m in zip(touts, carry_avals, nz_k)
            if m
        ]
        return list(pouts) + ts, None

    def cond(*xs):
        return eval_graph(cond_graph, *xs[: ncc + nk]), None

    b_avals = [get_aval(x) for x in (*bc, *t_b, *init, *t_k)]
    c_avals = [get_aval(x) for x in (*cc, *init, *t_k)]
    bg, bconsts, _ = pc.closed_graph(body, b_avals, name="jvp")
    cg, cconsts, _ = pc.closed_graph(cond, c_avals, name="jvp")
    outs = pc.while_p.bind(
        *cconsts,
        *cc,
        *bconsts,
        *bc,
        *t_b,
        *init,
        *t_k,
        cond_graph=cg,
        body_graph=bg,
        cond_nconsts=len(cconsts) + ncc,
        body_nconsts=len(bconsts) + nbc + len(t_b),
    )
    pouts, t_outs = outs[:nk], iter(outs[nk:])
    if _under_linearize(tangents):
        # Keep the primal loop out of the linear graph; the joint loop staged there
        # recomputes it (forward mode through linearize works, transposing raises).
        pouts = pc.while_p.bind(
            *primals,
            cond_graph=cond_graph,
            body_graph=body_graph,
            cond_nconsts=ncc,
            body_nconsts=nbc,
        )
    return pouts, [next(t_outs) if m else Zero.like(p) for p, m in zip(pouts, nz_k)]


jvp_rules[pc.while_p] = _while_jvp


def _while_transpose(cts, *args, **params):
    raise ValueError(REVERSE_WHILE_MESSAGE)


transpose_rules[pc.while_p] = _while_transpose
