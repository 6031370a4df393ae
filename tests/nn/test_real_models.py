"""PyTorch model code run on fntorch and on PyTorch, with the same weights.

Each model below is written once, against a library ``lib`` (``torch`` or ``fntorch``),
in the style of the well-known model files (nanoGPT's GPT, torchvision's ResNet) so that
it exercises the same PyTorch surface: construction and ``apply``-style init, tied
weights, registered buffers, ``F.scaled_dot_product_attention`` and the manual masked
attention, ``configure_optimizers``-style AdamW groups, ``crop``-style model surgery,
``@no_grad`` generation, ``kaiming_normal_``, BatchNorm's running statistics,
``ReLU(inplace=True)`` and ``out += identity``. The real files are measured in
``docs/pytorch.md``; this project never copies them.
"""

import inspect
import math

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(ours, theirs, tol, what=""):
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=tol, atol=tol, err_msg=what)


# ------------------------------------------------------------------ a tiny GPT, twice


def gpt(lib, vocab=23, block=8, width=16, heads=2, layers=2, manual=False):
    """A decoder-only transformer written against ``lib``'s PyTorch surface."""
    nn, F = lib.nn, lib.nn.functional

    class Norm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(n))
            self.bias = nn.Parameter(lib.zeros(n))

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.drop = nn.Dropout(0.0)
            self.fast = hasattr(F, "scaled_dot_product_attention") and not manual
            if not self.fast:
                mask = lib.tril(lib.ones(block, block)).view(1, 1, block, block)
                self.register_buffer("mask", mask)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.qkv(x).split(width, dim=2)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            if self.fast:
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
                y = self.drop(F.softmax(att, dim=-1)) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.attn, self.n2 = Norm(width), Attention(), Norm(width)
            self.mlp = nn.Sequential(
                nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
            )

        def forward(self, x):
            x = x + self.attn(self.n1(x))
            return x + self.mlp(self.n2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block
            self.body = nn.ModuleDict(
                dict(
                    tok=nn.Embedding(vocab, width),
                    pos=nn.Embedding(block, width),
                    blocks=nn.ModuleList([Block() for _ in range(layers)]),
                    norm=Norm(width),
                )
            )
            self.head = nn.Linear(width, vocab, bias=False)
            self.body.tok.weight = self.head.weight  # tied
            self.apply(self._init)
            for name, p in self.named_parameters():
                if name.endswith("proj.weight"):
                    lib.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        def _init(self, m):
            if isinstance(m, nn.Linear):
                lib.nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if m.bias is not None:
                    lib.nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                lib.nn.init.normal_(m.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long, device=idx.device)
            x = self.body.tok(idx) + self.body.pos(pos)
            for blk in self.body.blocks:
                x = blk(x)
            x = self.body.norm(x)
            if targets is None:
                return self.head(x[:, [-1], :]), None
            logits = self.head(x)
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
            return logits, loss

        def optimizer(self, weight_decay, lr):
            params = {n: p for n, p in self.named_parameters() if p.requires_grad}
            decay = [p for p in params.values() if p.dim() >= 2]
            rest = [p for p in params.values() if p.dim() < 2]
            groups = [
                {"params": decay, "weight_decay": weight_decay},
                {"params": rest, "weight_decay": 0.0},
            ]
            assert "params" in inspect.signature(lib.optim.AdamW).parameters
            return lib.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

        def crop(self, size):
            self.block_size = size
            self.body.pos.weight = nn.Parameter(self.body.pos.weight[:size])
            for blk in self.body.blocks:
                if hasattr(blk.attn, "mask"):
                    blk.attn.mask = blk.attn.mask[:, :, :size, :size]

        @lib.no_grad()
        def generate(self, idx, steps, top_k):
            for _ in range(steps):
                logits, _ = self(idx[:, -self.block_size :])
                logits = logits[:, -1, :]
                v, _ = lib.topk(logits, top_k)
                # the one line fntorch changes: PyTorch's `logits[mask] = -inf`
                logits = logits.masked_fill(logits < v[:, [-1]], -float("inf"))
                nxt = lib.multinomial(F.softmax(logits, dim=-1), num_samples=1)
                idx = lib.cat((idx, nxt), dim=1)
            return idx

    return GPT


def _twin_gpts(manual, double=False):
    torch.manual_seed(0)
    theirs = gpt(torch, manual=manual)()
    ft.manual_seed(0)
    ours = gpt(ft, manual=manual)()
    if double:
        theirs.double(), ours.double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _tokens(seed=0):
    rng = np.random.default_rng(seed)
    idx, tgt = rng.integers(0, 23, (3, 8)), rng.integers(0, 23, (3, 8))
    tgt[0, :2] = -1
    return idx, tgt


@pytest.mark.parametrize("manual", [False, True], ids=["sdpa", "masked"])
def test_gpt_forward_backward_and_three_adamw_steps_match_torch(manual):
    # float64: Adam divides by sqrt(v), so a near-zero gradient's float32 rounding can
    # move its step by up to lr; float32 is checked before any step, below
    ours, theirs = _twin_gpts(manual, double=True)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    assert ours.body.tok.weight is ours.head.weight
    idx, tgt = _tokens()
    opt_o, opt_t = ours.optimizer(0.1, 1e-2), theirs.optimizer(0.1, 1e-2)
    named_t = dict(theirs.named_parameters())
    for step in range(3):
        _, lo = ours(ft.asarray(idx), ft.asarray(tgt))
        _, lt = theirs(torch.tensor(idx), torch.tensor(tgt))
        _close(lo, lt, 1e-12, f"loss at step {step}")
        lo.backward()
        lt.backward()
        for name, p in ours.named_parameters():
            _close(p.grad, named_t[name].grad, 1e-10, f"grad {name} at step {step}")
        opt_o.step(), opt_t.step()
        opt_o.zero_grad(set_to_none=True), opt_t.zero_grad(set_to_none=True)
    for name, p in ours.named_parameters():
        _close(p, named_t[name], 1e-10, f"{name} after 3 AdamW steps")
    ours.eval(), theirs.eval()
    with torch.no_grad():
        want, _ = theirs(torch.tensor(idx))
    got, none = ours(ft.asarray(idx))
    assert none is None and got.shape == (3, 1, 23)
    _close(got, want, 1e-12, "inference logits")


def test_gpt_float32_loss_and_gradients_match_torch():
    ours, theirs = _twin_gpts(manual=False)
    idx, tgt = _tokens()
    _, lo = ours(ft.asarray(idx), ft.asarray(tgt))
    _, lt = theirs(torch.tensor(idx), torch.tensor(tgt))
    assert lo.dtype == ft.float32
    _close(lo, lt, 1e-5, "loss")
    lo.backward()
    lt.backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        _close(p.grad, q.grad, 1e-5, name)


@pytest.mark.parametrize("manual", [False, True], ids=["sdpa", "masked"])
def test_gpt_surgery_and_generation_match_torch(manual):
    ours, theirs = _twin_gpts(manual, double=True)
    ours.crop(5), theirs.crop(5)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    idx, tgt = _tokens(1)
    _, lo = ours(ft.asarray(idx[:, :5]), ft.asarray(tgt[:, :5]))
    _, lt = theirs(torch.tensor(idx[:, :5]), torch.tensor(tgt[:, :5]))
    _close(lo, lt, 1e-12, "loss after crop")
    lo.backward(), lt.backward()
    _close(ours.body.pos.weight.grad, theirs.body.pos.weight.grad, 1e-12, "cropped grad")
    # top_k=1 leaves one token with probability one: sampling is deterministic
    got = ours.generate(ft.asarray(idx[:, :3]), 4, top_k=1)
    want = theirs.generate(torch.tensor(idx[:, :3]), 4, top_k=1)
    np.testing.assert_array_equal(_np(got), _np(want))
    assert ours.generate(ft.asarray(idx[:, :3]), 2, top_k=4).shape == (3, 5)


def test_pytorch_style_masked_assignment_says_the_one_line_change():
    logits = ft.asarray([[1.0, 3.0, 2.0]])
    with pytest.raises(TypeError, match=r"t\.at\[i\]\.set\(v\)"):
        logits[logits < 2.0] = -float("inf")
    out = logits.masked_fill(logits < 2.0, -float("inf"))
    assert out.tolist() == [[-math.inf, 3.0, 2.0]]


# ------------------------------------------------------------- a tiny ResNet, twice


def resnet(lib, bottleneck=False, width=8, classes=5, groups=1):
    """A residual network written against ``lib``'s PyTorch surface."""
    nn = lib.nn

    def conv(cin, cout, k, stride=1, g=1):
        return nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=g, bias=False)

    class Basic(nn.Module):
        grow = 1

        def __init__(self, cin, planes, stride, down):
            super().__init__()
            self.c1, self.b1 = conv(cin, planes, 3, stride), nn.BatchNorm2d(planes)
            self.c2, self.b2 = conv(planes, planes, 3), nn.BatchNorm2d(planes)
            self.relu, self.down = nn.ReLU(inplace=True), down

        def forward(self, x):
            identity = x
            out = self.relu(self.b1(self.c1(x)))
            out = self.b2(self.c2(out))
            if self.down is not None:
                identity = self.down(x)
            out += identity
            return self.relu(out)

    class Neck(nn.Module):
        grow = 2

        def __init__(self, cin, planes, stride, down):
            super().__init__()
            self.c1, self.b1 = conv(cin, planes, 1), nn.BatchNorm2d(planes)
            self.c2, self.b2 = conv(planes, planes, 3, stride, groups), nn.BatchNorm2d(planes)
            self.c3, self.b3 = conv(planes, planes * 2, 1), nn.BatchNorm2d(planes * 2)
            self.relu, self.down = nn.ReLU(inplace=True), down

        def forward(self, x):
            identity = x
            out = self.relu(self.b1(self.c1(x)))
            out = self.relu(self.b2(self.c2(out)))
            out = self.b3(self.c3(out))
            if self.down is not None:
                identity = self.down(x)
            out += identity
            return self.relu(out)

    unit = Neck if bottleneck else Basic

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
            )
            self.cin = width
            self.stages = nn.Sequential(self._stage(width, 1), self._stage(2 * width, 2))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2 * width * unit.grow, classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _stage(self, planes, stride):
            down = None
            if stride != 1 or self.cin != planes * unit.grow:
                down = nn.Sequential(
                    conv(self.cin, planes * unit.grow, 1, stride),
                    nn.BatchNorm2d(planes * unit.grow),
                )
            blocks = [unit(self.cin, planes, stride, down)]
            self.cin = planes * unit.grow
            blocks.append(unit(self.cin, planes, 1, None))
            return nn.Sequential(*blocks)

        def forward(self, x):
            x = self.pool(self.stages(self.stem(x)))
            return self.fc(lib.flatten(x, 1))

    return ResNet


