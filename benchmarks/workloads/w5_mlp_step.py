"""W5, one jit'ed SGD training step of an MLP 784-512-512-10 (ReLU), softmax
cross-entropy on integer labels, batch 128, lr 0.01: forward, backward, update; the
step returns the new parameters.

fntorch: ``ft.jit(step)`` with ``ft.grad``; also ``ft.grad`` of the jit'ed loss followed
by a jit'ed update (issue #16: within 1.2x of the jit'ed step), and the step exported,
serialized, deserialized and called (issue #16: within 1.05x of the jit'ed step).
References: numpy by hand (the correctness
reference), PyTorch eager (``torch.autograd.grad``), ``torch.compile`` of a
``torch.func.grad`` step, ``jax.jit`` of a ``jax.grad`` step.

Besides the in-process first call (the 'first call' rows), ``python -m benchmarks``
measures fntorch's first call in a NEW process, twice in a row: the first subprocess
finds the disk kernel cache as it is, the second finds it warm (everything the first
one compiled is on disk). JAX's first call in a new process (no persistent cache) is
measured once for comparison (skipped by ``--quick``).
"""

from __future__ import annotations

import json
import time

import numpy as np

from .._harness import Result, Settings, Workload, fntorch_array, jax_array, register, torch_array
from ._jit import TORCH_COMPILE_SLOW, fntorch_jit_thunk
from ._process import run_python

BATCH, SIZES, LR = 128, (784, 512, 512, 10), 0.01
NAMES = ("w1", "b1", "w2", "b2", "w3", "b3")


def make_inputs() -> dict:
    rng = np.random.default_rng(5)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:]), 1):
        # PyTorch's nn.Linear layout: weight (out, in)
        params[f"w{i}"] = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        params[f"b{i}"] = (0.01 * rng.standard_normal(n_out)).astype(np.float32)
    return {
        "params": params,
        "x": rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
        "y": rng.integers(0, SIZES[-1], BATCH).astype(np.int64),
    }


def fntorch_loss(p, x, y):
    import fntorch as ft

    h = ft.relu(x @ p["w1"].T + p["b1"])
    h = ft.relu(h @ p["w2"].T + p["b2"])
    logits = h @ p["w3"].T + p["b3"]
    logp = ft.log_softmax(logits, axis=-1)
    return -ft.mean(ft.take_along_axis(logp, y[:, None], axis=-1))


def fntorch_step_fn():
    """The step as a plain function (what ``ft.jit`` and ``ft.export`` take)."""
    import fntorch as ft

    def step(p, x, y):
        grads = ft.grad(fntorch_loss)(p, x, y)
        return {k: p[k] - LR * grads[k] for k in p}

    return step


def fntorch_step():
    import fntorch as ft

    return ft.jit(fntorch_step_fn())


def _fntorch_args(inputs):

    params = {k: fntorch_array(v) for k, v in inputs["params"].items()}
    return params, fntorch_array(inputs["x"]), fntorch_array(inputs["y"])


def _jax_step():
    import jax
    import jax.numpy as jnp

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"].T + p["b1"])
        h = jax.nn.relu(h @ p["w2"].T + p["b2"])
        logits = h @ p["w3"].T + p["b3"]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))

    def step(p, x, y):
        grads = jax.grad(loss)(p, x, y)
        return {k: p[k] - LR * grads[k] for k in p}

    return jax.jit(step)


def _jax_args(inputs):

    params = {k: jax_array(v) for k, v in inputs["params"].items()}
    return params, jax_array(inputs["x"]), jax_array(inputs["y"].astype(np.int32))


W5 = register(
    Workload(
        "W5",
        "MLP 784-512-512-10 SGD training step, batch 128, jit",
        gpu=True,
        make_inputs=make_inputs,
        rtol=1e-4,
        atol=1e-5,
    )
)


@W5.impl("fntorch", mode="jit")
def _fntorch(inputs):
    return fntorch_jit_thunk(fntorch_step(), *_fntorch_args(inputs))


def _grad_then_update(grad, inputs):
    """``update(params, grad(params, x, y))``, the update jit'ed once for both grad rows."""
    import fntorch as ft

    update = ft.jit(lambda p, g: {k: p[k] - LR * g[k] for k in p})
    args = _fntorch_args(inputs)

    def run():
        return update(args[0], grad(*args))

    return run


# Issue #16's pair: the gradient composed two ways, each followed by the same jit'ed
# update (so the rows return the step's parameters and are checked against numpy).
@W5.impl("fntorch", mode="grad(jit)", label="grad of the jit'ed loss, jit'ed update")
def _fntorch_grad_of_jit(inputs):
    import fntorch as ft

    # a jit_call under grad: a forward program and a transposed one
    return _grad_then_update(ft.grad(ft.jit(fntorch_loss)), inputs)


@W5.impl("fntorch", mode="jit(grad)", label="jit'ed grad of the loss, jit'ed update")
def _fntorch_jit_of_grad(inputs):
    import fntorch as ft

    return _grad_then_update(ft.jit(ft.grad(fntorch_loss)), inputs)


@W5.impl("fntorch", mode="deserialized", label="export, serialize, deserialize, call")
def _fntorch_deserialized(inputs):
    import fntorch as ft

    args = _fntorch_args(inputs)
    data = ft.export(fntorch_step_fn(), *args).serialize()
    # The bytes another process would read: nothing of the original step survives but
    # the graph; calling the Exported runs it compiled (docs/export.md).
    step = ft.fx.deserialize(data)
    return lambda: step(*args)


