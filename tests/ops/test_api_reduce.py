"""Statistical, searching, sorting and set functions against numpy."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from tests.ops.api_testing import arrays, assert_close, shapes, to_np

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _axis(data, ndim):
    """None, an int, or a tuple of distinct axes (possibly negative)."""
    if ndim == 0:
        return data.draw(st.sampled_from([None, ()]))
    single = st.integers(-ndim, ndim - 1)
    many = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
    return data.draw(st.one_of(st.none(), single, many))


@given(data=st.data())
def test_sum_prod(data):
    dtype = data.draw(
        st.sampled_from([np.float32, np.float64, np.int8, np.int32, np.uint8, np.bool_])
    )
    x = data.draw(arrays(dtype, shapes(), finite=True, min_value=-3, max_value=3))
    ax = _axis(data, x.ndim)
    keep = data.draw(st.booleans())
    for name, ref in (("sum", np.sum), ("prod", np.prod)):
        got = getattr(ft, name)(ft.asarray(x), axis=ax, keepdims=keep)
        expected = np.asarray(ref(x, axis=ax, keepdims=keep))
        if dtype == np.bool_:
            expected = expected.astype(np.int64)
        assert_close(got, expected, rtol=1e-5 if dtype == np.float32 else None)


def test_sum_dtypes():
    assert ft.sum(ft.asarray([1, 2], dtype=ft.int8)).dtype == ft.int64
    assert ft.sum(ft.asarray([1, 2], dtype=ft.uint16)).dtype == ft.uint64
    assert ft.sum(ft.asarray([True, True])).dtype == ft.int64
    assert ft.sum(ft.asarray([True, True])).item() == 2 if hasattr(ft.Tensor, "item") else True
    assert ft.sum(ft.asarray([1.0], dtype=ft.float16)).dtype == ft.float16
    assert ft.sum(ft.asarray([1, 2], dtype=ft.int8), dtype=ft.int8).dtype == ft.int8
    assert ft.prod(ft.asarray([1, 2], dtype=ft.int32)).dtype == ft.int64


@given(data=st.data())
def test_mean_var_std(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    x = data.draw(arrays(dtype, shapes(min_side=1), finite=True, min_value=-100, max_value=100))
    ax = _axis(data, x.ndim)
    keep = data.draw(st.booleans())
    corr = data.draw(st.sampled_from([0, 1]))
    t = ft.asarray(x)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    assert_close(ft.mean(t, axis=ax, keepdims=keep), np.mean(x, axis=ax, keepdims=keep), **tol)
    with np.errstate(all="ignore"):
        ev = np.var(x, axis=ax, ddof=corr, keepdims=keep)
        es = np.std(x, axis=ax, ddof=corr, keepdims=keep)
    assert_close(ft.var(t, axis=ax, correction=corr, keepdims=keep), np.asarray(ev, dtype), **tol)
    assert_close(ft.std(t, axis=ax, correction=corr, keepdims=keep), np.asarray(es, dtype), **tol)


def test_mean_of_ints_and_half():
    assert ft.mean(ft.asarray([1, 2])).dtype == ft.float32
    assert_close(ft.mean(ft.asarray([1, 2])), np.float32(1.5))
    h = ft.asarray(np.full(4096, 0.1, np.float16))
    assert ft.mean(h).dtype == ft.float16
    assert abs(float(to_np(ft.mean(h))) - 0.1) < 1e-3
    assert_close(ft.std(ft.asarray([1.0, 3.0])), np.float32(1.0))  # correction=0


@given(data=st.data())
def test_max_min_all_any_count(data):
    dtype = data.draw(st.sampled_from([np.float32, np.int16, np.uint8, np.bool_]))
    x = data.draw(arrays(dtype, shapes(min_side=1)))
    ax = _axis(data, x.ndim)
    keep = data.draw(st.booleans())
    t = ft.asarray(x)
    assert_close(ft.max(t, axis=ax, keepdims=keep), np.max(x, axis=ax, keepdims=keep))
    assert_close(ft.min(t, axis=ax, keepdims=keep), np.min(x, axis=ax, keepdims=keep))
    assert_close(ft.all(t, axis=ax, keepdims=keep), np.all(x, axis=ax, keepdims=keep))
    assert_close(ft.any(t, axis=ax, keepdims=keep), np.any(x, axis=ax, keepdims=keep))
    expected = np.asarray(np.count_nonzero(x, axis=ax, keepdims=keep)).astype(np.int64)
    assert_close(ft.count_nonzero(t, axis=ax, keepdims=keep), expected)


def test_reduction_errors():
    with pytest.raises(ValueError, match=r"max.*empty.*\(0, 3\)"):
        ft.max(ft.zeros((0, 3)), axis=0)
    assert ft.max(ft.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(ValueError, match=r"sum: axis 2 .*rank 2"):
        ft.sum(ft.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match="repeated"):
        ft.sum(ft.zeros((2, 3)), axis=(0, -2))
    with pytest.raises(ValueError, match="argmax"):
        ft.argmax(ft.zeros((0,)))
    assert_close(ft.sum(ft.zeros((0, 3))), np.float32(0))
    assert_close(ft.all(ft.zeros((0,))), np.True_)


@given(data=st.data())
def test_argmax_argmin(data):
    dtype = data.draw(st.sampled_from([np.float32, np.int8]))
    x = data.draw(arrays(dtype, shapes(min_side=1), min_value=-3, max_value=3))
    keep = data.draw(st.booleans())
    ax = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None
    t = ft.asarray(x)
    for name in ("argmax", "argmin"):
        got = getattr(ft, name)(t, axis=ax, keepdims=keep)
        expected = np.asarray(getattr(np, name)(x, axis=ax, keepdims=keep)).astype(np.int64)
        assert_close(got, expected)


@given(data=st.data())
def test_cumulative(data):
    dtype = data.draw(st.sampled_from([np.float64, np.int32, np.int8, np.bool_]))
    x = data.draw(arrays(dtype, shapes(min_dims=1), finite=True, min_value=-3, max_value=3))
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    acc = np.int64 if dtype in (np.int32, np.int8, np.bool_) else dtype
    t = ft.asarray(x)
    assert_close(ft.cumsum(t), np.cumsum(x, dtype=acc))
    assert_close(ft.cumsum(t, axis=ax), np.cumsum(x, axis=ax, dtype=acc))
    assert_close(ft.cumprod(t, axis=ax), np.cumprod(x, axis=ax, dtype=acc))
    assert_close(ft.cumulative_sum(t, axis=ax), np.cumsum(x, axis=ax, dtype=acc))
    init = ft.cumulative_sum(t, axis=ax, include_initial=True)
    pad = [(0, 0)] * x.ndim
    pad[ax] = (1, 0)
    assert_close(init, np.pad(np.cumsum(x, axis=ax, dtype=acc), pad))
    assert_close(ft.cumulative_prod(t, axis=ax), np.cumprod(x, axis=ax, dtype=acc))


def test_cumulative_sum_needs_axis():
    with pytest.raises(ValueError, match="axis"):
        ft.cumulative_sum(ft.zeros((2, 2)))
    assert_close(ft.cumulative_sum(ft.asarray([1, 2])), np.array([1, 3]))


@given(data=st.data())
def test_sort_argsort(data):
    dtype = data.draw(st.sampled_from([np.float32, np.int16, np.uint8]))
    x = data.draw(arrays(dtype, shapes(min_dims=1), min_value=0, max_value=4))
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    t = ft.asarray(x)
    assert_close(ft.sort(t, axis=ax), np.sort(x, axis=ax, kind="stable"))
    assert_close(ft.argsort(t, axis=ax), np.argsort(x, axis=ax, kind="stable").astype(np.int64))
    # Descending and stable: ties keep their original order (as torch.sort(stable=True)).
    expected_idx = np.flip(np.argsort(np.flip(x, ax), axis=ax, kind="stable"), ax)
    expected_idx = x.shape[ax] - 1 - expected_idx
    got_idx = ft.argsort(t, axis=ax, descending=True)
    assert_close(got_idx, expected_idx.astype(np.int64))
    assert_close(ft.sort(t, axis=ax, descending=True), np.take_along_axis(x, expected_idx, ax))


def test_sort_descending_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([3.0, 1.0, np.nan, 3.0, 2.0, 1.0], np.float32)
    tv, ti = torch.sort(torch.from_numpy(x), descending=True, stable=True)
    assert_close(ft.sort(ft.asarray(x), descending=True), tv.numpy())
    assert_close(ft.argsort(ft.asarray(x), descending=True), ti.numpy())
    assert_close(ft.sort(ft.asarray(x)), np.sort(x))  # NaN last


def test_top_k():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).permutation(24).reshape(2, 3, 4).astype(np.float32)
    v, i = ft.top_k(ft.asarray(x), 2)
    tv, ti = torch.topk(torch.from_numpy(x), 2)
    assert_close(v, tv.numpy())
    assert_close(i, ti.numpy())
    with pytest.raises(ValueError, match="top_k"):
        ft.top_k(ft.asarray(x), 5)


@given(data=st.data())
def test_searchsorted(data):
    x1 = np.sort(
        data.draw(arrays(np.float32, (data.draw(st.integers(0, 6)),), min_value=-3, max_value=3))
    )
    x2 = data.draw(arrays(np.float32, shapes(max_dims=2), min_value=-4, max_value=4))
    for side in ("left", "right"):
        expected = np.searchsorted(x1, x2, side=side).astype(np.int64)
        assert_close(ft.searchsorted(ft.asarray(x1), ft.asarray(x2), side=side), expected)


def test_searchsorted_nan_and_sorter():
    x1 = np.array([1.0, 2.0, np.nan], np.float32)
    x2 = np.array([np.nan, 2.0], np.float32)
    for side in ("left", "right"):
        got = ft.searchsorted(ft.asarray(x1), ft.asarray(x2), side=side)
        assert_close(got, np.searchsorted(x1, x2, side=side).astype(np.int64))
    u = np.array([3, 1, 2])
    s = np.argsort(u)
    got = ft.searchsorted(ft.asarray(u), ft.asarray([2]), sorter=ft.asarray(s))
    assert_close(got, np.searchsorted(u, [2], sorter=s).astype(np.int64))


@given(data=st.data())
def test_diff(data):
    x = data.draw(arrays(np.int32, shapes(min_dims=1), min_value=-9, max_value=9))
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = data.draw(st.integers(0, 2))
    assert_close(ft.diff(ft.asarray(x), axis=ax, n=n), np.diff(x, n=n, axis=ax))
    got = ft.diff(ft.asarray(x), axis=ax, prepend=0, append=1)
    assert_close(got, np.diff(x, axis=ax, prepend=0, append=1))


def test_unique():
    x = np.array([[3.0, 1.0, np.nan], [3.0, 2.0, np.nan]], np.float32)
    t = ft.asarray(x)
    vals = np.unique(x.ravel(), equal_nan=False)
    assert_close(ft.unique_values(t), vals)
    r = ft.unique_all(t)
    v, i, inv, c = np.unique(x.ravel(), True, True, True, equal_nan=False)
    assert_close(r.values, v)
    assert_close(r.indices, i.astype(np.int64))
    assert_close(r.inverse_indices, inv.reshape(x.shape).astype(np.int64))
    assert_close(r.counts, c.astype(np.int64))
    uc = ft.unique_counts(t)
    assert_close(uc.counts, c.astype(np.int64))
    ui = ft.unique_inverse(t)
    assert_close(ft.take(ui.values, ft.reshape(ui.inverse_indices, (-1,))), x.ravel())


def test_nonzero():
    x = np.array([[0, 2, 0], [1, 0, 3]])
    got = ft.nonzero(ft.asarray(x))
    assert isinstance(got, tuple)
    for g, e in zip(got, np.nonzero(x)):
        assert_close(g, e.astype(np.int64))
    for size, fill in ((2, None), (5, -1), (3, 7)):
        got = ft.nonzero(ft.asarray(x), size=size, fill_value=fill)
        for g, e in zip(got, np.nonzero(x)):
            e = e[:size].astype(np.int64)
            e = np.concatenate([e, np.full(size - len(e), 0 if fill is None else fill)])
            assert_close(g, e)
    with pytest.raises(ValueError):
        ft.nonzero(ft.asarray(1))


@given(data=st.data())
def test_logsumexp_softmax(data):
    x = data.draw(
        arrays(np.float64, shapes(min_dims=1, min_side=1), finite=True, min_value=-50, max_value=50)
    )
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    keep = data.draw(st.booleans())
    m = np.max(x, axis=ax, keepdims=True)
    lse = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    t = ft.asarray(x)
    expected = lse if keep else np.squeeze(lse, ax)
    assert_close(ft.logsumexp(t, axis=ax, keepdims=keep), expected, rtol=1e-12, atol=1e-12)
    assert_close(ft.softmax(t, axis=ax), np.exp(x - lse), rtol=1e-10, atol=1e-14)
    assert_close(ft.log_softmax(t, axis=ax), x - lse, rtol=1e-10, atol=1e-12)


def test_logsumexp_stability():
    got = ft.logsumexp(ft.asarray([1000.0, 1000.0]))
    assert math.isclose(float(to_np(got)), 1000 + math.log(2), rel_tol=1e-6)
    assert float(to_np(ft.logsumexp(ft.asarray([-np.inf, -np.inf])))) == -np.inf
    assert float(to_np(ft.logsumexp(ft.asarray([np.inf, 1.0])))) == np.inf
    assert_close(ft.softmax(ft.asarray([1000.0, 1000.0])), np.array([0.5, 0.5], np.float32))
    assert ft.softmax(ft.asarray([1, 2])).dtype == ft.float32


@pytest.mark.parametrize(
    "x, soft, log_soft",
    [  # JAX's and PyTorch's values: an infinite maximum makes the row NaN
        ([3.0, np.inf], [np.nan, np.nan], [np.nan, np.nan]),
        ([-np.inf, -np.inf], [np.nan, np.nan], [np.nan, np.nan]),
        ([1.0, -np.inf], [1.0, 0.0], [0.0, -np.inf]),
        ([np.nan, 1.0], [np.nan, np.nan], [np.nan, np.nan]),
    ],
)
def test_softmax_of_infinities_and_nan(x, soft, log_soft):
    t = ft.asarray(np.array(x, np.float32))
    for f in (ft.softmax, ft.jit(ft.softmax)):
        np.testing.assert_array_equal(to_np(f(t)), np.array(soft, np.float32))
    for f in (ft.log_softmax, ft.jit(ft.log_softmax)):
        np.testing.assert_array_equal(to_np(f(t)), np.array(log_soft, np.float32))


def test_softmax_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)
    tx = torch.from_numpy(x)
    assert_close(ft.softmax(ft.asarray(x), axis=0), torch.softmax(tx, 0).numpy(), atol=1e-7)
    assert_close(ft.log_softmax(ft.asarray(x)), torch.log_softmax(tx, -1).numpy(), atol=1e-6)
    assert_close(ft.logsumexp(ft.asarray(x), axis=1), torch.logsumexp(tx, 1).numpy(), atol=1e-6)


@pytest.mark.parametrize("axis", [0.7, "1"])
def test_a_non_integer_axis_is_a_type_error_naming_the_function(axis):
    # int(axis) took 0.7 for axis 0; numpy raises TypeError for both.
    with pytest.raises(TypeError, match="sum: axis must be an integer"):
        ft.sum(ft.ones((2, 3)), axis=axis)


def test_a_traced_axis_asks_for_a_static_argument():
    with pytest.raises(ft.ConcretizationError, match="static"):
        ft.jit(ft.sum)(ft.ones((2, 3)), axis=1)
