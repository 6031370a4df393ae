"""``max_pool{1,2,3}d(return_indices=True)`` returns PyTorch's indices: the flat
position, in the input's spatial dims, of each window's first maximum (padding,
strides, dilation and ceil_mode included)."""

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")

CASES = [
    (2, dict(kernel_size=2)),
    (2, dict(kernel_size=3, stride=2, padding=1)),
    (2, dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1))),
    (2, dict(kernel_size=3, stride=2, ceil_mode=True)),
    (1, dict(kernel_size=3, stride=2, padding=1)),
    (3, dict(kernel_size=2, stride=2)),
]


@pytest.mark.parametrize("nsp,kw", CASES)
def test_max_pool_indices_match_torch(nsp, kw):
    rng = np.random.default_rng(nsp)
    x = rng.integers(-3, 4, (2, 3) + (7,) * nsp).astype(np.float32)  # ties: first max wins
    name = f"max_pool{nsp}d"
    out, idx = getattr(ft.nn.functional, name)(ft.asarray(x), return_indices=True, **kw)
    torch_pool = getattr(torch.nn.functional, name)
    ref, ref_idx = torch_pool(torch.from_numpy(x), return_indices=True, **kw)
    np.testing.assert_array_equal(np.asarray(out), ref.numpy())
    assert idx.dtype == ft.int64
    np.testing.assert_array_equal(np.asarray(idx), ref_idx.numpy())


def test_max_pool_module_with_indices_and_its_gradient():
    x = ft.asarray(np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32))
    pool = ft.nn.MaxPool2d(2, return_indices=True)
    out, idx = pool(x)
    assert out.shape == idx.shape == (1, 2, 2, 2)
    g = ft.grad(lambda v: ft.nn.functional.max_pool2d(v, 2, return_indices=True)[0].sum())(x)
    flat = np.asarray(g).reshape(1, 2, 16)
    np.testing.assert_array_equal(np.take_along_axis(flat, np.asarray(idx).reshape(1, 2, 4), 2), 1)
    assert flat.sum() == 8
