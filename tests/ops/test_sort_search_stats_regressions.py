"""Regressions found by comparing sorting, searching, set and statistical functions
with numpy."""

import numpy as np
import pytest

import fntorch as ft


def test_unique_inverse_of_0d_keeps_the_shape_of_x():
    # The standard: inverse_indices has x's shape, so a 0-d x gives a 0-d index.
    x = ft.asarray(3.0)
    assert ft.unique_inverse(x).inverse_indices.shape == ()
    values, indices, inverse, counts = ft.unique_all(x)
    assert inverse.shape == () and inverse.tolist() == 0
    assert values.shape == indices.shape == counts.shape == (1,)
    # Nonzero 0-d shapes are unchanged.
    assert ft.unique_inverse(ft.asarray([[2, 1]])).inverse_indices.shape == (1, 2)


@pytest.mark.parametrize("sorter", [[1, 2], [[1, 2, 0]]])
def test_searchsorted_rejects_a_sorter_not_shaped_like_x1(sorter):
    # A short sorter used to search only part of x1 and return a wrong index.
    with pytest.raises(ValueError, match=r"searchsorted: sorter must have x1's shape \(3,\)"):
        ft.searchsorted(ft.asarray([3, 1, 2]), ft.asarray([2]), sorter=ft.asarray(sorter))


def test_searchsorted_rejects_a_float_sorter_by_name():
    with pytest.raises(TypeError, match="searchsorted: sorter must be an integer"):
        ft.searchsorted(ft.asarray([3, 1, 2]), ft.asarray([2]), sorter=ft.asarray([1.0, 2.0, 0.0]))


def test_searchsorted_with_a_valid_sorter_matches_numpy():
    a, v, s = [3.0, 1.0, 2.0, 2.0], [2.0, 0.5, 9.0], [1, 2, 3, 0]
    for side in ("left", "right"):
        got = ft.searchsorted(ft.asarray(a), ft.asarray(v), side=side, sorter=ft.asarray(s))
        assert got.tolist() == np.searchsorted(a, v, side=side, sorter=s).tolist()


def test_nonzero_negative_size_is_a_named_value_error():
    with pytest.raises(ValueError, match="nonzero: size must be non-negative, got -1"):
        ft.nonzero(ft.asarray([1, 2]), size=-1)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
def test_unique_of_half_floats_with_nan_has_no_duplicates(dtype):
    # numpy sorted bfloat16 NaNs out of order, so 2.0 came back twice.
    x = ft.astype(ft.asarray([2.0, np.nan, 1.0, np.nan, 2.0]), getattr(ft, dtype))
    values, indices, inverse, counts = ft.unique_all(x)
    assert values.dtype == x.dtype
    assert values.tolist()[:2] == [1.0, 2.0] and np.isnan(values.tolist()[2:]).all()
    assert indices.tolist() == [2, 0, 1, 3]
    assert inverse.tolist() == [1, 2, 0, 3, 1]
    assert counts.tolist() == [1, 2, 1, 1]
    assert ft.unique_values(x).shape == (4,)
    assert ft.unique_counts(x).counts.tolist() == [1, 2, 1, 1]


def test_unique_functions_agree_on_which_zero_is_kept():
    # -0.0 == 0.0: every unique_* keeps the first occurrence, so they agree (numpy's
    # unique_values picked 0.0 here and unique_all -0.0).
    x = ft.asarray([2.0, np.nan, -0.0, 0.0, np.nan, 2.0], dtype=ft.float64)
    kept = [np.signbit(ft.unique_values(x).tolist()[0])]
    kept += [np.signbit(f(x).values.tolist()[0]) for f in (ft.unique_counts, ft.unique_all)]
    kept += [np.signbit(ft.unique_inverse(x).values.tolist()[0])]
    assert kept == [True] * 4


def _var_ref(x, c):
    return float(np.sum((x - x.mean()) ** 2) / max(x.size - c, 0))


