"""Graphs: building, printing, evaluating, and the partial-evaluating trace."""

import numpy as np

import fntorch as ft
from fntorch.fx.core import ShapedArray, Tensor
from fntorch.fx.graph import GraphTrace, trace_to_graph
from fntorch.ops import lax


def test_abstract_value_repr_and_equality():
    a = ShapedArray((2, 3), ft.float32)
    assert repr(a) == "f32[2,3]"
    assert a == ShapedArray((2, 3), ft.float32) and a != ShapedArray((2, 3), ft.float32, True)
    assert a.ndim == 2 and a.size == 6


def test_trace_to_graph_consts_literals_and_eval():
    c = Tensor(np.arange(3.0, dtype=np.float32))

    def f(x):
        return [lax.add(lax.mul(x, 2.0), c)], None

    g, _ = trace_to_graph(f, [ShapedArray((3,), ft.float32)])
    assert len(g.constvars) == 1 and len(g.invars) == 1
    text = str(g)
    assert "mul" in text and "2.0" in text
    out = ft.fx.eval_graph(g, Tensor(np.ones(3, np.float32)))
    np.testing.assert_allclose(np.asarray(out[0]._value), [2.0, 3.0, 4.0])


def test_partial_eval_stages_only_dependent_work():
    from fntorch.fx.core import current_trace, set_current_trace

    trace = GraphTrace(current_trace(), stage_all=False, name="pe")
    t = trace.new_arg(ShapedArray((2,), ft.float32))
    known = Tensor(np.ones(2, np.float32))
    with set_current_trace(trace):
        k = lax.sin(known)  # evaluated now, not staged
        y = lax.mul(t, k)
    g = trace.to_graph([y])
    assert [e.primitive.name for e in g.eqns] == ["mul"]
    assert isinstance(k, Tensor) and type(k) is Tensor


def test_tracers_keep_every_tensor_method():
    # A tracer's slot named like a Tensor method hides it: x.var() failed under jit.
    from fntorch.fx.core import Tracer

    def subclasses(c):
        for s in c.__subclasses__():
            yield s
            yield from subclasses(s)

    clash = [(c.__name__, s) for c in subclasses(Tracer) for s in c.__slots__ if hasattr(Tensor, s)]
    assert clash == []
    x = ft.asarray([1.0, 2.0, 4.0])
    np.testing.assert_allclose(
        np.asarray(ft.jit(lambda x: x.var())(x)), np.var([1, 2, 4], ddof=1), rtol=1e-6
    )
