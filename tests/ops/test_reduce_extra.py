"""What the generic contracts do not cover for reductions, scans and sort: sort stability,
NaN order, several keys, arg-reduction ties and NaN, identities of empty reductions,
errors, derivatives at zeros and ties, reverse mode of the nonlinear rules, nesting."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx import dtypes as dt
from fntorch.fx.core import ShapedArray, Tensor
from fntorch.ops import _prims_reduce as r
from fntorch.ops import lax
from tests.contract import to_np

F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)


def T(x, dtype=None):
    return Tensor(np.asarray(x, dtype=dtype))


def np_list(xs):
    return [to_np(x) for x in xs]


# --------------------------------------------------------------------------- sort


def test_sort_is_stable_with_duplicates():
    keys = np.array([1, 0, 1, 0, 1, 0], np.int32)
    vals = np.arange(6, dtype=np.int32)
    k, v = np_list(lax.sort([T(keys), T(vals)]))
    assert k.tolist() == [0, 0, 0, 1, 1, 1]
    assert v.tolist() == [1, 3, 5, 0, 2, 4]


def test_sort_nans_last_infinities_in_order():
    x = np.array([np.nan, 1.0, np.inf, -np.inf, np.nan, -2.0], np.float32)
    (s,) = np_list(lax.sort(T(x)))
    np.testing.assert_array_equal(s[:4], [-np.inf, -2.0, 1.0, np.inf])
    assert np.isnan(s[4:]).all()


def test_sort_two_keys_lexicographic_along_axis_0():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (7, 2)).astype(np.int32)
    b = rng.integers(0, 3, (7, 2)).astype(np.int32)
    c = rng.standard_normal((7, 2))
    outs = np_list(lax.sort([T(a), T(b), T(c)], dimension=0, num_keys=2))
    perm = np.lexsort((b, a), axis=0)
    for got, x in zip(outs, (a, b, c)):
        np.testing.assert_array_equal(got, np.take_along_axis(x, perm, 0))


def test_sort_one_key_ignores_later_operands_for_order():
    a = np.array([1, 1, 0], np.int32)
    b = np.array([5, 4, 3], np.int32)
    outs = np_list(lax.sort([T(a), T(b)], num_keys=1))
    assert outs[1].tolist() == [3, 5, 4]


def test_sort_errors():
    with pytest.raises(ValueError, match="sort.*shape"):
        r.sort_p.abstract_eval(
            ShapedArray((3,), F64), ShapedArray((4,), F64), dimension=0, is_stable=True, num_keys=1
        )
    with pytest.raises(ValueError, match="num_keys=3"):
        r.sort_p.abstract_eval(ShapedArray((3,), F64), dimension=0, is_stable=True, num_keys=3)
    with pytest.raises(ValueError, match="dimension=1.*rank 1"):
        r.sort_p.abstract_eval(ShapedArray((3,), F64), dimension=1, is_stable=True, num_keys=1)


# ------------------------------------------------------------------ arg-reductions


def test_argmax_argmin_first_of_ties_and_first_nan():
    x = np.array([1.0, 3.0, 3.0, -1.0, -1.0])
    assert int(to_np(lax.argmax(T(x), 0, I32))) == 1
    assert int(to_np(lax.argmin(T(x), 0, I32))) == 3
    y = np.array([1.0, np.nan, 5.0, np.nan])
    assert int(to_np(lax.argmax(T(y), 0, I32))) == 1
    assert int(to_np(lax.argmin(T(y), 0, I32))) == 1
    assert to_np(lax.argmax(T(y), 0, I32)).dtype == I32


def test_argmax_empty_axis_and_bad_index_dtype_raise():
    with pytest.raises(ValueError, match="argmax.*empty"):
        r.argmax_p.abstract_eval(ShapedArray((2, 0), F64), axes=(1,), index_dtype=I32)
    with pytest.raises(TypeError, match="argmin.*index_dtype"):
        r.argmin_p.abstract_eval(ShapedArray((2, 3), F64), axes=(1,), index_dtype=dt.float32)


# --------------------------------------------------------------------- reductions


@pytest.mark.parametrize(
    "dtype,low,high",
    [
        (np.float32, -np.inf, np.inf),
        (np.int32, np.iinfo(np.int32).min, np.iinfo(np.int32).max),
        (np.uint8, 0, 255),
        (np.bool_, False, True),
    ],
)
def test_empty_max_min_give_identities(dtype, low, high):
    x = T(np.zeros((2, 0), dtype))
    mx, mn = to_np(lax.reduce_max(x, (1,))), to_np(lax.reduce_min(x, (1,)))
    assert mx.dtype == mn.dtype == np.dtype(dtype)
    assert mx.tolist() == [low, low] and mn.tolist() == [high, high]


def test_dtypes_are_kept_exactly():
    x = T(np.full((3, 4), 100, np.int32))
    assert to_np(lax.reduce_sum(x, (0, 1))).dtype == np.int32
    assert to_np(lax.reduce_prod(x, (0,))).dtype == np.int32
    assert to_np(lax.cumsum(T(np.ones(3, np.uint8)), 0)).dtype == np.uint8
    assert to_np(lax.reduce_sum(T(np.ones(3, dt.bfloat16)), (0,))).dtype == dt.bfloat16


def test_wrappers_normalize_axes_and_skip_empty():
    x = T(np.arange(6.0).reshape(2, 3))
    assert lax.reduce_sum(x, ()) is x
    np.testing.assert_array_equal(to_np(lax.reduce_sum(x, (-1,))), [3.0, 12.0])
    np.testing.assert_array_equal(to_np(lax.cumsum(x, -1, reverse=True)), [[3, 3, 2], [12, 9, 5]])
    assert to_np(lax.argmax(x, -1, I32)).tolist() == [2, 2]


def test_reduction_errors_name_axis_rank_and_dtype():
    a = ShapedArray((2, 3), F64)
    with pytest.raises(ValueError, match="reduce_sum: axis 2 .* rank 2"):
        r.reduce_sum_p.abstract_eval(a, axes=(2,))
    with pytest.raises(ValueError, match="sorted"):
        r.reduce_max_p.abstract_eval(a, axes=(1, 0))
    with pytest.raises(TypeError, match="reduce_and: expected a bool dtype, got float64"):
        r.reduce_and_p.abstract_eval(a, axes=(0,))
    with pytest.raises(TypeError, match="reduce_sum.*bool"):
        r.reduce_sum_p.abstract_eval(ShapedArray((2,), dt.bool_), axes=(0,))
    with pytest.raises(ValueError, match="cumsum: axis=1 .* rank 1"):
        r.cumsum_p.abstract_eval(ShapedArray((2,), F64), axis=1, reverse=False)
    with pytest.raises(ValueError, match="cummax.*rank 0"):
        r.cummax_p.abstract_eval(ShapedArray((), F64), axis=0, reverse=False)


# ---------------------------------------------------------------- derivatives


def test_reduce_prod_grad_at_zeros():
    g = ft.grad(lambda x: lax.reduce_prod(x, (0,)))
    np.testing.assert_allclose(to_np(g(T([2.0, 0.0, 3.0]))), [0.0, 6.0, 0.0])
    np.testing.assert_allclose(to_np(g(T([0.0, 0.0, 3.0]))), [0.0, 0.0, 0.0])
    g2 = ft.grad(lambda x: lax.reduce_prod(x, (0, 1)))
    np.testing.assert_allclose(to_np(g2(T([[2.0, 0.0], [3.0, 5.0]]))), [[0, 30.0], [0, 0]])


def test_reduce_prod_second_derivative():
    # d2/dx0 dx1 of x0 x1 x2 is x2, also at zeros.
    x = T([0.0, 0.0, 4.0])
    h = ft.jacfwd(ft.grad(lambda x: lax.reduce_prod(x, (0,))))(x)
    np.testing.assert_allclose(to_np(h), [[0, 4, 0], [4, 0, 0], [0, 0, 0]])


def test_cumprod_jvp_at_zeros_matches_formula():
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0, 1.5, -1.0])
    t = np.arange(1.0, 8.0)
    for reverse in (False, True):
        _, tout = ft.jvp(lambda x: lax.cumprod(x, 0, reverse=reverse), (T(x),), (T(t),))
        xs, ts = (x[::-1], t[::-1]) if reverse else (x, t)
        want = [
            sum(ts[k] * np.prod(np.delete(xs[: i + 1], k)) for k in range(i + 1))
            for i in range(len(xs))
        ]
        want = np.array(want)[::-1] if reverse else np.array(want)
        np.testing.assert_allclose(to_np(tout), want)


def test_reduce_max_averages_tangent_over_ties():
    g = ft.grad(lambda x: lax.reduce_max(x, (0,)))(T([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(to_np(g), [0.0, 0.5, 0.5])


def test_empty_reduce_max_has_zero_tangent():
    _, t = ft.jvp(lambda x: lax.reduce_max(x, (1,)), (T(np.zeros((2, 0))),), (T(np.zeros((2, 0))),))
    np.testing.assert_array_equal(to_np(t), [0.0, 0.0])


def test_cummax_grad_goes_to_running_max():
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    g = ft.grad(lambda x: lax.reduce_sum(lax.cummax(x, 0), (0,)))(T(x))
    np.testing.assert_allclose(to_np(g), [1, 2, 0, 2, 0])
    g = ft.grad(lambda x: lax.reduce_sum(lax.cummin(x, 0, reverse=True), (0,)))(T(x))
    np.testing.assert_allclose(to_np(g), [1, 0, 2, 0, 2])


def _nonlinear_fns():
    return {
        "reduce_prod": lambda x: lax.reduce_prod(x, (0, 2)),
        "reduce_max": lambda x: lax.reduce_max(x, (1,)),
        "reduce_min": lambda x: lax.reduce_min(x, (0, 1, 2)),
        "cumprod": lambda x: lax.cumprod(x, 1),
        "cumprod_rev": lambda x: lax.cumprod(x, 2, reverse=True),
        "cummax": lambda x: lax.cummax(x, 0),
        "cummin_rev": lambda x: lax.cummin(x, 2, reverse=True),
        "sort": lambda x: lax.sort(x, dimension=1)[0],
        "sort_values": lambda x: lax.sort([lax.neg(x), lax.mul(x, x)], dimension=2)[1],
    }


@pytest.mark.parametrize("name", list(_nonlinear_fns()))
def test_reverse_mode_agrees_with_forward_mode(name):
    # <ct, J t> == <J^T ct, t> through linearize + transpose of the nonlinear rules.
    f = _nonlinear_fns()[name]
    rng = np.random.default_rng(1)
    x = rng.permutation(24).reshape(2, 3, 4) * 0.3 - 3.0 + rng.uniform(0, 0.1, (2, 3, 4))
    x.reshape(-1)[[3, 17]] = 0.0
    t = rng.standard_normal(x.shape)
    _, jt = ft.jvp(f, (T(x),), (T(t),))
    out, vjp_fn = ft.vjp(f, T(x))
    ct = rng.standard_normal(out.shape)
    (jtct,) = vjp_fn(T(ct))
    assert np.isclose(np.sum(ct * to_np(jt)), np.sum(to_np(jtct) * t), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", list(_nonlinear_fns()))
def test_vmap_of_grad_matches_loop(name):
    f = _nonlinear_fns()[name]
    rng = np.random.default_rng(2)
    xs = rng.uniform(-2, 2, (3, 2, 3, 4))
    g = ft.grad(lambda x: lax.reduce_sum(lax.mul(f(x), f(x)), tuple(range(f(x).ndim))))
    got = to_np(ft.vmap(g)(T(xs)))
    want = np.stack([to_np(g(T(x))) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_sort_grad_permutes_back():
    x = np.array([3.0, 1.0, 2.0])
    w = np.array([10.0, 20.0, 30.0])
    g = ft.grad(lambda x: lax.reduce_sum(lax.mul(lax.sort(x)[0], T(w)), (0,)))(T(x))
    np.testing.assert_allclose(to_np(g), [30.0, 10.0, 20.0])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_narrow_float_sums_accumulate_in_float32_eagerly_as_under_jit(dtype, name):
    x = np.random.default_rng(3).uniform(0.9, 1.1, (3, 500)).astype(np.float32)
    t = ft.asarray(x).astype(getattr(ft, dtype))
    f = lambda t: getattr(ft, name)(t, axis=1)
    eager, jitted = to_np(f(t)), to_np(ft.jit(f)(t))
    np.testing.assert_array_equal(eager, jitted)
    # rounded once from the float32 result of the rounded inputs
    want = getattr(np, name)(np.asarray(to_np(t), np.float32), axis=1).astype(eager.dtype)
    np.testing.assert_array_equal(eager, want)
