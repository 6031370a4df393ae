"""Creation functions: asarray's dtype and copy rules, and the constructors against numpy."""

import numpy as np
import pytest

import fntorch as ft
from tests.ops.api_testing import assert_close, to_np


def test_asarray_default_dtypes():
    assert ft.asarray(1.5).dtype == ft.float32
    assert ft.asarray(3).dtype == ft.int64
    assert ft.asarray(True).dtype == ft.bool
    assert ft.asarray([1, 2]).dtype == ft.int64
    assert ft.asarray([1, 2.5]).dtype == ft.float32
    assert ft.asarray([[True, False]]).dtype == ft.bool
    assert ft.asarray([True, 2]).dtype == ft.int64
    assert ft.asarray([]).dtype == ft.float32
    assert ft.asarray([[1.0], [2.0]]).shape == (2, 1)
    assert_close(ft.asarray([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint16", "int32", "float16", "float32", "float64", "uint64"]
)
def test_asarray_numpy_keeps_dtype(dtype):
    a = np.arange(4).astype(dtype)
    t = ft.asarray(a)
    assert t.dtype == np.dtype(dtype)
    assert_close(t, a)
    assert ft.asarray(np.float64(2.0)).dtype == ft.float64
    assert ft.asarray([np.float64(1.0), 2.0]).dtype == ft.float64


def test_asarray_bfloat16():
    a = np.arange(3).astype(ft.bfloat16)
    assert ft.asarray(a).dtype == ft.bfloat16


def test_asarray_never_shares_memory():
    a = np.arange(4.0)
    t = ft.asarray(a)
    a[0] = 100.0
    assert to_np(t)[0] == 0.0
    nested = [np.arange(2.0), np.arange(2.0)]
    t2 = ft.asarray(nested)
    nested[0][0] = 5.0
    assert to_np(t2)[0, 0] == 0.0
    with pytest.raises(ValueError, match="copy=False"):
        ft.asarray(a, copy=False)


def test_asarray_tensor_passthrough_and_conversion():
    t = ft.asarray([1.0, 2.0])
    assert ft.asarray(t) is t
    assert ft.asarray(t, copy=False) is t
    assert ft.asarray(t, dtype=ft.float64).dtype == ft.float64
    assert ft.tensor([1, 2], dtype=ft.float32).dtype == ft.float32
    assert ft.asarray([1.7, -1.7], dtype="int32").dtype == ft.int32
    assert ft.asarray(t, device="cpu") is t
    with pytest.raises(ValueError, match="copy=False"):
        ft.asarray(t, dtype=ft.int32, copy=False)


def test_asarray_nested_tensors():
    t = ft.asarray([ft.asarray(1.0), ft.asarray(2.0)])
    assert_close(t, np.array([1.0, 2.0], np.float32))
    t = ft.asarray([[ft.asarray(1), 2], [3, 4]])
    assert_close(t, np.array([[1, 2], [3, 4]]))


@pytest.mark.parametrize(
    "bad", [np.array([1 + 2j], np.clongdouble), np.array(["a"]), [object()], "abc"]
)
def test_asarray_rejects_unsupported_dtypes(bad):
    with pytest.raises(TypeError, match="asarray"):
        ft.asarray(bad)


def test_asarray_rejects_bad_dtype_argument():
    with pytest.raises(TypeError):
        ft.asarray([1], dtype="complex256")


def test_asarray_torch_tensor():
    torch = pytest.importorskip("torch")
    t = ft.asarray(torch.arange(3, dtype=torch.float32, requires_grad=True))
    assert_close(t, np.arange(3, dtype=np.float32))
    assert_close(ft.from_dlpack(torch.arange(3)), np.arange(3))


def test_from_numpy():
    a = np.arange(3, dtype=np.int16)
    assert_close(ft.from_numpy(a), a)
    with pytest.raises(TypeError):
        ft.from_numpy([1, 2])


def test_constructors():
    assert_close(ft.zeros((2, 3)), np.zeros((2, 3), np.float32))
    assert_close(ft.zeros(4, dtype=ft.int8), np.zeros(4, np.int8))
    assert_close(ft.ones((2,), dtype=ft.bool), np.ones(2, bool))
    assert ft.empty((0, 3)).shape == (0, 3)
    assert_close(ft.full((2, 2), 7), np.full((2, 2), 7, np.int64))
    assert_close(ft.full((2,), 1.5), np.full(2, 1.5, np.float32))
    assert_close(ft.full((2,), True), np.full(2, True))
    assert_close(ft.full((2,), 3, dtype=ft.float64), np.full(2, 3.0))
    assert_close(ft.full((2, 2), ft.asarray(2.0)), np.full((2, 2), 2.0, np.float32))
    x = ft.asarray([[1, 2]], dtype=ft.int16)
    assert_close(ft.zeros_like(x), np.zeros((1, 2), np.int16))
    assert_close(ft.ones_like(x, dtype=ft.float32), np.ones((1, 2), np.float32))
    assert_close(ft.full_like(x, 5), np.full((1, 2), 5, np.int16))
    assert ft.empty_like(x).shape == (1, 2)
    with pytest.raises(ValueError, match="negative"):
        ft.zeros((-1, 2))


@pytest.mark.parametrize(
    "args, kwargs",
    [((5,), {}), ((2, 7), {}), ((7, 2, -2), {}), ((0, 1, 0.1), {}), ((1.5,), {}),
     ((0, 10, 3), {"dtype": ft.float64}), ((3, 0), {}), ((-2.5, 2.5, 0.5), {})],
)  # fmt: skip
def test_arange(args, kwargs):
    got = ft.arange(*args, **kwargs)
    dtype = kwargs.get("dtype") or (
        np.float32 if any(isinstance(a, float) for a in args) else np.int64
    )
    assert_close(got, np.arange(*args).astype(dtype), rtol=1e-6, atol=1e-7)


def test_arange_errors():
    with pytest.raises(ValueError, match="step"):
        ft.arange(0, 5, 0)


def test_linspace_eye():
    assert_close(ft.linspace(0, 1, 5), np.linspace(0, 1, 5).astype(np.float32))
    assert_close(
        ft.linspace(0, 1, 4, endpoint=False),
        np.linspace(0, 1, 4, endpoint=False).astype(np.float32),
    )
    assert_close(ft.linspace(2, 3, 3, dtype=ft.float64), np.linspace(2, 3, 3))
    assert_close(ft.eye(3), np.eye(3, dtype=np.float32))
    assert_close(ft.eye(2, 4, k=1, dtype=ft.int32), np.eye(2, 4, 1, dtype=np.int32))
    assert_close(ft.eye(3, k=-1), np.eye(3, k=-1, dtype=np.float32))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3), (np.arange(2) * 1.5).astype(np.float32), np.arange(4)
    got = ft.meshgrid(ft.asarray(a), ft.asarray(b), ft.asarray(c), indexing=indexing)
    assert isinstance(got, tuple)
    expected = np.meshgrid(a, b, c, indexing=indexing)
    for g, e in zip(got, expected):
        assert_close(g, e)
    with pytest.raises(ValueError):
        ft.meshgrid(ft.zeros((2, 2)))


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (2, 4, 3)])
def test_tril_triu(k, shape):
    x = np.arange(np.prod(shape)).reshape(shape).astype(np.float32) + 1
    assert_close(ft.tril(ft.asarray(x), k=k), np.tril(x, k))
    assert_close(ft.triu(ft.asarray(x), k=k), np.triu(x, k))


def test_tril_rank_error():
    with pytest.raises(ValueError, match="tril"):
        ft.tril(ft.zeros(3))


def test_default_device():
    assert ft.zeros(2).device == ft.device("cpu")
    with ft.default_device("cpu"):
        assert ft.asarray([1.0]).device == ft.device("cpu")
