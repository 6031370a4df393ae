"""ft.autocast("cuda") and GradScaler("cuda") on a GPU: float16 matmuls, float32 softmax
and losses (PyTorch's CUDA lists), eagerly and under jit, and a scaled training step.
Needs a GPU and CuPy: skips without."""

import numpy as np
import pytest

cp = pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
import fntorch.nn.functional as F  # noqa: E402

pytestmark = pytest.mark.cuda
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 8)).astype(np.float32)
W = RNG.standard_normal((8, 8)).astype(np.float32)
T = RNG.integers(0, 8, 4)


def _f(x, w):
    y = x @ w
    return y, F.softmax(y, dim=-1), F.cross_entropy(y, ft.asarray(T).to(x.device))


def test_cuda_lists_eager_and_jit(gpu):
    x, w = ft.asarray(X).to(gpu), ft.asarray(W).to(gpu)
    with ft.autocast("cuda"):
        eager = _f(x, w)
        jitted = ft.jit(_f)(x, w)
        cpu_untouched = (ft.asarray(X) @ ft.asarray(W)).dtype
    assert [t.dtype for t in eager] == [ft.float16, ft.float32, ft.float32]
    assert [t.dtype for t in jitted] == [ft.float16, ft.float32, ft.float32]
    assert cpu_untouched == ft.float32  # a CUDA autocast leaves CPU tensors alone
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(
            np.asarray(a.to("cpu")).astype(np.float32),
            np.asarray(b.to("cpu")).astype(np.float32),
            rtol=1e-2,
            atol=1e-2,
        )
    np.testing.assert_allclose(
        np.asarray(eager[0].to("cpu")).astype(np.float32), X @ W, rtol=1e-2, atol=2e-2
    )


def test_cuda_scaled_training_step(gpu):
    model = ft.nn.Linear(8, 8).to(gpu)
    opt = ft.optim.SGD(model.parameters(), lr=0.1)
    scaler = ft.cuda.amp.GradScaler(init_scale=2.0**10)
    before = np.asarray(model.weight.to("cpu"))
    with ft.autocast("cuda"):
        loss = F.cross_entropy(model(ft.asarray(X).to(gpu)), ft.asarray(T).to(gpu))
    scaler.scale(loss).backward()
    assert model.weight.grad.dtype == ft.float32
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(before, np.asarray(model.weight.to("cpu")))
    assert scaler.get_scale() == 2.0**10
