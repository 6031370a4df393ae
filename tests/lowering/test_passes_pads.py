"""``passes_pads.summed_pads``: sums of zero pads tiling one axis become one concatenate,
with the sum's exact values (``-0.0`` included)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.lowering.passes import run_passes
from fntorch.lowering.passes_pads import summed_pads


def _names(graph):
    return [e.primitive.name for e in graph.eqns]


def _pads(parts, axis, total):
    out, at = [], 0
    for p in parts:
        n = p.shape[axis]
        cfg = [(0, 0)] * p.ndim
        cfg[axis] = (at, total - at - n)
        out.append(ft.pad(p, cfg))
        at += n
    return out


def test_the_gradient_of_split_is_one_concatenate():
    # nanoGPT's q, k, v = qkv.split(C, dim=2): reverse mode pads each cotangent
    def loss(qkv):
        q, k, v = ft.split(qkv, 4, dim=2)
        return ft.sum(q * k * 3.0 + v * v)

    x = ft.asarray(np.random.default_rng(0).standard_normal((2, 3, 12)).astype(np.float32))
    g = run_passes(ft.make_graph(ft.grad(loss))(x))
    assert "pad" not in _names(g) and _names(g).count("concatenate") == 1
    np.testing.assert_array_equal(ft.jit(ft.grad(loss))(x).numpy(), ft.grad(loss)(x).numpy())


def test_negative_zeros_become_zeros_as_in_the_sum():
    a = ft.asarray(np.array([[-0.0, 1.0]], np.float32))
    b = ft.asarray(np.array([[-0.0], [2.0]], np.float32).T)

    def f(a, b):
        x, y = _pads([a, b], 1, 4)
        return x + y

    got = ft.jit(f)(a, b).numpy()
    np.testing.assert_array_equal(got, f(a, b).numpy())
    assert not np.signbit(got).any()
    assert _names(summed_pads(ft.make_graph(f)(a, b))) == ["concatenate", "add"]


def test_sums_that_do_not_tile_an_axis_stay():
    a, b = ft.ones((2, 2)), ft.ones((2, 3))
    cases = {
        "gap": lambda a, b: ft.pad(a, ((0, 0), (0, 4))) + ft.pad(b, ((0, 0), (3, 0))),
        "overlap": lambda a, b: ft.pad(a, ((0, 0), (0, 2))) + ft.pad(b, ((0, 0), (1, 0))),
        "ones": lambda a, b: (
            ft.pad(a, ((0, 0), (0, 3)), constant_values=1.0) + ft.pad(b, ((0, 0), (2, 0)))
        ),
        "two axes": lambda a, b: ft.pad(a, ((1, 0), (0, 3))) + ft.pad(b, ((1, 0), (2, 0))),
        "read twice": lambda a, b: (lambda p: (p + ft.pad(b, ((0, 0), (2, 0)))) * p)(
            ft.pad(a, ((0, 0), (0, 3)))
        ),
        "a term not a pad": lambda a, b: (
            ft.pad(a, ((0, 0), (0, 3))) + ft.abs(ft.pad(b, ((0, 0), (2, 0))))
        ),
    }
    for name, f in cases.items():
        g = ft.make_graph(f)(a, b)
        assert "concatenate" not in _names(summed_pads(g)), name
        np.testing.assert_array_equal(ft.jit(f)(a, b).numpy(), f(a, b).numpy(), err_msg=name)


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 3), min_size=2, max_size=4),
    axis=st.integers(0, 1),
    order=st.randoms(use_true_random=False),
    seed=st.integers(0, 2**16),
)
def test_any_tiling_in_any_order_equals_the_eager_sum(sizes, axis, order, seed):
    rng = np.random.default_rng(seed)
    parts = []
    for n in sizes:
        shape = [2, 2]
        shape[axis] = n
        v = rng.standard_normal(shape).astype(np.float32)
        v[rng.random(shape) < 0.2] = -0.0
        parts.append(ft.asarray(v))
    perm = list(range(len(parts)))
    order.shuffle(perm)

    def f(*xs):
        pads = _pads(list(xs), axis, sum(sizes))
        total = pads[perm[0]]
        for k in perm[1:]:
            total = total + pads[k]
        return total

    assert "concatenate" in _names(summed_pads(ft.make_graph(f)(*parts)))
    np.testing.assert_array_equal(ft.jit(f)(*parts).numpy(), f(*parts).numpy())
