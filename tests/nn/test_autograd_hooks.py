"""Parameter.register_post_accumulate_grad_hook on the tape: each hook runs once per
backward, as soon as its parameter's gradient is final (during the transpose, later
layers first), with ``.grad`` already holding it, as PyTorch's."""

import numpy as np
import pytest

import fntorch as ft
import fntorch.nn as nn


def _mlp():
    ft.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def _record(model, log):
    handles = []
    for name, p in model.named_parameters():

        def hook(p, name=name):
            log.append((name, np.asarray(p.grad).copy(), ft.is_grad_enabled()))

        handles.append(p.register_post_accumulate_grad_hook(hook))
    return handles


def test_hooks_fire_once_each_last_layer_first_with_the_final_grad():
    model, log = _mlp(), []
    _record(model, log)
    x = ft.asarray(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    model(x).square().sum().backward()
    names = [n for n, _, _ in log]
    assert sorted(names[:2]) == ["2.bias", "2.weight"]  # the last layer's first
    assert sorted(names[2:]) == ["0.bias", "0.weight"]
    grads = dict(model.named_parameters())
    for name, seen, grad_mode in log:
        np.testing.assert_array_equal(seen, np.asarray(grads[name].grad))
        assert grad_mode is False  # a backward's hooks run without recording
    # a second backward: each hook sees the accumulated sum
    first = {name: seen for name, seen, _ in log}
    log.clear()
    model(x).square().sum().backward()
    assert len(log) == 4
    for name, seen, _ in log:
        np.testing.assert_allclose(seen, 2 * first[name], rtol=1e-6)


def test_hooks_fire_while_the_backward_runs():
    """The last layer's hook runs before the first layer's gradient exists."""
    model, events = _mlp(), []
    first = model[0].weight
    model[2].weight.register_post_accumulate_grad_hook(
        lambda p: events.append(("last layer hook", first.grad is None))
    )
    model(ft.ones(2, 3)).sum().backward()
    assert events == [("last layer hook", True)]


def test_unused_frozen_and_filtered_parameters_get_no_hook():
    a, b, c = (nn.Parameter(ft.ones(2)) for _ in range(3))
    c.requires_grad_(False)
    unused = nn.Parameter(ft.ones(2))
    fired = []
    for name, p in (("a", a), ("b", b), ("c", c), ("unused", unused)):
        p.register_post_accumulate_grad_hook(lambda p, name=name: fired.append(name))
    ((a * b) * c + ft.stop_gradient(unused)).sum().backward()
    assert sorted(fired) == ["a", "b"]
    fired.clear()
    ((a * b) * c).sum().backward(inputs=[a])
    assert fired == ["a"]


def test_a_cell_written_during_the_recording_fires_once_with_both_uses():
    p = nn.Parameter(ft.asarray([1.0, 2.0]))
    fired = []
    p.register_post_accumulate_grad_hook(lambda p: fired.append(p.grad.tolist()))
    y = p * 3.0
    with ft.no_grad():
        p.add_(1.0)  # a new value: a second input of the tape for the same cell
    (y + p * p).sum().backward()
    assert fired == [[7.0, 9.0]]  # 3 + 2 * (p + 1)


def test_remove_and_errors():
    p = nn.Parameter(ft.ones(1))
    fired = []
    h = p.register_post_accumulate_grad_hook(lambda p: fired.append(1))
    h.remove()
    h.remove()
    (p * 2.0).sum().backward()
    assert fired == []
    with pytest.raises(TypeError, match="register_post_accumulate_grad_hook: hook must be call"):
        p.register_post_accumulate_grad_hook(3)


def test_create_graph_hooks_see_recorded_grads():
    x = ft.tensor(3.0, requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.requires_grad))
    (x**3).backward(create_graph=True)
    assert seen == [True] and float(x.grad) == 27.0


@pytest.mark.parametrize("compiled", [False, True])
def test_a_hook_that_rewrites_grad_works_eagerly_and_compiled(compiled):
    lin = nn.Linear(2, 1, bias=False)
    with ft.no_grad():
        lin.weight.copy_(ft.asarray([[1.0, 2.0]]))
    lin.weight.register_post_accumulate_grad_hook(lambda p: setattr(p, "grad", p.grad * 10.0))
    opt = ft.optim.SGD(lin.parameters(), lr=0.01)

    def step(x):
        opt.zero_grad()
        lin(x).sum().backward()
        opt.step()

    if compiled:
        step = ft.compile(step)
    for _ in range(2):
        step(ft.asarray([[1.0, 1.0]]))
    np.testing.assert_allclose(np.asarray(lin.weight), [[0.8, 1.8]], rtol=1e-6)
