"""Layers, losses and the tape against PyTorch: the same weights give the same outputs and
the same gradients (``loss.backward()`` on both sides), in train and eval mode."""

import numpy as np
import pytest

import fntorch as ft
from tests.nn.same_weights import _same_weights

torch = pytest.importorskip("torch")
nn, tnn = ft.nn, torch.nn

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(ours, theirs, *inputs, rtol=1e-5, atol=1e-5, train=True):
    _same_weights(ours, theirs)
    ours.train(train)
    theirs.train(train)
    y = ours(*[ft.asarray(i) for i in inputs])
    ty = theirs(*[torch.from_numpy(i) for i in inputs])
    np.testing.assert_allclose(np.asarray(y), ty.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(ty.shape).astype(np.float32)
    (y * ft.asarray(g)).sum().backward()
    (ty * torch.from_numpy(g)).sum().backward()
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            np.asarray(p.grad), tp[name].grad.numpy(), rtol=rtol * 10, atol=atol * 10, err_msg=name
        )
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.Linear(5, 3), (4, 5)),
        (lambda m: m.Conv2d(3, 4, 3, stride=2, padding=1), (2, 3, 7, 7)),
        (lambda m: m.Conv2d(4, 4, 3, padding="same", groups=2, bias=False), (1, 4, 5, 5)),
        (lambda m: m.Conv1d(2, 3, 3, dilation=2), (2, 2, 9)),
        (lambda m: m.LayerNorm(6), (3, 6)),
        (lambda m: m.GroupNorm(2, 4), (2, 4, 3)),
        (lambda m: m.BatchNorm1d(5), (8, 5)),
        (lambda m: m.Sequential(m.Linear(4, 8), m.GELU(), m.Linear(8, 2), m.Tanh()), (3, 4)),
        (lambda m: m.Sequential(m.Linear(4, 4), m.SiLU(), m.LeakyReLU(0.2), m.ELU()), (3, 4)),
        (lambda m: m.Sequential(m.Linear(4, 4), m.Softplus(), m.Mish()), (3, 4)),
    ],
)
def test_layer_outputs_and_gradients_equal_torch(make, shape):
    torch.manual_seed(0)
    _check(make(nn), make(tnn), _x(*shape))


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm2d_and_its_running_statistics(train):
    ours, theirs = nn.BatchNorm2d(3, momentum=0.2), tnn.BatchNorm2d(3, momentum=0.2)
    with torch.no_grad():
        theirs.weight.uniform_(0.5, 1.5)
    for _ in range(2):
        _check(ours, theirs, _x(4, 3, 5, 5), train=train)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.MaxPool2d(3, stride=2, padding=1),
        lambda m: m.MaxPool2d(2, ceil_mode=True),
        lambda m: m.AvgPool2d(3, stride=2, padding=1),
        lambda m: m.AvgPool2d(2, ceil_mode=True, count_include_pad=False),
        lambda m: m.AdaptiveAvgPool2d((2, 3)),
        lambda m: m.AdaptiveAvgPool2d(1),
        lambda m: m.Flatten(),
    ],
)
def test_pools(make):
    x = _x(2, 3, 7, 6)
    got = make(nn)(ft.asarray(x))
    want = make(tnn)(torch.from_numpy(x))
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-6, atol=1e-6)


def test_embedding_with_padding_idx():
    torch.manual_seed(0)
    ours, theirs = nn.Embedding(10, 4, padding_idx=0), tnn.Embedding(10, 4, padding_idx=0)
    _same_weights(ours, theirs)
    idx = np.array([[0, 3, 3], [9, 0, 1]])
    y, ty = ours(ft.asarray(idx)), theirs(torch.from_numpy(idx))
    np.testing.assert_allclose(np.asarray(y), ty.detach().numpy())
    (y**2).sum().backward()
    (ty**2).sum().backward()
    np.testing.assert_allclose(np.asarray(ours.weight.grad), theirs.weight.grad.numpy())


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("CrossEntropyLoss", {}),
        ("CrossEntropyLoss", {"label_smoothing": 0.1}),
        ("CrossEntropyLoss", {"ignore_index": 2, "reduction": "sum"}),
        ("CrossEntropyLoss", {"weight": "w", "ignore_index": 1, "label_smoothing": 0.2}),
        ("NLLLoss", {"reduction": "none"}),
    ],
)
def test_classification_losses(name, kwargs):
    logits, target = _x(6, 4), np.array([0, 1, 2, 3, 2, 1])
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
    kw_ours = {k: (ft.asarray(w) if v == "w" else v) for k, v in kwargs.items()}
    kw_torch = {k: (torch.from_numpy(w) if v == "w" else v) for k, v in kwargs.items()}
    p = nn.Parameter(ft.asarray(logits))
    tp = torch.from_numpy(logits).requires_grad_()
    got = getattr(nn, name)(**kw_ours)(p, ft.asarray(target))
    want = getattr(tnn, name)(**kw_torch)(tp, torch.from_numpy(target))
    np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(np.asarray(p.grad), tp.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCEWithLogitsLoss"]
)
def test_regression_losses(name):
    a, b = _x(5, 3), RNG.uniform(0, 1, (5, 3)).astype(np.float32)
    got = getattr(nn, name)()(ft.asarray(a), ft.asarray(b))
    want = getattr(tnn, name)()(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)


