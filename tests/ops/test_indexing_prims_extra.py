"""Semantics of gather/scatter the contract tests do not pin down: clamping, dropping,
duplicates, the output layout for non-consecutive axes, error messages, and derivatives
at the points finite differences never draw (zero updates, ties, out-of-range indices)."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx.core import Tensor
from fntorch.ops import _prims_indexing as pi
from fntorch.ops import lax
from tests.contract import to_np

SCATTERS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


def _sum(x):
    return lax.reduce_sum(x, tuple(range(x.ndim)))


def _idx(*v, dtype=np.int64):
    return np.array(v, dtype)


# ----------------------------------------------------------------------------- forward


def test_gather_clamps_out_of_range_indices():
    x = np.arange(5.0)
    got = to_np(lax.gather(x, [_idx(-3, 0, 4, 7, 200)], (0,)))
    np.testing.assert_array_equal(got, [0.0, 0.0, 4.0, 4.0, 4.0])


def test_gather_huge_unsigned_index_clamps_to_last():
    got = to_np(lax.gather(np.arange(3.0), [_idx(2**64 - 1, dtype=np.uint64)], (0,)))
    np.testing.assert_array_equal(got, [2.0])


@pytest.mark.parametrize("axes", [(3, 1), (1, 3)])
def test_gather_non_consecutive_axes_put_index_dims_first(axes):
    x = np.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    i = np.array([[0, 2, 1]])  # on axes[0]
    j = np.array([[1], [0]])  # on axes[1]; broadcast shape (2, 3)
    got = to_np(lax.gather(x, [i, j], axes))
    sl = [slice(None)] * 4
    sl[axes[0]], sl[axes[1]] = i, j
    expected = x[tuple(sl)]  # numpy: separated advanced indices put the broadcast dims first
    assert got.shape == (2, 3, 2, 4) == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_gather_axes_order_pairs_indices_with_axes():
    x = np.arange(12.0).reshape(3, 4)
    got = to_np(lax.gather(x, [_idx(3), _idx(1)], (1, 0)))
    assert got.tolist() == [x[1, 3]]


@pytest.mark.parametrize("name", SCATTERS)
def test_scatter_drops_out_of_range_indices(name):
    x = np.array([1.0, 2.0, 3.0])
    got = to_np(getattr(lax, name)(x, [_idx(-1, 3, 100)], np.array([7.0, 8.0, 9.0]), (0,)))
    np.testing.assert_array_equal(got, x)


def test_scatter_drops_a_position_if_any_of_its_indices_is_out_of_range():
    x = np.zeros((2, 3))
    got = to_np(lax.scatter_add(x, [_idx(0, 1, 5), _idx(1, 9, 2)], np.float64(1.0), (0, 1)))
    expected = np.zeros((2, 3))
    expected[0, 1] = 1.0
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("scatter_add", [13.0, 2.0, 3.0]),
        ("scatter_mul", [60.0, 2.0, 3.0]),
        ("scatter_min", [1.0, 2.0, 3.0]),
        ("scatter_max", [5.0, 2.0, 3.0]),
    ],
)
def test_scatters_accumulate_duplicates(name, expected):
    x = np.array([1.0, 2.0, 3.0])
    got = to_np(getattr(lax, name)(x, [_idx(0, 0, 0)], np.array([3.0, 4.0, 5.0]), (0,)))
    np.testing.assert_array_equal(got, expected)


def test_scatter_with_duplicates_writes_one_of_the_updates():
    got = to_np(lax.scatter(np.zeros(2), [_idx(1, 1)], np.array([3.0, 4.0]), (0,)))
    assert got[0] == 0.0 and got[1] in (3.0, 4.0)


def test_scatter_broadcasts_updates_over_the_gather_shape():
    x = np.zeros((3, 2, 4))
    # axes (2, 0): gather shape (2,) + (2,) (index dims, then operand dim 1)
    got = to_np(lax.scatter(x, [_idx(3, 0), _idx(2, 1)], np.array([5.0, 6.0]), (2, 0)))
    expected = x.copy()
    expected[2, :, 3] = [5.0, 6.0]
    expected[1, :, 0] = [5.0, 6.0]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["gather", *SCATTERS])
def test_inputs_are_never_written(name):
    x = np.arange(6.0).reshape(2, 3)
    i = _idx(1, 0, 5)
    u = np.array([[9.0], [8.0], [7.0]])
    keep = (x.copy(), i.copy(), u.copy())
    if name == "gather":
        out = lax.gather(x, [i], (0,))
    else:
        out = getattr(lax, name)(x, [i], u, (0,))
    assert to_np(out) is not x
    for a, b in zip((x, i, u), keep):
        np.testing.assert_array_equal(a, b)


def test_negative_axes_are_normalized_by_the_wrapper():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(to_np(lax.gather(x, [_idx(2)], (-1,))), [[2.0, 5.0]])


# ------------------------------------------------------------------------------ errors


def test_float_index_is_a_type_error():
    with pytest.raises(TypeError, match=r"gather: index tensor 0 must have an integer dtype"):
        lax.gather(np.zeros(3), [np.array([0.0])], (0,))


def test_unbroadcastable_indices_name_the_shapes():
    with pytest.raises(ValueError, match=r"scatter_add.*\(2,\).*\(3,\).*broadcast"):
        lax.scatter_add(np.zeros((3, 3)), [_idx(0, 1), _idx(0, 1, 2)], np.float64(1.0), (0, 1))


def test_updates_must_broadcast_to_the_gather_shape():
    with pytest.raises(ValueError, match=r"scatter: updates of shape \(3,\).*\(2, 4\)"):
        lax.scatter(np.zeros((5, 4)), [_idx(0, 1)], np.zeros(3), (0,))


def test_updates_must_have_the_operand_dtype():
    with pytest.raises(TypeError, match=r"scatter_max: updates must have the operand's dtype"):
        lax.scatter_max(np.zeros(3), [_idx(0)], np.zeros(1, np.float32), (0,))


@pytest.mark.parametrize("axes", [(0, 0), (2,), ()])
def test_bad_axes(axes):
    with pytest.raises(ValueError, match=r"gather: .*axes"):
        pi.gather_p.bind(Tensor(np.zeros((2, 2))), *[_idx(0)] * 2, axes=axes)


def test_gather_from_an_empty_axis_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        lax.gather(np.zeros((0, 2)), [_idx(0)], (0,))
    assert lax.gather(np.zeros((0, 2)), [_idx()], (0,)).shape == (0, 2)


# --------------------------------------------------------------------------- derivatives


def test_gather_gradient_goes_to_the_clamped_position():
    g = ft.grad(lambda x: _sum(lax.gather(x, [_idx(-4, 0, 9, 2)], (0,))))(Tensor(np.zeros(4)))
    np.testing.assert_array_equal(to_np(g), [2.0, 0.0, 1.0, 1.0])


def test_scatter_add_dropped_updates_get_no_gradient():
    f = lambda u: _sum(
        lax.mul(lax.scatter_add(np.ones(3), [_idx(0, 7, 0)], u, (0,)), np.arange(3.0))
    )
    g = ft.grad(f)(Tensor(np.ones(3)))
    np.testing.assert_array_equal(to_np(g), [0.0, 0.0, 0.0])
    f2 = lambda u: _sum(
        lax.mul(lax.scatter_add(np.ones(3), [_idx(2, 7, 1)], u, (0,)), np.arange(3.0))
    )
    np.testing.assert_array_equal(to_np(ft.grad(f2)(Tensor(np.ones(3)))), [2.0, 0.0, 1.0])


def test_scatter_overwritten_positions_pass_no_gradient_to_the_operand():
    f = lambda x, u: _sum(lax.mul(lax.scatter(x, [_idx(1, 5)], u, (0,)), np.array([1.0, 2.0, 3.0])))
    gx, gu = ft.grad(f, argnums=(0, 1))(Tensor(np.zeros(3)), Tensor(np.zeros(2)))
    np.testing.assert_array_equal(to_np(gx), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(to_np(gu), [2.0, 0.0])


def test_scatter_duplicate_indices_only_the_written_update_gets_a_derivative():
    # JAX's rule: the update that lands on a position takes its cotangent; the updates
    # it overwrote get none. Finite differences agree.
    idx = [_idx(1, 1, 0, 1, 7)]
    x = np.array([1.0, 2.0, 3.0])
    f = lambda u: lax.scatter(x, idx, u, (0,))
    u = np.array([4.0, 5.0, 6.0, 7.0, 8.0])
    written = to_np(f(Tensor(u)))
    winner = [k for k in (0, 1, 3) if u[k] == written[1]]
    jf = to_np(ft.jacfwd(f)(Tensor(u)))
    jr = to_np(ft.jacrev(f)(Tensor(u)))
    want = np.zeros((3, 5))
    want[1, winner] = 1.0
    want[0, 2] = 1.0
    np.testing.assert_array_equal(jf, want)
    np.testing.assert_array_equal(jr, want)
    np.testing.assert_allclose(jr, _fd_jacobian(f, u), atol=1e-9)
    g = ft.jit(ft.grad(lambda u: _sum(lax.mul(f(u), f(u)))))(Tensor(u))
    np.testing.assert_array_equal(to_np(g), 2 * want.T @ written)


def test_scatter_broadcast_update_with_duplicates_counts_each_written_position_once():
    f = lambda s: _sum(lax.scatter(np.zeros((3, 2)), [_idx(1, 1, 2)], s, (0,)))
    np.testing.assert_array_equal(to_np(ft.grad(f)(Tensor(np.float64(2.0)))), 4.0)
    np.testing.assert_array_equal(
        to_np(ft.grad(f)(Tensor(np.ones(2)))),
        [2.0, 2.0],  # rows 1 and 2, not 1, 1 and 2
    )


def _fd_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x).reshape(-1)
        d[k] = eps
        d = d.reshape(x.shape)
        cols.append((to_np(f(Tensor(x + d))) - to_np(f(Tensor(x - d)))) / (2 * eps))
    return np.stack(cols, -1)


@pytest.mark.parametrize("u", [[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [0.0, 5.0, 0.0], [2.0, 3.0, 4.0]])
def test_scatter_mul_derivative_is_exact_with_zero_updates(u):
    x = np.array([1.5, -2.0, 0.5])
    idx = [_idx(0, 0, 2)]
    f = lambda u: lax.scatter_mul(x, idx, u, (0,))
    jf = to_np(ft.jacfwd(f)(Tensor(np.array(u))))
    jr = to_np(ft.jacrev(lambda x_: lax.scatter_mul(x_, idx, np.array(u), (0,)))(Tensor(x)))
    np.testing.assert_allclose(jf, _fd_jacobian(f, u), atol=1e-7)
    np.testing.assert_allclose(jr, np.diag([u[0] * u[1], 1.0, u[2]]), atol=1e-12)


@pytest.mark.parametrize("name", ["scatter_min", "scatter_max"])
def test_scatter_extremum_ties_share_the_tangent(name):
    x = np.array([1.0, 2.0])
    u = np.array([1.0, 1.0, 7.0 if name == "scatter_min" else -7.0])
    f = lambda x, u: getattr(lax, name)(x, [_idx(0, 0, 1)], u, (0,))
    _, t = ft.jvp(
        f,
        (Tensor(x), Tensor(u)),
        (Tensor(np.array([3.0, 5.0])), Tensor(np.array([6.0, 9.0, 100.0]))),
    )
    np.testing.assert_allclose(to_np(t), [(3.0 + 6.0 + 9.0) / 3, 5.0])


def test_second_order_through_gather_and_scatter():
    idx = [_idx(0, 2, 2, 9)]
    f = lambda x: _sum(lax.integer_pow(lax.scatter_add(x, idx, lax.gather(x, idx, (0,)), (0,)), 3))
    x = np.array([0.5, -1.0, 1.5])
    h = to_np(ft.hessian(f)(Tensor(x)))
    np.testing.assert_allclose(h, _fd_jacobian(lambda t: ft.grad(f)(t), x), rtol=1e-5, atol=1e-5)


def test_vmap_of_grad_with_batched_indices():
    def loss(x, i, u):
        y = lax.scatter_max(lax.gather(x, [i], (1,)), [i], u, (1,))
        return _sum(lax.mul(y, y))

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 2, 4))
    idx = rng.integers(-1, 5, size=(3, 4))
    us = rng.standard_normal((3, 1))
    got = ft.vmap(ft.grad(loss, argnums=(0, 2)))(Tensor(xs), Tensor(idx), Tensor(us))
    for k in range(3):
        want = ft.grad(loss, argnums=(0, 2))(Tensor(xs[k]), Tensor(idx[k]), Tensor(us[k]))
        for g, w in zip(got, want):
            np.testing.assert_allclose(to_np(g)[k], to_np(w), rtol=1e-12)
