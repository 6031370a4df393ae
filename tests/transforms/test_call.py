"""jit as a call primitive: under grad, vmap, jvp and an outer jit, a jit'ed function is
one ``jit_call`` whose derived forms are compiled programs of their own."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.lowering import Program, pipeline


def _close(a, b, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


def _mlp(params, x):
    w1, b1, w2 = params
    h = ft.tanh(x @ w1 + b1)
    return ft.sum((h @ w2) ** 2) / x.shape[0]


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return tuple(
        ft.asarray(rng.standard_normal(s).astype(np.float32) * 0.3) for s in ((4, 8), (8,), (8, 2))
    )


X = ft.asarray(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))


def _calls(graph):
    return [e for e in graph.eqns if e.primitive.name == "jit_call"]


def test_grad_of_jit_is_compiled_and_equals_eager():
    f = ft.jit(_mlp)
    g = ft.grad(f)
    got, want = g(_params(), X), ft.grad(_mlp)(_params(), X)
    for a, b in zip(got, want):
        _close(a, b)
    # The staged gradient holds calls, not the function's primitives inlined.
    graph = ft.make_graph(g)(_params(), X)
    assert {e.primitive.name for e in graph.eqns} <= {"jit_call", "convert_element_type"}
    assert len(_calls(graph)) == 2  # the forward (with residuals) and the transposed call


def test_grad_of_jit_called_again_traces_and_compiles_nothing_new():
    f = ft.jit(_mlp)
    g = ft.grad(f)
    g(_params(), X)
    traces, programs = f.stats["traces"], len(pipeline._programs)
    for seed in (1, 2):
        g(_params(seed), X)
    assert f.stats["traces"] == traces == 1
    assert len(pipeline._programs) == programs


def test_vmap_of_jit_is_one_batched_call():
    f = ft.jit(lambda x: ft.softmax(x, axis=-1) * x.sum())
    xs = ft.asarray(np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32))
    _close(ft.vmap(f)(xs), ft.stack([f(x) for x in xs]))
    graph = ft.make_graph(ft.vmap(f))(xs)
    assert [e.primitive.name for e in graph.eqns] == ["jit_call"]
    assert graph.eqns[0].params["graph"].in_avals[0].shape == (3, 4, 5)


def test_jit_of_grad_of_jit_nests_compiled_programs():
    inner = ft.jit(_mlp)
    outer = ft.jit(ft.grad(inner))
    for a, b in zip(outer(_params(), X), ft.grad(_mlp)(_params(), X)):
        _close(a, b)
    lo = outer.lower(_params(), X)
    assert isinstance(lo._entry.program, Program)
    text = lo.as_text()
    assert text.count("jit_call jit(_mlp)") >= 2  # the listing shows the nesting
    assert len(_calls(lo.graph)) == 2


def test_jit_inside_jit_reuses_the_inner_program():
    inner = ft.jit(lambda x: ft.exp(x) * 2.0)
    a = ft.jit(lambda x: inner(x) + 1.0)
    b = ft.jit(lambda x: inner(x) - 1.0)
    x = ft.ones(3)
    _close(a(x), np.exp(1.0) * 2 + 1)
    n = len(pipeline._programs)
    _close(b(x), np.exp(1.0) * 2 - 1)
    assert len(pipeline._programs) == n  # b's nested call is a's
    assert inner.stats["traces"] == 1


def test_jvp_and_higher_derivatives_of_jit():
    f = ft.jit(lambda x: ft.sin(x) * ft.exp(x * 0.5))
    plain = lambda x: ft.sin(x) * ft.exp(x * 0.5)  # noqa: E731
    x = ft.asarray(np.linspace(-1, 1, 4))
    t = ft.ones(4, dtype=ft.float64)
    for a, b in zip(ft.jvp(f, (x,), (t,)), ft.jvp(plain, (x,), (t,))):
        _close(a, b, rtol=1e-12)

    def second(fun):
        return ft.grad(lambda v: ft.grad(lambda u: fun(u).sum())(v).sum())

    _close(second(f)(x), second(plain)(x), rtol=1e-12)
    _close(ft.hessian(lambda v: f(v).sum())(x), ft.hessian(lambda v: plain(v).sum())(x))


def test_vmap_of_grad_of_jit_and_pytrees():
    f = ft.jit(lambda d: {"y": d["a"] * d["b"], "z": (ft.sin(d["a"]),)})
    d = {"a": ft.asarray([1.0, 2.0]), "b": ft.asarray([3.0, 4.0])}
    out = f(d)
    got = ft.vmap(ft.grad(lambda d: f(d)["y"].sum() + f(d)["z"][0].sum()))(
        {"a": ft.stack([d["a"]] * 3), "b": ft.stack([d["b"]] * 3)}
    )
    assert set(out) == {"y", "z"}
    _close(got["a"][0], np.asarray(d["b"]) + np.cos(np.asarray(d["a"])))
    _close(got["b"][2], np.asarray(d["a"]))


def test_jit_closing_over_an_outer_tracer():
    def outer(a):
        return ft.jit(lambda x: a * x * x)(3.0)

    _close(ft.grad(outer)(2.0), 9.0)
    f = ft.grad(lambda a: ft.jit(lambda x: ft.sin(a * x))(ft.asarray(2.0)))
    _close(f(ft.asarray(0.5)), 2.0 * np.cos(1.0))


def test_static_arguments_under_grad():
    f = ft.jit(lambda x, n: x**n, static_argnums=1)
    _close(ft.grad(f)(ft.asarray(2.0), 3), 12.0)
    _close(ft.grad(f)(ft.asarray(2.0), 2), 4.0)
    assert f.stats["traces"] == 2


def test_a_non_array_argument_under_a_transform_is_named():
    f = ft.jit(lambda x, s: x * 2.0)
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): argument s is a str"):
        ft.grad(lambda x: f(x, "nope"))(1.0)


def test_a_tangent_that_dies_inside_keeps_no_residual():
    # relu is select(x > 0, stop_gradient(max(x, 0)), x): max's tangent is dropped by the
    # stop_gradient, so the forward program should hand the linear one only the mask.
    from fntorch.transforms.jvp_control import _split_jvp

    graph = ft.make_graph(ft.relu)(ft.ones((2, 3)))
    fg, _, lin, sources = _split_jvp(graph, [True], lambda k: True)
    assert [str(a.dtype) for a in fg.out_avals] == ["float32", "bool"]
    assert [e.primitive.name for e in lin.eqns] == ["select_n"]
    assert len(sources) == len(lin.consts) == 1
    x = ft.asarray([-1.0, 2.0, 0.5])
    _close(ft.grad(lambda v: ft.jit(ft.relu)(v).sum())(x), [0.0, 1.0, 1.0])
