"""``create_graph=True`` on the tape: the backward is recorded, so gradients are values
that require grad and can be differentiated again (gradient penalties, Hessian-vector
products, MAML-style inner steps), against PyTorch's numbers."""

import numpy as np
import pytest

import fntorch as ft
from fntorch import nn

from .same_weights import _same_weights

torch = pytest.importorskip("torch")


def _critic(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))


def _x():
    return np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)


def _penalty(lib, critic, x):
    out = critic(x).sum()
    (gx,) = lib.autograd.grad(out, x, create_graph=True)
    return ((gx.norm(dim=1) - 1.0) ** 2).mean()


def test_gradient_penalty_equals_torchs():
    torch.manual_seed(0)
    theirs = _critic(torch)
    ours = _critic(ft)
    _same_weights(ours, theirs)
    xt = torch.tensor(_x(), requires_grad=True)
    xf = ft.tensor(_x(), requires_grad=True)
    pt, pf = _penalty(torch, theirs, xt), _penalty(ft, ours, xf)
    pt.backward()
    pf.backward()
    np.testing.assert_allclose(float(pf), pt.item(), rtol=1e-5)
    for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        if b.grad is None:  # the last bias does not reach the input gradient
            assert a.grad is None, name
            continue
        np.testing.assert_allclose(
            a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


def _loss(lib, w):
    return (lib.sin(w) * w.sum() + w**3).sum()


def test_hessian_vector_product_equals_torchs_and_the_hessian():
    w0 = np.array([0.3, -1.2, 2.0], np.float64)
    v = np.array([1.0, 0.5, -2.0], np.float64)
    results = []
    for lib in (ft, torch):
        w = lib.tensor(w0, requires_grad=True)
        (g,) = lib.autograd.grad(_loss(lib, w), w, create_graph=True)
        assert g.requires_grad
        (g * lib.tensor(v)).sum().backward()
        results.append((g.detach().numpy(), w.grad.numpy()))
    (g_ours, hv_ours), (g_theirs, hv_theirs) = results
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-12)
    np.testing.assert_allclose(hv_ours, hv_theirs, rtol=1e-12)
    hessian = ft.hessian(lambda w: _loss(ft, w))(ft.asarray(w0)).numpy()
    np.testing.assert_allclose(hv_ours, hessian @ v, rtol=1e-12)


def test_backward_with_create_graph_accumulates_a_recorded_grad():
    x = ft.tensor(2.0, requires_grad=True)
    (x**4).backward(create_graph=True)  # x.grad = 4 x^3, itself recorded
    g = x.grad
    assert g.requires_grad and float(g) == 32.0
    x.grad = None
    g.backward()  # d(4 x^3)/dx = 12 x^2
    assert float(x.grad) == 48.0


def test_third_derivative_through_nested_create_graph():
    x = ft.tensor(1.5, dtype=ft.float64, requires_grad=True)
    y = ft.exp(2.0 * x)
    (d1,) = ft.autograd.grad(y, x, create_graph=True)
    (d2,) = ft.autograd.grad(d1, x, create_graph=True)
    (d3,) = ft.autograd.grad(d2, x)
    np.testing.assert_allclose(float(d3), 8.0 * np.exp(3.0), rtol=1e-12)


def test_create_graph_retains_the_graph_and_plain_backward_frees_it():
    w = nn.Parameter(ft.asarray([1.0, 2.0]))
    loss = (w**2).sum()
    ft.autograd.grad(loss, w, create_graph=True)
    ft.autograd.grad(loss, w)  # retained by the first call, freed by this one
    with pytest.raises(RuntimeError, match="second time"):
        ft.autograd.grad(loss, w)


def test_a_gradient_norm_penalty_step_compiles_to_eagers_numbers():
    ft.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = ft.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        grads = ft.autograd.grad(loss, list(model.parameters()), create_graph=True)
        total = loss + 0.1 * sum((g**2).sum() for g in grads)
        total.backward()
        opt.step()
        return total

    x = ft.asarray(_x())
    start = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    eager = [float(step(x)) for _ in range(3)]
    model.load_state_dict({k: ft.asarray(v) for k, v in start.items()})
    compiled = ft.jit(step)
    np.testing.assert_allclose([float(compiled(x)) for _ in range(3)], eager, rtol=1e-5)
