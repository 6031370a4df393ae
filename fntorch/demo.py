"""A short tour of fntorch: ``python -m fntorch.demo``.

1. tensors: immutable values, dtype promotion, functional updates;
2. graphs: ``ft.make_graph`` shows what a function (and its gradient) is made of;
3. training: a 2-layer MLP learns a 2-D XOR problem with ``ft.value_and_grad`` and
   plain SGD, then ``ft.vmap(ft.grad(...))`` gives every example's gradient norm;
4. jit: ``ft.jit`` compiles the training step into fused kernels: first call against
   cached calls, the same numbers as eager, what ``lower`` shows;
5. PyTorch-style: a small CNN on 8x8 digits written as PyTorch code (``nn.Module``,
   ``optim.Adam``, ``loss.backward()``), trained eagerly on the tape and compiled with
   ``ft.compile`` (``demo_digits.py``).

Runs in a few seconds on a CPU; the data come from numpy with a fixed seed.
"""

from __future__ import annotations

import time

import numpy as np

import fntorch as ft
from fntorch.demo_digits import tour_digits


def section(title: str) -> None:
    print(f"\n== {title} ==")


# ------------------------------------------------------------------------------ tensors


def tour_tensors() -> None:
    section("tensors: immutable values with PyTorch/JAX promotion")
    x = ft.asarray([1.0, 2.0, 3.0])
    i = ft.asarray([1, 2, 3])
    print(f"ft.asarray([1.0, 2.0, 3.0]).dtype = {x.dtype}   (Python floats: float32)")
    print(f"ft.asarray([1, 2, 3]).dtype       = {i.dtype}     (Python ints: int64)")
    print(f"(float32 tensor * 2.0).dtype      = {(x * 2.0).dtype}   (Python scalars are weak)")
    print(f"(int64 tensor + 1).dtype          = {(i + 1).dtype}")
    print(f"(int64 tensor * float32).dtype    = {(i * x).dtype}   (int with float: the float)")
    x64 = ft.asarray([1.0], dtype=ft.float64)
    print(f"(float32 + float64).dtype         = {(x + x64).dtype}")
    try:
        x[0] = 10.0
    except TypeError as e:
        print(f"x[0] = 10.0 raises TypeError: {e}")
    y = x.at[0].set(10.0)
    print(f"x.at[0].set(10.0) = {y.tolist()}, and x is still {x.tolist()}")


# ------------------------------------------------------------------------------- graphs


def tour_graphs() -> None:
    section("graphs: what a function is made of (ft.make_graph)")

    def f(x):
        return ft.sum(ft.tanh(x) ** 2)

    x = ft.asarray([0.5, -1.0, 2.0])
    print("f(x) = sum(tanh(x) ** 2):")
    print(ft.make_graph(f)(x))
    print("its gradient, ft.grad(f), is just another function of x:")
    print(ft.make_graph(ft.grad(f))(x))
    print(f"ft.grad(f)(x) = {[round(v, 4) for v in ft.grad(f)(x).tolist()]}")


# ----------------------------------------------------------------------------- training


def make_data(n: int = 256, seed: int = 0):
    """Four Gaussian blobs at (+-1, +-1); the class is the XOR of the two signs."""
    rng = np.random.default_rng(seed)
    centers = np.array([[1, 1], [-1, -1], [1, -1], [-1, 1]], np.float32)
    which = rng.integers(0, 4, n)
    x = (centers[which] + 0.35 * rng.standard_normal((n, 2))).astype(np.float32)
    y = np.array([0, 0, 1, 1])[which]
    return x, y


def init_params(hidden: int = 16, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "w1": ft.asarray(rng.standard_normal((2, hidden)).astype(np.float32)),
        "b1": ft.zeros(hidden),
        "w2": ft.asarray((rng.standard_normal((hidden, 2)) / np.sqrt(hidden)).astype(np.float32)),
        "b2": ft.zeros(2),
    }


def predict(params: dict, x):
    return ft.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def loss_fn(params: dict, x, y):
    """Mean softmax cross-entropy over a batch of integer labels."""
    logp = ft.log_softmax(predict(params, x), axis=-1)
    return -ft.mean(ft.take_along_axis(logp, y[:, None], axis=-1))


def example_loss(params: dict, x, y):
    """The loss of one example (``x`` of shape (2,), ``y`` a scalar label)."""
    return loss_fn(params, x[None], y[None])


