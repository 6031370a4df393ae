"""checkpoint: rematerialization, a custom call whose backward pass recomputes its
forward pass.

``fun`` is staged out at its arguments' shapes and dtypes (its closed-over values become
explicit inputs) and called as a ``_VJPCall`` whose only residuals are its inputs: the
backward pass (``custom_lin``'s transpose, see ``custom_vjp``) runs ``vjp`` of the staged
graph, and forward mode runs its ``jvp`` (the call's forward fallback).
"""

from __future__ import annotations

import functools

from .. import tree as tree_util
from ..fx.core import check_callable, current_trace, get_aval
from ..fx.graph import eval_graph, hoist_consts, trace_to_graph
from .ad import Zero
from .custom_call import _to_tensors
from .custom_vjp import _VJPCall


def checkpoint(fun, *, static_argnums=()):
    """Rematerialization: ``fun``'s intermediates are not kept for the backward pass but
    recomputed there, trading compute for memory.

    As JAX's, ``fun`` is staged out at its arguments' shapes and dtypes, so that the
    values it closes over, tracers of enclosing transforms included, become explicit
    inputs of the call; Python control flow on an argument's value needs it in
    ``static_argnums``.

    >>> import fntorch as ft
    >>> f = ft.checkpoint(lambda x: ft.sin(ft.sin(x)))
    >>> round(float(ft.grad(f)(1.0)), 4)
    0.36
    """

    check_callable("checkpoint", "fun", fun)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        from ._args import _check_argnums
        from .autodiff import jvp, vjp

        nums = _check_argnums(static, len(args), "checkpoint static_argnums") if static else ()
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        flat, in_tree = tree_util.flatten((dyn, kwargs))
        flat = _to_tensors(flat, "checkpoint")
        box = {}

        def staged(*xs):
            d, k = tree_util.unflatten(in_tree, list(xs))
            it = iter(d)
            a = [args[i] if i in nums else next(it) for i in range(len(args))]
            leaves, box["out_tree"] = tree_util.flatten(fun(*a, **k))
            return _to_tensors(leaves, "checkpoint"), None

        # Custom calls inside stay custom_call equations, which keep their rules.
        graph, _ = trace_to_graph(staged, [get_aval(x) for x in flat], name="checkpoint")
        closed, consts = hoist_consts(graph)

        def fun_flat(xs):
            return _to_tensors(eval_graph(closed, *xs), "checkpoint")

        def fwd_flat(xs):
            # Only the inputs are residuals: the backward pass recomputes the rest.
            return fun_flat(xs), list(xs)

        def bwd_flat(res, cts):
            _, pullback = vjp(fun_flat, res)
            return [Zero.like(r) if c is None else c for r, c in zip(res, pullback(cts)[0])]

        def fallback(primals, tangents):
            return jvp(fun_flat, (primals,), (tangents,))[1]

        call = _VJPCall(fun_flat, fwd_flat, bwd_flat, box, jvp_fallback=fallback)
        call.kind = "checkpoint"
        outs = current_trace().process_custom("checkpoint", call, consts + flat)
        return tree_util.unflatten(box["out_tree"], outs)

    return wrapped
