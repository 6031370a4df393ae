"""A scaled mixed-precision step on a second device (the fake one stands in for a GPU):
the scale, the casts and the unscaled gradients stay on the parameters' device."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.nn import functional as F
from tests.devices.fake import fake_device


@pytest.fixture(scope="module")
def fake():
    yield from fake_device()


def test_scaled_step_under_autocast_on_a_second_device(fake):
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((16, 8)).astype(np.float32), np.arange(16) % 8
    model = ft.nn.Linear(8, 8).to(fake)
    opt = ft.optim.SGD(model.parameters(), lr=0.1)
    scaler = ft.amp.GradScaler("cpu", init_scale=2.0**10)
    before = np.asarray(model.weight.to("cpu"))
    with ft.autocast("cpu", dtype=ft.float16):
        loss = F.cross_entropy(model(ft.asarray(x).to(fake)), ft.asarray(t).to(fake))
    scaler.scale(loss).backward()
    assert model.weight.grad.dtype == ft.float32 and model.weight.grad.device is fake
    scaler.step(opt)
    scaler.update()
    assert model.weight.device is fake
    assert not np.array_equal(before, np.asarray(model.weight.to("cpu")))
    assert scaler.get_scale() == 2.0**10
