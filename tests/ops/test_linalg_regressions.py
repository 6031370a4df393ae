"""Regression tests for linalg bugs found by comparing fntorch with numpy, torch and jax."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.ops import lax

# ---------------------------------------------------------------------- einsum labels


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("...0,0->...", [(3, 3), (3,)]),  # a digit aliased the ellipsis dim: a diagonal
        ("i1", [(2, 3)]),  # a digit label was summed out of the implicit output
        ("...->0", [(3,)]),  # a digit output label matched the ellipsis dim
        ("\u00e9j->j", [(2, 3)]),  # non-ASCII letters are no labels (numpy, torch)
    ],
)
def test_einsum_rejects_non_letter_labels(spec, shapes):
    ops = [ft.ones(s) for s in shapes]
    with pytest.raises(ValueError, match="einsum: invalid label"):
        ft.einsum(spec, *ops)


def test_einsum_repeated_label_sizes_must_match_within_an_operand():
    # numpy and torch raise; size 1 broadcasts across operands, not within one.
    with pytest.raises(ValueError, match="einsum: label 'i' is repeated"):
        ft.einsum("ii->i", ft.ones((1, 3)))
    x = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(ft.einsum("ii->i", ft.asarray(x)).numpy(), np.diag(x))


# ---------------------------------------------------------------------- vecdot


def test_vecdot_axis_names_a_dim_of_each_operand():
    # numpy's gufunc semantics: the size check and the contraction use the same dims.
    a, b = np.arange(4.0).reshape(2, 2), np.arange(8.0).reshape(2, 2, 2)
    ta, tb = ft.asarray(a), ft.asarray(b)
    np.testing.assert_allclose(ft.vecdot(ta, tb, axis=0).numpy(), np.vecdot(a, b, axis=0))
    np.testing.assert_allclose(ft.jit(lambda x, y: ft.vecdot(x, y, axis=0))(ta, tb).numpy(),
                               np.vecdot(a, b, axis=0))  # fmt: skip
    ga = ft.grad(lambda x: ft.sum(ft.vecdot(x, tb, axis=0)))(ta)
    np.testing.assert_allclose(ga.numpy(), b.sum(axis=1))
    # Negative axes are unchanged.
    np.testing.assert_allclose(ft.vecdot(ta, tb, axis=-2).numpy(), np.vecdot(a, b, axis=-2))


def test_vecdot_broadcast_error_names_vecdot():
    with pytest.raises(ValueError, match="vecdot: shapes"):
        ft.vecdot(ft.ones((2, 3)), ft.ones((4, 3)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_vecdot_matches_numpy_for_every_axis(data):
    k = data.draw(st.integers(0, 3), label="k")
    ra, rb = data.draw(st.integers(1, 3), label="ra"), data.draw(st.integers(1, 3), label="rb")
    batch = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=2), label="batch")
    axis = data.draw(st.integers(-min(ra, rb), min(ra, rb) - 1), label="axis")

    def shape(r):
        dims = [data.draw(st.sampled_from([1, b])) for b in batch[: r - 1]]
        return tuple(dims[: axis % r] + [k] + dims[axis % r :])

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape(ra)), rng.standard_normal(shape(rb))
    try:
        want = np.vecdot(a, b, axis=axis)
    except ValueError:
        with pytest.raises(ValueError, match="vecdot"):
            ft.vecdot(ft.asarray(a), ft.asarray(b), axis=axis)
        return
    np.testing.assert_allclose(ft.vecdot(ft.asarray(a), ft.asarray(b), axis=axis).numpy(), want)


_B = np.array([[True, False], [True, True]])
_V = np.array([True, False])


@pytest.mark.parametrize(
    "fn, ref",
    [
        (ft.vecdot, np.vecdot),  # raised TypeError from `mul`, not naming vecdot
        (lambda a, b: ft.outer(b, b), lambda a, b: np.outer(b, b)),  # TypeError from `mul`
        (lambda a, b: ft.einsum("ij->", a), lambda a, b: np.einsum("ij->", a)),  # `reduce_sum`
        (lambda a, b: ft.einsum("ij,j->j", a, b), lambda a, b: np.einsum("ij,j->j", a, b)),
    ],
)
def test_bool_products_follow_numpy(fn, ref):
    # As matmul of bools does (dot_general): products are `and`, sums are `or`.
    want = ref(_B, _V)
    for f in (fn, ft.jit(fn)):
        got = f(ft.asarray(_B), ft.asarray(_V))
        assert got.dtype == ft.bool and got.tolist() == want.tolist()


# ---------------------------------------------------------------------- tensordot


def test_tensordot_repeated_axes_error_names_tensordot():
    with pytest.raises(ValueError, match="tensordot: axes"):
        ft.tensordot(ft.ones((2, 3)), ft.ones((3, 3)), axes=([1, -1], [0, 1]))


@pytest.mark.parametrize("axes", [1.0, None, ([1], [0], [1])])
def test_tensordot_malformed_axes_error_names_tensordot(axes):
    with pytest.raises(TypeError, match="tensordot: axes must be an int or a pair"):
        ft.tensordot(ft.ones((2, 2)), ft.ones((2, 2)), axes=axes)


# ---------------------------------------------------------------------- weak Python scalars


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, s: ft.einsum("i,->i", x, s),
        lambda x, s: ft.einsum(",i", s, x),
        lambda x, s: ft.tensordot(x, s, axes=0),
    ],
)
@pytest.mark.parametrize("dtype, scalar", [(ft.float16, 2.0), (ft.bfloat16, 2), (ft.int32, 2)])
def test_python_scalar_operands_are_weak(fn, dtype, scalar):
    # API.md: Python scalars never widen a tensor (f16 with 2.0 was float32, i32 with 2 int64).
    x = ft.ones(3, dtype=dtype)
    for f in (fn, ft.jit(fn, static_argnums=1)):
        got = f(x, scalar)
        assert got.dtype == dtype and got.tolist() == [2, 2, 2]


# ---------------------------------------------------------------------- preferred_element_type


@pytest.mark.parametrize("dtype", [ft.float16, ft.bfloat16, ft.float32, ft.float64])
@pytest.mark.parametrize(
    "xs, pet, want",
    [
        ([1.5, 0.5], ft.int32, 2),  # 1.5*1.5 + 0.5*0.5 = 2.5; cast operands first: 1
        ([1.5, 0.5], ft.int8, 2),
        ([0.5, -0.5], ft.bool, False),  # 0.5*0.5 - 0.5*0.5 = 0; cast first: True
    ],
)
def test_dot_general_float_operands_with_int_result_convert_the_product(dtype, xs, pet, want):
    # As lax: computed in the operands' dtype, then converted to preferred_element_type.
    x = ft.asarray([xs], dtype=dtype)
    y = ft.asarray([[abs(v)] for v in xs], dtype=dtype)

    def f(a, b):
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=pet)

    for g in (f, ft.jit(f)):
        got = g(x, y)
        assert got.dtype == pet and got.tolist() == [[want]]
