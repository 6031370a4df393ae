"""CUDA-graph replay of compiled programs (``fntorch.devices.cuda_graphs``).

The CPU-side half (which plans may be captured) runs everywhere; the replay tests need
a GPU and CuPy and skip without.
"""

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cuda_graphs


def _plan(fn, *args):
    low = ft.jit(fn).lower(*args)
    return low.plan() if callable(low.plan) else low.plan


def _mlp_step(p, x, y):
    def loss(p):
        h = ft.relu(x @ p["w1"] + p["b1"])
        logp = ft.log_softmax(h @ p["w2"], axis=-1)
        return -ft.mean(ft.take_along_axis(logp, y[:, None], axis=-1))

    g = ft.grad(loss)(p)
    return {k: p[k] - 0.1 * g[k] for k in p}, loss(p)


def _mlp_inputs(seed, on=None):
    rng = np.random.default_rng(seed)
    host = {
        "w1": rng.standard_normal((12, 16)).astype(np.float32),
        "b1": rng.standard_normal(16).astype(np.float32),
        "w2": rng.standard_normal((16, 5)).astype(np.float32),
    }
    x = rng.standard_normal((8, 12)).astype(np.float32)
    y = rng.integers(0, 5, 8)
    put = (lambda a: ft.asarray(a).to(on)) if on is not None else ft.asarray
    return {k: put(v) for k, v in host.items()}, put(x), put(y)


def test_a_training_step_plan_is_capturable():
    # kernels, matrix products, the label pick's gather and its scatter_add, sums
    assert cuda_graphs.capturable(_plan(_mlp_step, *_mlp_inputs(0)), lambda st: True) is None


def test_pads_with_a_literal_value_and_iotas_are_capturable():
    # W10's and W11's compiled steps: pad's value is a fill kernel's argument (no copy
    # from the host), an iota a CuPy arange
    x = np.ones((3, 4), np.float32)
    plan = _plan(
        lambda v: (ft.pad(v, ((1, 1), (0, 2))) * 2.0 + ft.arange(6.0)) @ ft.ones((6, 2)), x
    )
    assert "pad" in [getattr(st, "eqn", None) and st.eqn.primitive.name for st in plan.steps]
    assert cuda_graphs.capturable(plan, lambda st: True) is None
    assert {"pad", "iota"} <= cuda_graphs.DEVICE_ONLY


def _three_steps(a):  # a kernel, a matrix product, a kernel
    return ft.exp(a) @ a.T + 1.0


def test_plans_that_touch_the_host_are_not_capturable():
    x = ft.arange(6.0)
    why = cuda_graphs.capturable(
        _plan(lambda v: ft.sort(ft.exp(v) @ v * v) * 2.0, x), lambda st: True
    )
    assert why == "library step 'sort'"
    why = cuda_graphs.capturable(_plan(_three_steps, x[None]), lambda st: False)
    assert why == "a kernel step without a GPU form"


def test_programs_of_few_steps_launch_them_directly():
    x = ft.ones((3, 4))
    assert len(_plan(lambda v: ft.tanh(v) * 2.0, x).steps) == 1
    why = cuda_graphs.capturable(_plan(lambda v: ft.tanh(v) * 2.0, x), lambda st: True)
    assert why == "1 steps: fewer launches than a replay's 3"
    assert cuda_graphs.capturable(_plan(_three_steps, x), lambda st: True) is None


def test_programs_that_move_much_data_per_launch_are_not_captured():
    # GELU-sized kernels over 4 Mi elements: 48 MiB in and out for three launches
    x = np.zeros((2048, 2048), np.float32)
    why = cuda_graphs.capturable(_plan(_three_steps, x), lambda st: True)
    assert why is not None and why.startswith("its inputs and outputs (32 MiB)"), why
    small = np.zeros((4, 8), np.float32)
    assert cuda_graphs.capturable(_plan(_three_steps, small), lambda st: True) is None


