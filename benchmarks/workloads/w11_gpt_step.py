"""W11, one nanoGPT-shaped training step: 4 layers, 4 heads, width 128, block 64, batch
16, vocabulary 65, GELU MLP, tied embedding, no dropout, AdamW (lr 3e-4, weight decay
0.1 on every parameter). Each call takes one more step from where the last one stopped
and returns its loss; the first call's loss is checked against PyTorch eager's (same
weights, same batch).

The model is written once against a PyTorch-like library (``fntorch`` or ``torch``);
JAX runs the same model as pure functions of a parameter dict with optax-free AdamW.
fntorch rows: the PyTorch-style step on the tape (eager), that step under
``ft.compile``, and the functional step (``ft.jit`` of ``ft.value_and_grad`` with the
pure AdamW of ``ft.optim.functional``).
"""

from __future__ import annotations

import math

import numpy as np

from .._harness import (
    Workload,
    fntorch_array,
    jax_array,
    on_run_device,
    register,
    torch_array,
)
from ._jit import TORCH_COMPILE_SLOW

LAYERS, HEADS, WIDTH, BLOCK, BATCH, VOCAB = 4, 4, 128, 64, 16, 65
LR, WD = 3e-4, 0.1


def make_gpt(lib):
    """The GPT, written once against ``lib``'s PyTorch surface (``fntorch`` or ``torch``)."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.c_attn, self.c_proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
            self.fc, self.proj = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(WIDTH, dim=2)
            q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.proj(F.gelu(self.fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, WIDTH), nn.Embedding(BLOCK, WIDTH)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(WIDTH)
            self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
            self.lm_head.weight = self.wte.weight  # tied

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(lib.arange(idx.shape[1], device=idx.device))
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))

    return GPT()


def make_inputs() -> dict:
    rng = np.random.default_rng(11)
    import fntorch as ft

    ft.manual_seed(0)
    weights = {}
    for k, v in make_gpt(ft).state_dict().items():  # nanoGPT's init: N(0, 0.02) matrices
        v = np.asarray(v)
        weights[k] = (0.02 * rng.standard_normal(v.shape)).astype(v.dtype) if v.ndim == 2 else v
    weights["lm_head.weight"] = weights["wte.weight"]  # tied
    return {
        "weights": weights,
        "idx": rng.integers(0, VOCAB, (BATCH, BLOCK)).astype(np.int64),
        "targets": rng.integers(0, VOCAB, (BATCH, BLOCK)).astype(np.int64),
    }


W11 = register(
    Workload(
        "W11",
        "nanoGPT-shaped training step (4x4x128, block 64, batch 16, AdamW)",
        gpu=True,
        make_inputs=make_inputs,
        rtol=2e-3,
        atol=1e-4,
        reference="torch",
    )
)


def _model(lib, inputs, asarray, place):
    """The model with the shared weights (``asarray``: numpy to a host tensor), moved to
    the run's device, and the batch placed there (``place``)."""
    net = make_gpt(lib)
    state = net.state_dict()
    for k, v in inputs["weights"].items():
        state[k] = asarray(v.copy())
    net.load_state_dict(state)
    return on_run_device(net), place(inputs["idx"]), place(inputs["targets"])


def _stateful_step(lib, net):
    opt = lib.optim.AdamW(net.parameters(), lr=LR, weight_decay=WD)

    def step(idx, targets):
        opt.zero_grad()
        loss = net(idx, targets)
        loss.backward()
        opt.step()
        return loss

    return step


@W11.impl("fntorch", mode="eager", label="PyTorch-style step on the tape")
def _fntorch_eager(inputs):
    import fntorch as ft

    net, idx, targets = _model(ft, inputs, ft.asarray, fntorch_array)
    step = _stateful_step(ft, net)
    return lambda: step(idx, targets).item()


