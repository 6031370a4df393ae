"""W13: a 2-d real FFT round trip of a (1024, 1024) float32 image, ``irfft2(rfft2(x))``,
jit'ed where the framework has a jit. fntorch's jit runs both transforms as library
steps through numpy's pocketfft, so its goal is numpy's time (issue #19: within 1.1x).
"""

import numpy as np

from .._harness import Workload, register

N = 1024


def make_inputs() -> dict:
    rng = np.random.default_rng(13)
    return {"x": rng.standard_normal((N, N)).astype(np.float32)}


W13 = register(
    Workload(
        "W13",
        "2-d rfft/irfft round trip of (1024, 1024) float32, jit",
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-4,
    )
)


@W13.impl("fntorch", mode="jit", label="jit of ft.fft.irfft2(ft.fft.rfft2(x))")
def _fntorch(inputs):
    import fntorch as ft

    x = ft.asarray(inputs["x"])
    step = ft.jit(lambda x: ft.fft.irfft2(ft.fft.rfft2(x), s=x.shape))
    return lambda: step(x)


@W13.impl("numpy", label="np.fft.irfft2(np.fft.rfft2(x))")
def _numpy(inputs):
    x = inputs["x"]
    return lambda: np.fft.irfft2(np.fft.rfft2(x), s=x.shape)


@W13.impl("torch", label="eager, torch.fft.irfft2(torch.fft.rfft2(x))")
def _torch(inputs):
    import torch

    x = torch.from_numpy(inputs["x"])
    return lambda: torch.fft.irfft2(torch.fft.rfft2(x), s=x.shape)


@W13.impl("jax", mode="jit", label="jax.jit of jnp.fft.irfft2(jnp.fft.rfft2(x))")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    x = jnp.asarray(inputs["x"])
    step = jax.jit(lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x), s=x.shape))
    return lambda: step(x)
