"""A graph pass: a sum of zero-padded pieces that tile an axis is one ``concatenate``.

Reverse mode writes the cotangent of ``split`` (or of slices that cover an array) as
one ``pad`` per piece, each into zeros of the whole shape, then adds them: nanoGPT's
``q, k, v = qkv.split(C, dim=2)`` gives three pads of ``(B, T, C)`` into ``(B, T, 3C)``
and two adds per layer. Run as written that is a fill and a copy per pad and a kernel
reading every padded copy; ``concatenate`` writes each piece once.

Exactness: at each element exactly one piece is non-zero, so the sum there is
``x + 0.0`` (once or more), which is ``x`` except that ``-0.0`` becomes ``0.0``. The
rewrite keeps that: ``concatenate(pieces) + 0.0``, an elementwise add that fusion
places in a kernel. Only sums whose every term is such a pad, read by nothing else,
along one axis, with no gap and no overlap, are rewritten.

>>> import fntorch as ft
>>> def f(a, b):
...     return ft.pad(a, ((0, 0), (0, 3))) + ft.pad(b, ((0, 0), (2, 0)))
>>> g = summed_pads(ft.make_graph(f)(ft.ones((2, 2)), ft.ones((2, 3))))
>>> [e.primitive.name for e in g.eqns]
['concatenate', 'add']
"""

from __future__ import annotations

import numpy as np

from ..fx.avals import ShapedArray
from ..fx.graph import Eqn, Graph, Literal, Var
from .passes import dce, use_counts


def _zero_pad(e: Eqn):
    """``(axis, lo, operand)`` of a pad with a literal ``+0.0`` value that pads one axis
    (no interior padding), else None. (A ``-0.0`` fill is another sum: ``x + -0.0``
    is ``x``.)"""
    if e.primitive.name != "pad":
        return None
    x, value = e.inputs
    if not isinstance(value, Literal) or not isinstance(x, Var):
        return None
    v = np.asarray(value.value)
    if v.dtype.kind != "f" or v != 0 or np.signbit(v):
        return None
    config = e.params["padding_config"]
    padded = [d for d, (lo, hi, _) in enumerate(config) if lo or hi]
    if any(interior for _, _, interior in config) or len(padded) != 1:
        return None
    axis = padded[0]
    return axis, config[axis][0], x


def summed_pads(graph: Graph) -> Graph:
    """Rewrites each sum of zero pads that tile one axis as ``concatenate(...) + 0.0``
    (see the module docstring); the pads and inner adds it replaces are dropped."""
    from ..ops._prims_elementwise import add_p
    from ..ops._prims_structural import concatenate_p

    uses = use_counts(graph)
    producer = {e.outputs[0].id: e for e in graph.eqns if len(e.outputs) == 1}

    def terms(v, root):
        """``_zero_pad`` of each pad summed into ``v``, or None if a term is not one."""
        e = producer.get(v.id) if isinstance(v, Var) else None
        if e is None or (not root and uses[v.id] != 1):
            return None
        if e.primitive is add_p:
            parts = [terms(u, False) for u in e.inputs]
            return None if None in parts else parts[0] + parts[1]
        found = _zero_pad(e)
        return None if found is None else [found]

    rewritten: dict[int, list] = {}
    for e in graph.eqns:
        if e.primitive is not add_p or np.dtype(e.outputs[0].aval.dtype).kind != "f":
            continue
        found = terms(e.outputs[0], True)
        if found is None:
            continue
        axes = {axis for axis, _, _ in found}
        out = e.outputs[0]
        if len(axes) != 1 or any(x.aval.dtype != out.aval.dtype for _, _, x in found):
            continue
        (axis,) = axes
        pieces, at = [], 0
        for _, lo, x in sorted(found, key=lambda t: t[1]):
            if lo != at:  # a gap or an overlap
                break
            pieces.append(x)
            at += x.aval.shape[axis]
        else:
            if at != out.aval.shape[axis]:
                continue
            joined = Var(ShapedArray(out.aval.shape, out.aval.dtype, out.aval.weak_type))
            zero = Literal(np.zeros((), out.aval.dtype)[()], ShapedArray((), out.aval.dtype))
            rewritten[id(e)] = [
                Eqn(concatenate_p, pieces, [joined], {"dimension": axis}, e.source),
                Eqn(add_p, [joined, zero], [out], {}, e.source),
            ]
    if not rewritten:
        return graph
    eqns = [n for e in graph.eqns for n in rewritten.get(id(e), [e])]
    return dce(Graph(list(graph.invars), list(graph.outvars), eqns, graph.constvars, graph.consts))
