"""W3, softmax over the last axis of (4096, 1024) float32, max-subtracted, jit.

fntorch: ``ft.jit`` (one fused row kernel). References: numpy, PyTorch's native
``torch.softmax``, ``torch.compile`` and ``jax.jit`` of the same max-subtracted formula.
"""

import numpy as np

from .._harness import Workload, elementwise_bandwidth, register
from ._jit import TORCH_COMPILE_SLOW, fntorch_jit_thunk

SHAPE = (4096, 1024)


def make_inputs() -> dict:
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal(SHAPE).astype(np.float32)}


W3 = register(
    Workload(
        "W3",
        "softmax over the last axis of (4096, 1024), max-subtracted, jit",
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-6,
        rate=elementwise_bandwidth(SHAPE[0] * SHAPE[1]),
    )
)


@W3.impl("fntorch", mode="jit")
def _fntorch(inputs):
    import fntorch as ft

    def softmax(x):
        z = ft.exp(x - ft.max(x, axis=-1, keepdims=True))
        return z / ft.sum(z, axis=-1, keepdims=True)

    return fntorch_jit_thunk(ft.jit(softmax), ft.asarray(inputs["x"]))


@W3.impl("numpy")
def _numpy(inputs):
    x = inputs["x"]

    def run():
        z = np.exp(x - x.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    return run


@W3.impl("torch", label="torch.softmax")
def _torch(inputs):
    import torch

    x = torch.from_numpy(inputs["x"])
    return lambda: torch.softmax(x, dim=-1)


@W3.impl("torch", mode="jit", label="torch.compile", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch

    def softmax(x):
        z = torch.exp(x - torch.amax(x, dim=-1, keepdim=True))
        return z / torch.sum(z, dim=-1, keepdim=True)

    f = torch.compile(softmax)
    x = torch.from_numpy(inputs["x"])
    return lambda: f(x)


@W3.impl("jax", mode="jit", label="jax.jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    def softmax(x):
        z = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return z / jnp.sum(z, axis=-1, keepdims=True)

    f = jax.jit(softmax)
    x = jnp.asarray(inputs["x"])
    return lambda: f(x)