def test_scaled_dot_product_attention():
    q, k, v = _x(2, 3, 5, 4), _x(2, 3, 6, 4), _x(2, 3, 6, 4)
    mask = RNG.uniform(size=(5, 6)) > 0.3
    mask[:, 0] = True
    F, TF = ft.nn.functional, torch.nn.functional
    for kw, tkw in [
        ({}, {}),
        ({"attn_mask": ft.asarray(mask)}, {"attn_mask": torch.from_numpy(mask)}),
    ]:
        got = F.scaled_dot_product_attention(ft.asarray(q), ft.asarray(k), ft.asarray(v), **kw)
        want = TF.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), **tkw)
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-6)
    qq = _x(1, 2, 5, 4)
    got = F.scaled_dot_product_attention(*[ft.asarray(qq)] * 3, is_causal=True)
    want = TF.scaled_dot_product_attention(*[torch.from_numpy(qq)] * 3, is_causal=True)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-6)


class _Net:
    """A small CNN written once for both libraries (imports changed only)."""

    @staticmethod
    def build(m):
        class Net(m.Module):
            def __init__(self):
                super().__init__()
                self.conv = m.Conv2d(1, 4, 3, padding=1)
                self.bn = m.BatchNorm2d(4)
                self.pool = m.MaxPool2d(2)
                self.fc = m.Linear(4 * 4 * 4, 3)

            def forward(self, x):
                h = self.pool(m.functional.relu(self.bn(self.conv(x))))
                return self.fc(h.flatten(1))

        return Net()


def test_a_pytorch_style_training_loop_equals_torch():
    torch.manual_seed(0)
    ours, theirs = _Net.build(nn), _Net.build(tnn)
    _same_weights(ours, theirs)
    opt = ft.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    x, y = _x(8, 1, 8, 8), RNG.integers(0, 3, 8)
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ours(ft.asarray(x)), ft.asarray(y))
        loss.backward()
        opt.step()
        topt.zero_grad()
        tloss = tnn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(float(loss), float(tloss), rtol=1e-5)
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)


def test_the_pure_side_of_the_same_model():
    torch.manual_seed(0)
    model = _Net.build(nn)
    x, y = ft.asarray(_x(8, 1, 8, 8)), ft.asarray(RNG.integers(0, 3, 8))

    def loss(m, x, y):
        return nn.functional.cross_entropy(m(x), y)

    g = ft.jit(ft.grad(loss))(model, x, y)
    assert type(g) is type(model)
    loss(model, x, y).backward()
    np.testing.assert_allclose(np.asarray(g.fc.weight), np.asarray(model.fc.weight.grad), rtol=1e-4)
    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(model.eval(), x[:, None], y[:, None])
    assert per_example.conv.weight.shape == (8, 4, 1, 3, 3)
    out = nn.functional_call(model, {"fc.bias": ft.ones(3)}, (x,))
    assert out.shape == (8, 3)


def test_in_place_and_tape_errors():
    p = nn.Parameter(ft.ones(2))
    with pytest.raises(RuntimeError, match="in-place operation"):
        p.add_(1.0)
    with pytest.raises(TypeError, match="immutable"):
        ft.ones(2).mul_(2.0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        (ft.ones(2) * 2).sum().backward()
    with ft.no_grad():
        assert not (p * 2).requires_grad
    with pytest.raises(ValueError, match="cannot write a traced value"):
        ft.grad(lambda x: p.set_(x).sum())(ft.ones(2))
    loss = (p * p).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="a second time"):
        loss.backward()
