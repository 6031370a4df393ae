"""The one compile pipeline: a graph -> passes -> fusion plan -> program.

``jit`` (on a cache miss, and for ``.lower()``, with the target of its inputs' device)
and the compiled control-flow steps (their branches and loop bodies, ``control.py``,
with their program's target) all compile through ``compile_graph``;
``plan_graph`` is its first half, for a caller that only needs the plan.

>>> import fntorch as ft
>>> import numpy as np
>>> g = ft.make_graph(lambda x: ft.exp(x) * 2.0)(ft.ones(3))
>>> prog = compile_graph(g)
>>> prog(np.zeros(3, np.float32))[0].tolist(), len(prog.plan.steps)
([2.0, 2.0, 2.0], 1)
"""

from __future__ import annotations

import threading
import weakref

from ..fx.graph import Graph, inline_custom_calls


def plan_graph(graph: Graph, *, simplified: bool = False):
    """The fusion plan of ``graph`` after the passes (``simplified``: they have run): no
    rule table has custom calls, so they are inlined first.

    >>> import fntorch as ft
    >>> plan = plan_graph(ft.make_graph(lambda x: ft.sin(x) * 1.0)(ft.ones(2)))
    >>> [e.primitive.name for e in plan.graph.eqns]
    ['sin']
    """
    from .fusion import partition
    from .passes import run_passes

    if not simplified:
        graph = run_passes(inline_custom_calls(graph))
    return partition(graph)


def compile_graph(
    graph: Graph, target=None, *, donated=(), backend: str = "auto", simplified=False
):
    """``graph`` (flat inputs to flat outputs) as a ``Program`` over ``target``'s buffers
    (a ``target.Target``; default: the host's, the CPU); the program keeps its plan
    (``.plan``, whose ``.graph`` is the simplified graph).

    >>> import fntorch as ft
    >>> import numpy as np
    >>> prog = compile_graph(ft.make_graph(lambda x: x + 1.0)(ft.ones(2)))
    >>> prog(np.ones(2, np.float32))[0].tolist()
    [2.0, 2.0]
    """
    from .program import build_program

    plan = plan_graph(graph, simplified=simplified)
    own = getattr(target, "build_program", None)
    if own is not None:  # a target whose buffers are not numpy's runs its own program (CUDA)
        return own(plan, donated=donated, backend=backend)
    return build_program(plan, target, donated=donated, backend=backend)


# (graph_key, target, backend) -> Program: compiled calls (``jit_call``), eager or nested;
# and the same per graph object, so that a call of a graph it has seen hashes no key
_programs: dict = {}
_by_graph: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_programs_lock = threading.Lock()


def compiled(graph: Graph, target=None, backend: str = "auto"):
    """``compile_graph(graph, target)``, memoized by the graph's structure
    (``graph_key``): a call primitive's graph compiles once however often it is derived
    again, or reached from another program.

    >>> import fntorch as ft
    >>> f = lambda x: ft.exp(x) + 1.0
    >>> a = compiled(ft.make_graph(f)(ft.ones(2)))
    >>> a is compiled(ft.make_graph(f)(ft.ones(2)))
    True
    """
    seen = _by_graph.get(graph)
    if seen is not None:
        prog = seen.get((target, backend))
        if prog is not None:
            return prog
    from .graph_key import graph_key
    from .target import default_target

    tgt = target or default_target()
    key = (graph_key(graph), tgt, backend)
    with _programs_lock:  # threads asking at once compile once
        prog = _programs.get(key)
        if prog is None:
            prog = _programs[key] = compile_graph(graph, tgt, backend=backend)
        _by_graph.setdefault(graph, {})[(target, backend)] = prog
    return prog
