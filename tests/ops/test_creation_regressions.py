"""Regression tests for creation functions and the Tensor object (bugs found by hunting)."""

import numpy as np
import pytest

import fntorch as ft


@pytest.fixture
def torch():
    """PyTorch as the oracle; the tests that compare against it skip without it."""
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "args", [(-2.5, 2, 1), (0.3, 5, 1.5), (-1, 1, 0.4), (3.7, -2, -0.9), (0, 1, 0.1), (7, 2, -2)]
)
@pytest.mark.parametrize("dtype", [ft.int64, ft.int32, ft.int8])
def test_arange_integer_dtype_with_float_arguments_is_evenly_spaced_as_numpy(args, dtype):
    # numpy fixes the increment from the first two values cast to the dtype.
    assert ft.arange(*args, dtype=dtype).tolist() == np.arange(*args, dtype=dtype).tolist()


def test_arange_uint64_beyond_int64_is_exact():
    got = ft.arange(2**64 - 3, 2**64 - 1, dtype=ft.uint64)
    assert got.tolist() == [2**64 - 3, 2**64 - 2]


def test_arange_infinite_length_raises_value_error_naming_arange():
    with pytest.raises(ValueError, match="arange"):
        ft.arange(0, float("inf"))
    with pytest.raises(ValueError, match="arange"):
        ft.arange(float("nan"))


@pytest.mark.parametrize("args", [(-1, 1, 5), (0, -10, 4), (1.5, 2.5, 3), (-7, 3, 6), (0, 10, 4)])
def test_linspace_integer_dtype_rounds_down_as_numpy(args):
    got = ft.linspace(*args, dtype=ft.int32)
    assert got.tolist() == np.linspace(*args, dtype=np.int32).tolist()


def test_linspace_default_dtype_follows_start_and_stop():
    assert ft.linspace(0, 1, 3).dtype == ft.float32
    assert ft.linspace(ft.asarray(0, dtype=ft.int32), 1, 3).dtype == ft.float32
    got = ft.linspace(ft.asarray(0.0, dtype=ft.float64), 1, 3)
    assert got.dtype == ft.float64
    np.testing.assert_array_equal(got.numpy(), np.linspace(0.0, 1.0, 3))
    assert ft.linspace(np.float64(0.1), 0.3, 5).tolist() == np.linspace(0.1, 0.3, 5).tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda: ft.zeros((2.5,)),
        lambda: ft.ones((2, 1.0)),
        lambda: ft.full((2.5,), 1),
        lambda: ft.linspace(0, 1, 2.5),
        lambda: ft.eye(2.5),
        lambda: ft.eye(2, 3.0),
        lambda: ft.eye(2, k=0.5),
        lambda: ft.tril(ft.ones((2, 2)), k=0.5),
        lambda: ft.triu(ft.ones((2, 2)), k=1.0),
        lambda: ft.ones(6).reshape(2.0, 3),
        lambda: ft.ones(6).view(2, 3.5),
        lambda: ft.ones((2, 3)).permute(1.0, 0),
        lambda: ft.ones(2).new_zeros(2.5),
        lambda: ft.ones(2).repeat(2.0),
    ],
)
def test_integer_arguments_refuse_floats_instead_of_truncating(call):
    with pytest.raises(TypeError, match="int"):
        call()


def test_integer_arguments_accept_numpy_and_tensor_integers():
    assert ft.zeros((np.int64(2), ft.asarray(3))).shape == (2, 3)
    assert ft.eye(np.int32(2), np.int64(3), k=np.int8(1)).tolist() == np.eye(2, 3, 1).tolist()
    assert ft.linspace(0, 1, ft.asarray(3)).tolist() == [0.0, 0.5, 1.0]
    assert ft.ones(6).reshape(np.int64(2), 3).shape == (2, 3)


def test_eye_negative_size_raises_value_error_naming_eye():
    with pytest.raises(ValueError, match="eye"):
        ft.eye(-1)
    with pytest.raises(ValueError, match="eye"):
        ft.eye(2, -1)


def test_dlpack_consumer_cannot_write_into_the_tensor(torch):
    x = ft.asarray([1.0, 2.0])
    t = torch.from_dlpack(x)  # torch ignores DLPack's read-only flag
    t[0] = 99.0
    assert x.tolist() == [1.0, 2.0]
    n = np.from_dlpack(x)  # numpy would honour the flag; a copy is writable and harmless
    n[1] = 7.0
    assert x.tolist() == [1.0, 2.0]


def test_dlpack_copy_false_is_read_only_or_refused():
    x = ft.asarray([1.0, 2.0])
    assert not np.from_dlpack(x, copy=False).flags.writeable
    with pytest.raises(BufferError):
        x.__dlpack__(copy=False)  # a pre-1.0 consumer cannot be told "read-only"


