"""W12: a batched linear solve and its gradient: 256 well-conditioned systems of 64x64
(float32, one right-hand side each), ``loss(A) = sum(solve(A, b) ** 2)``; each call
returns the loss and its gradient with respect to the matrices, jit'ed where the
framework has a jit. numpy's row is the same computation by hand (the solve, then the
adjoint solve with the transposed matrices: dA = -solve(A^T, 2x) x^T).
"""

import numpy as np

from .._harness import Workload, register

BATCH, N = 256, 64


def make_inputs() -> dict:
    rng = np.random.default_rng(12)
    a = (rng.standard_normal((BATCH, N, N)) / np.sqrt(N)).astype(np.float32)
    a += 2.0 * np.eye(N, dtype=np.float32)  # well-conditioned: eigenvalues near 2
    return {"a": a, "b": rng.standard_normal((BATCH, N, 1)).astype(np.float32)}


W12 = register(
    Workload(
        "W12",
        "batched solve 256 x (64x64) float32 plus its gradient, jit",
        make_inputs=make_inputs,
        rtol=1e-3,
        atol=1e-4,
    )
)


@W12.impl("fntorch", mode="jit", label="jit(value_and_grad) of ft.linalg.solve")
def _fntorch(inputs):
    import fntorch as ft

    a, b = ft.asarray(inputs["a"]), ft.asarray(inputs["b"])
    step = ft.jit(ft.value_and_grad(lambda a, b: ft.sum(ft.linalg.solve(a, b) ** 2)))
    return lambda: step(a, b)


@W12.impl("numpy", label="solve and adjoint solve by hand")
def _numpy(inputs):
    a, b = inputs["a"], inputs["b"]

    def run():
        x = np.linalg.solve(a, b)
        lam = np.linalg.solve(a.transpose(0, 2, 1), 2.0 * x)
        return np.sum(x * x), -lam @ x.transpose(0, 2, 1)

    return run


@W12.impl("torch", label="eager, torch.linalg.solve and autograd.grad")
def _torch(inputs):
    import torch

    b = torch.from_numpy(inputs["b"])

    def run():
        a = torch.from_numpy(inputs["a"]).requires_grad_(True)
        loss = (torch.linalg.solve(a, b) ** 2).sum()
        (g,) = torch.autograd.grad(loss, a)
        return loss.detach(), g

    return run


@W12.impl("jax", mode="jit", label="jax.jit(value_and_grad)")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    a, b = jnp.asarray(inputs["a"]), jnp.asarray(inputs["b"])
    step = jax.jit(jax.value_and_grad(lambda a, b: jnp.sum(jnp.linalg.solve(a, b) ** 2)))
    return lambda: step(a, b)
