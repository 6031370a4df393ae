"""Custom functions staged into graphs keep their rules: a ``custom_call`` equation in
control flow's branches and bodies, in ``make_graph``'s graphs, and inlined for jit."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx.graph import custom_call, inline_custom_calls


@ft.custom_jvp
def jvp_sin(x):
    return ft.sin(x)


@jvp_sin.defjvp
def _jvp_sin_rule(primals, tangents):
    return jvp_sin(primals[0]), 3.0 * tangents[0]


@ft.custom_vjp
def vjp_sin(x):
    return ft.sin(x)


vjp_sin.defvjp(lambda x: (ft.sin(x), None), lambda res, g: (5.0 * g,))

CUSTOM = [(jvp_sin, 3.0), (vjp_sin, 5.0)]  # (function, its rule's derivative)
ids = ["custom_jvp", "custom_vjp"]

STAGED = {
    "cond": lambda f: lambda x: ft.cond(x > 0, f, lambda x: x, x),
    "switch": lambda f: lambda x: ft.switch(1, [lambda x: x, f], x),
    "scan": lambda f: lambda x: ft.scan(lambda c, _: (f(c), None), x, None, length=1)[0],
    "fori_loop": lambda f: lambda x: ft.fori_loop(0, 1, lambda i, c: f(c), x),
    "while_loop": lambda f: (
        lambda x: ft.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, f(c[1])), (0, x))[1]
    ),
}


@pytest.mark.parametrize("staged", sorted(STAGED))
@pytest.mark.parametrize("fn, rule", CUSTOM, ids=ids)
def test_control_flow_keeps_custom_rules(fn, rule, staged):
    # Inlined when the branch or body was staged, the rule was lost: grad gave cos(2).
    f = STAGED[staged](fn)
    if staged == "while_loop":  # forward mode only; a custom_vjp has none of its own
        if fn is vjp_sin:
            pytest.skip("while_loop has no reverse mode")
        deriv = lambda x: ft.jvp(f, (x,), (ft.ones_like(x),))[1]  # noqa: E731
    else:
        deriv = ft.grad(f)
    x = ft.asarray(2.0)
    assert float(deriv(x)) == pytest.approx(rule)
    assert float(ft.jit(deriv)(x)) == pytest.approx(rule)
    assert float(ft.jit(f)(2.0)) == pytest.approx(np.sin(2.0))


@pytest.mark.parametrize("fn, rule", CUSTOM, ids=ids)
def test_vmap_of_grad_through_cond_keeps_custom_rules(fn, rule):
    got = ft.vmap(ft.grad(STAGED["cond"](fn)))(ft.asarray([2.0, -1.0]))
    np.testing.assert_allclose(np.asarray(got), [rule, 1.0])


@pytest.mark.parametrize("fn, rule", CUSTOM, ids=ids)
def test_make_graph_stages_one_equation_that_eval_graph_differentiates(fn, rule):
    g = ft.make_graph(fn)(ft.asarray(2.0))
    assert [e.primitive for e in g.eqns] == [custom_call]
    assert "custom_call" in str(g)
    assert float(ft.grad(lambda x: ft.fx.eval_graph(g, x)[0])(2.0)) == pytest.approx(rule)
    assert [e.primitive.name for e in inline_custom_calls(g).eqns] == ["sin"]


def test_jit_compiles_the_inlined_function():
    f = ft.jit(lambda x: STAGED["cond"](jvp_sin)(x) * jvp_sin(x))
    lowered = f.lower(ft.asarray(2.0))
    assert "custom_call" not in str(lowered.graph)
    assert float(f(2.0)) == pytest.approx(np.sin(2.0) ** 2, rel=1e-6)


def test_a_custom_function_closing_over_a_tracer_is_inlined():
    # Its equation would be evaluated after that tracer's transform has returned.
    def f(x):
        @ft.custom_jvp
        def scaled(y):
            return y * x

        scaled.defjvp(lambda p, t: (scaled(p[0]), t[0] * x))
        return scaled(x)

    g = ft.make_graph(f)(ft.asarray(3.0))
    assert custom_call not in [e.primitive for e in g.eqns]
    assert float(ft.grad(lambda x: ft.fx.eval_graph(g, x)[0])(3.0)) == pytest.approx(6.0)
