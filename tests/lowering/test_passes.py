"""Graph passes: DCE, CSE, constant folding and the exact algebraic cleanups."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.fx.graph import eval_graph
from fntorch.lowering.passes import FOLD_LIMIT, dce, run_passes, simplify
from fntorch.ops import lax


def names(g):
    return [e.primitive.name for e in g.eqns]


def graph(f, *args):
    return ft.make_graph(f)(*args)


def test_dce_drops_unused_work():
    g = graph(lambda x: (ft.exp(x), ft.sin(x))[1], ft.ones(3))
    assert names(dce(g)) == ["sin"]


def test_cse_merges_same_primitive_inputs_params():
    f = lambda x: ft.sin(x) + ft.sin(x) + ft.sum(x, axis=0) + ft.sum(x, axis=0)
    g = graph(f, ft.ones((2, 2)))
    assert names(simplify(g)).count("sin") == 1
    assert names(simplify(g)).count("reduce_sum") == 1
    g2 = graph(lambda x: ft.sum(x, axis=0) + ft.sum(x, axis=1), ft.ones((2, 2)))
    assert names(simplify(g2)).count("reduce_sum") == 2  # params differ


def test_constant_folding_small_and_not_large():
    c = ft.asarray(np.arange(4.0, dtype=np.float32))
    g = simplify(graph(lambda x: x + ft.exp(c) * 2.0, ft.ones(4)))
    assert names(g) == ["add"]
    big = ft.ones(FOLD_LIMIT * 2)
    g = simplify(graph(lambda x: x + ft.exp(big), ft.ones(FOLD_LIMIT * 2)))
    assert names(g) == ["exp", "add"]
    # a broadcast of a constant is a view: folded whatever its size
    g = simplify(
        graph(
            lambda x: x + lax.broadcast_in_dim(np.float32(2.0), (FOLD_LIMIT * 2,), ()),
            ft.ones(FOLD_LIMIT * 2),
        )
    )
    assert names(g) == ["add"]


def test_algebraic_cleanups_are_exact():
    x = ft.ones(3)
    g = simplify(graph(lambda x: lax.convert_element_type(x, ft.float32) * 1.0 / 1.0 - 0.0, x))
    assert names(g) == []
    # x + 0.0 is not the identity (-0.0 + 0.0 == 0.0): it stays
    assert names(simplify(graph(lambda x: x + 0.0, x))) == ["add"]
    assert names(simplify(graph(lambda x: ft.stop_gradient(x).reshape(3).T, x))) == []
    # x * 1 with broadcasting changes the shape: it stays
    assert names(simplify(graph(lambda x: x * ft.ones((2, 3)), x))) != []


@given(st.lists(st.floats(-5, 5, width=32) | st.sampled_from([0.0, -0.0]), min_size=1, max_size=6))
def test_passes_keep_values_bit_for_bit(vals):
    c = ft.asarray(np.float32(3.0))

    def f(x):
        y = x * 1.0 - 0.0 + (-0.0)
        z = ft.exp(y) + ft.exp(y) * c
        return (z / 1.0, ft.sin(x) + 0.0, lax.convert_element_type(x, ft.float32))

    x = ft.asarray(np.array(vals, np.float32))
    g = graph(f, x)
    before = [np.asarray(o) for o in eval_graph(g, x)]
    after = [np.asarray(o) for o in eval_graph(run_passes(g), x)]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
        assert np.array_equal(np.signbit(a), np.signbit(b))


def _names(g):
    return [e.primitive.name for e in g.eqns]


def test_outer_products_become_broadcast_multiplies():
    from fntorch.ops._prims_linalg import dot_general

    rng = np.random.default_rng(0)
    cases = [  # (lhs shape, rhs shape, dimension_numbers)
        ((3, 1), (1, 4), (((1,), (0,)), ((), ()))),
        ((5, 3, 1), (5, 1, 4), (((2,), (1,)), ((0,), (0,)))),
        ((1, 3, 5), (4, 5, 1), (((0,), (2,)), ((2,), (1,)))),  # batch last, free dims first
        ((3, 2), (4,), (((), ()), ((), ()))),  # no contraction at all: an outer product too
        ((2, 3, 1, 6), (1, 6, 2, 5), (((2,), (0,)), ((0, 3), (2, 1)))),
    ]
    for ls, rs, dn in cases:
        a = ft.asarray(rng.standard_normal(ls).astype(np.float32))
        b = ft.asarray(rng.standard_normal(rs).astype(np.float32))

        def f(a, b, dn=dn):
            return dot_general(a, b, dn)

        g = ft.make_graph(f)(a, b)
        out = run_passes(g)
        assert "dot_general" not in _names(out) and "mul" in _names(out), (dn, _names(out))
        want = f(a, b).numpy()
        np.testing.assert_array_equal(eval_graph(out, a, b)[0].numpy(), want)
        np.testing.assert_array_equal(ft.jit(f)(a, b).numpy(), want)


def test_real_contractions_and_mixed_dtypes_stay_dot_general():
    from fntorch.ops._prims_linalg import dot_general

    a = ft.ones((3, 2))
    g = ft.make_graph(lambda a, b: dot_general(a, b, (((1,), (0,)), ((), ()))))(a, ft.ones((2, 4)))
    assert "dot_general" in _names(run_passes(g))
    g = ft.make_graph(
        lambda a, b: dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type="float64")
    )(ft.ones((3, 1)), ft.ones((1, 4)))
    assert "dot_general" in _names(run_passes(g))


def test_transposed_products_swap_their_operands():
    from fntorch.lowering.passes import transposed_dots
    from fntorch.ops._prims_linalg import dot_general

    rng = np.random.default_rng(1)
    a = ft.asarray(rng.standard_normal((5, 2, 3)).astype(np.float32))
    b = ft.asarray(rng.standard_normal((5, 3, 4)).astype(np.float32))
    batched = (((2,), (1,)), ((0,), (0,)))

    def f(a, b):  # a batched product with its free blocks swapped, and a 2-d one
        return ft.permute_dims(dot_general(a, b, batched), (0, 2, 1)), (a[0] @ b[0]).T

    g = ft.make_graph(f)(a, b)
    out = transposed_dots(g)
    assert "transpose" not in _names(out) and _names(out).count("dot_general") == 2
    for got, want in zip(eval_graph(out, a, b), f(a, b)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(ft.jit(f)(a, b), f(a, b)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_transposed_products_kept_when_the_product_is_read_elsewhere():
    from fntorch.lowering.passes import transposed_dots

    def f(a, b):
        p = a @ b
        return p.T, p + 1.0

    g = ft.make_graph(f)(ft.ones((2, 3)), ft.ones((3, 4)))
    assert _names(transposed_dots(g)) == _names(g)
    g = ft.make_graph(lambda a: ft.permute_dims(a @ a, (1, 0)) * 2)(ft.ones((3, 3)))
    assert "transpose" not in _names(transposed_dots(g))


def test_transposes_of_transposes_compose_and_cancel():
    def f(x):
        y = ft.permute_dims(ft.permute_dims(x, (1, 2, 0)), (2, 0, 1))  # cancels
        z = ft.permute_dims(ft.permute_dims(x, (1, 0, 2)), (0, 2, 1))  # composes
        return y * 2.0, z

    x = ft.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    g = simplify(ft.make_graph(f)(x))
    assert sorted(_names(g)) == ["mul", "transpose"], _names(g)
    (t,) = [e for e in g.eqns if e.primitive.name == "transpose"]
    assert t.params["permutation"] == (1, 2, 0) and t.inputs[0] is g.invars[0]
    for got, want in zip(eval_graph(g, x), f(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_reverse_mode_weight_gradients_need_no_transposes():
    # grad of x @ w.T w.r.t. w is a product that reverse mode transposes twice.
    def loss(w, x):
        return ft.sum(ft.tanh(x @ w.T))

    g = run_passes(ft.make_graph(ft.grad(loss))(ft.ones((5, 3)), ft.ones((4, 3))))
    (last,) = [e for e in g.eqns if e.outputs[0] is g.outvars[0]]
    assert last.primitive.name == "dot_general", g  # not a transpose of a product
    assert _names(g).count("transpose") == 1  # only w.T's view in the forward pass
