"""W7, Hessian of ``f(x) = sum(tanh(W @ x)**2)`` w.r.t. ``x``, x of size 100, W (100, 100).

Two variants. Without jit: ``ft.hessian(f)`` against ``torch.func.hessian`` and
``jax.hessian`` called without ``jax.jit``, and HIPS autograd's ``hessian``. With jit
(BENCHMARKS.md's workload): ``ft.jit(ft.hessian(f))`` against ``jax.jit(jax.hessian(f))``
and ``torch.compile(torch.func.hessian(f))``, W passed as an argument.
numpy is the closed form ``W.T @ diag(2 (1 - t**2) (1 - 3 t**2)) @ W``, ``t = tanh(W x)``.
"""

import numpy as np

from .._harness import Workload, fntorch_array, jax_array, register, torch_array
from ._jit import TORCH_COMPILE_SLOW

N = 100


def make_inputs() -> dict:
    rng = np.random.default_rng(7)
    return {
        "w": (rng.standard_normal((N, N)) / np.sqrt(N)).astype(np.float32),
        "x": rng.standard_normal(N).astype(np.float32),
    }


W7 = register(
    Workload(
        "W7",
        "Hessian of sum(tanh(W @ x)**2), n=100, jit and no jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-3,
        atol=1e-4,
    )
)


@W7.impl("fntorch", label="no jit")
def _fntorch(inputs):
    import fntorch as ft

    w, x = fntorch_array(inputs["w"]), fntorch_array(inputs["x"])
    hess = ft.hessian(lambda x: ft.sum(ft.tanh(w @ x) ** 2))
    return lambda: hess(x)


@W7.impl("numpy", label="closed form")
def _numpy(inputs):
    w, x = inputs["w"], inputs["x"]

    def run():
        t = np.tanh(w @ x)
        d2 = 2 * (1 - t * t) * (1 - 3 * t * t)
        return w.T @ (d2[:, None] * w)

    return run


@W7.impl("torch", label="torch.func")
def _torch(inputs):
    import torch
    from torch.func import hessian

    w, x = torch_array(inputs["w"]), torch_array(inputs["x"])
    hess = hessian(lambda x: torch.sum(torch.tanh(w @ x) ** 2))
    return lambda: hess(x)


@W7.impl("jax", label="no jit")
def _jax(inputs):
    import jax
    import jax.numpy as jnp

    w, x = jax_array(inputs["w"]), jax_array(inputs["x"])
    hess = jax.hessian(lambda x: jnp.sum(jnp.tanh(w @ x) ** 2))
    return lambda: hess(x)


@W7.impl("autograd")
def _autograd(inputs):
    import autograd.numpy as anp
    from autograd import hessian

    w, x = inputs["w"], inputs["x"]
    hess = hessian(lambda x: anp.sum(anp.tanh(anp.dot(w, x)) ** 2))
    return lambda: hess(x)


# ------------------------------------------------------------------------ jit variants


@W7.impl("fntorch", mode="jit", label="ft.jit")
def _fntorch_jit(inputs):
    import fntorch as ft

    from ._jit import fntorch_jit_thunk

    def f(w, x):
        return ft.sum(ft.tanh(w @ x) ** 2)

    # W is an argument (not a closed-over constant), as in the JAX and PyTorch rows.
    hess = ft.jit(ft.hessian(f, argnums=1))
    return fntorch_jit_thunk(hess, fntorch_array(inputs["w"]), fntorch_array(inputs["x"]))


@W7.impl("torch", mode="jit", label="torch.compile(torch.func)", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch
    from torch.func import hessian

    hess = torch.compile(hessian(lambda w, x: torch.sum(torch.tanh(w @ x) ** 2), argnums=1))
    w, x = torch_array(inputs["w"]), torch_array(inputs["x"])
    return lambda: hess(w, x)


@W7.impl("jax", mode="jit", label="jax.jit")
def _jax_jit(inputs):
    import jax
    import jax.numpy as jnp

    hess = jax.jit(jax.hessian(lambda w, x: jnp.sum(jnp.tanh(w @ x) ** 2), argnums=1))
    w, x = jax_array(inputs["w"]), jax_array(inputs["x"])
    return lambda: hess(w, x)
