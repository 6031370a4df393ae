"""W3, softmax over the last axis of (4096, 1024) float32, max-subtracted, jit.

fntorch: ``ft.jit`` (one fused row kernel). References: numpy, PyTorch's native
``torch.softmax``, ``torch.compile`` and ``jax.jit`` of the same max-subtracted formula.
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


def make_inputs() -> dict:
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal(shape()).astype(np.float32)}


W3 = register(
    Workload(
        "W3",
        "softmax over the last axis of (4096, 1024), max-subtracted, jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-6,
        rate=lambda s: elementwise_bandwidth(shape()[0] * shape()[1])(s),
    )
)


@W3.impl("fntorch", mode="jit")
def _fntorch(inputs):
    import fntorch as ft

    def softmax(x):
        z = ft.exp(x - ft.max(x, axis=-1, keepdims=True))
        return z / ft.sum(z, axis=-1, keepdims=True)

    return fntorch_jit_thunk(ft.jit(softmax), fntorch_array(inputs["x"]))


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

    x = torch_array(inputs["x"])
    return lambda: torch.softmax(x, dim=-1)


@W3.impl("torch", mode="jit", label="torch.compile", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch

    def softmax(x):
        z = torch.exp(x - torch.amax(x, dim=-1, keepdim=True))
        return z / torch.sum(z, dim=-1, keepdim=True)

    f = torch.compile(softmax)
    x = torch_array(inputs["x"])
    return lambda: f(x)


@W3.impl("jax", mode="jit", label="jax.jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    def softmax(x):
        z = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return z / jnp.sum(z, axis=-1, keepdims=True)

    f = jax.jit(softmax)
    x = jax_array(inputs["x"])
    return lambda: f(x)
