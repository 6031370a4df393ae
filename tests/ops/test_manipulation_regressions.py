"""Regressions from a bug hunt over indexing and array manipulation (eager, jit, vmap, grad)."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.ops import lax


# A start index past int32's range is clamped like any other out-of-range start: the
# batched window gather narrowed it to int32 first, so 2**32 + 1 read element 1.
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_vmap_dynamic_index_clamps_wide_starts(dtype):
    x = ft.arange(5.0)
    starts = np.array([2**32 + 1, 2**63 - 1, 3], dtype)
    unbatched = [ft.jit(lambda i: x[i])(ft.asarray(s)).item() for s in starts]
    assert unbatched == [4.0, 4.0, 3.0]
    assert ft.vmap(lambda i: x[i])(ft.asarray(starts)).tolist() == unbatched
    ys = ft.stack([x, x, x])
    assert ft.vmap(lambda y, i: y[i])(ys, ft.asarray(starts)).tolist() == unbatched
    # dynamic_update_slice shares the batched window: the update lands at the clamped start
    upd = ft.vmap(lambda y, i: lax.dynamic_update_slice(y, ft.asarray([-1.0]), (i,)))
    out = upd(ys, ft.asarray(starts))
    assert out[:, 4].tolist() == [-1.0, -1.0, 4.0]
    assert out[2, 3].item() == -1.0


# Shape, count and width arguments were read with int(), which truncated 2.5 to 2 and
# read the string "23" as the shape (2, 3); numpy raises TypeError for both.
@pytest.mark.parametrize(
    "call, where",
    [
        (lambda x: ft.reshape(x, (2.5, 3)), "reshape"),
        (lambda x: ft.reshape(x, "23"), "reshape"),
        (lambda x: x.reshape(3.0, 2), "reshape"),
        (lambda x: ft.broadcast_to(x, (2.0, 2, 3)), "broadcast_to"),
        (lambda x: ft.tile(x, (2.5,)), "tile"),
        (lambda x: ft.expand_dims(x, axis=0.5), "expand_dims"),
        (lambda x: ft.roll(x, 1.5), "roll"),
        (lambda x: ft.pad(x, 1.5), "pad"),
        (lambda x: ft.pad(x, ((1.0, 0), (0, 2))), "pad"),
        (lambda x: ft.repeat(x, np.array([1.5, 1.0]), axis=0), "repeat"),
        (lambda x: ft.repeat(x, 2.5), "repeat"),
    ],
)
def test_non_integer_sizes_raise_type_error(call, where):
    x = ft.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match=where):
        call(x)


def test_integer_sizes_still_accepted():
    x = ft.arange(6.0).reshape(2, 3)
    assert ft.reshape(x, (np.int64(3), ft.asarray(2))).shape == (3, 2)
    assert ft.reshape(x, ft.asarray([6])).shape == (6,)
    assert ft.broadcast_to(x, np.array([2, 2, 3])).shape == (2, 2, 3)
    assert ft.pad(x, np.array([[1, 0], [0, 2]], np.uint8)).shape == (3, 5)
    assert ft.pad(x, ft.asarray(1)).shape == (4, 5)
    assert ft.repeat(x, ft.asarray([2, 0]), axis=0).shape == (2, 3)
    assert ft.tile(x, np.int32(2)).shape == (2, 6)


# A traced slice bound failed inside slice.indices with "__index__() needs a concrete
# value", which names neither indexing nor the slice nor a way out.
@pytest.mark.parametrize(
    "f", [lambda x, i: x[i:], lambda x, i: x[::i], lambda x, i: x.at[:i].set(0.0)]
)
def test_traced_slice_bound_error_names_slicing(f):
    x = ft.arange(6.0)
    with pytest.raises(ft.ConcretizationError, match=r"indexing: slice bounds must be concrete"):
        ft.jit(f)(x, ft.asarray(2))
    # the suggested fix traces
    window = ft.jit(lambda x, i: x[ft.arange(3) + i])(x, ft.asarray(2))
    assert window.tolist() == [2.0, 3.0, 4.0]


def test_traced_size_still_raises_concretization_error():
    x = ft.arange(6.0)
    with pytest.raises(ft.ConcretizationError, match="static"):
        ft.jit(lambda x, s: ft.reshape(x, (s, 3)))(x, ft.asarray(2))


# jnp.roll takes a traced shift (a window of concat([x, x])); ft.roll refused it.
@pytest.mark.parametrize("shift", [2, -8, 0, 6, 13])
def test_roll_traced_shift_matches_numpy(shift):
    a = np.arange(12.0).reshape(3, 4)
    x = ft.asarray(a)
    out = ft.jit(lambda x, s: ft.roll(x, s))(x, ft.asarray(shift))
    np.testing.assert_array_equal(out, np.roll(a, shift))
    out = ft.jit(lambda x, s: ft.roll(x, (s, -1), axis=(1, 0)))(x, ft.asarray(np.int8(shift)))
    np.testing.assert_array_equal(out, np.roll(a, (shift, -1), axis=(1, 0)))


def test_roll_traced_shift_under_vmap_and_grad():
    a = np.arange(6.0)
    x = ft.asarray(a)
    shifts = [1, -8, 0, 6, 13]
    out = ft.vmap(lambda s: ft.roll(x, s))(ft.asarray(shifts))
    np.testing.assert_array_equal(out, np.stack([np.roll(a, s) for s in shifts]))
    g = ft.jit(ft.grad(lambda x, s: (ft.roll(x, s) * ft.arange(6.0)).sum()))(x, ft.asarray(2))
    np.testing.assert_array_equal(g, np.roll(np.arange(6.0), -2))
    with pytest.raises(TypeError, match="roll: shift"):
        ft.jit(lambda x, s: ft.roll(x, s))(x, ft.asarray(1.0))


# numpy's broadcast error ("operands could not be broadcast together with remapped
# shapes") came through as it was, naming neither pad nor constant_values.
def test_pad_constant_values_shape_error_names_pad():
    x = ft.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"pad: constant_values .* does not fit .*\(2, 3, 4\)"):
        ft.pad(x, 1, constant_values=((1, 2), (3, 4)))
    cv = ((1, 2), (3, 4))
    out = ft.pad(ft.zeros((1, 1)), 1, constant_values=cv)
    np.testing.assert_array_equal(out, np.pad(np.zeros((1, 1)), 1, constant_values=cv))


# ft.pad is numpy's (API.md), but it refused numpy's statistic and ramp modes, "empty",
# and reflect_type="odd".
PAD_MODES = [
    ("maximum", {}),
    ("minimum", {"stat_length": (1, 3)}),
    ("mean", {}),
    ("mean", {"stat_length": ((2, 1), (3, 10))}),
    ("median", {}),
    ("median", {"stat_length": 2}),
    ("linear_ramp", {}),
    ("linear_ramp", {"end_values": ((1, -2), (7, 3))}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}),
    ("empty", {}),
]


@pytest.mark.parametrize("mode, kw", PAD_MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_pad_numpy_modes_match_numpy(mode, kw, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 40).astype(dtype)
    width = ((2, 7), (5, 1))  # wider than the axes: reflections take several rounds
    ref = np.pad(a, width) if mode == "empty" else np.pad(a, width, mode=mode, **kw)
    out = ft.pad(ft.asarray(a), width, mode=mode, **kw)
    assert out.dtype == ref.dtype
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(out, ref, rtol=1e-6)
    else:
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("mode, kw", [PAD_MODES[3], PAD_MODES[5], PAD_MODES[7], PAD_MODES[9]])
def test_pad_numpy_modes_under_jit_vmap_grad(mode, kw):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4))
    width = ((2, 7), (5, 1))

    def f(x):
        return ft.pad(x, width, mode=mode, **kw)

    ref = np.stack([np.pad(b, width, mode=mode, **kw) for b in a])
    np.testing.assert_allclose(ft.jit(ft.vmap(f))(ft.asarray(a)), ref, rtol=1e-12)
    w = rng.standard_normal(ref.shape[1:])

    def loss(x):
        return (f(x) * w).sum()

    g = ft.jit(ft.grad(loss))(ft.asarray(a[0]))
    fd = np.zeros_like(a[0])
    for k in range(a[0].size):
        e = np.zeros_like(a[0])
        e.flat[k] = 1e-6
        fd.flat[k] = (
            np.sum(np.pad(a[0] + e, width, mode=mode, **kw) * w)
            - np.sum(np.pad(a[0] - e, width, mode=mode, **kw) * w)
        ) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_pad_mode_argument_errors():
    x = ft.asarray([1.0, np.nan, 3.0, 2.0])
    assert np.isnan(ft.pad(x, 1, mode="median")[0].item())  # numpy's median sees the NaN
    with pytest.raises(ValueError, match="stat_length of 0"):
        ft.pad(x, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="stat_length must be non-negative"):
        ft.pad(x, 1, mode="mean", stat_length=-1)
    with pytest.raises(TypeError, match="stat_length"):
        ft.pad(x, 1, mode="mean", stat_length=2.5)
    with pytest.raises(ValueError, match="reflect_type"):
        ft.pad(x, 1, mode="reflect", reflect_type="weird")
    with pytest.raises(ValueError, match="unsupported mode 'foo'"):
        ft.pad(x, 1, mode="foo")
