"""ft.compile: functions, modules, compiled backward, optimizer updates seen."""

import numpy as np
import pytest

import fntorch as ft


def _mlp():
    ft.manual_seed(0)
    return ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.Tanh(), ft.nn.Linear(4, 1))


def test_function_is_jit():
    f = ft.compile(lambda x: x * 2.0, fullgraph=True, dynamic=True, mode="max-autotune")
    assert f(ft.ones(2)).tolist() == [2.0, 2.0]
    f(ft.ones(2))
    assert f.stats["traces"] == 1


@pytest.mark.parametrize("backend", ["tvm", "cudagraphs"])
def test_unknown_backend_is_a_value_error_naming_it(backend):
    with pytest.raises(ValueError, match=f"compile: backend .*{backend}"):
        ft.compile(lambda x: x, backend=backend)


def test_bad_mode_and_model():
    with pytest.raises(ValueError, match="compile: mode"):
        ft.compile(lambda x: x, mode="fast")
    with pytest.raises(TypeError, match="compile: model"):
        ft.compile(3)


def test_decorator_and_disable():
    def g(x):
        return x + 1.0

    assert ft.compile(g, disable=True) is g
    assert ft.compile(backend="inductor")(g)(ft.ones(1)).tolist() == [2.0]


def test_module_forward_equals_eager_and_keeps_orig_mod():
    m = _mlp()
    cm = ft.compile(m)
    x = ft.randn(5, 3)
    np.testing.assert_allclose(cm(x).numpy(), m(x).numpy(), rtol=1e-5, atol=1e-6)
    assert sorted(cm.state_dict()) == sorted("_orig_mod." + k for k in m.state_dict())
    assert cm._orig_mod is m


def test_module_backward_grads_equal_eager():
    m = _mlp()
    cm = ft.compile(m)
    x = ft.randn(5, 3)
    (cm(x) ** 2).sum().backward()
    got = {k: p.grad.numpy().copy() for k, p in m.named_parameters()}
    m.zero_grad()
    (m(x) ** 2).sum().backward()
    for k, p in m.named_parameters():
        np.testing.assert_allclose(got[k], p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_optimizer_updates_are_seen_without_retrace():
    m = _mlp()
    cm = ft.compile(m)
    opt = ft.optim.SGD(m.parameters(), lr=0.1)
    x = ft.randn(5, 3)
    for _ in range(3):
        opt.zero_grad()
        (cm(x) ** 2).sum().backward()
        opt.step()
        np.testing.assert_allclose(cm(x).numpy(), m(x).numpy(), rtol=1e-5, atol=1e-6)
    assert cm._forward.stats["traces"] == 1
    with ft.no_grad():
        cm(x)
        opt.step()
        np.testing.assert_allclose(cm(x).numpy(), m(x).numpy(), rtol=1e-5, atol=1e-6)
    assert cm._forward.stats["traces"] == 2  # the compiled program, beside the call


def test_batchnorm_in_train_mode_through_compiled_module_matches_eager():
    def make():
        ft.manual_seed(0)
        return ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4), ft.nn.Linear(4, 1))

    m, e = make(), make()
    cm = ft.compile(m)
    ft.manual_seed(3)
    for _ in range(2):
        x = ft.randn(8, 3)
        (cm(x) ** 2).sum().backward()
        (e(x) ** 2).sum().backward()
    np.testing.assert_allclose(m[1].running_mean.numpy(), e[1].running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(m[1].running_var.numpy(), e[1].running_var.numpy(), rtol=1e-5)
    for a, b in zip(m.parameters(), e.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_compiled_pytorch_style_step_with_conv_batchnorm_dropout_equals_eager():
    # dropout's zeros_like asked a taped value inside the trace for its device; no conv bias:
    # its gradient through BatchNorm is rounding noise, which Adam scales up
    def run(compiled):
        ft.manual_seed(0)
        net = ft.nn.Sequential(
            ft.nn.Conv2d(1, 2, 3, padding=1, bias=False), ft.nn.BatchNorm2d(2), ft.nn.ReLU(),
            ft.nn.MaxPool2d(2), ft.nn.Flatten(), ft.nn.Dropout(0.5), ft.nn.Linear(8, 3),
        )  # fmt: skip
        opt = ft.optim.Adam(net.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = ft.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss

        step = ft.compile(step) if compiled else step
        x = ft.asarray(np.random.default_rng(1).standard_normal((4, 1, 4, 4)), ft.float32)
        y = ft.asarray([0, 1, 2, 1])
        losses = [step(x, y).item() for _ in range(3)]
        return losses, net.state_dict(), step

    eager, eager_state, _ = run(False)
    compiled, compiled_state, step = run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    for k in eager_state:
        np.testing.assert_allclose(compiled_state[k], eager_state[k], rtol=1e-4, atol=1e-6)
    assert step.stats["traces"] == 1
