"""The public transforms: values, compositions to depth, and their errors."""

import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft


def np_(x):
    return np.asarray(x)


def f_scalar(x):
    return ft.sum(ft.sin(x) * x**2)


def f_scalar_grad_np(x):
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def f_scalar_hess_np(x):
    return np.diag(-np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x))


X = np.array([0.3, -1.2, 2.0], dtype=np.float64)


def test_grad_and_value_and_grad():
    x = ft.asarray(X)
    np.testing.assert_allclose(np_(ft.grad(f_scalar)(x)), f_scalar_grad_np(X), rtol=1e-12)
    v, g = ft.value_and_grad(f_scalar)(x)
    np.testing.assert_allclose(float(v), np.sum(np.sin(X) * X**2), rtol=1e-12)
    np.testing.assert_allclose(np_(g), f_scalar_grad_np(X), rtol=1e-12)


def test_grad_python_scalar_and_dtype():
    g = ft.grad(lambda x: x * x)(3.0)
    assert g.dtype == ft.float32 and float(g) == 6.0


def test_grad_argnums_tuple_has_aux_and_pytrees():
    def loss(params, x):
        w, b = params["w"], params["b"]
        y = x @ w + b
        return ft.sum(y**2), {"y": y}

    params = {"w": ft.asarray(np.ones((3, 2))), "b": ft.asarray(np.zeros(2))}
    x = ft.asarray(np.arange(6.0).reshape(2, 3))
    (g_params, g_x), aux = ft.grad(loss, argnums=(0, 1), has_aux=True)(params, x)
    y = np_(x) @ np.ones((3, 2))
    np.testing.assert_allclose(np_(g_params["w"]), np_(x).T @ (2 * y))
    np.testing.assert_allclose(np_(g_params["b"]), (2 * y).sum(0))
    np.testing.assert_allclose(np_(g_x), 2 * y @ np.ones((3, 2)).T)
    np.testing.assert_allclose(np_(aux["y"]), y)
    assert isinstance(aux["y"], ft.Tensor) and not isinstance(aux["y"], ft.fx.Tracer)


def test_vjp_agrees_with_jvp():
    def f(x, y):
        return ft.tanh(x) * y, ft.exp(x)

    x, y = ft.asarray(X), ft.asarray(X[::-1].copy())
    tx, ty = np.array([0.1, 0.2, -0.3]), np.array([1.0, -1.0, 0.5])
    ctx, cty = np.array([0.7, 0.1, 0.2]), np.array([-0.4, 0.3, 0.9])
    _, (j1, j2) = ft.jvp(f, (x, y), (ft.asarray(tx), ft.asarray(ty)))
    _, vjp_fn = ft.vjp(f, x, y)
    gx, gy = vjp_fn((ft.asarray(ctx), ft.asarray(cty)))
    lhs = np.sum(ctx * np_(j1)) + np.sum(cty * np_(j2))
    rhs = np.sum(np_(gx) * tx) + np.sum(np_(gy) * ty)
    assert np.isclose(lhs, rhs)


def test_linearize_matches_jvp():
    x = ft.asarray(X)
    y, f_jvp = ft.linearize(f_scalar, x)
    t = ft.asarray(np.array([1.0, 2.0, 3.0]))
    _, expected = ft.jvp(f_scalar, (x,), (t,))
    np.testing.assert_allclose(float(f_jvp(t)), float(expected))
    np.testing.assert_allclose(float(y), float(f_scalar(x)))


def test_jacobians_and_hessian():
    x = ft.asarray(X)
    np.testing.assert_allclose(np_(ft.jacfwd(ft.sin)(x)), np.diag(np.cos(X)), atol=1e-12)
    np.testing.assert_allclose(np_(ft.jacrev(ft.sin)(x)), np.diag(np.cos(X)), atol=1e-12)
    np.testing.assert_allclose(np_(ft.hessian(f_scalar)(x)), f_scalar_hess_np(X), atol=1e-10)
    np.testing.assert_allclose(
        np_(ft.jacfwd(ft.jacrev(f_scalar))(x)), np_(ft.jacrev(ft.jacfwd(f_scalar))(x)), atol=1e-10
    )


def test_jacobian_shapes_for_matrices():
    a = ft.asarray(np.ones((2, 3)))
    assert ft.jacrev(lambda m: m * 2.0)(a).shape == (2, 3, 2, 3)
    assert ft.jacfwd(lambda m: ft.sum(m, axis=0))(a).shape == (3, 2, 3)


