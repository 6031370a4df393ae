"""Regression tests for dtype promotion and weak types (one test per bug found)."""

import pytest

import fntorch as ft


def _f16(v):
    return ft.asarray(v, dtype=ft.float16)


@pytest.mark.parametrize(
    "fun",
    [lambda x, y: x * y, lambda x, y: x * (y * y)],
    ids=["mul", "square"],
)
def test_differentiated_python_scalar_stays_weak(fun):
    # A differentiated Python float must not widen a float16 tensor: JAX gives a float16
    # value, float16/float32 (weak) gradients; before the fix the value was float32.
    v, (gx, gy) = ft.value_and_grad(fun, argnums=(0, 1))(_f16(2.0), 3.0)
    assert v.dtype == ft.float16 == fun(_f16(2.0), 3.0).dtype
    assert gx.dtype == ft.float16 and gy.dtype == ft.float32
    out, tan = ft.jvp(fun, (_f16(2.0), 3.0), (_f16(1.0), 1.0))
    assert out.dtype == tan.dtype == ft.float16
    y, f_jvp = ft.linearize(fun, _f16(2.0), 3.0)
    assert y.dtype == f_jvp(_f16(1.0), 1.0).dtype == ft.float16
    y, vjp_fn = ft.vjp(fun, _f16(2.0), 3.0)
    assert y.dtype == ft.float16
    assert [g.dtype for g in vjp_fn(_f16(1.0))] == [ft.float16, ft.float32]


def test_jacfwd_of_python_scalar_keeps_output_dtype():
    # jacfwd pushes tangents through the function: a Python float argument must stay weak
    # there too, so the Jacobian has the float16 output's dtype (as JAX), not float32.
    jac = ft.jacfwd(lambda x, y: x * y * y, argnums=1)(_f16(2.0), 3.0)
    assert jac.dtype == ft.float16 and float(jac) == 12.0


def test_jacrev_of_python_scalar_computes_in_the_tensor_dtype():
    # The primal pass of jacrev must keep the Python float weak too: x * y * y stays in
    # float16 (1.5 * 3.1**2 rounds differently in float32), its Jacobian in y's float32.
    x, y = _f16(1.5), 3.1
    jac = ft.jacrev(lambda x, y: x * y * y, argnums=1)(x, y)
    assert jac.dtype == ft.float32
    assert float(jac) == 9.296875  # JAX's; float32 arithmetic gives 9.3
