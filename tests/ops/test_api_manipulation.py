"""Manipulation functions against numpy, and their shape and axis errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.ops._api_manipulation import normalize_axis
from tests.ops.api_testing import arrays, assert_close, shapes, to_np

DTYPES = (np.float32, np.int32, np.bool_)


def _x(data, **kw):
    dtype = data.draw(st.sampled_from(DTYPES))
    return data.draw(arrays(dtype, shapes(**kw)))


@given(data=st.data())
def test_reshape(data):
    x = _x(data)
    size = x.size
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    d = data.draw(st.sampled_from(divisors))
    shape = data.draw(st.sampled_from([(d, -1), (-1, d), (size,), (d, size // d if d else 0)]))
    if size == 0:
        shape = (0, -1) if False else (0,)
    assert_close(ft.reshape(ft.asarray(x), shape), x.reshape(shape))


def test_reshape_errors():
    x = ft.zeros((2, 3))
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*\(4, 2\)"):
        ft.reshape(x, (4, 2))
    with pytest.raises(ValueError, match=r"reshape.*\(2, 3\).*\(4, -1\)"):
        ft.reshape(x, (4, -1))
    with pytest.raises(ValueError, match="reshape"):
        ft.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="reshape"):
        ft.reshape(ft.zeros((0, 3)), (-1, 0))


@given(data=st.data())
def test_permute_flip_moveaxis(data):
    x = _x(data, min_dims=1)
    perm = data.draw(st.permutations(range(x.ndim)))
    assert_close(ft.permute_dims(ft.asarray(x), perm), np.transpose(x, perm))
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    assert_close(ft.flip(ft.asarray(x), axis=ax), np.flip(x, ax))
    assert_close(ft.flip(ft.asarray(x)), np.flip(x))
    dst = data.draw(st.integers(-x.ndim, x.ndim - 1))
    assert_close(ft.moveaxis(ft.asarray(x), ax, dst), np.moveaxis(x, ax, dst))


@given(data=st.data())
def test_expand_squeeze(data):
    x = _x(data, max_side=2)
    ax = data.draw(st.integers(-x.ndim - 1, x.ndim))
    assert_close(ft.expand_dims(ft.asarray(x), axis=ax), np.expand_dims(x, ax))
    assert_close(ft.squeeze(ft.asarray(x)), np.squeeze(x))
    ones = [i for i, s in enumerate(x.shape) if s == 1]
    if ones:
        assert_close(ft.squeeze(ft.asarray(x), axis=ones[0]), np.squeeze(x, ones[0]))


def test_squeeze_and_axis_errors():
    with pytest.raises(ValueError, match=r"squeeze.*axis 1.*size 3"):
        ft.squeeze(ft.zeros((1, 3)), axis=1)
    with pytest.raises(ValueError, match=r"flip: axis 2 .*rank 2"):
        ft.flip(ft.zeros((1, 3)), axis=2)
    with pytest.raises(ValueError, match=r"expand_dims: axis -4 .*rank 3"):
        ft.expand_dims(ft.zeros((1, 3)), axis=-4)
    with pytest.raises(ValueError, match="permute_dims"):
        ft.permute_dims(ft.zeros((1, 3)), (0, 0))
    with pytest.raises(ValueError, match=r"my_fn: axis 5 .*rank 2"):
        normalize_axis("my_fn", 5, 2)
    assert normalize_axis("f", -1, 2) == 1


@given(data=st.data())
def test_roll(data):
    x = _x(data)
    shift = data.draw(st.integers(-6, 6))
    assert_close(ft.roll(ft.asarray(x), shift), np.roll(x, shift))
    if x.ndim:
        ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
        assert_close(ft.roll(ft.asarray(x), shift, axis=ax), np.roll(x, shift, axis=ax))
    if x.ndim >= 2:
        assert_close(ft.roll(ft.asarray(x), (1, -2), axis=(0, 1)), np.roll(x, (1, -2), (0, 1)))


@given(data=st.data())
def test_stack_concat_unstack(data):
    x = _x(data)
    y = data.draw(arrays(x.dtype, x.shape))
    ax = data.draw(st.integers(-x.ndim - 1, x.ndim))
    assert_close(ft.stack([ft.asarray(x), ft.asarray(y)], axis=ax), np.stack([x, y], ax))
    if x.ndim:
        ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
        assert_close(ft.concat([ft.asarray(x), ft.asarray(y)], axis=ax), np.concatenate([x, y], ax))
        assert_close(ft.cat([ft.asarray(x), ft.asarray(y)], axis=ax), np.concatenate([x, y], ax))
        parts = ft.unstack(ft.asarray(x), axis=ax)
        assert isinstance(parts, tuple) and len(parts) == x.shape[ax]
        for p, e in zip(parts, np.moveaxis(x, ax, 0)):
            assert_close(p, e)
    assert_close(ft.concat([ft.asarray(x), ft.asarray(y)], axis=None), np.concatenate([x, y], None))


def test_concat_promotes_and_errors():
    got = ft.concat([ft.zeros(2, dtype=ft.int8), ft.ones(1, dtype=ft.float32)])
    assert got.dtype == ft.float32
    with pytest.raises(ValueError, match=r"concat.*\(2, 3\).*\(2, 4\)"):
        ft.concat([ft.zeros((2, 3)), ft.zeros((2, 4))], axis=0)
    with pytest.raises(ValueError, match=r"stack.*\(2,\).*\(3,\)"):
        ft.stack([ft.zeros(2), ft.zeros(3)])


@given(data=st.data())
def test_broadcast(data):
    x = _x(data, max_side=3)
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    shape = tuple(lead) + tuple(s if s != 1 else data.draw(st.integers(1, 3)) for s in x.shape)
    assert_close(ft.broadcast_to(ft.asarray(x), shape), np.broadcast_to(x, shape))
    y = np.zeros(shape, np.float32)
    got = ft.broadcast_arrays(ft.asarray(x), ft.asarray(y))
    assert isinstance(got, list)
    for g, e in zip(got, np.broadcast_arrays(x, y)):
        assert_close(g, e)


def test_broadcast_errors():
    with pytest.raises(ValueError, match=r"broadcast_to.*\(3,\).*\(2, 4\)"):
        ft.broadcast_to(ft.zeros(3), (2, 4))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        ft.broadcast_arrays(ft.zeros(2), ft.zeros(3))
    assert ft.broadcast_shapes((2, 1), (1, 3), ()) == (2, 3)


@given(data=st.data())
def test_repeat_tile(data):
    x = _x(data, max_side=3)
    r = data.draw(st.integers(0, 3))
    assert_close(ft.repeat(ft.asarray(x), r), np.repeat(x, r))
    if x.ndim:
        ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
        assert_close(ft.repeat(ft.asarray(x), r, axis=ax), np.repeat(x, r, axis=ax))
        reps = data.draw(st.lists(st.integers(0, 3), min_size=x.shape[ax], max_size=x.shape[ax]))
        got = ft.repeat(ft.asarray(x), ft.asarray(np.array(reps, np.int64)), axis=ax)
        assert_close(got, np.repeat(x, reps, axis=ax))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    assert_close(ft.tile(ft.asarray(x), reps), np.tile(x, reps))


@given(data=st.data())
def test_pad(data):
    x = _x(data, min_dims=1, min_side=1)
    widths = [
        tuple(data.draw(st.lists(st.integers(0, 2), min_size=2, max_size=2))) for _ in x.shape
    ]
    assert_close(ft.pad(ft.asarray(x), widths), np.pad(x, widths))
    cv = data.draw(st.sampled_from([0, 1]))
    assert_close(ft.pad(ft.asarray(x), 1, constant_values=cv), np.pad(x, 1, constant_values=cv))
    for mode in ("edge", "reflect", "symmetric", "wrap"):
        w = [(min(lo, s - 1), min(hi, s - 1)) for (lo, hi), s in zip(widths, x.shape)]
        assert_close(ft.pad(ft.asarray(x), w, mode=mode), np.pad(x, w, mode=mode))


def test_pad_forms_and_errors():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert_close(ft.pad(ft.asarray(x), (1, 2)), np.pad(x, (1, 2)))
    assert_close(ft.pad(ft.asarray(x), ((1, 0), (0, 2)), constant_values=-1.0),
                 np.pad(x, ((1, 0), (0, 2)), constant_values=-1.0))  # fmt: skip
    assert_close(ft.pad(ft.asarray(x), 1, constant_values=((1, 2), (3, 4))),
                 np.pad(x, 1, constant_values=((1, 2), (3, 4))))  # fmt: skip
    with pytest.raises(ValueError, match="pad"):
        ft.pad(ft.asarray(x), ((1, 2, 3),))
    with pytest.raises(ValueError, match="mode"):
        ft.pad(ft.asarray(x), 1, mode="foo")
    with pytest.raises(ValueError, match="non-negative"):
        ft.pad(ft.asarray(x), -1)


@given(data=st.data())
def test_take(data):
    x = _x(data, min_dims=1, min_side=1)
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[ax]
    idx = data.draw(arrays(np.int64, shapes(max_dims=2), min_value=-n, max_value=n - 1))
    assert_close(ft.take(ft.asarray(x), ft.asarray(idx), axis=ax), np.take(x, idx, axis=ax))
    assert_close(ft.take(ft.asarray(x), idx, axis=ax), np.take(x, idx, axis=ax))
    flat = data.draw(arrays(np.int32, (3,), min_value=-x.size, max_value=x.size - 1))
    assert_close(ft.take(ft.asarray(x), ft.asarray(flat)), np.take(x, flat))


@given(data=st.data())
def test_take_along_axis(data):
    x = _x(data, min_dims=1, min_side=1)
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[ax]
    ishape = list(x.shape)
    ishape[ax] = data.draw(st.integers(0, 4))
    ishape = [
        s if i == ax % x.ndim or not data.draw(st.booleans()) else 1 for i, s in enumerate(ishape)
    ]
    idx = data.draw(arrays(np.int64, tuple(ishape), min_value=-n, max_value=n - 1))
    expected = np.take_along_axis(x, idx, axis=ax)
    assert_close(ft.take_along_axis(ft.asarray(x), ft.asarray(idx), axis=ax), expected)


def test_take_errors():
    with pytest.raises(TypeError, match="integer"):
        ft.take(ft.zeros(3), ft.asarray([0.5]), axis=0)
    with pytest.raises(ValueError, match="take_along_axis"):
        ft.take_along_axis(ft.zeros((2, 3)), ft.asarray([0]), axis=1)


def test_astype_matrix_transpose():
    x = np.array([[1.7, -1.7, 0.0]], np.float32)
    assert_close(ft.astype(ft.asarray(x), ft.int32), x.astype(np.int32))
    assert_close(ft.astype(ft.asarray(x), "bool"), x.astype(bool))
    assert_close(ft.matrix_transpose(ft.asarray(x)), x.T)
    assert ft.matrix_transpose(ft.zeros((4, 2, 3))).shape == (4, 3, 2)
    with pytest.raises(ValueError, match="matrix_transpose"):
        ft.matrix_transpose(ft.zeros(3))
    assert ft.astype(ft.asarray(x), "complex64").dtype == ft.complex64
    with pytest.raises(TypeError):
        ft.astype(ft.asarray(x), "complex256")
    assert to_np(ft.ravel(ft.asarray(x))).shape == (3,)
