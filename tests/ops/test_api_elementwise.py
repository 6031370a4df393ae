"""The Array API elementwise functions against numpy, and the promotion table."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fntorch as ft
from fntorch.fx import dtypes as dt
from tests.ops.api_testing import FLOATS, INTS, SIGNED, arrays, assert_close, shapes, to_np

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY_FLOAT = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round,
    "abs": np.abs, "negative": np.negative, "positive": np.positive, "square": np.square,
    "sign": np.sign, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "signbit": np.signbit, "reciprocal": np.reciprocal, "exp2": np.exp2, "cbrt": np.cbrt,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": lambda x: _erf(x).astype(x.dtype),
    "relu": lambda x: np.maximum(x, 0),
}  # fmt: skip

# Tolerances for the functions whose fntorch form is a composition (not one numpy ufunc).
RTOL = {"log2": 1e-6, "log10": 1e-6, "sigmoid": 1e-6, "erf": 1e-6}


def _tol(name, dtype):
    r = RTOL.get(name)
    if r is None:
        return None
    return max(r, 2e-6) if dtype == dt.float32 else r * 1e-6


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
@given(data=st.data())
def test_unary_float(name, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(arrays(dtype, shapes()))
    with np.errstate(all="ignore"):
        expected = np.asarray(UNARY_FLOAT[name](x))
    got = getattr(ft, name)(ft.asarray(x))
    if name == "sigmoid" or name == "erf":
        expected = expected.astype(dtype)
    assert_close(got, expected, rtol=_tol(name, dtype), atol=1e-30)


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "log1p", "tanh", "sigmoid", "erf"])
def test_unary_float_of_ints_gives_float32(name):
    x = np.array([0, 1, 2, 3], np.int32)
    got = getattr(ft, name)(ft.asarray(x))
    assert got.dtype == ft.float32
    expected = np.asarray(UNARY_FLOAT[name](x.astype(np.float32))).astype(np.float32)
    assert_close(got, expected, rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["abs", "negative", "square", "sign", "floor", "ceil", "trunc", "round", "positive"]
)
@given(data=st.data())
def test_unary_int(name, data):
    dtype = data.draw(st.sampled_from(SIGNED))
    x = data.draw(arrays(dtype, shapes(), min_value=-100, max_value=100))
    assert_close(getattr(ft, name)(ft.asarray(x)), UNARY_FLOAT[name](x))


def test_bitwise_invert_and_logical_not():
    x = np.array([0, 1, -5, 127], np.int8)
    assert_close(ft.bitwise_invert(ft.asarray(x)), np.invert(x))
    b = np.array([True, False])
    assert_close(ft.bitwise_invert(ft.asarray(b)), ~b)
    assert_close(ft.logical_not(ft.asarray(x)), np.logical_not(x))


BINARY_FLOAT = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2, "hypot": np.hypot,
    "logaddexp": np.logaddexp, "copysign": np.copysign, "pow": np.power,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "floor_divide": np.floor_divide, "remainder": np.remainder,
    "nextafter": np.nextafter,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
@given(data=st.data())
def test_binary_float(name, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    (s1, s2), _ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    finite = name in ("floor_divide", "remainder")
    x1 = data.draw(arrays(dtype, s1, finite=finite))
    x2 = data.draw(arrays(dtype, s2, finite=finite))
    if finite:  # fmod-based: compare where the quotient is representable
        x1 = np.clip(x1, -1e6, 1e6).astype(dtype)
        x2 = np.where(np.abs(x2) < 1e-3, np.asarray(1.5, dtype), np.clip(x2, -1e6, 1e6))
        x2 = x2.astype(dtype)
    if name == "copysign":
        x2 = np.where(np.isnan(x2), np.asarray(1.0, dtype), x2)
    with np.errstate(all="ignore"):
        expected = np.asarray(BINARY_FLOAT[name](x1, x2))
    got = getattr(ft, name)(ft.asarray(x1), ft.asarray(x2))
    rtol = 1e-5 if dtype == dt.float32 else 1e-12
    if name == "hypot":
        rtol = 4e-7 if dtype == dt.float32 else 1e-15
    assert_close(got, expected, rtol=max(rtol, 1e-6 if dtype == dt.float32 else 0), atol=1e-30)


BINARY_INT = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum, "floor_divide": np.floor_divide,
    "remainder": np.remainder, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "equal": np.equal, "less": np.less,
    "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BINARY_INT))
@given(data=st.data())
def test_binary_int(name, data):
    dtype = data.draw(st.sampled_from(INTS))
    (s1, s2), _ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    x1 = data.draw(arrays(dtype, s1, min_value=-1000, max_value=1000))
    x2 = data.draw(arrays(dtype, s2, min_value=-1000, max_value=1000))
    if name in ("floor_divide", "remainder"):
        x2 = np.where(x2 == 0, np.asarray(3, dtype), x2)
    with np.errstate(all="ignore"):
        expected = np.asarray(BINARY_INT[name](x1, x2))
    assert_close(getattr(ft, name)(ft.asarray(x1), ft.asarray(x2)), expected)


@given(data=st.data())
def test_shifts(data):
    dtype = data.draw(st.sampled_from(INTS))
    x1 = data.draw(arrays(dtype, shapes(max_dims=2), min_value=-1000, max_value=1000))
    x2 = data.draw(arrays(dtype, (), min_value=0, max_value=6))
    assert_close(ft.bitwise_left_shift(ft.asarray(x1), ft.asarray(x2)), np.left_shift(x1, x2))
    assert_close(ft.bitwise_right_shift(ft.asarray(x1), ft.asarray(x2)), np.right_shift(x1, x2))


def test_python_semantics_of_floor_divide_and_remainder():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    assert to_np(ft.floor_divide(ft.asarray(a), ft.asarray(b))).tolist() == [3, -4, -4, 3]
    assert to_np(ft.remainder(ft.asarray(a), ft.asarray(b))).tolist() == [1, 1, -1, -1]
    f = ft.asarray([7.5, -7.5])
    assert to_np(ft.floor_divide(f, 2.0)).tolist() == [3.0, -4.0]
    assert to_np(ft.remainder(f, -2.0)).tolist() == [-0.5, -1.5]
    assert to_np(ft.remainder(ft.asarray([7, 250], dtype=ft.uint8), 3)).dtype == np.uint8


def test_special_values():
    nan, inf = math.nan, math.inf
    x = ft.asarray([nan, inf, -inf, 0.0, -0.0, 1.0])
    assert to_np(ft.isnan(x)).tolist() == [True, False, False, False, False, False]
    assert to_np(ft.isinf(x)).tolist() == [False, True, True, False, False, False]
    assert to_np(ft.isfinite(x)).tolist() == [False, False, False, True, True, True]
    assert to_np(ft.signbit(x)).tolist() == [False, False, True, False, True, False]
    assert to_np(ft.signbit(ft.asarray([-nan]))).tolist() == [True]  # a NaN's sign bit too
    assert to_np(ft.isnan(ft.asarray([1, 2]))).tolist() == [False, False]
    assert to_np(ft.isfinite(ft.asarray([1, 2]))).tolist() == [True, True]
    assert np.isnan(to_np(ft.maximum(ft.asarray([nan, 1.0]), 2.0))[0])
    assert to_np(ft.hypot(ft.asarray([inf, 0.0, 1e30]), ft.asarray([nan, 0.0, 1e30]))).tolist()[
        :2
    ] == [inf, 0.0]
    big = to_np(ft.hypot(ft.asarray([3e30]), ft.asarray([4e30])))[0]
    assert math.isclose(big, 5e30, rel_tol=1e-6)
    lae = to_np(ft.logaddexp(ft.asarray([-inf, inf, 1000.0]), ft.asarray([-inf, inf, 1000.0])))
    assert (
        lae[0] == -inf and lae[1] == inf and math.isclose(lae[2], 1000 + math.log(2), rel_tol=1e-6)
    )


def test_clip():
    x = np.array([-5, 0, 3, 9], np.int8)
    assert_close(ft.clip(ft.asarray(x), 0, 4), np.clip(x, 0, 4))
    assert_close(ft.clip(ft.asarray(x), max=2), np.minimum(x, 2))
    assert_close(ft.clip(ft.asarray(x), -1000, 1000), x)  # out-of-range bounds saturate
    f = np.array([np.nan, -2.0, 0.5, 3.0], np.float32)
    assert_close(ft.clip(ft.asarray(f), ft.asarray(-1.0), 1.0), np.clip(f, -1.0, 1.0))


def test_where():
    c = np.array([[True], [False]])
    x = np.arange(3, dtype=np.float32)
    got = ft.where(ft.asarray(c), ft.asarray(x), 0)
    assert_close(got, np.where(c, x, np.float32(0)))
    assert ft.where(ft.asarray([True]), ft.asarray([1], dtype=ft.int8), 2.5).dtype == ft.float32
    assert_close(ft.where(ft.asarray([1, 0]), 1.0, 2.0), np.array([1.0, 2.0], np.float32))


@given(data=st.data())
def test_gelu_and_friends(data):
    x = data.draw(arrays(dt.float64, shapes(max_dims=2), finite=True, min_value=-20, max_value=20))
    t = ft.asarray(x)
    exact = 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    assert_close(ft.gelu(t), exact, rtol=1e-10, atol=1e-12)
    assert_close(ft.gelu(t, approximate=True), approx, rtol=1e-10, atol=1e-12)
    assert_close(ft.relu(t), np.maximum(x, 0))


def test_gelu_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-5, 5, 41, dtype=np.float32)
    for approximate, mode in ((False, "none"), (True, "tanh")):
        expected = torch.nn.functional.gelu(torch.from_numpy(x), approximate=mode).numpy()
        assert_close(ft.gelu(ft.asarray(x), approximate=approximate), expected, atol=1e-6)


def test_erfinv_inverts_erf():
    x = np.linspace(-0.99, 0.99, 21)
    assert_close(ft.erf(ft.erfinv(ft.asarray(x))), x, rtol=1e-8, atol=1e-12)


def test_pow():
    x = ft.asarray([1, 2, 3], dtype=ft.int32)
    assert_close(ft.pow(x, 3), np.array([1, 8, 27], np.int32))
    assert_close(ft.pow(ft.asarray([4.0]), 0.5), np.array([2.0], np.float32))
    assert_close(ft.pow(2, ft.asarray([1.0, 3.0])), np.array([2.0, 8.0], np.float32))
    assert_close(ft.pow(ft.asarray([2.0]), -1), np.array([0.5], np.float32))


# ------------------------------------------------------------------------ promotion
B, I8, I16, I32, I64 = dt.bool_, dt.int8, dt.int16, dt.int32, dt.int64
U8, U16, U32, U64 = dt.uint8, dt.uint16, dt.uint32, dt.uint64
F16, BF16, F32, F64 = dt.float16, dt.bfloat16, dt.float32, dt.float64
_S, _U, _F = (I8, I16, I32, I64), (U8, U16, U32, U64), (F16, F32, F64)

# The Array API standard's table within a kind, written out: signed x signed, unsigned x
# unsigned, signed x unsigned (None: no common dtype -> TypeError), float x float.
_SU = {
    (I8, U8): I16, (I8, U16): I32, (I8, U32): I64, (I8, U64): None,
    (I16, U8): I16, (I16, U16): I32, (I16, U32): I64, (I16, U64): None,
    (I32, U8): I32, (I32, U16): I32, (I32, U32): I64, (I32, U64): None,
    (I64, U8): I64, (I64, U16): I64, (I64, U32): I64, (I64, U64): None,
}  # fmt: skip


def _expected(a, b):
    """API.md: the standard's table within a kind; int or bool with float -> the float;
    bool with int -> the int; uint64 with signed -> TypeError (None here)."""
    if a == b:
        return a
    if a == B:
        return b
    if b == B:
        return a
    fa, fb = a in (F16, BF16, F32, F64), b in (F16, BF16, F32, F64)
    if fa and fb:
        if {a, b} == {F16, BF16}:
            return F32
        return a if a.itemsize > b.itemsize else b
    if fa != fb:
        return a if fa else b
    if (a in _S) == (b in _S):
        return a if a.itemsize > b.itemsize else b
    return _SU[(a, b)] if a in _S else _SU[(b, a)]


ALL = (B,) + _S + _U + (F16, BF16, F32, F64)


@pytest.mark.parametrize("a", ALL, ids=str)
@pytest.mark.parametrize("b", ALL, ids=str)
def test_promotion_table(a, b):
    expected = _expected(a, b)
    x, y = ft.zeros((2,), dtype=a), ft.ones((1,), dtype=b)
    if expected is None:
        with pytest.raises(TypeError, match="uint64"):
            ft.result_type(a, b)
        with pytest.raises(TypeError, match="add"):
            ft.add(x, y)
        return
    assert ft.result_type(a, b) == expected
    assert ft.result_type(x, y) == expected
    assert ft.add(x, y).dtype == expected
    assert ft.multiply(y, x).dtype == expected
    assert ft.equal(x, y).dtype == ft.bool
    assert ft.where(ft.asarray([True]), x, y).dtype == expected


def test_table_spot_checks():
    assert _expected(I8, U8) == I16 and _expected(U8, I8) == I16
    assert _expected(I32, F16) == F16 and _expected(U64, F32) == F32
    assert _expected(U64, I8) is None


@pytest.mark.parametrize(
    "dtype, scalar, expected",
    [
        (F32, 2.0, F32), (F16, 2.0, F16), (BF16, 2.0, BF16), (F64, 2, F64),
        (I32, 1, I32), (I8, 1, I8), (U8, 1, U8), (I32, 1.5, F32), (I64, 1.5, F32),
        (B, 1, I64), (B, 1.5, F32), (B, True, B), (F32, True, F32), (I16, True, I16),
    ],
)  # fmt: skip
def test_python_scalars_are_weak(dtype, scalar, expected):
    x = ft.ones((3,), dtype=dtype)
    assert ft.result_type(x, scalar) == expected
    assert ft.add(x, scalar).dtype == expected
    assert ft.add(scalar, x).dtype == expected
    assert ft.multiply(x, scalar).dtype == expected


def test_true_division_of_ints_is_float32():
    assert ft.divide(ft.asarray([1, 2]), ft.asarray([2, 2])).dtype == ft.float32
    assert ft.divide(ft.asarray([1], dtype=ft.int8), 2).dtype == ft.float32
    assert ft.divide(ft.asarray([1], dtype=ft.int8), ft.asarray([2.0], dtype=ft.float64)).dtype == (
        ft.float64
    )
    assert ft.divide(ft.asarray([True]), True).dtype == ft.float32


def test_bool_add_is_or_and_multiply_is_and():
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert_close(ft.add(ft.asarray(a), ft.asarray(b)), a | b)
    assert_close(ft.multiply(ft.asarray(a), ft.asarray(b)), a & b)
    assert_close(ft.maximum(ft.asarray(a), ft.asarray(b)), np.maximum(a, b))


def test_scalar_scalar_ops():
    assert ft.add(1, 2).dtype == ft.int64
    assert ft.multiply(2.0, 3).dtype == ft.float32


def test_errors():
    with pytest.raises(ValueError, match=r"add.*\(2,\).*\(3,\)"):
        ft.add(ft.zeros(2), ft.zeros(3))
    with pytest.raises(TypeError):
        ft.bitwise_and(ft.zeros(2), ft.zeros(2))
    with pytest.raises(TypeError, match="uint64"):
        ft.add(ft.zeros(2, dtype=ft.uint64), ft.zeros(2, dtype=ft.int64))
    with pytest.raises(TypeError):
        ft.floor_divide(ft.asarray([True]), ft.asarray([True]))


def test_no_warnings_on_special_signbit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ft.signbit(ft.asarray([-0.0, 0.0]))


def test_zero_remainders_and_quotients_carry_pythons_signs():
    a = np.array([-0.0, 4.0, -4.0, -1.0, 0.0])
    b = np.array([1.0, -2.0, 2.0, 1.0, -3.0])
    want_r = np.array([x % y for x, y in zip(a, b)])
    want_q = np.array([x // y for x, y in zip(a, b)])
    for f in (lambda a, b: ft.remainder(a, b), ft.jit(lambda a, b: ft.remainder(a, b))):
        got = np.asarray(f(ft.asarray(a), ft.asarray(b)))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want_r))
    for f in (lambda a, b: ft.floor_divide(a, b), ft.jit(lambda a, b: ft.floor_divide(a, b))):
        got = np.asarray(f(ft.asarray(a), ft.asarray(b)))
        np.testing.assert_array_equal(got, want_q)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want_q))


def test_float64_to_bfloat16_rounds_once_eagerly_as_under_jit():
    # just above a halfway point between bfloat16 values: float32 first would round down
    x = ft.asarray(np.array([1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-9, 0.1]))
    eager = np.asarray(x.astype(ft.bfloat16), np.float64)
    jitted = np.asarray(ft.jit(lambda x: x.astype(ft.bfloat16))(x), np.float64)
    np.testing.assert_array_equal(eager, [1 + 2**-7, -(1 + 2**-7), 1.0, 0.10009765625])
    np.testing.assert_array_equal(eager, jitted)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_negative_integer_powers_do_not_underflow(dtype):
    x = ft.asarray(np.array([300.0, -300.0, 1000.0], np.float32)).astype(getattr(ft, dtype))
    want = (np.asarray(x, np.float32) ** -2.0).astype(np.asarray(x).dtype)
    for f in (lambda x: x**-2, ft.jit(lambda x: x**-2)):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
