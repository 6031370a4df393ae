"""Regression tests for the transforms' API and custom derivatives, checked against JAX's
behaviour (values from closed forms)."""

import math

import numpy as np
import pytest

import fntorch as ft


def f32(x):
    return ft.asarray(np.asarray(x, dtype=np.float32))


# ------------------------------------------------------------ tangents and cotangents


def test_jvp_and_linearize_reject_a_tangent_of_another_dtype():
    x = f32([1.0, 2.0])
    with pytest.raises(TypeError, match="jvp: a tangent has dtype float64.*float32"):
        ft.jvp(ft.sin, (x,), (ft.ones(2, dtype=ft.float64),))
    _, f_jvp = ft.linearize(ft.sin, x)
    with pytest.raises(TypeError, match="linearize: a tangent has dtype float64"):
        f_jvp(ft.ones(2, dtype=ft.float64))
    with pytest.raises(ValueError, match="linearize: a tangent has shape"):
        f_jvp(ft.ones(3))
    # A Python float is weakly typed, as in JAX: it takes the primal's dtype.
    _, t = ft.jvp(ft.sin, (ft.asarray(0.0, dtype=ft.float64),), (2.0,))
    assert t.dtype == ft.float64 and float(t) == 2.0


def test_vjp_fn_checks_cotangent_dtype_and_takes_float0_for_integer_outputs():
    x = f32([1.0, 2.0])
    _, vjp_fn = ft.vjp(lambda x: (x * 2.0, ft.argmax(x)), x)
    with pytest.raises(TypeError, match="vjp_fn: a cotangent has dtype float64.*float32"):
        vjp_fn((ft.ones(2, dtype=ft.float64), np.zeros((), ft.float0)))
    with pytest.raises(TypeError, match="vjp_fn: a cotangent has dtype int32"):
        vjp_fn((ft.ones(2, dtype=ft.int32), np.zeros((), ft.float0)))
    (g,) = vjp_fn((ft.ones(2), np.zeros((), ft.float0)))
    assert g.tolist() == [2.0, 2.0]
    _, vjp64 = ft.vjp(lambda x: x.astype(ft.float64) * 2.0, x)
    with pytest.raises(TypeError, match="cotangent has dtype float32"):
        vjp64(ft.ones(2))


# ------------------------------------------------------------------- custom rules


def _custom_jvp_with_tangent(tangent_of):
    @ft.custom_jvp
    def f(x):
        return x * 2.0, ft.argmax(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), (tangent_of(tangents[0]), np.zeros((), ft.float0))

    return f


def test_custom_jvp_rule_tangent_must_have_the_output_shape_and_dtype():
    x = f32([1.0, 3.0])
    bad_shape = _custom_jvp_with_tangent(lambda t: ft.ones(3))
    with pytest.raises(TypeError, match="custom_jvp rule of f.*shape \\(3,\\)"):
        ft.jvp(bad_shape, (x,), (ft.ones(2),))
    with pytest.raises(TypeError, match="custom_jvp rule of f"):
        ft.grad(lambda x: bad_shape(x)[0].sum())(x)
    bad_dtype = _custom_jvp_with_tangent(lambda t: t.astype(ft.float64))
    with pytest.raises(TypeError, match="dtype float64"):
        ft.jvp(bad_dtype, (x,), (ft.ones(2),))
    # The integer output's tangent is float0, as JAX requires of the rule.
    good = _custom_jvp_with_tangent(lambda t: 3.0 * t)
    (_, i), (t, ti) = ft.jvp(good, (x,), (ft.ones(2),))
    assert t.tolist() == [3.0, 3.0] and int(i) == 1 and ti.dtype == ft.float0
    g = ft.vmap(ft.grad(lambda x: good(x)[0].sum()))(ft.ones((2, 2)))
    assert g.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_custom_vjp_bwd_cotangent_shape_is_checked_and_dtype_is_the_arguments():
    @ft.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda r, g: (g * r[1], g * r[0]))
    x = ft.asarray([0.5, 1.5], dtype=ft.float64)
    # y is broadcast, so the user's bwd returns a cotangent of x's shape for y: a bug.
    with pytest.raises(ValueError, match="custom_vjp bwd of f.*shape \\(2,\\).*shape \\(\\)"):
        ft.grad(lambda x, y: f(x, y).sum(), argnums=1)(x, f32(2.0))

    @ft.custom_vjp
    def h(x):
        return x * 2.0

    h.defvjp(lambda x: (h(x), None), lambda r, g: (g.astype(ft.float64) * 2.0,))
    g = ft.grad(lambda x: (ft.sin(x) * h(ft.sin(x))).sum())(f32([0.3, 0.7]))
    assert g.dtype == ft.float32
    expected = [4 * math.sin(v) * math.cos(v) for v in (0.3, 0.7)]
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6)


