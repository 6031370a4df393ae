"""Cells under ft.jit: implicit inputs and outputs, the cache key, no leaked tracers."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx.cell import Cell
from fntorch.fx.core import Tracer


def test_cell_read_is_an_input_not_a_constant():
    w = ft.nn.Parameter(ft.ones(3))
    f = ft.jit(lambda x: x * w)
    x = ft.ones(3)
    assert f(x).tolist() == [1.0, 1.0, 1.0]
    w.data = 2 * ft.ones(3)
    assert f(x).tolist() == [2.0, 2.0, 2.0]
    assert f.stats["traces"] == 1


def test_cell_aval_change_retraces():
    c = Cell(ft.ones(3))
    f = ft.jit(lambda x: x + c.sum())
    f(ft.ones(2))
    c.data = ft.ones(5)
    assert f(ft.ones(2)).tolist() == [6.0, 6.0]
    assert f.stats["traces"] == 2 and f._cache_size() == 2
    c.data = ft.ones(3)  # the first entry matches again
    assert f(ft.ones(2)).tolist() == [4.0, 4.0]
    assert f.stats["traces"] == 2


def test_cell_writes_are_outputs_written_back():
    c = Cell(ft.zeros(2), name="acc")
    f = ft.jit(lambda x: c.add_(x) * 2.0)
    assert f(ft.ones(2)).tolist() == [2.0, 2.0]
    assert c.tolist() == [1.0, 1.0]
    assert f(ft.ones(2)).tolist() == [4.0, 4.0]
    assert c.tolist() == [2.0, 2.0] and f.stats["traces"] == 1


def test_write_then_read_sees_the_new_value_and_alias_writes():
    c = Cell(ft.ones(2))

    def f(x):
        c.data.mul_(3.0)
        c.copy_(c + x)
        return c * 1.0

    g = ft.jit(f)
    assert g(ft.ones(2)).tolist() == [4.0, 4.0]
    assert c.tolist() == [4.0, 4.0]
    assert g(ft.ones(2)).tolist() == [13.0, 13.0]


def test_no_tracer_leaks_and_failed_trace_changes_nothing():
    c = Cell(ft.ones(2))

    def bad(x):
        c.add_(x)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        ft.jit(bad)(ft.ones(2))
    assert not isinstance(c._buf, Tracer) and c.tolist() == [1.0, 1.0]
    f = ft.jit(lambda x: c.add_(x) + 0.0)
    f(ft.ones(2))
    assert isinstance(c._buf, np.ndarray)


def test_batchnorm_running_stats_under_jit_match_eager():
    ft.manual_seed(0)
    a, b = ft.nn.BatchNorm1d(3), ft.nn.BatchNorm1d(3)
    f = ft.jit(lambda x: a(x))
    for i in range(3):
        x = ft.randn(4, 3) + float(i)
        np.testing.assert_allclose(f(x).numpy(), b(x).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.running_mean.numpy(), b.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(a.running_var.numpy(), b.running_var.numpy(), rtol=1e-5)
    assert f.stats["traces"] == 1


@pytest.mark.parametrize("wrap", [ft.vmap, lambda g: ft.jit(ft.vmap(g))])
def test_batched_write_into_a_cell_names_it(wrap):
    c = Cell(ft.zeros(2), name="acc")
    with pytest.raises(ValueError, match=r"Cell\(acc\).*vmap"):
        wrap(lambda y: c.add_(y))(ft.ones((2, 2)))
    assert c.tolist() == [0.0, 0.0]


def test_grad_write_into_a_cell_names_it():
    c = Cell(ft.zeros(()), name="keep")

    def f(x):
        c.data = x
        return x * x

    with pytest.raises(ValueError, match=r"Cell\(keep\)"):
        ft.grad(f)(ft.asarray(1.0))


def test_global_key_under_jit_matches_eager_draws():
    def step(x):
        return x + ft.randn(3)

    f = ft.jit(step)
    ft.manual_seed(0)
    got = [f(ft.zeros(3)).tolist() for _ in range(3)]
    ft.manual_seed(0)
    want = [step(ft.zeros(3)).tolist() for _ in range(3)]
    assert got == want and got[0] != got[1]
    assert f.stats["traces"] == 1


def test_dropout_in_train_mode_under_jit_matches_eager():
    d = ft.nn.Dropout(0.5)
    g = ft.jit(lambda x: d(x))
    ft.manual_seed(1)
    got = [g(ft.ones(8)).tolist() for _ in range(3)]
    ft.manual_seed(1)
    want = [d(ft.ones(8)).tolist() for _ in range(3)]
    assert got == want and got[0] != got[1]
    assert g.stats["traces"] == 1


def _train(jit, make_opt, steps=5):
    ft.manual_seed(0)
    m = ft.nn.Sequential(
        ft.nn.Linear(3, 4, bias=False), ft.nn.BatchNorm1d(4), ft.nn.Tanh(), ft.nn.Linear(4, 1)
    )
    opt = make_opt(m.parameters())
    crit = ft.nn.MSELoss()

    def step(x, y):
        opt.zero_grad()
        loss = crit(m(x), y)
        loss.backward()
        opt.step()
        return loss

    f = ft.jit(step) if jit else step
    ft.manual_seed(5)
    losses = []
    for _ in range(steps):
        x, y = ft.randn(8, 3), ft.randn(8, 1)
        losses.append(float(f(x, y)))
    return losses, m, f


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: ft.optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: ft.optim.Adam(ps, lr=0.01),
    ],
    ids=["sgd_momentum", "adam"],
)
def test_whole_training_step_compiles_and_matches_eager(make_opt):
    want, m_eager, _ = _train(False, make_opt)
    got, m_jit, f = _train(True, make_opt)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for (k, a), b in zip(m_eager.state_dict().items(), m_jit.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    for a, b in zip(m_eager.parameters(), m_jit.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert f.stats["traces"] == 1 and f._cache_size() == 1


def test_backward_inside_jit_accumulates_grad_as_an_input():
    w = ft.nn.Parameter(ft.asarray([1.0, 2.0]))
    f = ft.jit(lambda x: (w * x).sum().backward() or x * 1.0)  # no zero_grad: grads add up
    w.grad = ft.ones(2)
    f(ft.asarray([3.0, 4.0]))
    f(ft.asarray([3.0, 4.0]))
    assert w.grad.tolist() == [7.0, 9.0]
    assert f.stats["traces"] == 1
    assert not isinstance(w.grad, Tracer)


def test_compiled_steps_see_each_calls_grads():
    """``.grad`` read and written inside a compiled step is the call's own: gradients
    accumulate across calls without ``zero_grad`` as eagerly, and ``zero_grad`` clears a
    gradient set between calls on a parameter no backward reaches."""

    def run(compiled):
        ft.manual_seed(0)
        m = ft.nn.Linear(3, 1)
        extra = ft.nn.Parameter(ft.ones(2))
        opt = ft.optim.SGD([*m.parameters(), extra], lr=0.1)
        x = ft.ones((2, 3))

        def accumulate(x):
            loss = m(x).sum()
            loss.backward()
            return loss

        def step(x):
            opt.zero_grad()
            loss = m(x).sum()
            loss.backward()
            opt.step()
            return loss

        f, g = (ft.compile(accumulate), ft.compile(step)) if compiled else (accumulate, step)
        for _ in range(3):
            f(x)
        accumulated = m.weight.grad.tolist()
        g(x)
        extra.grad = ft.ones(2)  # stale: the next step's zero_grad clears it
        g(x)
        stale = extra.grad
        for _ in range(3):
            g(x)
        return accumulated, stale, m.weight.tolist()

    eager, compiled = run(False), run(True)
    assert compiled[0] == eager[0] == [[6.0, 6.0, 6.0]]
    assert eager[1] is None and compiled[1] is None
    np.testing.assert_allclose(compiled[2], eager[2], rtol=1e-6)