@pytest.mark.parametrize("convert", [ft.asarray, ft.from_dlpack])
def test_torch_bfloat16_tensors_convert(torch, convert):
    src = torch.tensor([[1.5, -2.0078125], [3e38, float("-inf")]], dtype=torch.bfloat16)
    got = convert(src)
    assert got.dtype == ft.bfloat16 and got.shape == (2, 2)
    assert got.tolist() == src.float().tolist()
    assert convert(src.T).tolist() == src.T.float().tolist()
    assert ft.asarray(src.requires_grad_(True), dtype=ft.float32).dtype == ft.float32


@pytest.mark.parametrize("other", [[1.0, 2.0], (1.0, 2.0)])
def test_equality_with_a_sequence_raises_instead_of_a_silent_false(other):
    x = ft.asarray([1.0, 2.0])
    for compare in (lambda: x == other, lambda: x != other, lambda: other == x):
        with pytest.raises(TypeError, match="ft.asarray"):
            compare()
    with pytest.raises(TypeError, match="ft.asarray"):
        _ = x < other
    assert (x == ft.asarray(other)).tolist() == [True, True]
    assert (x == None) is False and (x != None) is True  # noqa: E711


@pytest.mark.parametrize("like", [ft.zeros_like, ft.ones_like, ft.empty_like, ft.full_like])
def test_like_functions_accept_array_likes_as_numpy(torch, like):
    args = (0,) if like is ft.full_like else ()
    for src in ([1, 2], [[1.5], [2.5]], 3.0, torch.ones(2, dtype=torch.int32)):
        got = like(src, *args)
        want = np.zeros_like(np.asarray(src))
        assert got.shape == want.shape
        assert got.dtype == ft.asarray(src).dtype


def test_format_spec_of_a_multi_element_tensor_raises_type_error_naming_format():
    x = ft.asarray([1.23456, 2.0])
    with pytest.raises(TypeError, match=r"format\(\).*shape \(2,\)"):
        f"{x:.2f}"
    assert f"{ft.asarray([1.23456]):.2f}" == "1.23"
    assert f"{x:>30}" == f"{str(x):>30}"


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.permute(dims=(1, 0)),
        lambda x: x.reshape(shape=(3, 2)),
        lambda x: x.view(size=(3, 2)),
        lambda x: x.expand(size=(2, 2, 3)),
        lambda x: x.repeat(repeats=(1, 2)),
        lambda x: x.flip(dims=(0,)),
    ],
)
def test_varargs_methods_accept_pytorchs_keyword(torch, call):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got, want = call(ft.asarray(a)), call(torch.tensor(a))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_varargs_method_refuses_both_spellings():
    with pytest.raises(TypeError, match="dims"):
        ft.zeros((2, 3)).permute(1, 0, dims=(1, 0))


@pytest.mark.parametrize("byteorder_dtype", [">f4", ">i8", ">f2", ">u2"])
def test_asarray_big_endian_numpy_data_becomes_native(byteorder_dtype):
    a = np.arange(3).astype(byteorder_dtype)  # as read from a big-endian file
    native = np.dtype(a.dtype.type)
    for got in (ft.asarray(a), ft.from_numpy(a), ft.asarray([a, a])[0], ft.asarray(memoryview(a))):
        assert got.dtype == native and got.dtype.isnative
        assert got.tolist() == [0, 1, 2]
    assert ft.asarray(a, dtype=ft.float64).tolist() == [0.0, 1.0, 2.0]
    assert ft.full((2,), a[1]).dtype == native


@pytest.mark.parametrize(
    "call, dtype",
    [
        (lambda: ft.asarray(2**63), "int64"),
        (lambda: ft.asarray([1, 2**63]), "int64"),
        (lambda: ft.asarray([1, -1], dtype=ft.uint8), "uint8"),
        (lambda: ft.full((2,), 2**63), "int64"),
        (lambda: ft.full((2,), 300, dtype=ft.uint8), "uint8"),
    ],
)
def test_out_of_range_python_int_error_names_the_function_and_dtype(call, dtype):
    with pytest.raises(OverflowError, match=rf"(asarray|full): .*{dtype}"):
        call()


def test_ragged_nested_list_error_names_asarray():
    with pytest.raises(ValueError, match="asarray: nested sequences must be rectangular"):
        ft.asarray([[1, 2], [3]])


