"""W9: matmul (1024, 1024) @ (1024, 1024) float32, and the memory ceiling.

``W9`` is ``a @ b`` in each framework (the note gives GFLOP/s); ``W9.copy`` is numpy's
copy bandwidth on 64 MiB arrays (``np.copyto`` into a preallocated array, counted as
64 MiB read plus 64 MiB written), the memory-bound ceiling for W2-W4.
"""

import numpy as np

from .._harness import Workload, fntorch_array, jax_array, register, sized, torch_array

N_CPU, N_GPU = 1024, 4096
COPY_CPU, COPY_GPU = 64 * 2**20, 2**30  # the GPU's copy is 1 GiB: far past its L2


def n() -> int:
    return sized(N_CPU, N_GPU)


def copy_bytes() -> int:
    return sized(COPY_CPU, COPY_GPU)


def make_inputs() -> dict:
    rng = np.random.default_rng(9)
    return {
        "a": rng.standard_normal((n(), n()), dtype=np.float32),
        "b": rng.standard_normal((n(), n()), dtype=np.float32),
    }


W9 = register(
    Workload(
        "W9",
        "matmul (1024,1024) @ (1024,1024) float32 (GPU: 4096)",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-3,
        atol=1e-3,
        rate=lambda s: f"{2 * n() ** 3 / s / 1e9:.1f} GFLOP/s",
    )
)


@W9.impl("fntorch")
def _fntorch(inputs):

    a, b = fntorch_array(inputs["a"]), fntorch_array(inputs["b"])
    return lambda: a @ b


@W9.impl("numpy")
def _numpy(inputs):
    a, b = inputs["a"], inputs["b"]
    return lambda: a @ b


@W9.impl("torch")
def _torch(inputs):

    a, b = torch_array(inputs["a"]), torch_array(inputs["b"])
    return lambda: a @ b


@W9.impl("jax", label="no jit")
def _jax(inputs):

    a, b = jax_array(inputs["a"]), jax_array(inputs["b"])
    return lambda: a @ b


def make_copy_inputs() -> dict:
    return {"src": np.ones(copy_bytes() // 4, np.float32)}


W9_COPY = register(
    Workload(
        "W9.copy",
        "numpy copy of 64 MiB float32 (memory ceiling; GPU: torch copy of 1 GiB)",
        gpu=True,
        make_inputs=make_copy_inputs,
        rate=lambda s: f"{2 * copy_bytes() / s / 1e9:.1f} GB/s (read+write): memory ceiling",
    )
)


@W9_COPY.impl("torch", label="copy 1 GiB on the GPU", gpu_only=True)
def _torch_copy(inputs):
    import torch

    src = torch_array(inputs["src"])
    dst = torch.empty_like(src)

    def run():
        dst.copy_(src)
        return dst[:1]

    return run


@W9_COPY.impl("numpy", label="copy 64 MiB")
def _numpy_copy(inputs):
    src = inputs["src"]
    dst = np.empty_like(src)

    def run():
        np.copyto(dst, src)
        return dst[:1]

    return run