@pytest.mark.parametrize(
    "kind", [dict(), dict(bottleneck=True), dict(bottleneck=True, groups=2)],
    ids=["basic", "bottleneck", "grouped"],
)  # fmt: skip
def test_resnet_train_and_eval_match_torch_with_batchnorm_statistics(kind):
    torch.manual_seed(0)
    theirs = resnet(torch, **kind)().double()
    ft.manual_seed(0)
    ours = resnet(ft, **kind)()
    conv_w = _np(ours.stem[0].weight)
    assert abs(conv_w.std() / math.sqrt(2 / (conv_w.shape[0] * 49)) - 1) < 0.2
    ours.double().load_state_dict(theirs.state_dict())
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3, 32, 32)), rng.integers(0, 5, 4)
    opt_o = ft.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    named_t, bufs_t = dict(theirs.named_parameters()), dict(theirs.named_buffers())
    for phase in ("train", "train", "eval"):
        ours.train(phase == "train"), theirs.train(phase == "train")
        out_o, out_t = ours(ft.asarray(x)), theirs(torch.tensor(x))
        _close(out_o, out_t, 1e-9, f"{phase} logits")
        ft.nn.functional.cross_entropy(out_o, ft.asarray(y)).backward()
        torch.nn.functional.cross_entropy(out_t, torch.tensor(y)).backward()
        for name, p in ours.named_parameters():
            _close(p.grad, named_t[name].grad, 1e-9, f"{phase} grad {name}")
        for name, b in ours.named_buffers():
            _close(b, bufs_t[name], 1e-9, f"{phase} buffer {name}")
        opt_o.step(), opt_t.step()
        opt_o.zero_grad(), opt_t.zero_grad()
    assert int(ours.stem[1].num_batches_tracked) == 2
    # the functional side on the same model: parameters' gradients, buffers None
    grads = ft.grad(lambda m: ft.nn.functional.cross_entropy(m(ft.asarray(x)), ft.asarray(y)))(ours)
    assert grads.stem[1].running_mean is None and grads.stem[1].weight is not None
    torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
    for name, g in grads.named_parameters():
        _close(g, named_t[name].grad, 1e-9, f"ft.grad {name}")


