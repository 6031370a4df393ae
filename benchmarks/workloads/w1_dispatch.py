"""W1, eager dispatch: ``x`` of shape (16,), 1000 times ``x = x * 1.0001 + 0.5``, no jit.

Reported in microseconds per elementwise op (2000 ops a call): with 16 elements the
arithmetic is free, so this is the cost of one trip through each framework's dispatch.
"""

import numpy as np

from .._harness import Workload, fntorch_array, jax_array, register, torch_array

STEPS = 1000


def make_inputs() -> dict:
    rng = np.random.default_rng(1)
    return {"x": rng.standard_normal(16).astype(np.float32)}


W1 = register(
    Workload(
        "W1",
        "eager dispatch, (16,) float32, x = x * 1.0001 + 0.5 x1000",
        gpu=True,
        make_inputs=make_inputs,
        unit="us/op",
        ops_per_call=2 * STEPS,
        rtol=1e-5,
        atol=1e-4,
    )
)


def _loop(x0):
    def run():
        x = x0
        for _ in range(STEPS):
            x = x * 1.0001 + 0.5
        return x

    return run


@W1.impl("fntorch")
def _fntorch(inputs):

    return _loop(fntorch_array(inputs["x"]))


@W1.impl("numpy")
def _numpy(inputs):
    return _loop(inputs["x"].copy())


@W1.impl("torch")
def _torch(inputs):

    return _loop(torch_array(inputs["x"].copy()))


@W1.impl("jax", label="no jit")
def _jax(inputs):

    return _loop(jax_array(inputs["x"]))


@W1.impl("autograd", label="autograd.numpy")
def _autograd(inputs):
    import autograd.numpy as anp

    # autograd.numpy's functions are its primitive wrappers; called outside a trace they
    # dispatch straight to numpy. Operators on a bare ndarray would be plain numpy, so
    # the loop spells the ops as autograd's functions.
    x0 = anp.array(inputs["x"])

    def run():
        x = x0
        for _ in range(STEPS):
            x = anp.add(anp.multiply(x, 1.0001), 0.5)
        return x

    return run