# --------------------------------------------------------------------- checkpoint


def test_checkpoint_closing_over_tracers_of_enclosing_transforms():
    def inner(z):
        return ft.checkpoint(lambda x: ft.sin(x * z))

    # d/dz sin(z) and d/dz sin(z * z): the closure is differentiated, as in JAX.
    assert math.isclose(
        float(ft.grad(lambda z: inner(z)(f32(1.0)))(2.0)), math.cos(2.0), rel_tol=1e-6
    )
    assert math.isclose(float(ft.grad(lambda z: inner(z)(z))(2.0)), 4 * math.cos(4.0), rel_tol=1e-6)
    _, t = ft.jvp(lambda z: inner(z)(f32(1.0)), (f32(2.0),), (f32(1.0),))
    assert math.isclose(float(t), math.cos(2.0), rel_tol=1e-6)
    zs = f32([1.0, 2.0])
    np.testing.assert_allclose(
        ft.vmap(lambda z: inner(z)(f32(1.0)))(zs).numpy(), np.sin([1.0, 2.0]), rtol=1e-6
    )
    np.testing.assert_allclose(
        ft.vmap(lambda z: inner(z)(z))(zs).numpy(), np.sin([1.0, 4.0]), rtol=1e-6
    )
    g = ft.grad(lambda x: ft.checkpoint(lambda x, n=2.0: x * n)(x, n=f32(3.0)))(2.0)
    assert float(g) == 3.0


# -------------------------------------------------------------------- api surface


def test_make_graph_checks_static_argnums_and_takes_kwargs():
    with pytest.raises(ValueError, match="static_argnums"):
        ft.make_graph(lambda x: x, static_argnums=3)(ft.ones(2))
    g = ft.make_graph(lambda x, y=1.0: x * y)(ft.ones(2), y=ft.ones(2))
    assert len(g.invars) == 2 and [e.primitive.name for e in g.eqns] == ["mul"]


def test_hessian_has_aux_and_aux_given_as_a_list():
    h, aux = ft.hessian(lambda x: ((x**3).sum(), x * 2.0), has_aux=True)(f32([1.0, 2.0]))
    assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]] and aux.tolist() == [2.0, 4.0]
    g, aux = ft.grad(lambda x: [x * x, x], has_aux=True)(f32(2.0))
    assert float(g) == 4.0 and float(aux) == 2.0


def _clipping_pair(z):
    """A custom_jvp and a custom_vjp of ``sin(x) * z`` closing over ``z``, whose rules give
    10 times the true derivative, so that a test sees which derivative was used."""

    @ft.custom_jvp
    def fj(x):
        return ft.sin(x) * z

    @fj.defjvp
    def fj_jvp(primals, tangents):
        return fj(primals[0]), 10.0 * ft.cos(primals[0]) * z * tangents[0]

    @ft.custom_vjp
    def fv(x):
        return ft.sin(x) * z

    fv.defvjp(lambda x: (fv(x), x), lambda x, g: (10.0 * ft.cos(x) * z * g,))
    return fj, fv