def test_resnet_float32_forward_and_backward_at_the_same_weights():
    torch.manual_seed(0)
    theirs = resnet(torch)()
    ours = resnet(ft)()
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(1).standard_normal((4, 3, 32, 32)).astype(np.float32)
    out_o, out_t = ours(ft.asarray(x)), theirs(torch.tensor(x))
    _close(out_o, out_t, 1e-4, "logits")
    out_o.sum().backward()
    out_t.sum().backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        _close(p.grad, q.grad, 2e-3, name)


def test_pytorch_shapes_as_separate_ints():
    assert ft.ones(2, 3).shape == ft.zeros((2, 3)).shape == ft.empty([2, 3]).shape == (2, 3)
    assert ft.ones(ft.Size([4])).shape == (4,)
    with pytest.raises(TypeError, match="ones: shape must be ints"):
        ft.ones(2, (3,))


def test_requires_grad_gives_a_leaf_that_backward_fills():
    # a tutorial's leaves: `randn(..., requires_grad=True)` and `x = x.requires_grad_()`
    torch.manual_seed(0)
    xt = torch.randn(3, 2, requires_grad=True)
    bt = torch.zeros(2).requires_grad_()
    x = ft.asarray(xt.detach().numpy()).requires_grad_()
    b = ft.zeros(2, requires_grad=True)
    w = ft.randn(3, requires_grad=True)
    assert x.requires_grad and b.requires_grad and w.requires_grad
    wt = torch.tensor(np.asarray(w), requires_grad=True)
    ((w @ x + b) ** 2).sum().backward()
    ((wt @ xt + bt) ** 2).sum().backward()
    for ours, theirs in ((x, xt), (b, bt), (w, wt)):
        _close(ours.grad, theirs.grad, 1e-5)
    plain = ft.ones(2)
    assert plain.requires_grad_(False) is plain and not plain.requires_grad
