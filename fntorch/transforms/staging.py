"""Staging a function out to an ``ft.fx.Graph``: ``stage``, which ``make_graph`` and
``ft.jit`` both trace with, and ``make_graph``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import optree

from .. import tree as tree_util
from ..fx.cell import scopes as cell_scopes
from ..fx.core import Tensor, check_callable, current_trace, get_aval
from ..fx.graph import Graph, trace_to_graph
from ._args import _as_tensor, _check_argnums, _flatten_raw
from .jit_cells import CellScope


def stage(
    fun: Callable,
    args: tuple,
    static_pos,
    in_tree,
    in_avals: list,
    static_kwargs: dict | None = None,
    *,
    name: str = "make_graph",
    check_outputs: bool = False,
    cells: bool = False,
):
    """``(graph, out_tree)``: ``fun`` staged out at ``in_avals``, one per leaf of its
    dynamic arguments, whose structure ``in_tree`` is that of ``(dyn_args, dyn_kwargs)``.

    ``args`` are the call's positional arguments: those at positions ``static_pos`` are
    passed as given, the others come from the traced leaves; ``static_kwargs`` are
    passed as given too. ``name`` names the trace and its errors; with
    ``check_outputs`` (jit's), an output leaf that is not a tensor, an array or a number
    is a TypeError naming its path; without, ``_as_tensor``'s TypeError. With
    ``cells`` (jit's), the cells ``fun`` reads are implicit inputs after its leaves and
    the cells it writes implicit outputs after its own (``jit_cells``): the second item
    is then ``(out_tree, CellSignature or None)``.

    >>> import fntorch as ft
    >>> from fntorch.fx.core import ShapedArray
    >>> tree = ft.tree.structure(((0,), {}))
    >>> avals = [ShapedArray((2,), ft.float32)]
    >>> g, out_tree = stage(lambda x: (x, x * 2.0), (None,), (), tree, avals)
    >>> [e.primitive.name for e in g.eqns], out_tree.num_leaves
    (['mul'], 2)
    """
    static_kwargs = static_kwargs or {}

    def flat_fun(*xs):
        d_args, d_kwargs = tree_util.unflatten(in_tree, list(xs))
        it = iter(d_args)
        full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
        scope = None
        if cells:
            scope = CellScope(current_trace())
            cell_scopes.append(scope)
            try:
                out = fun(*full, **d_kwargs, **static_kwargs)
                cell_outs = scope.outputs()
            finally:
                cell_scopes.pop()
                scope.restore()
        else:
            out = fun(*full, **d_kwargs, **static_kwargs)
        out_leaves, out_tree = tree_util.flatten(out)
        if check_outputs:
            for k, o in enumerate(out_leaves):
                if not isinstance(o, (Tensor, np.ndarray, np.generic, bool, int, float)):
                    paths = optree.tree_paths(
                        out, none_is_leaf=False, namespace=tree_util.NAMESPACE
                    )
                    raise TypeError(
                        f"{name}: output {_path_str(paths[k]) or '(the result)'} is a "
                        f"{type(o).__name__}; a jit function returns tensors, arrays or numbers "
                        "(or a pytree of them)"
                    )
        flat = [_as_tensor(o, name) for o in out_leaves]
        if scope is None:
            return flat, out_tree
        return flat + [_as_tensor(o, name) for o in cell_outs], (out_tree, scope.signature())

    return trace_to_graph(flat_fun, in_avals, name=name)


def _path_str(path) -> str:
    return "".join(f"[{k!r}]" for k in path)


def make_graph(fun: Callable, static_argnums=()):
    """``fun`` staged out to an ``ft.fx.Graph`` at the example arguments' shapes and dtypes.

    >>> import fntorch as ft
    >>> print(ft.make_graph(lambda x: ft.exp(x) + 1.0)(ft.zeros(3)))
    { lambda a:f32[3]. let
        b:f32[3] = exp a
        c:f32[3] = add b 1.0
      in (c) }
    """
    check_callable("make_graph", "fun", fun)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def staged(*args, **kwargs) -> Graph:
        nums = _check_argnums(static, len(args), "make_graph static_argnums") if static else ()
        dyn = [a for i, a in enumerate(args) if i not in nums]
        raw, flat, in_tree = _flatten_raw((tuple(dyn), kwargs), "make_graph")
        # A Python scalar argument stays weak (its own aval), as under jit: x + 1 keeps an
        # int8 x's dtype.
        avals = [get_aval(r if type(r) in (bool, int, float) else x) for r, x in zip(raw, flat)]
        graph, _ = stage(fun, args, nums, in_tree, avals)
        return graph

    return staged
