"""ft.func: stack_module_state + vmap(functional_call) is the per-model loop (and
torch.func's ensemble); the transforms under torch.func's names and conventions."""

from __future__ import annotations

import numpy as np
import pytest

import fntorch as ft


def _mlp(norm=False):
    layers = [ft.nn.Linear(3, 8), ft.nn.ReLU(), ft.nn.Linear(8, 2)]
    if norm:
        layers.insert(1, ft.nn.BatchNorm1d(8))
    return ft.nn.Sequential(*layers)


def _ensemble(norm=False, n=4):
    ft.manual_seed(0)
    models = [_mlp(norm) for _ in range(n)]
    if norm:
        for i, m in enumerate(models):  # distinct running statistics per model
            m[1].running_mean.data = ft.full((8,), 0.1 * i)
            m[1].running_var.data = ft.full((8,), 1.0 + i)
            m.eval()
    return models


@pytest.mark.parametrize("norm", [False, True])
def test_ensemble_equals_the_per_model_loop(norm):
    models = _ensemble(norm)
    params, buffers = ft.func.stack_module_state(models)
    assert list(params) == [k for k, _ in models[0].named_parameters()]
    assert list(buffers) == [k for k, _ in models[0].named_buffers()]
    assert params["0.weight"].shape == (4, 8, 3)
    x = ft.asarray(np.random.default_rng(0).standard_normal((4, 5, 3)).astype(np.float32))
    base = models[0]
    out = ft.vmap(lambda p, b, x: ft.func.functional_call(base, (p, b), (x,)))(params, buffers, x)
    loop = ft.stack([m(x[i]) for i, m in enumerate(models)])
    assert out.shape == (4, 5, 2)
    np.testing.assert_allclose(np.asarray(out), np.asarray(loop), rtol=1e-6, atol=1e-6)
    # one input for every model: in_dims with None, torch's spelling
    shared = ft.func.vmap(
        lambda p, b, x: ft.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None)
    )(params, buffers, x[0])
    loop = ft.stack([m(x[0]) for m in models])
    np.testing.assert_allclose(np.asarray(shared), np.asarray(loop), rtol=1e-6, atol=1e-6)


def test_ensemble_gradients_are_per_model():
    models = _ensemble()
    params, buffers = ft.func.stack_module_state(models)
    base = models[0]
    x = ft.ones((5, 3))

    def loss(p, b):
        return (ft.func.functional_call(base, (p, b), (x,)) ** 2).sum()

    grads = ft.func.vmap(ft.func.grad(loss))(params, buffers)
    for i, m in enumerate(models):
        (m(x) ** 2).sum().backward()
        for name, p in m.named_parameters():
            np.testing.assert_allclose(
                np.asarray(grads[name][i]), np.asarray(p.grad), rtol=1e-5, atol=1e-6
            )


def test_stack_module_state_reads_values_and_leaves_models_alone():
    models = _ensemble(n=2)
    params, _ = ft.func.stack_module_state(models)
    assert not isinstance(params["0.bias"], ft.nn.Parameter)
    assert not params["0.bias"].requires_grad
    before = models[1][0].bias.tolist()
    models[1][0].bias.data = ft.zeros(8)  # a later write is not seen by the stack
    assert params["0.bias"][1].tolist() == before


