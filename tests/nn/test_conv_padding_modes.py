"""Conv1d/Conv2d with ``padding_mode`` reflect, replicate and circular: outputs and
gradients equal PyTorch's, ``repr`` as PyTorch's, unknown modes named."""

import numpy as np
import pytest

import fntorch as ft

from .same_weights import _same_weights

torch = pytest.importorskip("torch")

SETTINGS = [
    ("Conv2d", (2, 3, 7, 6), dict(padding=2)),
    ("Conv2d", (1, 3, 6, 6), dict(padding="same", dilation=2)),
    ("Conv2d", (1, 3, 6, 7), dict(padding=(1, 2), stride=2)),
    ("Conv1d", (2, 3, 9), dict(padding=1)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(("name", "shape", "kw"), SETTINGS)
def test_padding_modes_equal_torchs(mode, name, shape, kw):
    theirs = getattr(torch.nn, name)(3, 4, 3, padding_mode=mode, **kw)
    ours = getattr(ft.nn, name)(3, 4, 3, padding_mode=mode, **kw)
    _same_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    xf = ft.tensor(x, requires_grad=True)
    yt, yf = theirs(xt), ours(xf)
    np.testing.assert_allclose(yf.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    (yt**2).sum().backward()
    (yf**2).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-4)  # fmt: skip
    assert repr(ours) == repr(theirs)


def test_an_unknown_padding_mode_is_named():
    with pytest.raises(ValueError, match="padding_mode='wrap'"):
        ft.nn.Conv2d(1, 1, 3, padding_mode="wrap")
