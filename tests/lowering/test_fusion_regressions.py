"""Hunted bugs in the graph passes and fusion: each test pins one fixed bug."""

import functools
import tracemalloc

import numpy as np

import fntorch as ft
from fntorch.lowering.passes import FOLD_LIMIT, simplify
from fntorch.ops import lax


def test_folding_never_computes_a_large_result_it_then_drops():
    # A broadcast of a literal folds to a view (no memory); ``exp`` of it is larger than
    # FOLD_LIMIT and must be left to run time, not computed at compile time and dropped.
    n = 1 << 22

    def f(x):
        return x + ft.exp(lax.broadcast_in_dim(np.float32(2.0), (n,), ()))

    g = ft.make_graph(f)(ft.ones(n))
    tracemalloc.start()
    try:
        out = simplify(g)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [e.primitive.name for e in out.eqns] == ["exp", "add"]
    assert peak < n, peak  # far less than the 16 MB the float32 result would take
    assert n > FOLD_LIMIT


@functools.cache  # a primitive's name is registered once per process
def _scale_primitive():
    """A user primitive with a float parameter: ``x * c`` in ``x``'s dtype."""
    from fntorch.devices import cpu_impls
    from fntorch.fx.core import Primitive, ShapedArray, abstract_eval_rules

    p = Primitive("hunt_scale")
    abstract_eval_rules[p] = lambda x, *, c: ShapedArray(x.shape, x.dtype)
    cpu_impls[p] = lambda x, *, c: np.asarray(x * np.asarray(c, x.dtype))
    return p


def test_cse_keeps_equations_whose_params_differ_only_in_bits():
    scale_p = _scale_primitive()
    nan2 = np.frombuffer(np.uint32(0x7FC00001).tobytes(), np.float32)[0]  # another NaN

    def f(x):
        return (
            scale_p.bind(x, c=0.0),
            scale_p.bind(x, c=-0.0),  # 0.0 == -0.0 in Python
            scale_p.bind(x, c=np.float32(np.nan)),
            scale_p.bind(x, c=nan2),  # a different payload
            scale_p.bind(x, c=(1.0, 0.0)),
            scale_p.bind(x, c=(1.0, -0.0)),
        )

    x = ft.ones(2)
    g = simplify(ft.make_graph(f)(x))
    assert len(g.eqns) == 6, g
    for got, want in zip(ft.jit(lambda x: f(x)[:2])(x), f(x)[:2]):
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    # equal bits still merge
    g = simplify(ft.make_graph(lambda x: (scale_p.bind(x, c=2.0), scale_p.bind(x, c=2.0)))(x))
    assert len(g.eqns) == 1