@W5.impl("numpy", label="by hand")
def _numpy(inputs):
    p, x, y = inputs["params"], inputs["x"], inputs["y"]

    def run():
        h1 = np.maximum(x @ p["w1"].T + p["b1"], 0)
        h2 = np.maximum(h1 @ p["w2"].T + p["b2"], 0)
        logits = h2 @ p["w3"].T + p["b3"]
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        d3 = z / z.sum(axis=1, keepdims=True)
        d3[np.arange(BATCH), y] -= 1
        d3 /= BATCH
        d2 = (d3 @ p["w3"]) * (h2 > 0)
        d1 = (d2 @ p["w2"]) * (h1 > 0)
        grads = {
            "w3": d3.T @ h2,
            "b3": d3.sum(0),
            "w2": d2.T @ h1,
            "b2": d2.sum(0),
            "w1": d1.T @ x,
            "b1": d1.sum(0),
        }
        return {k: p[k] - np.float32(LR) * grads[k] for k in p}

    return run


def _torch_loss(torch, p, x, y):
    F = torch.nn.functional
    h = torch.relu(x @ p["w1"].T + p["b1"])
    h = torch.relu(h @ p["w2"].T + p["b2"])
    return F.cross_entropy(h @ p["w3"].T + p["b3"], y)


@W5.impl("torch", label="eager, autograd.grad")
def _torch(inputs):
    import torch

    p = {k: torch_array(v).requires_grad_() for k, v in inputs["params"].items()}
    x, y = torch_array(inputs["x"]), torch_array(inputs["y"])

    def run():
        grads = torch.autograd.grad(_torch_loss(torch, p, x, y), list(p.values()))
        with torch.no_grad():
            return {k: v - LR * g for (k, v), g in zip(p.items(), grads)}

    return run


@W5.impl("torch", mode="jit", label="torch.compile", slow=TORCH_COMPILE_SLOW)
def _torch_compile(inputs):
    import torch
    from torch.func import grad

    def step(p, x, y):
        grads = grad(lambda p: _torch_loss(torch, p, x, y))(p)
        return {k: p[k] - LR * grads[k] for k in p}

    f = torch.compile(step)
    p = {k: torch_array(v) for k, v in inputs["params"].items()}
    x, y = torch_array(inputs["x"]), torch_array(inputs["y"])
    return lambda: f(p, x, y)


@W5.impl("jax", mode="jit", label="jax.jit")
def _jax(inputs):
    f, args = _jax_step(), _jax_args(inputs)
    return lambda: f(*args)


# ----------------------------------------------------------- first call in a new process


def _child(framework: str) -> None:
    """Run in a fresh interpreter: import, build, time the first call; JSON to stdout."""
    t0 = time.perf_counter()
    if framework == "fntorch":
        import fntorch  # noqa: F401
        from fntorch.lowering import cache
    else:
        import jax

    t1 = time.perf_counter()
    inputs = make_inputs()
    if framework == "fntorch":
        f, args = fntorch_step(), _fntorch_args(inputs)
    else:
        f, args = _jax_step(), _jax_args(inputs)
    t2 = time.perf_counter()
    out = f(*args)
    if framework == "jax":
        jax.block_until_ready(out)
    t3 = time.perf_counter()
    report = {"import_s": t1 - t0, "first_call_s": t3 - t2}
    if framework == "fntorch":
        entry = next(iter(f._cache.values()))
        report |= {
            "trace_s": entry.trace_s,
            "compile_s": entry.compile_s + entry.first_run_s,
            "disk_hits": cache.stats["disk_hits"],
            "built": cache.stats["compiles"],
        }
    print(json.dumps(report))


def _new_process(framework: str) -> dict:
    code = f"from benchmarks.workloads.w5_mlp_step import _child; _child({framework!r})"
    return run_python(code)


def new_process_first_calls(settings: Settings, frameworks) -> list[Result]:
    runs = [
        ("fntorch", "fntorch new process, disk cache as found", "new process (1st)"),
        ("fntorch", "fntorch new process, warm disk cache", "new process"),
    ]
    if "jax" in frameworks and not settings.skip_slow:
        runs.append(("jax", "jax.jit new process", "new process"))
    out = []
    for framework, name, mode in runs:
        try:
            import importlib.util

            if importlib.util.find_spec(framework) is None:
                continue
        except ImportError:
            continue
        r = _new_process(framework)
        res = Result("W5", name, framework, mode, [], [], float("nan"))
        if "error" in r:
            res.error = r["error"]
        else:
            res.times = [r["first_call_s"]]
            res.faults = [0]
            res.note = f"first call only; import {r['import_s'] * 1e3:.0f} ms before it"
            if framework == "fntorch":
                res.note = (
                    f"first call: trace {r['trace_s'] * 1e3:.0f} ms + build and run "
                    f"{r['compile_s'] * 1e3:.0f} ms (disk cache {r['disk_hits']} hits, "
                    f"{r['built']} built); import {r['import_s'] * 1e3:.0f} ms before it"
                )
        out.append(res)
    return out


W5.extra = new_process_first_calls