@pytest.mark.parametrize("method", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan_as_pytorch(torch, method):
    nan = float("nan")
    a, b = [nan, 1.0, nan, 2.0, 3.0], [2.0, nan, nan, 1.0, 4.0]
    want = getattr(torch.tensor(a), method)(torch.tensor(b)).numpy()
    got = getattr(ft.asarray(a), method)(ft.asarray(b))
    np.testing.assert_array_equal(got.numpy(), want)
    jitted = ft.jit(lambda x, y: getattr(x, method)(y))(ft.asarray(a), ft.asarray(b))
    np.testing.assert_array_equal(jitted.numpy(), want)
    assert getattr(ft.asarray([1, 5]), method)(ft.asarray([3, 2])).dtype == ft.int64


def test_float_power_computes_in_float64_as_pytorch(torch):
    x = np.array([[2, 3], [-4, 5]])
    for exponent in (2, 0.5, ft.asarray([1.5, 2.0], dtype=ft.float32)):
        got = ft.asarray(x).float_power(exponent)
        te = torch.tensor(exponent.numpy()) if isinstance(exponent, ft.Tensor) else exponent
        want = torch.tensor(x).float_power(te)
        assert got.dtype == ft.float64
        # numpy's and PyTorch's float64 pow may differ by an ulp (2 ** 0.5 does here)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=4e-16)


@pytest.mark.parametrize(
    "shapes", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 3), (5, 4, 3)), ((2, 3), ())]
)
def test_inner_contracts_the_last_dims_as_pytorch(torch, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    got = ft.asarray(a).inner(ft.asarray(b))
    want = torch.tensor(a).inner(torch.tensor(b))
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dims", [(), []])
def test_flip_with_no_dims_listed_is_the_identity_as_pytorch(torch, dims):
    a = np.arange(6).reshape(2, 3)
    assert ft.asarray(a).flip(dims).tolist() == torch.tensor(a).flip(dims).tolist()
    assert ft.asarray(a).flip(dims=dims).tolist() == a.tolist()
    assert ft.asarray(a).flip(0).tolist() == torch.tensor(a).flip(0).tolist()


def test_index_select_with_a_0d_index_keeps_the_rank_as_pytorch(torch):
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for index in (np.array(2), np.array([2, 0])):
        got = ft.asarray(a).index_select(1, ft.asarray(index))
        want = torch.tensor(a).index_select(1, torch.tensor(index))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(ValueError, match="index_select"):
        ft.asarray(a).index_select(1, ft.asarray([[0]]))


def test_finfo_iinfo_of_the_wrong_kind_raise_type_error_naming_the_function():
    with pytest.raises(TypeError, match="finfo: expected a float dtype, got int32"):
        ft.finfo(ft.int32)
    with pytest.raises(TypeError, match="iinfo: expected an integer dtype, got float32"):
        ft.iinfo(ft.float32)
    with pytest.raises(TypeError, match="iinfo"):
        ft.iinfo(ft.bool)
    assert ft.finfo(ft.ones(2, dtype=ft.float16)).eps == np.finfo(np.float16).eps
    assert ft.iinfo(ft.ones(2, dtype=ft.int8)).max == 127


@pytest.mark.parametrize("dtype", [ft.float16, ft.bfloat16, ft.float64, ft.int32, ft.int8])
def test_arange_takes_the_dtype_of_tensor_arguments_as_of_numpy_scalars(dtype):
    stop = ft.asarray(3, dtype=dtype)
    assert ft.arange(stop).dtype == dtype
    assert ft.arange(stop).tolist() == [0, 1, 2]
    assert ft.arange(0, 1, ft.asarray(0.25, dtype=ft.float64)).dtype == ft.float64
    assert ft.arange(ft.asarray(True)).dtype == ft.int64


@pytest.mark.parametrize("shape, chunks", [((3, 0), 2), ((3, 0), 1), ((3, 5), 2), ((3, 4), 6)])
def test_chunk_piece_shapes_match_pytorch(torch, shape, chunks):
    got = ft.zeros(shape).chunk(chunks, 1)
    want = torch.zeros(shape).chunk(chunks, 1)
    assert [p.shape for p in got] == [tuple(p.shape) for p in want]


def test_finfo_gives_python_numbers_as_the_array_api_asks():
    for dtype, real in ((ft.float32, np.float32), (ft.complex64, np.float32),
                        (ft.float64, np.float64), (ft.bfloat16, ft.bfloat16)):  # fmt: skip
        info = ft.finfo(dtype)
        assert type(info.bits) is int and info.dtype == real
        for name in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(info, name)) is float, (dtype, name)
    assert ft.finfo(ft.float32).eps == float(np.finfo(np.float32).eps)
    assert ft.finfo(ft.complex128).max == float(np.finfo(np.float64).max)