@pytest.mark.parametrize("which", [0, 1], ids=["custom_jvp", "custom_vjp"])
def test_custom_functions_closing_over_vmapped_tracers(which):
    zs, xs = f32([1.0, 2.0, 3.0]), f32([0.3, 0.5, 0.7])
    z_np, x_np = zs.numpy(), xs.numpy()

    def f(z, x):
        return _clipping_pair(z)[which](x)

    # Argument unbatched, closure batched; then both batched (JAX gives these values).
    np.testing.assert_allclose(
        ft.vmap(lambda z: f(z, f32(0.5)))(zs).numpy(), np.sin(0.5) * z_np, rtol=1e-6
    )
    np.testing.assert_allclose(ft.vmap(f)(zs, xs).numpy(), np.sin(x_np) * z_np, rtol=1e-6)
    out = ft.vmap(lambda z: ft.vmap(lambda x: f(z, x))(xs))(zs)
    np.testing.assert_allclose(out.numpy(), np.sin(x_np)[None] * z_np[:, None], rtol=1e-6)
    out = ft.vmap(lambda z: ft.vmap(lambda w: f(z * w, f32(0.5)))(zs))(zs)
    np.testing.assert_allclose(out.numpy(), np.sin(0.5) * np.outer(z_np, z_np), rtol=1e-6)
    # Made inside the vmap but closing over nothing batched: the output stays unbatched.
    out = ft.vmap(lambda z: f(f32(1.0), xs), out_axes=None)(zs)
    np.testing.assert_allclose(out.numpy(), np.sin(x_np), rtol=1e-6)
    # Differentiated inside and outside the vmap: the user's rule is used (10x).
    g = ft.vmap(lambda z, x: ft.grad(lambda x: f(z, x))(x))(zs, xs)
    np.testing.assert_allclose(g.numpy(), 10 * np.cos(x_np) * z_np, rtol=1e-6)
    g = ft.grad(lambda x: ft.vmap(f)(zs, x).sum())(xs)
    np.testing.assert_allclose(g.numpy(), 10 * np.cos(x_np) * z_np, rtol=1e-6)
    g = ft.grad(lambda x: ft.vmap(lambda z: f(z, x))(zs).sum())(f32(0.5))
    np.testing.assert_allclose(float(g), 10 * np.cos(0.5) * z_np.sum(), rtol=1e-6)


def test_jacrev_of_an_integer_output_names_the_output():
    with pytest.raises(TypeError, match="jacrev requires float outputs, got dtype int64"):
        ft.jacrev(lambda x: (x * 2.0, ft.argmax(x)))(f32([1.0, 2.0]))


def _sin_with_derivative_3():
    """sin with custom derivatives 3 (custom_jvp, custom_vjp): a test sees which is used."""

    @ft.custom_jvp
    def fj(x):
        return ft.sin(x)

    @fj.defjvp
    def fj_jvp(primals, tangents):
        return fj(primals[0]), 3.0 * tangents[0]

    @ft.custom_vjp
    def fv(x):
        return ft.sin(x)

    fv.defvjp(lambda x: (fv(x), x), lambda x, g: (3.0 * g,))
    return fj, fv


@pytest.mark.parametrize("which", [0, 1], ids=["custom_jvp", "custom_vjp"])
def test_second_order_derivatives_use_the_custom_rules(which):
    f = _sin_with_derivative_3()[which]

    def g(x):
        return f(x) * x

    # d/dx (f(x) x) = 3x + f(x); d2/dx2 = 3 + f'(x) = 6, as JAX.
    x = f32(2.0)
    assert math.isclose(float(ft.grad(ft.grad(g))(x)), 6.0, rel_tol=1e-6)
    assert math.isclose(float(ft.grad(ft.grad(ft.jit(g)))(x)), 6.0, rel_tol=1e-6)
    if which == 0:  # forward over reverse needs the jvp rule
        assert math.isclose(float(ft.hessian(g)(x)), 6.0, rel_tol=1e-6)
        assert math.isclose(float(ft.jvp(ft.grad(g), (x,), (f32(1.0),))[1]), 6.0, rel_tol=1e-6)


@pytest.mark.parametrize("which", [0, 1], ids=["custom_jvp", "custom_vjp"])
def test_checkpoint_keeps_the_rules_of_custom_functions_inside(which):
    f = _sin_with_derivative_3()[which]
    assert float(ft.grad(ft.checkpoint(f))(f32(2.0))) == 3.0
    expected = [3 * 2 + math.sin(2.0), 3 + math.sin(1.0)]
    g = ft.vmap(ft.grad(ft.checkpoint(lambda x: ft.checkpoint(f)(x) * x)))(f32([2.0, 1.0]))
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6)
    assert math.isclose(
        float(ft.grad(ft.grad(ft.checkpoint(lambda x: f(x) * x)))(f32(2.0))), 6.0, rel_tol=1e-6
    )


