"""W6, per-example gradients: MLP 784-128-10 (tanh), softmax cross-entropy on integer
labels, batch 64: ``vmap(grad(loss), in_axes=(None, 0, 0))``.

Two variants. Without jit: fntorch's eager transforms against ``torch.func`` and
``jax.vmap(jax.grad(...))`` called without ``jax.jit``. With jit (BENCHMARKS.md's
workload): ``ft.jit(ft.vmap(ft.grad(loss), in_axes=(None, 0, 0)))`` against ``jax.jit``
of the same and ``torch.compile`` of the ``torch.func`` version. numpy is the
same gradients written out by hand (batched backprop); HIPS autograd has no vmap, so
its row is ``grad`` in a Python loop over the 64 examples.
"""

import numpy as np

from .._harness import Workload, fntorch_array, jax_array, register, torch_array
from ._jit import TORCH_COMPILE_SLOW

BATCH, D_IN, D_HID, D_OUT = 64, 784, 128, 10


def make_inputs() -> dict:
    rng = np.random.default_rng(6)
    f32 = np.float32
    return {
        "params": {  # PyTorch's nn.Linear layout: weight (out, in)
            "w1": (rng.standard_normal((D_HID, D_IN)) / np.sqrt(D_IN)).astype(f32),
            "b1": np.zeros(D_HID, f32),
            "w2": (rng.standard_normal((D_OUT, D_HID)) / np.sqrt(D_HID)).astype(f32),
            "b2": np.zeros(D_OUT, f32),
        },
        "x": rng.standard_normal((BATCH, D_IN)).astype(f32),
        "y": rng.integers(0, D_OUT, BATCH).astype(np.int64),
    }


W6 = register(
    Workload(
        "W6",
        "per-example grads, MLP 784-128-10, batch 64, vmap(grad), jit and no jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-3,
        atol=1e-5,
    )
)


@W6.impl("fntorch", label="no jit")
def _fntorch(inputs):
    import fntorch as ft

    def loss(params, x, y):
        h = ft.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = ft.log_softmax(logits, axis=-1)
        return -ft.take_along_axis(logp, y[None], axis=0)[0]

    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))
    params = {k: fntorch_array(v) for k, v in inputs["params"].items()}
    x, y = fntorch_array(inputs["x"]), fntorch_array(inputs["y"])
    return lambda: per_example(params, x, y)


@W6.impl("numpy", label="by hand")
def _numpy(inputs):
    p, x, y = inputs["params"], inputs["x"], inputs["y"]

    def run():
        h = np.tanh(x @ p["w1"].T + p["b1"])
        logits = h @ p["w2"].T + p["b2"]
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        dlogits = z / z.sum(axis=1, keepdims=True)
        dlogits[np.arange(BATCH), y] -= 1
        dz1 = (dlogits @ p["w2"]) * (1 - h * h)
        return {
            "w1": dz1[:, :, None] * x[:, None, :],
            "b1": dz1,
            "w2": dlogits[:, :, None] * h[:, None, :],
            "b2": dlogits,
        }

    return run


@W6.impl("torch", label="torch.func")
def _torch(inputs):
    import torch
    from torch.func import grad, vmap

    def loss(params, x, y):
        h = torch.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = torch.log_softmax(logits, dim=-1)
        return -torch.gather(logp, 0, y[None])[0]

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    params = {k: torch_array(v) for k, v in inputs["params"].items()}
    x, y = torch_array(inputs["x"]), torch_array(inputs["y"])
    return lambda: per_example(params, x, y)


@W6.impl("jax", label="no jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        h = jnp.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, y[None], axis=0)[0]

    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    params = {k: jax_array(v) for k, v in inputs["params"].items()}
    x, y = jax_array(inputs["x"]), jax_array(inputs["y"].astype(np.int32))
    return lambda: per_example(params, x, y)


@W6.impl("autograd", label="grad in a Python loop")
def _autograd(inputs):
    import autograd.numpy as anp
    from autograd import grad
    from autograd.scipy.special import logsumexp

    def loss(params, x, y):
        h = anp.tanh(anp.dot(params["w1"], x) + params["b1"])
        logits = anp.dot(params["w2"], h) + params["b2"]
        return logsumexp(logits) - logits[y]

    g = grad(loss)
    params, x, y = inputs["params"], inputs["x"], inputs["y"]

    def run():
        grads = [g(params, x[i], int(y[i])) for i in range(BATCH)]
        return {k: np.stack([gi[k] for gi in grads]) for k in params}

    return run


# ------------------------------------------------------------------------ jit variants


@W6.impl("fntorch", mode="jit", label="ft.jit")
def _fntorch_jit(inputs):
    import fntorch as ft

    from ._jit import fntorch_jit_thunk

    def loss(params, x, y):
        h = ft.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = ft.log_softmax(logits, axis=-1)
        return -ft.take_along_axis(logp, y[None], axis=0)[0]

    per_example = ft.jit(ft.vmap(ft.grad(loss), in_axes=(None, 0, 0)))
    params = {k: fntorch_array(v) for k, v in inputs["params"].items()}
    return fntorch_jit_thunk(
        per_example, params, fntorch_array(inputs["x"]), fntorch_array(inputs["y"])
    )


@W6.impl("torch", mode="jit", label="torch.compile(torch.func)", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch
    from torch.func import grad, vmap

    def loss(params, x, y):
        h = torch.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = torch.log_softmax(logits, dim=-1)
        return -torch.gather(logp, 0, y[None])[0]

    per_example = torch.compile(vmap(grad(loss), in_dims=(None, 0, 0)))
    params = {k: torch_array(v) for k, v in inputs["params"].items()}
    x, y = torch_array(inputs["x"]), torch_array(inputs["y"])
    return lambda: per_example(params, x, y)


@W6.impl("jax", mode="jit", label="jax.jit")
def _jax_jit(inputs):
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        h = jnp.tanh(params["w1"] @ x + params["b1"])
        logits = params["w2"] @ h + params["b2"]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, y[None], axis=0)[0]

    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    params = {k: jax_array(v) for k, v in inputs["params"].items()}
    x, y = jax_array(inputs["x"]), jax_array(inputs["y"].astype(np.int32))
    return lambda: per_example(params, x, y)
