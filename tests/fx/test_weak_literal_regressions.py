"""A Python scalar met by a weak traced value stays weak under jit, make_graph and grad.

Promotion turns Python scalars into numpy scalars (the primitives take those); staged as
strong literals they made ``weak * 2`` strong, so ``int8 * (y * 2)`` widened under jit
although eager (Python arithmetic) and JAX keep int8. Numpy scalars and 0-d tensors that
did not come from a Python scalar stay strong, as in JAX.
"""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx.graph import Literal
from fntorch.ops import lax


def _times_twice(x, y):
    return x * (y * 2)


def _times_plus_one(x, y):
    return x * (y + 1.0)


def test_int8_times_weak_int_product_stays_int8_under_jit():
    x = ft.asarray([1, 2], dtype=ft.int8)
    eager, jitted = _times_twice(x, 3), ft.jit(_times_twice)(x, 3)
    assert eager.dtype == jitted.dtype == ft.int8
    assert jitted.tolist() == eager.tolist() == [6, 12]


def test_float16_times_weak_float_sum_stays_float16_under_jit():
    x = ft.asarray([1.0, 2.0], dtype=ft.float16)
    eager, jitted = _times_plus_one(x, 3.0), ft.jit(_times_plus_one)(x, 3.0)
    assert eager.dtype == jitted.dtype == ft.float16
    assert jitted.tolist() == eager.tolist() == [4.0, 8.0]


def test_make_graph_keeps_the_literal_and_its_result_weak():
    g = ft.make_graph(_times_plus_one)(ft.ones(2, dtype=ft.float16), 3.0)
    add = g.eqns[0]
    assert add.primitive.name == "add"
    lit = add.inputs[1]
    assert isinstance(lit, Literal) and lit.aval.weak_type
    # The graph holds a plain numpy scalar: the lowering never sees the weak marker.
    assert type(lit.value) is np.float32
    assert add.outputs[0].aval.weak_type
    assert g.outvars[0].aval.dtype == ft.float16
    assert all(eqn.outputs[0].aval.dtype != ft.float32 for eqn in g.eqns[1:])


def test_value_and_grad_of_a_python_scalar_keeps_the_product_float16():
    f = lambda x, y: x * (y * 2.0)  # noqa: E731
    value, grad = ft.value_and_grad(f, argnums=1)(ft.asarray(2.0, dtype=ft.float16), 3.0)
    assert value.dtype == ft.float16 and value.item() == 12.0
    assert grad.dtype == ft.float32 and grad.item() == 4.0  # y's own dtype, as JAX


def test_value_and_grad_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    f = lambda x, y: x * (y * 2.0)  # noqa: E731
    jv, jg = jax.value_and_grad(f, argnums=1)(jnp.asarray(2.0, dtype=jnp.float16), 3.0)
    fv, fg = ft.value_and_grad(f, argnums=1)(ft.asarray(2.0, dtype=ft.float16), 3.0)
    assert (fv.dtype, fg.dtype) == (np.dtype(jv.dtype), np.dtype(jg.dtype))


# ---------------------------------------------------------------- strong values stay strong


@pytest.mark.parametrize("y", [np.int64(3), np.asarray(3)], ids=["np-scalar", "0-d-array"])
def test_numpy_scalar_argument_still_widens_under_jit(y):
    x = ft.asarray([1, 2], dtype=ft.int8)
    eager, jitted = _times_twice(x, y), ft.jit(_times_twice)(x, y)
    assert eager.dtype == jitted.dtype == ft.int64


def test_zero_d_tensor_constant_still_widens_under_jit():
    f = lambda x, y: x * (ft.zeros((), dtype=ft.int64) + y)  # noqa: E731
    x = ft.asarray([1, 2], dtype=ft.int8)
    eager, jitted = f(x, 3), ft.jit(f)(x, 3)
    assert eager.dtype == jitted.dtype == ft.int64
    assert jitted.tolist() == eager.tolist() == [3, 6]


def test_function_of_python_scalars_only_is_strong_under_jit_as_eagerly():
    # Eagerly ft.add(2, 3) is a concrete tensor, never weak: jit must agree.
    f = lambda x: x * ft.add(2, 3)  # noqa: E731
    x = ft.asarray([1, 2], dtype=ft.int8)
    eager, jitted = f(x), ft.jit(f)(x)
    assert eager.dtype == jitted.dtype == ft.int64


def test_library_numpy_scalar_constant_is_strong():
    # A numpy scalar handed to a primitive by code (not made from a Python scalar by
    # promotion) is strong: weak * strong is strong, so the float16 tensor widens.
    f = lambda x, y: x * lax.mul(y, np.float32(2.0))  # noqa: E731
    g = ft.make_graph(f)(ft.ones(2, dtype=ft.float16), 3.0)
    assert not g.eqns[0].inputs[1].aval.weak_type
    assert not g.eqns[0].outputs[0].aval.weak_type
    assert g.outvars[0].aval.dtype == ft.float32


def test_strong_float32_program_graph_is_unchanged():
    g = ft.jit(lambda x: ft.tanh(x * 0.5) + 1.0).lower(ft.ones(4)).graph
    assert str(g) == (
        "{ lambda a:f32[4]. let\n"
        "    b:f32[4] = mul a 0.5\n"
        "    c:f32[4] = tanh b\n"
        "    d:f32[4] = add c 1.0\n"
        "  in (d) }"
    )
    lits = [v for eqn in g.eqns for v in eqn.inputs if isinstance(v, Literal)]
    assert [type(v.value) for v in lits] == [np.float32, np.float32]
    assert not any(v.aval.weak_type for v in lits)