def test_perturbation_confusion_is_impossible():
    out = ft.grad(lambda x: x * ft.grad(lambda y: x + y)(1.0))(2.0)
    assert float(out) == 1.0


def test_grad_of_grad_and_third_order():
    d = ft.grad(ft.grad(ft.grad(lambda x: x**4)))
    assert np.isclose(float(d(2.0)), 48.0)


def test_vmap_basics_and_axes():
    m = np.arange(12.0).reshape(3, 4)
    x = ft.asarray(m)
    np.testing.assert_allclose(np_(ft.vmap(ft.sum)(x)), m.sum(1))
    np.testing.assert_allclose(np_(ft.vmap(ft.sum, in_axes=1)(x)), m.sum(0))
    np.testing.assert_allclose(np_(ft.vmap(ft.sum, in_axes=-1)(x)), m.sum(0))
    out = ft.vmap(lambda r: r * 2.0, out_axes=1)(x)
    np.testing.assert_allclose(np_(out), (m * 2).T)
    y = ft.vmap(lambda r, s: r * s, in_axes=(0, None))(x, ft.asarray(np.ones(4) * 3))
    np.testing.assert_allclose(np_(y), m * 3)
    z = ft.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
        {"a": x, "b": ft.asarray(np.ones(4))}
    )
    np.testing.assert_allclose(np_(z), m + 1)
    assert ft.vmap(lambda: ft.ones(2), axis_size=3)().shape == (3, 2)


def test_per_example_gradients_vmap_of_grad():
    w = ft.asarray(np.array([1.0, -2.0, 0.5]))
    xs = ft.asarray(np.arange(12.0).reshape(4, 3) / 10)

    def loss(w, x):
        return ft.tanh(ft.sum(w * x)) ** 2

    per = ft.vmap(ft.grad(loss), in_axes=(None, 0))(w, xs)
    loop = np.stack([np_(ft.grad(loss)(w, xs[i])) for i in range(4)])
    np.testing.assert_allclose(np_(per), loop, rtol=1e-12)


def test_grad_of_vmap_and_vmap_of_vmap():
    xs = ft.asarray(np.arange(6.0).reshape(2, 3))
    g = ft.grad(lambda a: ft.sum(ft.vmap(lambda r: ft.sin(r) * r)(a)))(xs)
    x = np_(xs)
    np.testing.assert_allclose(np_(g), np.cos(x) * x + np.sin(x))
    vv = ft.vmap(ft.vmap(lambda a: a * a))(xs)
    np.testing.assert_allclose(np_(vv), x * x)


def test_vmap_of_jvp_and_jacfwd_of_jacrev_under_vmap():
    xs = ft.asarray(np.arange(6.0).reshape(2, 3) / 5)
    ts = ft.asarray(np.ones((2, 3)))
    _, t_out = ft.vmap(lambda x, t: ft.jvp(ft.sin, (x,), (t,)))(xs, ts)
    np.testing.assert_allclose(np_(t_out), np.cos(np_(xs)))
    hs = ft.vmap(ft.hessian(f_scalar))(xs)
    for i in range(2):
        np.testing.assert_allclose(np_(hs[i]), f_scalar_hess_np(np_(xs)[i]), atol=1e-10)


def test_triples():
    x = ft.asarray(np.arange(6.0).reshape(2, 3) / 7)
    # vmap(grad(grad)) and grad(vmap(grad))
    a = ft.vmap(ft.vmap(ft.grad(ft.grad(lambda v: ft.sin(v)))))(x)
    np.testing.assert_allclose(np_(a), -np.sin(np_(x)), atol=1e-12)
    b = ft.grad(lambda m: ft.sum(ft.vmap(ft.grad(lambda r: ft.sum(ft.exp(r) * r)))(m)))(x)
    xv = np_(x)
    np.testing.assert_allclose(np_(b), np.exp(xv) * (xv + 2), rtol=1e-12)


@given(st.integers(1, 4), st.integers(1, 4))
def test_vmap_matches_loop_for_matmul_chain(n, k):
    rng = np.random.default_rng(n * 10 + k)
    a = rng.standard_normal((n, k, 3))
    b = rng.standard_normal((3, 2))
    got = ft.vmap(lambda m: ft.tanh(m @ ft.asarray(b)))(ft.asarray(a))
    np.testing.assert_allclose(np_(got), np.tanh(a @ b), rtol=1e-12)


