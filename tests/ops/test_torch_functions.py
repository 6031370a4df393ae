"""PyTorch's top-level spellings (``torch.unsqueeze(x, 0)``, ``torch.sum(x, 1,
keepdim=True)``, ``torch.tril(x, diagonal=-1)``) and the Tensor methods model files call
(``p.data.normal_``, ``x.type()``, ``x.is_contiguous()``), against torch where it is
installed."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.ops._api_torch_funcs import _METHODS, _REDUCTIONS

X = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5.0


def test_method_functions_are_the_methods_with_the_tensor_first():
    x = ft.asarray(X)
    np.testing.assert_array_equal(ft.unsqueeze(x, 1).numpy(), x.unsqueeze(1).numpy())
    np.testing.assert_array_equal(ft.clamp(x, min=0.0).numpy(), np.maximum(X, 0))
    assert ft.transpose(x, 0, 1).shape == (4, 3) and ft.t(x).shape == (4, 3)
    with pytest.raises(TypeError, match="unsqueeze: expected a Tensor as input, got list"):
        ft.unsqueeze([1.0], 0)
    assert set(_METHODS) <= set(ft.__all__)


@pytest.mark.parametrize("name", _REDUCTIONS)
def test_reductions_take_dim_and_keepdim_as_pytorch(name):
    torch = pytest.importorskip("torch")
    x, t = ft.asarray(X), torch.tensor(X)
    fn, want_fn = getattr(ft, name), getattr(torch, name)
    if name in ("all", "any"):
        x, t = x > 0, t > 0
    kinds = [((1,), {}), ((), {"dim": 0})]
    if name not in ("softmax", "log_softmax", "cumsum"):
        kinds.append(((1,), {"keepdim": True}))
    for args, kwargs in kinds:
        got, want = fn(x, *args, **kwargs), want_fn(t, *args, **kwargs)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=f"{args}{kwargs}")
    with pytest.raises(TypeError, match=f"{name}: give the dims once"):
        fn(x, 1, axis=1)


def test_reductions_keep_the_array_api_spelling():
    x = ft.asarray(X)
    assert ft.sum(x, axis=1, keepdims=True).shape == (3, 1)
    assert float(ft.sum(x)) == float(X.sum())
    with pytest.raises(TypeError, match="keepdims= or keepdim="):
        ft.mean(x, axis=0, keepdims=True, keepdim=True)


def test_tril_triu_take_diagonal_and_k():
    x = ft.ones((3, 3))
    np.testing.assert_array_equal(ft.tril(x, diagonal=-1).numpy(), np.tril(np.ones((3, 3)), -1))
    np.testing.assert_array_equal(ft.triu(x, 1).numpy(), np.triu(np.ones((3, 3)), 1))
    np.testing.assert_array_equal(ft.tril(x, k=1).numpy(), np.tril(np.ones((3, 3)), 1))
    with pytest.raises(TypeError, match="tril: give the diagonal once"):
        ft.tril(x, 1, k=1)


def test_isclose_allclose_lerp_as_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 2.0, np.inf, np.nan, 1e-9], np.float32)
    b = np.array([1.0 + 1e-6, 2.1, np.inf, np.nan, 0.0], np.float32)
    for equal_nan in (False, True):
        got = ft.isclose(ft.asarray(a), ft.asarray(b), equal_nan=equal_nan).numpy()
        want = torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=equal_nan).numpy()
        np.testing.assert_array_equal(got, want)
    assert ft.allclose(ft.asarray(a[:2]), ft.asarray(a[:2]) + 1e-7) is True
    assert ft.ones(2).allclose(ft.zeros(2)) is False
    np.testing.assert_allclose(
        ft.lerp(ft.asarray(a[:2]), ft.asarray(b[:2]), 0.3).numpy(),
        torch.lerp(torch.tensor(a[:2]), torch.tensor(b[:2]), 0.3).numpy(),
    )


def test_random_in_place_methods_write_cells_only():
    ft.manual_seed(0)
    p = ft.nn.Parameter(ft.zeros(200))
    p.data.uniform_(-0.5, 0.5)
    assert float(p.max()) <= 0.5 and float(p.min()) >= -0.5 and float(p.abs().sum()) > 0
    p.data.normal_(3.0, 0.1)
    assert abs(float(p.mean()) - 3.0) < 0.05
    with pytest.raises(TypeError, match="Tensor.normal_: fntorch tensors are immutable"):
        ft.zeros(2).normal_()
    with pytest.raises(RuntimeError, match="in-place operation"):
        p.uniform_()
    with ft.no_grad():
        p.uniform_(0.0, 1.0)
    assert float(p.min()) >= 0.0


def test_small_tensor_methods():
    x = ft.ones((2, 3))
    assert x.T.is_contiguous() and x.nelement() == 6
    assert x.type() == "fntorch.FloatTensor" and x.type(ft.int64).dtype == ft.int64
    assert ft.arange(3).type() == "fntorch.LongTensor"
    assert x.equal(ft.ones((2, 3))) and not x.equal(ft.ones(3))
    assert x.data.tolist() == x.tolist() and type(x.data) is ft.Tensor
    assert ft.asarray([1, 2]).outer(ft.asarray([3, 4])).tolist() == [[3, 4], [6, 8]]
    p = ft.nn.Parameter(ft.ones(2))
    assert type(p.data).__name__ == "CellAlias"  # a cell's data is still its alias
