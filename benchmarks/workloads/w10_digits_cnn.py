"""W10, one epoch of the digits CNN through the ``nn.Module`` shim: scikit-learn's
bundled 8x8 digits (1,437 training images, no download), batch 64 (22 full batches),
Conv2d-BatchNorm2d-ReLU-MaxPool2d twice, Dropout(0.25), Linear; cross-entropy; Adam
(lr 1e-3). Each call trains one more epoch from where the last one stopped and returns
that epoch's mean loss.

The model is written once, against whichever ``nn`` and ``F`` it is given, and starts
from the same weights in every framework. Dropout draws its masks from each
framework's own generator, so the epochs' losses agree only statistically: the check
holds them to 5% of PyTorch eager's.

fntorch rows: the eager PyTorch-style loop (``opt.zero_grad(); loss.backward();
opt.step()`` on the tape), the same step under ``ft.compile`` (cells read and written
inside the compiled step: parameters, BatchNorm's statistics, Adam's moments, the
dropout key), and the functional step (``ft.jit`` of ``ft.value_and_grad`` of the
model as a pytree with a pure Adam). References: PyTorch eager and ``torch.compile``
of the same step.
"""

from __future__ import annotations

import numpy as np

from .._harness import Workload, fntorch_array, on_run_device, register, torch_array
from ._jit import TORCH_COMPILE_SLOW

BATCH, LR = 64, 1e-3


def make_inputs() -> dict:
    from sklearn.datasets import load_digits  # the notebooks extra; bundled, no download

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(10).permutation(len(y))[:1437]
    n = len(order) // BATCH * BATCH
    return {"x": x[order][:n], "y": y[order][:n], "weights": _weights()}


def make_net(nn, F):
    """The CNN, written once against a PyTorch-like ``nn`` and ``F``."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16)
            self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
            self.drop, self.fc = nn.Dropout(0.25), nn.Linear(32 * 2 * 2, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)  # 8x8 -> 4x4
            x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)  # 4x4 -> 2x2
            return self.fc(self.drop(x.flatten(1)))

    return Net()


def _weights() -> dict:
    rng = np.random.default_rng(11)
    shapes = {
        "conv1.weight": (16, 1, 3, 3),
        "conv1.bias": (16,),
        "conv2.weight": (32, 16, 3, 3),
        "conv2.bias": (32,),
        "fc.weight": (10, 128),
        "fc.bias": (10,),
    }
    w = {}
    for k, s in shapes.items():
        fan_in = int(np.prod(s[1:])) if len(s) > 1 else s[0]
        w[k] = (rng.uniform(-1, 1, s) / np.sqrt(fan_in)).astype(np.float32)
    return w


def _batches(inputs, asarray):
    x, y = inputs["x"], inputs["y"]
    return [(asarray(x[i : i + BATCH]), asarray(y[i : i + BATCH])) for i in range(0, len(y), BATCH)]


def _load(net, weights, asarray):
    state = net.state_dict()
    for k, v in weights.items():
        state[k] = asarray(v)
    net.load_state_dict(state)
    return net


W10 = register(
    Workload(
        "W10",
        "digits CNN, one epoch (22 steps of batch 64, Adam) through the nn.Module shim",
        gpu=True,
        make_inputs=make_inputs,
        rtol=0.05,
        atol=0.0,
        reference="torch",
    )
)


def _fntorch_model(inputs):
    import fntorch as ft
    import fntorch.nn as nn
    from fntorch.nn import functional as F

    ft.manual_seed(0)
    net = on_run_device(_load(make_net(nn, F), inputs["weights"], ft.asarray))
    return ft, nn, F, net, _batches(inputs, fntorch_array)


def _pytorch_style_step(F, net, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _item(loss) -> float:
    return loss.item()


def _epoch(step, batches, to_float):
    def run():
        total = 0.0
        for x, y in batches:
            total += to_float(step(x, y))
        return np.float32(total / len(batches))

    return run


@W10.impl("fntorch", mode="eager", label="PyTorch-style loop on the tape")
def _fntorch_eager(inputs):
    ft, nn, F, net, batches = _fntorch_model(inputs)
    opt = ft.optim.Adam(net.parameters(), lr=LR)
    return _epoch(_pytorch_style_step(F, net, opt), batches, _item)


@W10.impl("fntorch", mode="compile", label="the same loop, step under ft.compile")
def _fntorch_compiled(inputs):
    ft, nn, F, net, batches = _fntorch_model(inputs)
    opt = ft.optim.Adam(net.parameters(), lr=LR)
    return _epoch(ft.compile(_pytorch_style_step(F, net, opt)), batches, _item)


@W10.impl("fntorch", mode="jit", label="functional: jit(value_and_grad), pure Adam")
def _fntorch_functional(inputs):
    ft, nn, F, net, batches = _fntorch_model(inputs)
    adam = ft.optim.functional.adam(lr=LR)
    state = [net, adam.init(net)]

    @ft.jit
    def step(model, opt_state, x, y):
        loss, grads = ft.value_and_grad(lambda m: F.cross_entropy(m(x), y))(model)
        model, opt_state = adam.update(grads, opt_state, model)
        return loss, model, opt_state

    def one(x, y):
        loss, state[0], state[1] = step(state[0], state[1], x, y)
        return loss

    return _epoch(one, batches, _item)


def _torch_model(inputs):
    import torch
    import torch.nn as nn
    from torch.nn import functional as F

    torch.manual_seed(0)
    net = on_run_device(_load(make_net(nn, F), inputs["weights"], torch.from_numpy))
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    return torch, F, net, opt, _batches(inputs, torch_array)


@W10.impl("torch", mode="eager", label="eager, loss.backward(); opt.step()")
def _torch_eager(inputs):
    torch, F, net, opt, batches = _torch_model(inputs)
    return _epoch(_pytorch_style_step(F, net, opt), batches, _item)


@W10.impl("torch", mode="jit", label="torch.compile of the step", slow=TORCH_COMPILE_SLOW)
def _torch_compiled(inputs):
    torch, F, net, opt, batches = _torch_model(inputs)
    return _epoch(torch.compile(_pytorch_style_step(F, net, opt)), batches, _item)