# ------------------------------------------------------------------- custom rules


def test_custom_jvp_under_grad_vmap_and_jvp():
    @ft.custom_jvp
    def f(x):
        return ft.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 3.0 * t

    assert float(ft.grad(f)(1.0)) == 3.0
    xs = ft.asarray(np.array([0.1, 0.2]))
    np.testing.assert_allclose(np_(ft.vmap(ft.grad(f))(xs)), [3.0, 3.0])
    np.testing.assert_allclose(np_(ft.grad(lambda v: ft.sum(ft.vmap(f)(v)))(xs)), [3.0, 3.0])
    np.testing.assert_allclose(np_(f(xs)), np.sin([0.1, 0.2]))


def test_custom_vjp_stable_log1pexp_and_under_vmap():
    @ft.custom_vjp
    def softplus(x):
        return ft.log1p(ft.exp(x))

    def fwd(x):
        return softplus(x), x

    def bwd(x, g):
        return (g * ft.sigmoid(x),)

    softplus.defvjp(fwd, bwd)
    g = ft.grad(lambda x: ft.sum(softplus(x)))(ft.asarray(np.array([-1000.0, 0.0, 1000.0])))
    np.testing.assert_allclose(np_(g), [0.0, 0.5, 1.0])
    gv = ft.vmap(ft.grad(lambda x: softplus(x)))(ft.asarray(np.array([0.0, 1.0])))
    np.testing.assert_allclose(np_(gv), 1 / (1 + np.exp(-np.array([0.0, 1.0]))))
    gv2 = ft.grad(lambda xs: ft.sum(ft.vmap(softplus)(xs)))(ft.asarray(np.array([0.0, 1.0])))
    np.testing.assert_allclose(np_(gv2), 1 / (1 + np.exp(-np.array([0.0, 1.0]))))
    with pytest.raises(TypeError, match="forward-mode"):
        ft.jvp(softplus, (ft.asarray(1.0),), (ft.asarray(1.0),))


def test_checkpoint_gives_same_gradient_and_supports_jvp():
    def f(x):
        return ft.sum(ft.sin(ft.sin(x)) * x)

    x = ft.asarray(X)
    np.testing.assert_allclose(np_(ft.grad(ft.checkpoint(f))(x)), np_(ft.grad(f)(x)), rtol=1e-12)
    _, t = ft.jvp(ft.checkpoint(f), (x,), (ft.ones_like(x),))
    _, t2 = ft.jvp(f, (x,), (ft.ones_like(x),))
    np.testing.assert_allclose(float(t), float(t2))
    hs = ft.hessian(ft.checkpoint(f))(x)
    np.testing.assert_allclose(np_(hs), np_(ft.hessian(f)(x)), atol=1e-10)


def test_stop_gradient_and_integer_inputs_carry_no_tangent():
    assert float(ft.grad(lambda x: x * ft.stop_gradient(x))(3.0)) == 3.0
    _, t = ft.jvp(
        lambda i, x: x * 2.0, (ft.asarray(3), ft.asarray(1.0)), (ft.asarray(1), ft.asarray(1.0))
    )
    assert float(t) == 2.0
    out, vjp_fn = ft.vjp(lambda i, x: x * i.astype(ft.float32), ft.asarray(3), ft.asarray(2.0))
    gi, gx = vjp_fn(ft.asarray(1.0))
    assert gi.dtype == ft.float0 and float(gx) == 3.0


# -------------------------------------------------------------------------- errors


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar"):
        ft.grad(lambda x: x * 2.0)(ft.ones(3))
    with pytest.raises(TypeError, match="float output"):
        ft.grad(lambda x: ft.sum(x).astype(ft.int32))(ft.ones(3))
    with pytest.raises(TypeError, match="float inputs"):
        ft.grad(lambda x: ft.sum(x))(ft.asarray([1, 2]))


def test_vmap_errors():
    with pytest.raises(ValueError, match="inconsistent sizes.*size 3.*size 4"):
        ft.vmap(lambda a, b: a + b)(ft.ones(3), ft.ones(4))
    with pytest.raises(ValueError, match="in_axes"):
        ft.vmap(lambda a, b: a + b, in_axes=(0, 0, 0))(ft.ones(3), ft.ones(3))
    with pytest.raises(ValueError, match="tree prefix"):
        ft.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": ft.ones(3)})
    with pytest.raises(ValueError, match="out of range"):
        ft.vmap(lambda a: a, in_axes=2)(ft.ones(3))


