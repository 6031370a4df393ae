"""W4, layernorm over the last axis of (4096, 1024) float32 with weight and bias,
eps 1e-5 (biased variance, as ``torch.nn.functional.layer_norm``), jit.

fntorch: ``ft.jit`` (one fused row kernel). References: numpy, PyTorch's native
``F.layer_norm``, ``torch.compile`` and ``jax.jit`` of the same formula.
"""

import numpy as np

from .._harness import (
    Workload,
    elementwise_bandwidth,
    fntorch_array,
    jax_array,
    register,
    row_shape,
    torch_array,
)
from ._jit import TORCH_COMPILE_SLOW, fntorch_jit_thunk

shape = row_shape  # (4096, 1024); (65536, 1024) on the GPU


EPS = 1e-5


def make_inputs() -> dict:
    rng = np.random.default_rng(4)
    return {
        "x": rng.standard_normal(shape()).astype(np.float32),
        "w": (1 + 0.1 * rng.standard_normal(shape()[1])).astype(np.float32),
        "b": (0.1 * rng.standard_normal(shape()[1])).astype(np.float32),
    }


W4 = register(
    Workload(
        "W4",
        "layernorm over the last axis of (4096, 1024) with weight and bias, jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-4,
        rate=lambda s: elementwise_bandwidth(shape()[0] * shape()[1])(s),
    )
)


@W4.impl("fntorch", mode="jit")
def _fntorch(inputs):
    import fntorch as ft

    def layernorm(x, w, b):
        mu = ft.mean(x, axis=-1, keepdims=True)
        d = x - mu
        var = ft.mean(d * d, axis=-1, keepdims=True)
        return d * ft.rsqrt(var + EPS) * w + b

    args = [fntorch_array(inputs[k]) for k in ("x", "w", "b")]
    return fntorch_jit_thunk(ft.jit(layernorm), *args)


@W4.impl("numpy")
def _numpy(inputs):
    x, w, b = inputs["x"], inputs["w"], inputs["b"]

    def run():
        mu = x.mean(axis=-1, keepdims=True)
        d = x - mu
        var = (d * d).mean(axis=-1, keepdims=True)
        return d / np.sqrt(var + EPS) * w + b

    return run


@W4.impl("torch", label="F.layer_norm")
def _torch(inputs):
    import torch.nn.functional as F

    x, w, b = (torch_array(inputs[k]) for k in ("x", "w", "b"))
    return lambda: F.layer_norm(x, (shape()[1],), w, b, EPS)


@W4.impl("torch", mode="jit", label="torch.compile", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch

    def layernorm(x, w, b):
        mu = torch.mean(x, dim=-1, keepdim=True)
        d = x - mu
        var = torch.mean(d * d, dim=-1, keepdim=True)
        return d * torch.rsqrt(var + EPS) * w + b

    f = torch.compile(layernorm)
    x, w, b = (torch_array(inputs[k]) for k in ("x", "w", "b"))
    return lambda: f(x, w, b)


@W4.impl("jax", mode="jit", label="jax.jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    def layernorm(x, w, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        d = x - mu
        var = jnp.mean(d * d, axis=-1, keepdims=True)
        return d * jax.lax.rsqrt(var + EPS) * w + b

    f = jax.jit(layernorm)
    x, w, b = (jax_array(inputs[k]) for k in ("x", "w", "b"))
    return lambda: f(x, w, b)
