"""PyTorch-style training on the GPU gives the CPU's numbers: the digits CNN (Conv2d,
BatchNorm2d, MaxPool2d, Dropout, Linear, Adam) eagerly on the tape and under
``ft.compile``, and a small GPT-shaped step (attention, LayerNorm, GELU, tied weights,
AdamW); plus ``ft.cuda``'s queries. Needs a GPU and CuPy: skips without.
"""

import numpy as np
import pytest

pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
import fntorch.nn as nn  # noqa: E402
from fntorch.demo_digits import Net, synthetic_digits  # noqa: E402
from fntorch.nn import functional as F  # noqa: E402

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def gpu():
    try:
        return ft.device("cuda:0")
    except RuntimeError as e:
        pytest.skip(f"no CUDA device: {e}")


def _host_state(model):
    return {k: np.asarray(v.to("cpu")) for k, v in model.state_dict().items()}


def _train(model_cls, batches, device, compiled, make_opt, loss_fn, steps=3):
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
    return losses, _host_state(model)


def _assert_same(cpu, gpu_run, rtol, atol):
    (cpu_losses, cpu_state), (gpu_losses, gpu_state) = cpu, gpu_run
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=rtol, atol=atol)
    assert list(gpu_state) == list(cpu_state)
    for k in cpu_state:
        np.testing.assert_allclose(gpu_state[k], cpu_state[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("compiled", [False, True], ids=["tape", "ft.compile"])
def test_digits_cnn_steps_on_the_gpu_equal_the_cpu(gpu, compiled):
    images, labels = synthetic_digits(96, seed=1)
    batches = [(images[i : i + 32, None], labels[i : i + 32]) for i in range(0, 96, 32)]

    def adam(params):
        return ft.optim.Adam(params, lr=1e-2)

    cpu = _train(Net, batches, "cpu", compiled, adam, F.cross_entropy)
    on_gpu = _train(Net, batches, gpu, compiled, adam, F.cross_entropy)
    _assert_same(cpu, on_gpu, rtol=2e-4, atol=2e-5)


class _TinyGPT(nn.Module):
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


def _lm_loss(logits, targets):
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


@pytest.mark.parametrize("compiled", [False, True], ids=["tape", "ft.compile"])
def test_gpt_shaped_steps_on_the_gpu_equal_the_cpu(gpu, compiled):
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 17, (3, 4, 9))
    batches = [(t[:, :-1], t[:, 1:]) for t in tokens]

    def adamw(params):
        return ft.optim.AdamW(params, lr=3e-3, weight_decay=0.1)

    cpu = _train(_TinyGPT, batches, "cpu", compiled, adamw, _lm_loss)
    on_gpu = _train(_TinyGPT, batches, gpu, compiled, adamw, _lm_loss)
    _assert_same(cpu, on_gpu, rtol=2e-4, atol=2e-5)


def test_cuda_queries(gpu):
    assert ft.cuda.is_available() and ft.cuda.device_count() >= 1
    assert ft.cuda.current_device() == 0
    assert "NVIDIA" in ft.cuda.get_device_name() or ft.cuda.get_device_name()
    major, minor = ft.cuda.get_device_capability()
    assert major >= 5 and minor >= 0
    before = ft.cuda.memory_allocated()
    x = ft.ones((1024, 1024)).cuda()
    ft.cuda.synchronize()
    assert ft.cuda.memory_allocated() >= before + x.nbytes
    del x
    ft.cuda.empty_cache()
    ft.cuda.set_device(0)
    with pytest.raises(RuntimeError, match="set_device"):
        ft.cuda.set_device(ft.cuda.device_count())
    with pytest.raises(ValueError, match="expected a CUDA device"):
        ft.cuda.synchronize("cpu")
