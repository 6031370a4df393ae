"""Regressions found by comparing integer, bool and conversion semantics eagerly, under
``jit`` (compiled kernels) and against numpy / JAX: each test names its oracle."""

import ml_dtypes
import numpy as np
import pytest

import fntorch as ft

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _both(fn, *args):
    """``fn`` eagerly and under jit, as numpy arrays."""
    return np.asarray(fn(*args)), np.asarray(ft.jit(fn)(*args))


def _saturating_reference(x, dtype):
    # XLA's convert_element_type (what jax.numpy's astype gives): toward zero, NaN -> 0,
    # out of range -> the nearest bound.
    info = np.iinfo(dtype)
    out = []
    for v in np.asarray(x, np.float64).tolist():
        if v != v:
            out.append(0)
        elif v >= info.max:
            out.append(info.max)
        elif v <= info.min:
            out.append(info.min)
        else:
            out.append(int(v))
    return np.array(out, dtype)


@pytest.mark.parametrize("src", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", INTS, ids=lambda d: np.dtype(d).name)
def test_float_to_int_saturates_eager_and_jit(src, dst):
    # numpy's cast is C's (x86: INT_MIN for NaN, wrapping for narrow types, garbage for
    # negative -> unsigned) and LLVM's fptosi is poison there: eager and jit disagreed.
    big = [1e30, -1e30, 3e9, -3e9, 70000.0, 2.0**63, -(2.0**63), 2.0**64, -0.99, 32767.5,
           2147483647.9, -2147483648.9, 4294967295.5, 65535.5, -32768.5]  # fmt: skip
    vals = big + [np.nan, np.inf, -np.inf, 300.0, -300.0, -128.9, 127.9, 255.5, -1.0, -0.5,
                  0.5, -0.0, 7.75]  # fmt: skip
    x = np.array(vals, np.float64).astype(src)
    expected = _saturating_reference(x, dst)
    eager, jitted = _both(lambda t: t.astype(np.dtype(dst)), ft.asarray(x))
    assert eager.dtype == jitted.dtype == np.dtype(dst)
    np.testing.assert_array_equal(eager, expected)
    np.testing.assert_array_equal(jitted, expected)


def test_float_to_int_methods_saturate():
    x = ft.asarray([float("nan"), 1e30, -1e30, -2.5])
    assert x.long().tolist() == [0, 2**63 - 1, -(2**63), -2]
    assert ft.jit(lambda t: t.int())(x).tolist() == [0, 2**31 - 1, -(2**31), -2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("y", [3, 5, 7, 13, 64, -3, -7])
def test_float_integer_pow_eager_matches_jit(dtype, y):
    # JAX (eager and jit) and the compiled kernel square and multiply; the eager impl
    # called np.power, rounded once: 5.5 ** 7 in float32 was 152243.515625, not .53125.
    x = np.array([5.5, -7.25, 1.1, 3.3, 0.7, -1.3, 2.9, 1e-3], dtype)
    eager, jitted = _both(lambda t: t**y, ft.asarray(x))
    np.testing.assert_array_equal(eager, jitted)
    if y == 7 and dtype == np.float32:
        assert eager[0] == np.float32(152243.53125)


@pytest.mark.parametrize("jit", [False, True])
def test_bfloat16_sign_of_negative_zero_is_positive_zero(jit):
    # As numpy's float16/32/64 loops and the compiled kernel: ml_dtypes' bfloat16 sign
    # kept -0.0, so eager and jit disagreed on bfloat16 only.
    x = ft.asarray(np.array([-0.0, 0.0, -2.0, 3.0, np.nan], ml_dtypes.bfloat16))
    out = np.asarray((ft.jit(ft.sign) if jit else ft.sign)(x)).astype(np.float32)
    np.testing.assert_array_equal(np.signbit(out[:2]), [False, False])
    np.testing.assert_array_equal(out, [0.0, 0.0, -1.0, 1.0, np.nan])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
@pytest.mark.parametrize("fn", [ft.maximum, ft.minimum, ft.nextafter])
def test_signed_zero_tie_takes_second_eager_and_jit(dtype, fn):
    # numpy's float32/float64 loops (and the kernel; C's nextafter(x, y) is y when
    # x == y) return the second of two equal zeros; numpy's float16 loops returned the
    # first, so eager and jit disagreed.
    x = ft.asarray(np.array([-0.0, 0.0, np.nan, 1.0], dtype))
    y = ft.asarray(np.array([0.0, -0.0, 1.0, np.nan], dtype))
    eager, jitted = _both(fn, x, y)
    eager, jitted = eager.astype(np.float32), jitted.astype(np.float32)
    np.testing.assert_array_equal(np.signbit(eager[:2]), [False, True])
    np.testing.assert_array_equal(np.signbit(jitted[:2]), np.signbit(eager[:2]))
    np.testing.assert_array_equal(eager[2:], [np.nan, np.nan])
    np.testing.assert_array_equal(jitted[2:], [np.nan, np.nan])


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64], ids=str)
def test_integer_division_and_remainder_by_zero_are_zero_as_numpy(dtype):
    # lax.rem's x % 0 == x leaked through: 5 % 0 was 5 and -7 // 0 was -2.
    a = np.array([5, 7, 0, 100, 1], dtype)
    b = np.array([0, 2, 0, 3, 0], dtype)
    with np.errstate(all="ignore"):
        want = (a // b, a % b)
    for f in (lambda x, y: (x // y, x % y), ft.jit(lambda x, y: (x // y, x % y))):
        got = f(ft.asarray(a), ft.asarray(b))
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])


def test_half_floor_divide_is_computed_in_float32_as_numpy():
    x = np.array([-2280.0, 7.0], np.float16)
    y = np.array([3.3515625, 0.1], np.float16)
    np.testing.assert_array_equal(np.asarray(ft.asarray(x) // ft.asarray(y)), x // y)


def test_an_integer_tensor_to_a_negative_power_raises_as_numpy():
    with pytest.raises(ValueError, match="negative power"):
        ft.asarray([2, 1]) ** -1  # was silently [0, 1]
    assert (ft.asarray([2.0, 4.0]) ** -1).tolist() == [0.5, 0.25]


def test_asarray_with_a_dtype_casts_as_astype():
    a = np.array([np.nan, -1.0, 300.0])
    assert ft.asarray(a, dtype=ft.uint8).tolist() == ft.asarray(a).astype(ft.uint8).tolist()
    # one rounding to bfloat16 (numpy's astype went through float32: 1.0)
    assert float(ft.asarray(np.array([1 + 2**-8 + 2**-40]), dtype=ft.bfloat16)) == 1.0078125


def test_clip_tensor_bounds_saturate_into_the_integer_dtype():
    x = ft.asarray(np.array([1, 5, 200], np.uint8))
    assert ft.clip(x, ft.asarray([-1, 300, 0])).tolist() == [1, 255, 200]  # was [255, 44, 200]
    assert ft.clip(x, None, ft.asarray([-1, 300, 100])).tolist() == [0, 5, 100]
    assert ft.clip(ft.asarray([1, 5]), ft.asarray([3.5, 2.5])).tolist() == [4, 5]  # ceil, as 3.5