def accuracy(params: dict, x, y) -> float:
    return float(ft.mean(ft.astype(ft.argmax(predict(params, x), axis=-1) == y, ft.float32)))


def sgd_step(params: dict, x, y, lr: float):
    loss, grads = ft.value_and_grad(loss_fn)(params, x, y)
    return ft.tree.map(lambda p, g: p - lr * g, params, grads), loss


def train(steps: int = 100, lr: float = 0.5):
    section("training: a 2-16-2 MLP on a 2-D XOR problem, SGD with ft.value_and_grad")
    x_np, y_np = make_data()
    x, y = ft.asarray(x_np), ft.asarray(y_np)
    params = init_params()
    print(f"data: {x.shape[0]} points, labels {np.bincount(y_np).tolist()} per class")
    start = time.perf_counter()
    for step in range(steps + 1):
        params, loss = sgd_step(params, x, y, lr)
        if step % 20 == 0:
            print(f"step {step:3d}  loss {float(loss):.4f}")
    elapsed = time.perf_counter() - start
    print(
        f"final accuracy: {accuracy(params, x, y):.3f}  ({steps + 1} eager steps in "
        f"{elapsed:.2f} s)"
    )

    section("per-example gradients: ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))")
    per_example = ft.vmap(ft.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
    squares = sum(
        ft.sum(ft.reshape(g, (x.shape[0], -1)) ** 2, axis=1) for g in ft.tree.leaves(per_example)
    )
    norms = np.asarray(ft.sqrt(squares))
    print(
        f"gradient norm per example: shape {norms.shape}, median {np.median(norms):.4f}, "
        f"max {norms.max():.4f}"
    )
    right = np.asarray(ft.argmax(predict(params, x), axis=-1)) == y_np
    print(
        f"median norm: {np.median(norms[right]):.4f} on the {right.sum()} examples the model "
        f"gets right, {np.median(norms[~right]) if (~right).any() else 0:.4f} on the "
        f"{(~right).sum()} it gets wrong"
    )
    return params


# ---------------------------------------------------------------------------------- jit
# JIT SECTION: the training step, compiled.


def tour_jit(params: dict, steps: int = 50, lr: float = 0.5) -> None:
    section("jit: the same training step, compiled (ft.jit)")
    x_np, y_np = make_data()
    x, y = ft.asarray(x_np), ft.asarray(y_np)
    step = ft.jit(sgd_step, static_argnums=3)  # lr is a Python float: static

    start = time.perf_counter()
    jit_params, jit_loss = step(params, x, y, lr)
    first = time.perf_counter() - start
    entry = next(iter(step._cache.values()))
    eager_params, eager_loss = sgd_step(params, x, y, lr)
    diff = max(
        float(ft.max(ft.abs(a - b)))
        for a, b in zip(ft.tree.leaves(jit_params), ft.tree.leaves(eager_params))
    )
    print(
        f"first call: {first * 1e3:.1f} ms (trace {entry.trace_s * 1e3:.1f} ms, compile "
        f"{entry.compile_s * 1e3:.1f} ms; compiled kernels are cached on disk)"
    )
    print(
        f"jit step == eager step: loss {float(jit_loss):.6f} vs {float(eager_loss):.6f}, "
        f"max |param diff| {diff:.1e}"
    )

    def per_step(fn) -> float:
        p = params
        t0 = time.perf_counter()
        for _ in range(steps):
            p, loss = fn(p, x, y, lr)
        float(loss)
        return (time.perf_counter() - t0) / steps

    eager_s, jit_s = per_step(sgd_step), per_step(step)
    print(
        f"cached jit step: {jit_s * 1e6:.0f} us, eager step: {eager_s * 1e6:.0f} us "
        f"({eager_s / jit_s:.1f}x; {step.stats['traces']} trace for {steps + 1} calls)"
    )
    lowered = step.lower(params, x, y, lr)
    print(
        f"ft.jit(sgd_step).lower(...): {len(lowered.graph.eqns)} primitives after the "
        f"passes -> {len(lowered.plan.kernels)} fused kernels + "
        f"{len(lowered.plan.library_calls)} library calls:"
    )
    print(lowered.plan.summary())


def main() -> None:
    print(f"fntorch {ft.__version__}: PyTorch's user surface on JAX's core")
    tour_tensors()
    tour_graphs()
    params = train()
    tour_jit(params)
    tour_digits()


if __name__ == "__main__":
    main()