def test_custom_functions_take_keyword_arguments_and_defaults_as_jax():
    @ft.custom_vjp
    def f(x, y=2.0):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda r, g: (g * r[1], g * r[0]))

    @ft.custom_jvp
    def h(x, y=2.0):
        return x * y

    @h.defjvp
    def h_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return h(x, y), tx * y + ty * x

    for fn in (f, h):
        assert float(ft.grad(lambda x: fn(x))(f32(3.0))) == 2.0
        assert float(ft.grad(lambda x: fn(x, y=f32(4.0)))(f32(3.0))) == 4.0
        assert float(ft.grad(lambda y: fn(f32(3.0), y=y))(f32(4.0))) == 3.0


def test_grad_of_vmap_of_custom_vjp_whose_bwd_returns_none():
    @ft.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), y), lambda y, g: (g * y, None))
    x, y = f32([1.0, 2.0]), f32([3.0, 4.0])
    gx, gy = ft.grad(lambda x, y: ft.vmap(f)(x, y).sum(), argnums=(0, 1))(x, y)
    assert gx.tolist() == [3.0, 4.0] and gy.tolist() == [0.0, 0.0]
    gx, gy = ft.grad(lambda x, y: ft.vmap(f, in_axes=(0, None))(x, y).sum(), argnums=(0, 1))(
        x, f32(3.0)
    )
    assert gx.tolist() == [3.0, 3.0] and float(gy) == 0.0 and gy.shape == ()


def test_tangent_structure_mismatch_is_a_type_error_as_jax():
    with pytest.raises(TypeError, match="jvp: tangents must have the structure of primals"):
        ft.jvp(ft.sin, (ft.ones(3),), (ft.ones(3), ft.ones(3)))
    _, f_jvp = ft.linearize(ft.sin, ft.ones(3))
    with pytest.raises(TypeError, match="linearize: tangents have structure"):
        f_jvp(ft.ones(3), ft.ones(3))


def test_checkpoint_static_argnums_for_python_control_flow():
    f = ft.checkpoint(lambda x, n, s: x**n if s == "pow" else x, static_argnums=(1, 2))
    assert float(ft.grad(f)(f32(2.0), 3, "pow")) == 12.0
    assert ft.vmap(lambda x: ft.grad(f)(x, 2, "pow"))(f32([2.0, 3.0])).tolist() == [4.0, 6.0]
    with pytest.raises(ft.ConcretizationError):
        ft.checkpoint(lambda x: x if x > 0 else -x)(f32(1.0))


def test_vmap_keeps_an_unmapped_python_scalar_weak():
    # It became a strong float32/int64 tensor: f16 * 2.0 gave float32 under vmap only.
    x = ft.ones(2, dtype=ft.float16)
    assert ft.vmap(lambda x, s: x * s, in_axes=(0, None))(x, 2.0).dtype == ft.float16
    i = ft.ones(2, dtype=ft.int32)
    assert ft.vmap(lambda x, s: x + s, in_axes=(0, None))(i, 3).dtype == ft.int32


def test_fixed_rank_products_and_masked_fill_check_as_pytorch():
    a, v = ft.ones((2, 3)), ft.ones(3)
    assert a.mv(v).shape == (2,) and v.dot(v).shape == ()
    with pytest.raises(ValueError, match="Tensor.dot: expected tensors of ranks"):
        a.dot(ft.ones((3, 2)))  # matmul would give a matrix
    with pytest.raises(ValueError, match="Tensor.mm"):
        a.mm(v)
    with pytest.raises(ValueError, match="equal batch sizes"):
        ft.ones((2, 2, 3)).bmm(ft.ones((1, 3, 4)))  # matmul would broadcast
    with pytest.raises(TypeError, match="masked_fill: mask must have dtype bool"):
        a.masked_fill(ft.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match="masked_fill: value must be 0-d"):
        a.masked_fill(a > 0, v)