def test_escaped_tracer_raises_naming_the_transform():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    ft.grad(f)(1.0)
    with pytest.raises(ft.UnexpectedTracerError, match="vjp"):
        leaked[0] + 1.0
    ft.vmap(f)(ft.ones(2))
    with pytest.raises(ft.UnexpectedTracerError, match="vmap"):
        ft.sin(leaked[1])


def test_concretization_error_names_the_fix():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(ft.ConcretizationError, match="static_argnums|ft.cond"):
        ft.make_graph(f)(ft.asarray(1.0))
    with pytest.raises(ft.ConcretizationError):
        ft.vmap(f)(ft.ones(2))
    # Under grad of concrete inputs, Python control flow works (JAX semantics).
    assert float(ft.grad(f)(2.0)) == 1.0 and float(ft.grad(f)(-2.0)) == -1.0


def test_trace_state_is_per_thread():
    results = []

    def worker():
        results.append(float(ft.grad(lambda x: x * x)(5.0)))

    def outer(x):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        return x * 3.0

    assert float(ft.grad(outer)(1.0)) == 3.0
    assert results == [10.0]


def test_make_graph_prints_and_evaluates():
    g = ft.make_graph(lambda x, y: ft.exp(x) * y + 1.0)(ft.ones(3), ft.ones(3))
    text = str(g)
    assert "exp" in text and "mul" in text and "add" in text and "f32[3]" in text
    out = ft.fx.eval_graph(g, ft.zeros(3), ft.full((3,), 2.0))
    np.testing.assert_allclose(np_(out[0]), [3.0, 3.0, 3.0])
    assert [e.primitive.name for e in g.eqns] == ["exp", "mul", "add"]


def test_aux_passes_non_array_leaves_through():
    f = lambda a: ((a**2).sum(), {"tag": "x", "n": 3, "v": a})
    g, aux = ft.grad(f, has_aux=True)(ft.ones(3))
    assert g.tolist() == [2.0] * 3 and aux["tag"] == "x" and int(aux["n"]) == 3
    _, _, aux = ft.vjp(lambda a: (a * 2.0, "tag"), ft.ones(2), has_aux=True)
    assert aux == "tag"
    for jac in (ft.jacfwd, ft.jacrev):
        j, aux = jac(lambda a: (a * 2.0, ("tag", a.sum())), has_aux=True)(ft.ones(2))
        assert j.tolist() == [[2.0, 0.0], [0.0, 2.0]] and aux[0] == "tag"
        assert float(aux[1]) == 2.0


@pytest.mark.parametrize("jac", [ft.jacfwd, ft.jacrev])
def test_jacobian_of_an_integer_input_names_the_argument(jac):
    def my_fn(x, n):
        return x * n

    with pytest.raises(TypeError, match=r"requires float inputs.*argument 1 of my_fn has dtype"):
        jac(my_fn, argnums=1)(ft.ones(2), ft.asarray([1, 2]))


@pytest.mark.parametrize("ax", [3, 4, -4, 7])
def test_vmap_out_axes_out_of_range_is_a_value_error(ax):
    x = ft.ones((2, 3, 4))
    with pytest.raises(ValueError, match=f"out_axes entry {ax} is out of range"):
        ft.vmap(lambda v: v * 2.0, out_axes=ax)(x)
    with pytest.raises(ValueError, match="out of range"):
        ft.vmap(lambda v: ft.ones(()), out_axes=ax - 2 if ax > 0 else ax + 2)(x)
    assert ft.vmap(lambda v: v * 2.0, out_axes=-1)(x).shape == (3, 4, 2)


def test_relu_derivative_at_zero_is_zero():
    x = ft.asarray(np.array([-1.0, 0.0, 2.0, np.nan]))
    assert ft.vmap(ft.grad(ft.relu))(x).tolist() == [0.0, 0.0, 1.0, 0.0]
    got = ft.relu(x).tolist()
    assert got[:3] == [0.0, 0.0, 2.0] and np.isnan(got[3])
    assert ft.jit(ft.vmap(ft.grad(ft.relu)))(x).tolist() == [0.0, 0.0, 1.0, 0.0]
