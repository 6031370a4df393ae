"""Regressions for the top-level elementwise functions' argument handling."""

import numpy as np
import pytest

import fntorch as ft

_COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("name", _COMPARISONS)
@pytest.mark.parametrize(
    "dtype, scalar",
    [("int8", 1000), ("int8", -1000), ("uint8", -1), ("uint8", 256), ("int64", 2**63),
     ("uint64", -1), ("int16", -(2**70))],
)  # fmt: skip
def test_comparison_with_out_of_range_python_int_matches_numpy(name, dtype, scalar):
    # numpy 2 compares a Python int outside the tensor's dtype exactly; it used to be
    # a raw numpy OverflowError that named neither the function nor the argument.
    info = np.iinfo(dtype)
    x = np.array([info.min, 0, info.max], dtype=dtype)
    fn = getattr(ft, name)
    t = ft.asarray(x)
    outs = [
        (fn(t, scalar), getattr(np, name)(x, scalar)),
        (ft.jit(lambda v: fn(v, scalar))(t), getattr(np, name)(x, scalar)),
        (fn(scalar, t), getattr(np, name)(scalar, x)),
        (ft.jit(lambda v: fn(scalar, v))(t), getattr(np, name)(scalar, x)),
    ]
    for out, ref in outs:
        assert out.dtype == ft.bool and out.shape == (3,)
        np.testing.assert_array_equal(np.asarray(out), ref)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "floor_divide"])
def test_arithmetic_with_out_of_range_python_int_names_function(name):
    x = ft.asarray([1, 2], dtype=ft.int8)
    with pytest.raises(OverflowError, match=rf"^{name}: the Python int 300 .*int8 \(-128\.\.127\)"):
        getattr(ft, name)(x, 300)
    with pytest.raises(OverflowError, match=r"^add: the Python int -1 .*uint8"):
        ft.asarray([1], dtype=ft.uint8) + (-1)
    with pytest.raises(OverflowError, match=r"^add: the Python int 9223372036854775808 .*int64"):
        ft.add(ft.asarray([1]), 2**63)
    with pytest.raises(OverflowError, match=r"^less: the Python int 1148\d+\.\.\.\d+ is too large"):
        ft.less(ft.asarray([1.0]), 2**2000)


def test_where_shape_error_names_where_and_each_argument():
    with pytest.raises(ValueError, match=r"^where: condition \(2, 3\), x1 \(4,\) and x2 \(\)"):
        ft.where(ft.ones((2, 3)) > 0, ft.ones((4,)), 0.0)


@pytest.mark.parametrize("bad", ["a", None, object(), [1, "a"]])
def test_non_numeric_operand_error_names_function_and_argument(bad):
    x = ft.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^add: x2 must be a tensor .* got "):
        ft.add(x, bad)
    with pytest.raises(TypeError, match=r"^less: x1 must be a tensor .* got "):
        ft.less(bad, x)
    with pytest.raises(TypeError, match=r"^exp: x must be a tensor .* got "):
        ft.exp(bad)
    with pytest.raises(TypeError, match=r"^where: condition must be a tensor .* got "):
        ft.where(bad, x, x)


@pytest.mark.parametrize(
    "name, args",
    [("bitwise_and", ([1.0], [2.0])), ("bitwise_or", ([1], 1.5)), ("bitwise_xor", ([1.0], 1)),
     ("bitwise_left_shift", ([1.0], 1)), ("bitwise_right_shift", ([True], [True])),
     ("bitwise_invert", ([1.0],)), ("subtract", ([True], True)), ("negative", ([True],)),
     ("sign", ([True],)), ("abs", ([True],)), ("square", ([True],))],
)  # fmt: skip
def test_dtype_errors_name_the_function_called(name, args):
    # These used to carry the primitive's name ("and:", "sub:", "shift_right_logical:").
    args = [ft.asarray(a) if isinstance(a, list) else a for a in args]
    with pytest.raises(TypeError, match=rf"^{name}: expected an? .*dtype, got x"):
        getattr(ft, name)(*args)
    with pytest.raises(TypeError, match=rf"^{name}: "):
        ft.jit(getattr(ft, name))(*args)


@pytest.mark.parametrize("name", _COMPARISONS)
@pytest.mark.parametrize("dtype, scalar", [("int8", 1000), ("int8", -1000), ("uint8", -1)])
def test_jit_comparison_with_traced_python_int_matches_eager(name, dtype, scalar):
    # A Python int argument of jit is a weak int64 tracer; cast to int8 it wrapped
    # (1000 -> -24), so jit answered differently from eager and numpy.
    info = np.iinfo(dtype)
    x = np.array([info.min, 0, info.max], dtype=dtype)
    fn = getattr(ft, name)
    out = ft.jit(fn)(ft.asarray(x), scalar)
    assert out.dtype == ft.bool
    np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(x, scalar))
    out = ft.jit(lambda s, t: fn(s, t))(scalar, ft.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(scalar, x))


def test_operator_with_a_huge_python_int_names_the_function():
    # The operator's numpy fast path raised numpy's "int too large to convert to float".
    with pytest.raises(OverflowError, match="add: the Python int"):
        ft.asarray([1.0]) + 2**2000


def test_make_graph_keeps_python_scalar_arguments_weak():
    # They were staged as strong int64/float32 inputs: int8 + 1 computed in int64.
    g = ft.make_graph(lambda x, s: x + s)(ft.ones(2, dtype=ft.int8), 1)
    assert g.outvars[0].aval.dtype == ft.int8
    out = ft.fx.eval_graph(g, ft.ones(2, dtype=ft.int8), ft.asarray(1))[0]
    assert out.dtype == ft.int8 and out.tolist() == [2, 2]
