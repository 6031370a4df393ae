"""W8, a tanh RNN through ``scan``: hidden 256, input 64, 100 steps, batch 32;
``h' = tanh(x_t @ Wx + h @ Wh + b)`` from ``h = 0``, loss ``sum(h_100)``; one call is
the scan forward plus the gradient of the loss w.r.t. all weights (Wx, Wh, b), jit.

fntorch: ``ft.jit(ft.value_and_grad(loss))`` over ``ft.scan``. References: numpy by
hand (forward, then backprop through time; the correctness reference),
``jax.jit(jax.value_and_grad(...))`` over ``lax.scan``, and PyTorch eager (a Python
loop, ``torch.autograd.grad``). Registered as 'not yet available' while fntorch has no
``ft.scan``.
"""

import numpy as np

from .._harness import Workload, fntorch_array, jax_array, register, torch_array

HIDDEN, INPUT, STEPS, BATCH = 256, 64, 100, 32
TITLE = "tanh RNN h256 i64, 100 steps, batch 32, scan forward + gradient, jit"


def make_inputs() -> dict:
    rng = np.random.default_rng(8)
    f32 = np.float32
    return {
        "params": {
            "wx": (rng.standard_normal((INPUT, HIDDEN)) / np.sqrt(INPUT)).astype(f32),
            "wh": (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(f32),
            "b": (0.1 * rng.standard_normal(HIDDEN)).astype(f32),
        },
        "xs": rng.standard_normal((STEPS, BATCH, INPUT)).astype(f32),
    }


W8 = register(Workload("W8", TITLE, make_inputs=make_inputs, rtol=1e-3, atol=1e-4, gpu=True))


@W8.impl("fntorch", mode="jit")
def _fntorch(inputs):
    import fntorch as ft

    from ._jit import fntorch_jit_thunk

    def loss(p, xs):
        def cell(h, x):
            return ft.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None

        h, _ = ft.scan(cell, ft.zeros((BATCH, HIDDEN)), xs)
        return ft.sum(h)

    f = ft.jit(ft.value_and_grad(loss))
    params = {k: fntorch_array(v) for k, v in inputs["params"].items()}
    return fntorch_jit_thunk(f, params, fntorch_array(inputs["xs"]))


@W8.impl("numpy", label="by hand, BPTT")
def _numpy(inputs):
    p, xs = inputs["params"], inputs["xs"]

    def run():
        hs = [np.zeros((BATCH, HIDDEN), np.float32)]
        for x in xs:
            hs.append(np.tanh(x @ p["wx"] + hs[-1] @ p["wh"] + p["b"]))
        dh = np.ones_like(hs[-1])
        g = {k: np.zeros_like(v) for k, v in p.items()}
        for t in range(STEPS - 1, -1, -1):
            dz = dh * (1 - hs[t + 1] ** 2)
            g["wx"] += xs[t].T @ dz
            g["wh"] += hs[t].T @ dz
            g["b"] += dz.sum(0)
            dh = dz @ p["wh"].T
        return hs[-1].sum(), g

    return run


@W8.impl("jax", mode="jit", label="jax.jit(lax.scan)")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    def loss(p, xs):
        def cell(h, x):
            return jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None

        h, _ = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN), jnp.float32), xs)
        return jnp.sum(h)

    f = jax.jit(jax.value_and_grad(loss))
    params = {k: jax_array(v) for k, v in inputs["params"].items()}
    xs = jax_array(inputs["xs"])
    return lambda: f(params, xs)


@W8.impl("torch", label="eager loop, autograd.grad")
def _torch(inputs):
    import torch

    p = {k: torch_array(v).requires_grad_() for k, v in inputs["params"].items()}
    xs = torch_array(inputs["xs"])

    def run():
        h = torch.zeros(BATCH, HIDDEN, device=xs.device)
        for x in xs:
            h = torch.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        loss = h.sum()
        grads = torch.autograd.grad(loss, list(p.values()))
        return loss.detach(), dict(zip(p, grads))

    return run
