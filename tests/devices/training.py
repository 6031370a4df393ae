"""PyTorch-style training steps that a device must run with the CPU's numbers: the
digits CNN (Conv2d, BatchNorm2d, MaxPool2d, Dropout, Linear) and a small GPT-shaped model
(attention, LayerNorm, GELU, tied weights), a few SGD steps on the tape or under
``ft.compile``. The fake second device (CI) and the GPU (``tests/cuda``) both run them.
"""

import numpy as np

import fntorch as ft
import fntorch.nn as nn
from fntorch.demo_digits import Net, synthetic_digits
from fntorch.nn import functional as F


def digits_batches():
    images, labels = synthetic_digits(96, seed=1)
    return [(images[i : i + 32, None], labels[i : i + 32]) for i in range(0, 96, 32)]


def token_batches():
    tokens = np.random.default_rng(3).integers(0, 17, (3, 4, 9))
    return [(t[:, :-1], t[:, 1:]) for t in tokens]


def train_digits(device, compiled):
    return train(Net, digits_batches(), device, compiled, sgd, F.cross_entropy)


def train_gpt(device, compiled):
    return train(TinyGPT, token_batches(), device, compiled, sgd, lm_loss)


def host_state(model):
    return {k: np.asarray(v.to("cpu")) for k, v in model.state_dict().items()}


def train(model_cls, batches, device, compiled, make_opt, loss_fn, steps=3):
    ft.manual_seed(0)
    model = model_cls()
    model.to(device)
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    run = ft.compile(step) if compiled else step
    losses = []
    for x, y in batches[:steps]:
        losses.append(float(run(ft.asarray(x).to(device), ft.asarray(y).to(device))))
    where = {p.device for p in model.parameters()} | {v.device for v in model.buffers()}
    assert where == {ft.device(device)}, f"the model left {device}: {where}"
    return losses, host_state(model)


def sgd(params):
    # SGD, not Adam: Adam divides by the root of tiny second moments, which turns the
    # GPU's and the CPU's float32 rounding differences (different summation orders in
    # cuBLAS and OpenBLAS) into visible parameter differences after a step or two.
    return ft.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)


def assert_same(cpu, gpu_run, rtol, atol):
    (cpu_losses, cpu_state), (gpu_losses, gpu_state) = cpu, gpu_run
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=rtol, atol=atol)
    assert list(gpu_state) == list(cpu_state)
    for k in cpu_state:
        np.testing.assert_allclose(gpu_state[k], cpu_state[k], rtol=rtol, atol=atol, err_msg=k)


class TinyGPT(nn.Module):
    """Embedding, one pre-norm attention block with a GELU MLP, tied output weights."""

    def __init__(self, vocab=17, width=32, heads=4, block=8):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.ln1, self.ln2, self.ln_f = (nn.LayerNorm(width) for _ in range(3))
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(ft.arange(t, device=idx.device))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.ln_f(x))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
