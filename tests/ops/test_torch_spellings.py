"""PyTorch spellings at the top level and on Tensor, against PyTorch on the same data."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def same(got, want):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    np.testing.assert_array_equal(np.asarray(got), want.numpy())
    assert np.asarray(got).shape == tuple(want.shape)


def test_dtype_aliases():
    assert (ft.long, ft.int, ft.float, ft.double, ft.half, ft.short) == (
        ft.int64, ft.int32, ft.float32, ft.float64, ft.float16, ft.int16
    )  # fmt: skip
    assert ft.ones(2, dtype=ft.long).dtype == ft.int64
    assert (ft.cfloat, ft.cdouble) == (ft.complex64, ft.complex128)


def test_size_is_the_array_api_int():
    x = ft.asarray(np.zeros((2, 3)))
    assert x.size == 6 and isinstance(x.size, int) and x.size + 1 == 7 and x.size * 2 == 12
    assert type(x.size * 2) is int and 6 // x.size == 1 and list(range(x.size)) == list(range(6))
    assert np.zeros(x.size).shape == (6,) and hash(x.size) == hash(6) and repr(x.size) == "6"
    assert pickle.loads(pickle.dumps(x.size)) == 6 and copy.deepcopy(x.size) == 6
    assert f"{x.size:03d}" == "006" and ft.numel(x) == 6 and x.numel() == 6


def test_size_is_the_pytorch_method():
    x, t = ft.asarray(A), torch.from_numpy(A)
    assert x.size() == t.size() == (2, 3, 4) and isinstance(x.size(), ft.Size)
    assert x.size(1) == t.size(1) == 3 and x.size(-1) == 4
    assert repr(x.size()) == "fntorch.Size([2, 3, 4])" and x.size()[1:] == (3, 4)
    assert isinstance(x.size()[1:], ft.Size) and x.size().numel() == 24
    with pytest.raises(IndexError, match="dim 3 is out of range"):
        x.size(3)
    assert ft.Size([2, 3]) == torch.Size([2, 3])
    assert ft.nn.Parameter(ft.ones((2, 3))).size() == (2, 3)  # cells too


def test_size_under_transforms():
    x = ft.asarray(A)
    assert ft.jit(lambda a: a.reshape(a.size(0), -1))(x).shape == (2, 12)
    assert ft.vmap(lambda a: a * a.size)(x).shape == (2, 3, 4)
    assert ft.vmap(lambda a: a.reshape(a.size(0) * a.size(1)))(x).shape == (2, 12)


def test_top_level_functions():
    x, t = ft.asarray(A), torch.from_numpy(A)
    assert ft.is_tensor(x) and not ft.is_tensor(A) and ft.numel(x) == torch.numel(t)
    same(ft.flatten(x), torch.flatten(t))
    same(ft.flatten(x, 1), torch.flatten(t, 1))
    same(ft.flatten(x, 0, 1), torch.flatten(t, 0, 1))
    v, i = ft.topk(x, 2, dim=1)
    tv, ti = torch.topk(t, 2, dim=1)
    same((v, i), (tv, ti))
    same(ft.topk(x, 2, largest=False).values, torch.topk(t, 2, largest=False).values)
    same(ft.chunk(x, 2, dim=2), torch.chunk(t, 2, dim=2))
    same(ft.chunk(x, 3, 1), torch.chunk(t, 3, 1))
    same(ft.split(x, 3, dim=2), torch.split(t, 3, dim=2))
    same(ft.split(x, [1, 2], 1), torch.split(t, [1, 2], 1))
    with pytest.raises(TypeError, match="flatten: expected a Tensor"):
        ft.flatten([1, 2])


def test_cuda_queries():
    assert ft.cuda.is_available() is False and ft.cuda.device_count() == 0
    import sys

    assert "cupy" not in sys.modules


def test_tensor_methods_against_torch():
    x, t = ft.asarray(A), torch.from_numpy(A)
    assert x.dim() == t.dim() and x.numel() == t.numel()
    assert x.contiguous() is x
    same(x.split(2, 2), t.split(2, 2))
    same(x.chunk(2, 1), t.chunk(2, 1))
    same(x.view_as(ft.zeros((6, 4))), t.view_as(torch.zeros(6, 4)))
    y, u = ft.asarray(A[:, :1]), torch.from_numpy(A[:, :1])
    same(y.expand(2, -1, 3, 4), u.expand(2, -1, 3, 4))
    same(y.expand(-1, 5, -1), u.expand(-1, 5, -1))
    same(x.repeat(2, 1, 3), t.repeat(2, 1, 3))
    same(x.repeat(2, 1, 1, 1), t.repeat(2, 1, 1, 1))
    mask = A > 10
    same(x.masked_fill(ft.asarray(mask), -1.0), t.masked_fill(torch.from_numpy(mask), -1.0))
    same(x.narrow(2, 1, 2), t.narrow(2, 1, 2))
    same(x.narrow(1, -2, 2), t.narrow(1, -2, 2))
    same(x.clone(), t.clone())
    same(x.detach(), t.detach())
    same(x.cpu(), t.cpu())
    assert x.is_cuda is False and t.is_cuda is False
    same(x.T if x.ndim == 2 else x.mT, t.mT)
    same(ft.asarray(A[0]).T, torch.from_numpy(A[0]).T)


def test_new_and_casts_against_torch():
    x, t = ft.asarray(A).long(), torch.from_numpy(A).long()
    for name in ("new_zeros", "new_ones"):
        same(getattr(x, name)((2, 2)), getattr(t, name)((2, 2)))
    same(x.new_full((2,), 7), t.new_full((2,), 7))
    assert x.new_empty((3,)).dtype == ft.int64 and x.new_tensor([1.5]).dtype == ft.int64
    same(x.type_as(ft.zeros(1)), t.type_as(torch.zeros(1)))
    for cast in ("float", "double", "long", "int", "half", "bool"):
        same(getattr(ft.asarray(A), cast)(), getattr(torch.from_numpy(A), cast)())


def test_conversions_format_and_index():
    loss = ft.asarray(np.float32(0.123456))
    assert f"{loss:.4f}" == f"{torch.tensor(0.123456):.4f}" == "0.1235"
    assert [10, 20, 30][ft.asarray(2)] == 30 and list(range(ft.asarray(3))) == [0, 1, 2]
    with pytest.raises(TypeError):
        [1, 2][ft.asarray(1.0)]
    x = ft.asarray(A)
    assert x[0, 0, 1].item() == 1.0 and x.tolist() == A.tolist()
    assert x.numpy().flags.writeable is False