@pytest.mark.cuda
def test_replayed_steps_equal_the_cpu_and_never_overwrite_earlier_results(gpu, monkeypatch):
    pytest.importorskip("cupy")
    monkeypatch.setenv("FNTORCH_CUDA_GRAPHS", "1")
    step = ft.jit(_mlp_step)
    results, expected = [], []
    for seed in range(5):  # capture at the second call, then replays on new inputs
        results.append(step(*_mlp_inputs(seed, gpu)))
        expected.append(step(*_mlp_inputs(seed)))
    prog = step.lower(*_mlp_inputs(0, gpu))._entry.program
    assert prog.graph_status == "captured", prog.graph_status
    for got, want in zip(results, expected):  # every result still its own call's
        for g, w in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
def test_strided_inputs_are_copied_into_the_graphs_buffers(gpu, monkeypatch):
    pytest.importorskip("cupy")
    monkeypatch.setenv("FNTORCH_CUDA_GRAPHS", "1")
    f = ft.jit(lambda a, b: ft.exp(a) @ b + 1.0)
    for k in range(4):
        a = ft.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4) / (k + 1)).to(gpu)
        b = ft.asarray(np.ones((4, 5), np.float32) * k).to(gpu)
        got = f(a.T.T, b[:, ::1]), f(a, b)
        want = np.exp(a.numpy()) @ b.numpy() + 1.0
        for g in got:
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-5)


@pytest.mark.cuda
def test_capture_is_on_by_default_and_off_when_asked(gpu, monkeypatch):
    pytest.importorskip("cupy")
    for env, want in ((None, "captured"), ("0", "not captured: capture is off")):
        if env is None:
            monkeypatch.delenv("FNTORCH_CUDA_GRAPHS", raising=False)
        else:
            monkeypatch.setenv("FNTORCH_CUDA_GRAPHS", env)
        f = ft.jit(lambda v: (ft.exp(v) @ v.T) * 3.0 + 0.5)
        x = ft.zeros((1, 7)).to(gpu)
        for _ in range(3):
            np.testing.assert_allclose(f(x).numpy(), np.full((1, 1), 0.5))
        prog = f.lower(x)._entry.program
        assert prog.graph_status.startswith(want), prog.graph_status


@pytest.mark.cuda
def test_hundreds_of_inputs_and_results_replay_through_batched_copies(gpu, monkeypatch):
    # more than one gather-copy launch each way (cuda_graph_copies.CHUNK), mixed dtypes
    # and sizes, a strided input (copied on its own) and a result that is an input
    pytest.importorskip("cupy")
    from fntorch.devices import cuda_graph_copies

    monkeypatch.setenv("FNTORCH_CUDA_GRAPHS", "1")
    n = cuda_graph_copies.CHUNK + 44
    shapes = [(), (3,), (5, 7), (33,)]
    dtypes = [np.float32, np.float64, np.int32, np.float32]

    def inputs(seed):
        r = np.random.default_rng(seed)
        host = [(r.standard_normal(shapes[i % 4]) * 10).astype(dtypes[i % 4]) for i in range(n)]
        xs = [ft.asarray(h).to(gpu) for h in host]
        wide = np.zeros((5, 14), np.int32)
        wide[:, ::2] = host[2]
        xs[2] = ft.asarray(wide).to(gpu)[:, ::2]  # strided: copied on its own
        return xs, host

    f = ft.jit(lambda xs: [x * 2 + 1 if i % 3 else x for i, x in enumerate(xs)])
    for seed in range(4):
        xs, host = inputs(seed)
        got = f(xs)
        for i, (g, h) in enumerate(zip(got, host)):
            np.testing.assert_array_equal(g.numpy(), h * 2 + 1 if i % 3 else h)
    prog = f.lower(inputs(0)[0])._entry.program
    assert prog.graph_status == "captured", prog.graph_status
    copies_in, copies_out = prog._graph._copies
    assert copies_in._fn and copies_out._fn, cuda_graph_copies.why_not  # batched, not alone
