"""W2, fused elementwise: tanh-GELU ``0.5*x*(1+tanh(0.7978845608*(x+0.044715*x**3)))``
on 4,194,304 float32 elements, jit.

fntorch: ``ft.jit`` (one fused kernel). References: numpy (one pass per op, temporaries),
PyTorch's native ``F.gelu(x, approximate='tanh')``, ``torch.compile`` of the formula,
``jax.jit`` of the formula. The note gives GB/s counting 8 bytes per element (4 read,
4 written); W9.copy is the machine's memory ceiling.
"""

import numpy as np

from .._harness import (
    Workload,
    elementwise_bandwidth,
    fntorch_array,
    jax_array,
    register,
    sized,
    torch_array,
)
from ._jit import TORCH_COMPILE_SLOW, fntorch_jit_thunk

N_CPU, N_GPU = 4_194_304, 2**28  # the GPU size fills an H200 (1 GiB a buffer)


def n() -> int:
    return sized(N_CPU, N_GPU)


C0, C1 = 0.7978845608, 0.044715


def make_inputs() -> dict:
    rng = np.random.default_rng(2)
    return {"x": rng.standard_normal(n()).astype(np.float32).astype(np.float32)}


W2 = register(
    Workload(
        "W2",
        "fused tanh-GELU on 4,194,304 float32 elements (GPU: 2^28), jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-5,
        rate=lambda s: elementwise_bandwidth(n())(s),
    )
)


def gelu(x, tanh):
    return 0.5 * x * (1 + tanh(C0 * (x + C1 * x**3)))


@W2.impl("fntorch", mode="jit")
def _fntorch(inputs):
    import fntorch as ft

    return fntorch_jit_thunk(ft.jit(lambda x: gelu(x, ft.tanh)), fntorch_array(inputs["x"]))


@W2.impl("numpy")
def _numpy(inputs):
    x = inputs["x"]
    return lambda: gelu(x, np.tanh)


@W2.impl("torch", label="F.gelu(approximate='tanh')")
def _torch(inputs):
    import torch.nn.functional as F

    x = torch_array(inputs["x"])
    return lambda: F.gelu(x, approximate="tanh")


@W2.impl("torch", mode="jit", label="torch.compile", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch

    f = torch.compile(lambda x: gelu(x, torch.tanh))
    x = torch_array(inputs["x"])
    return lambda: f(x)


@W2.impl("jax", mode="jit", label="jax.jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: gelu(x, jnp.tanh))
    x = jax_array(inputs["x"])
    return lambda: f(x)
