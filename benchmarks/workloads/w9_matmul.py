"""W9: matmul (1024, 1024) @ (1024, 1024) float32, and the memory ceiling.

``W9`` is ``a @ b`` in each framework (the note gives GFLOP/s); ``W9.copy`` is numpy's
copy bandwidth on 64 MiB arrays (``np.copyto`` into a preallocated array, counted as
64 MiB read plus 64 MiB written), the memory-bound ceiling for W2-W4.
"""

import numpy as np

from .._harness import Workload, register

N = 1024
COPY_BYTES = 64 * 2**20


def make_inputs() -> dict:
    rng = np.random.default_rng(9)
    return {
        "a": rng.standard_normal((N, N), dtype=np.float32),
        "b": rng.standard_normal((N, N), dtype=np.float32),
    }


W9 = register(
    Workload(
        "W9",
        "matmul (1024,1024) @ (1024,1024) float32",
        make_inputs=make_inputs,
        rtol=1e-3,
        atol=1e-3,
        rate=lambda s: f"{2 * N**3 / s / 1e9:.1f} GFLOP/s",
    )
)


@W9.impl("fntorch")
def _fntorch(inputs):
    import fntorch as ft

    a, b = ft.asarray(inputs["a"]), ft.asarray(inputs["b"])
    return lambda: a @ b


@W9.impl("numpy")
def _numpy(inputs):
    a, b = inputs["a"], inputs["b"]
    return lambda: a @ b


@W9.impl("torch")
def _torch(inputs):
    import torch

    a, b = torch.from_numpy(inputs["a"]), torch.from_numpy(inputs["b"])
    return lambda: a @ b


@W9.impl("jax", label="no jit")
def _jax(inputs):
    import jax.numpy as jnp

    a, b = jnp.asarray(inputs["a"]), jnp.asarray(inputs["b"])
    return lambda: a @ b


def make_copy_inputs() -> dict:
    return {"src": np.ones(COPY_BYTES // 4, np.float32)}


W9_COPY = register(
    Workload(
        "W9.copy",
        "numpy copy of 64 MiB float32 (memory ceiling)",
        make_inputs=make_copy_inputs,
        rate=lambda s: f"{2 * COPY_BYTES / s / 1e9:.1f} GB/s (read+write): memory ceiling",
    )
)


@W9_COPY.impl("numpy", label="copy 64 MiB")
def _numpy_copy(inputs):
    src = inputs["src"]
    dst = np.empty_like(src)

    def run():
        np.copyto(dst, src)
        return dst[:1]

    return run