def test_ensemble_matches_torch_func():
    torch = pytest.importorskip("torch")
    models = _ensemble()
    tmodels = []
    for m in models:
        t = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        t.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in m.state_dict().items()})
        tmodels.append(t)
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    params, buffers = ft.func.stack_module_state(models)
    assert list(tparams) == list(params) and list(tbuffers) == list(buffers)
    for k in params:
        np.testing.assert_array_equal(np.asarray(params[k]), tparams[k].detach().numpy())
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    base = tmodels[0].to("meta")

    def tcall(p, b, x):
        return torch.func.functional_call(base, (p, b), (x,))

    tout = torch.func.vmap(tcall, in_dims=(0, 0, None))(tparams, tbuffers, torch.tensor(x))
    out = ft.func.vmap(
        lambda p, b, x: ft.func.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None)
    )(params, buffers, ft.asarray(x))
    np.testing.assert_allclose(np.asarray(out), tout.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        ft.func.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        ft.func.stack_module_state([ft.nn.Linear(2, 2), ft.nn.Sequential(ft.nn.Linear(2, 2))])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        ft.func.stack_module_state([ft.nn.Linear(2, 2), ft.nn.Linear(2, 2).eval()])
    with pytest.raises(ValueError, match=r"parameter '0.weight' of models\[1\] is float32\[2, 3\]"):
        ft.func.stack_module_state(
            [ft.nn.Sequential(ft.nn.Linear(2, 2)), ft.nn.Sequential(ft.nn.Linear(3, 2))]
        )
    with pytest.raises(TypeError, match="sequence of modules, got a Module"):
        ft.func.stack_module_state(ft.nn.Linear(2, 2))
    with pytest.raises(TypeError, match=r"models\[1\] must be an ft.nn.Module, got int"):
        ft.func.stack_module_state([ft.nn.Linear(2, 2), 3])


def test_same_transforms_are_fts():
    assert ft.func.grad is ft.grad and ft.func.vjp is ft.vjp
    assert ft.func.hessian is ft.hessian and ft.func.linearize is ft.linearize


def test_grad_and_value_is_torchs_order():
    f = lambda x: ((x * x).sum(), x + 1)  # noqa: E731
    g, (v, aux) = ft.func.grad_and_value(f, has_aux=True)(ft.asarray([1.0, 2.0]))
    assert g.tolist() == [2.0, 4.0] and float(v) == 5.0 and aux.tolist() == [2.0, 3.0]
    (gx, gy), v = ft.func.grad_and_value(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    assert (float(gx), float(gy), float(v)) == (5.0, 2.0, 10.0)


def test_jvp_has_aux_and_errors():
    out, t = ft.func.jvp(ft.sin, (ft.asarray(0.0),), (ft.asarray(2.0),))
    assert float(out) == 0.0 and float(t) == 2.0
    out, t, aux = ft.func.jvp(lambda x: (x * x, {"y": x * 3}), (2.0,), (1.0,), has_aux=True)
    assert (float(out), float(t), float(aux["y"])) == (4.0, 4.0, 6.0)
    assert not isinstance(aux["y"], ft.fx.core.Tracer)
    with pytest.raises(TypeError, match=r"jvp\(has_aux=True\): func must return a tuple"):
        ft.func.jvp(lambda x: x, (1.0,), (1.0,), has_aux=True)


def test_jacobians_and_vmap_take_torchs_arguments():
    x = ft.asarray([1.0, 2.0])
    f = lambda x: x**3  # noqa: E731
    expect = np.diag([3.0, 12.0])
    np.testing.assert_allclose(np.asarray(ft.func.jacrev(f, chunk_size=1)(x)), expect)
    np.testing.assert_allclose(np.asarray(ft.func.jacfwd(f, randomness="same")(x)), expect)
    j, aux = ft.func.jacrev(lambda x: (f(x), x.sum()), has_aux=True)(x)
    assert float(aux) == 3.0
    y = ft.func.vmap(lambda a: a.sum(), in_dims=1, out_dims=0)(ft.ones((2, 3)))
    assert y.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="vmap: randomness must be one of"):
        ft.func.vmap(f, randomness="sometimes")
    with pytest.raises(ValueError, match="jacrev: chunk_size must be None or a positive int"):
        ft.func.jacrev(f, chunk_size=0)
    with pytest.raises(ValueError, match="jacfwd: randomness"):
        ft.func.jacfwd(f, randomness=None)


def test_functional_call_takes_no_args_as_none():
    class Const(ft.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ft.nn.Parameter(ft.ones(2))

        def forward(self):
            return self.w * 2

    m = Const()
    assert ft.func.functional_call(m, {"w": ft.zeros(2)}).tolist() == [0.0, 0.0]
    assert m.w.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="missing keys"):
        ft.func.functional_call(m, {}, strict=True)