def test_var_and_std_take_a_traced_correction():
    # The clamp of N - correction was Python control flow: jit and vmap over a
    # correction raised ConcretizationError (JAX traces it).
    x = np.array([1.0, 2.0, 4.0, 8.0])
    got = ft.jit(lambda a, c: ft.var(a, correction=c))(ft.asarray(x), 1.0)
    assert np.isclose(float(got), _var_ref(x, 1))
    cs = [0.0, 1.0, 2.5, 4.0]
    got = ft.vmap(lambda c: ft.std(ft.asarray(x), correction=c))(ft.asarray(cs, dtype=ft.float64))
    ref = [np.sqrt(_var_ref(x, c)) if c < x.size else np.inf for c in cs]
    np.testing.assert_allclose(got.numpy(), ref)


def test_var_gradient_with_respect_to_correction_matches_finite_differences():
    # float() of the correction dropped its gradient: grad was 0.
    x = np.array([1.0, 2.0, 4.0, 8.0])
    c = ft.asarray(1.0, dtype=ft.float64)
    got = float(ft.grad(lambda c: ft.var(ft.asarray(x), correction=c))(c))
    h = 1e-6
    fd = (_var_ref(x, 1 + h) - _var_ref(x, 1 - h)) / (2 * h)
    assert np.isclose(got, fd, rtol=1e-6)


def test_var_correction_errors_name_the_argument():
    x = ft.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="var: correction must be a real number, got '1'"):
        ft.var(x, correction="1")
    with pytest.raises(ValueError, match=r"std: correction must be 0-d, got shape \(1,\)"):
        ft.std(x, correction=ft.asarray([1.0]))


def test_nonzero_takes_a_traced_fill_value():
    # np.int64(fill) needed a concrete value: vmap/jit over fill_value raised
    # ConcretizationError (JAX traces it).
    x = ft.asarray([[0, 1], [1, 1]])
    got = ft.vmap(lambda a, f: ft.nonzero(a, size=3, fill_value=f)[0])(x, ft.asarray([7, 8]))
    assert got.tolist() == [[1, 7, 7], [0, 1, 8]]
    rows, cols = ft.jit(lambda a, f: ft.nonzero(a, size=3, fill_value=(f, -1)))(
        ft.asarray([[0, 1], [0, 0]]), ft.asarray(9)
    )
    assert rows.tolist() == [0, 9, 9] and cols.tolist() == [1, -1, -1]
    with pytest.raises(ValueError, match=r"nonzero: each fill_value must be 0-d"):
        ft.nonzero(ft.asarray([1]), size=2, fill_value=ft.asarray([1, 2]))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ft.sum(x, axis=True),
        lambda x: ft.argmax(x, axis=True),
        lambda x: ft.sort(x, axis=True),
        lambda x: ft.diff(x, n=True),
        lambda x: ft.top_k(x, True),
    ],
)
def test_a_bool_is_not_an_axis_or_a_count(call):
    # operator.index takes a bool (True is 1); numpy refuses an axis of True.
    with pytest.raises(TypeError, match=r"must be an integer, got True"):
        call(ft.ones((2, 3)))


def test_tensor_diff_method_is_torch_spelling_of_ft_diff():
    x = ft.asarray([[1.0, 4.0, 9.0], [2.0, 3.0, 7.0]])
    np.testing.assert_array_equal(np.asarray(x.diff()), np.diff(np.asarray(x)))
    np.testing.assert_array_equal(np.asarray(x.diff(n=2, dim=1)), np.diff(np.asarray(x), n=2))
    np.testing.assert_array_equal(np.asarray(x.diff(dim=0)), np.diff(np.asarray(x), axis=0))


def test_tensor_mean_takes_torch_dtype():
    x = ft.asarray([1, 2, 4], dtype=ft.int8)
    got = x.mean(dtype=ft.float64)
    assert got.dtype == ft.float64 and got.item() == pytest.approx(7 / 3, rel=1e-15)
    assert x.sum(dtype=ft.int16).dtype == ft.int16  # sum's dtype is ft.sum's own
