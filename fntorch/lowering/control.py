"""Compiled control flow: cond, while_loop, scan and jit calls as steps of a program.

Each sub-graph (branch, loop body, loop predicate) is compiled once, when the
enclosing program is built, with the same machinery (passes, fusion, program); the
step then runs the loop in Python over the compiled sub-programs, which keep their own
preallocated intermediate buffers across iterations. The tracer is never re-entered.
A scan's carries that only accumulate per-step products or sums (reverse mode's weight
gradients) leave the loop and are summed by one contraction after it
(``accumulators.py``).
"""

from __future__ import annotations

import numpy as np

from ..ops import _prims_control as pc


def compile_subgraph(graph, backend: str, target, *, simplified: bool = False):
    """``graph`` as a ``Program`` on ``target`` (flat buffers in, a list of buffers out),
    through the one pipeline; ``simplified``: the passes have already run on it."""
    from .pipeline import compile_graph

    return compile_graph(graph, target, backend=backend, simplified=simplified)


def _cond_step(params, backend, target):
    progs = [compile_subgraph(g, backend, target) for g in params["branches"]]
    last = len(progs) - 1

    def run(index, *operands):
        return progs[min(max(int(index), 0), last)](*operands)

    run.programs = [(f"branch {i}", p) for i, p in enumerate(progs)]
    return run


def _while_step(params, backend, target):
    cond = compile_subgraph(params["cond_graph"], backend, target)
    body = compile_subgraph(params["body_graph"], backend, target)
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]

    def run(*args):
        cc, bc, carry = args[:ncc], args[ncc : ncc + nbc], list(args[ncc + nbc :])
        while cond(*cc, *carry)[0]:
            carry = body(*bc, *carry)
        return carry

    run.programs = [("cond", cond), ("body", body)]
    return run


def _scan_step(params, backend, target):
    from .accumulators import split_accumulators
    from .passes import run_passes

    nc, nk, n = params["num_consts"], params["num_carry"], params["length"]
    g = run_passes(params["body"])
    n_ys = len(g.outvars) - nk
    split = split_accumulators(g, nc, nk) if n > 1 else None
    accs, kept = [], list(range(nk))
    if split is not None:
        g, accs, kept = split
    body = compile_subgraph(g, backend, target, simplified=True)
    nk_body = len(kept)
    order = range(n - 1, -1, -1) if params["reverse"] else range(n)
    y_avals = [(a.shape, np.dtype(a.dtype)) for a in g.out_avals[nk_body:]]

    def run(*args):
        consts, carry = args[:nc], [args[nc + c] for c in kept]
        xs = args[nc + nk :]
        ys = [np.empty((n, *s), d) for s, d in y_avals]  # handed to the caller: fresh
        for i in order:
            outs = body(*consts, *carry, *[x[i, ...] for x in xs])
            carry = outs[:nk_body]
            for buf, y in zip(ys, outs[nk_body:]):
                buf[i] = y
        final = [None] * nk
        for c, v in zip(kept, carry):
            final[c] = np.asarray(v)
        extra = ys[n_ys:]
        for a in accs:
            stacked = [xs[i] if kind == "xs" else extra[i] for kind, i in a.operands]
            final[a.carry] = a.finish(np.asarray(args[nc + a.carry]), stacked)
        return final + ys[:n_ys]

    run.programs = [("body", body)]
    return run


def _call_step(params, backend, target):
    from .pipeline import compiled

    prog = compiled(params["graph"], target, backend)  # shared with eager calls of it

    def run(*operands):
        return prog(*operands)

    run.programs = [(f"jit({params['name']})", prog)]
    return run


# primitive -> (params, backend, target) -> a callable over the target's buffers; its
# ``programs`` name the compiled sub-programs (for ``Lowered.as_text``)
control_steps = {
    pc.cond_p: _cond_step,
    pc.while_p: _while_step,
    pc.scan_p: _scan_step,
    pc.call_p: _call_step,
}
