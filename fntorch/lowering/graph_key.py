"""A graph's structure as a hashable key: graphs equal in it compute the same function.

Compiled calls (``pipeline.compiled``) are cached under it, so the same forward compiles
once however it is reached: a jit'ed function's graph, the same graph derived again by
``grad`` or ``vmap`` on another call, or a deserialized copy. Variables are numbered in
order of definition; literals and constants are keyed by dtype, shape and bytes;
params by value, sub-graphs by their own key. A param that is neither (a Python
callable of a custom rule) is keyed by identity, which only ever makes two graphs
differ.

>>> import fntorch as ft
>>> f = lambda x: ft.sin(x) * 2.0
>>> a, b = (ft.make_graph(f)(ft.ones(3)) for _ in range(2))
>>> a is b, graph_key(a) == graph_key(b)
(False, True)
>>> graph_key(a) == graph_key(ft.make_graph(f)(ft.ones(4)))
False
"""

from __future__ import annotations

import weakref

import numpy as np

from ..fx.core import Tensor
from ..fx.graph import Graph, Literal

_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graph_key(g: Graph) -> tuple:
    """The structural key of ``g`` (memoized per graph object)."""
    k = _memo.get(g)
    if k is None:
        k = _memo[g] = _key(g)
    return k


def _aval(a) -> tuple:
    return (tuple(a.shape), np.dtype(a.dtype).str, a.dtype.name, bool(a.weak_type))


def _value(v) -> tuple:
    a = np.asarray(v._value if isinstance(v, Tensor) else v)
    return ("value", a.dtype.str, a.dtype.name, a.shape, a.tobytes())


def _param(v):
    if isinstance(v, Graph):
        return ("graph", graph_key(v))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_param(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((str(k), _param(x)) for k, x in v.items())))
    if isinstance(v, (np.ndarray, np.generic, Tensor)):
        return _value(v)
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return ("dtype", np.dtype(v).str, np.dtype(v).name)
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def _key(g: Graph) -> tuple:
    ids: dict[int, int] = {}

    def define(v):
        ids[v.id] = len(ids)
        return _aval(v.aval)

    def ref(v):
        if isinstance(v, Literal):
            return ("lit", _aval(v.aval), _value(v.value))
        return ids[v.id]

    ins = tuple(define(v) for v in (*g.constvars, *g.invars))
    consts = tuple(_value(c) for c in g.consts)
    eqns = tuple(
        (
            e.primitive,
            _param(e.params),
            tuple(ref(u) for u in e.inputs),
            tuple(define(v) for v in e.outputs),
        )
        for e in g.eqns
    )
    return (len(g.constvars), ins, consts, eqns, tuple(ref(v) for v in g.outvars))