@W11.impl("fntorch", mode="compile", label="the same step under ft.compile")
def _fntorch_compiled(inputs):
    import fntorch as ft

    net, idx, targets = _model(ft, inputs, ft.asarray, fntorch_array)
    step = ft.compile(_stateful_step(ft, net))
    return lambda: step(idx, targets).item()


@W11.impl("fntorch", mode="jit", label="functional: jit(value_and_grad), pure AdamW")
def _fntorch_functional(inputs):
    import fntorch as ft

    net, idx, targets = _model(ft, inputs, ft.asarray, fntorch_array)
    adamw = ft.optim.functional.adamw(lr=LR, weight_decay=WD)
    state = [net, adamw.init(net)]

    @ft.jit
    def step(model, opt_state, idx, targets):
        loss, grads = ft.value_and_grad(lambda m: m(idx, targets))(model)
        model, opt_state = adamw.update(grads, opt_state, model)
        return loss, model, opt_state

    def run():
        loss, state[0], state[1] = step(state[0], state[1], idx, targets)
        return loss.item()

    return run


@W11.impl("torch", mode="eager", label="eager, loss.backward(); opt.step()")
def _torch_eager(inputs):
    import torch

    net, idx, targets = _model(torch, inputs, torch.from_numpy, torch_array)
    step = _stateful_step(torch, net)
    return lambda: step(idx, targets).item()


@W11.impl("torch", mode="jit", label="torch.compile of the step", slow=TORCH_COMPILE_SLOW)
def _torch_compiled(inputs):
    import torch

    net, idx, targets = _model(torch, inputs, torch.from_numpy, torch_array)
    step = torch.compile(_stateful_step(torch, net))
    return lambda: step(idx, targets).item()


# ------------------------------------------------------------------ the same model in JAX


def _jax_loss(jnp, jax, p, idx, targets):
    def ln(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * p[name + ".weight"] + p[name + ".bias"]

    def lin(x, name, bias=True):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if bias else y

    B, T = idx.shape
    x = p["wte.weight"][idx] + p["wpe.weight"][jnp.arange(T)]
    mask = jnp.tril(jnp.ones((T, T), bool))
    for i in range(LAYERS):
        b = f"h.{i}."
        q, k, v = jnp.split(lin(ln(x, b + "ln_1"), b + "c_attn"), 3, axis=2)
        q, k, v = (t.reshape(B, T, HEADS, -1).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = jnp.where(mask, q @ k.transpose(0, 1, 3, 2) / math.sqrt(WIDTH // HEADS), -jnp.inf)
        y = (jax.nn.softmax(att, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, WIDTH)
        x = x + lin(y, b + "c_proj")
        h = jax.nn.gelu(lin(ln(x, b + "ln_2"), b + "fc"), approximate=False)
        x = x + lin(h, b + "proj")
    logits = ln(x, "ln_f") @ p["wte.weight"].T
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


@W11.impl("jax", mode="jit", label="jax.jit of the pure model, AdamW by hand")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    params = {k: jax_array(v) for k, v in inputs["weights"].items() if k != "lm_head.weight"}
    b1, b2, eps = 0.9, 0.999, 1e-8

    @jax.jit
    def step(p, m, v, t, idx, targets):
        loss, g = jax.value_and_grad(lambda p: _jax_loss(jnp, jax, p, idx, targets))(p)
        t = t + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)

        def upd(p, m, v):
            p = p * (1 - LR * WD)
            mhat, vhat = m / (1 - b1**t), v / (1 - b2**t)
            return p - LR * mhat / (jnp.sqrt(vhat) + eps)

        return loss, jax.tree.map(upd, p, m, v), m, v, t

    zeros = jax.tree.map(jnp.zeros_like, params)
    state = [params, zeros, zeros, jnp.float32(0)]
    idx, targets = jax_array(inputs["idx"]), jax_array(inputs["targets"])

    def run():
        loss, *state[:] = step(*state, idx, targets)
        return float(loss)

    return run
