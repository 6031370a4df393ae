"""The pure optimizers equal the stateful ones, run under ft.jit (one trace) and train."""

from __future__ import annotations

import numpy as np
import pytest

import fntorch as ft

SETTINGS = [
    ("sgd", "SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1)),
    ("sgd", "SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("adam", "Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
    ("adamw", "AdamW", dict(lr=0.1)),
    ("rmsprop", "RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("adagrad", "Adagrad", dict(lr=0.1, lr_decay=0.1)),
    ("adadelta", "Adadelta", dict(weight_decay=0.1)),
]


def _grads(steps=3):
    rng = np.random.default_rng(1)
    return [{"w": ft.asarray(rng.standard_normal(4).astype(np.float32))} for _ in range(steps)]


@pytest.mark.parametrize(
    "fname,cname,kw", SETTINGS, ids=[f"{f}{i}" for i, (f, _, _) in enumerate(SETTINGS)]
)
def test_pure_equals_stateful_and_jits_once(fname, cname, kw):
    opt = getattr(ft.optim.functional, fname)(**kw)
    p = ft.nn.Parameter(ft.arange(4.0))
    stateful = getattr(ft.optim, cname)([p], **kw)
    params = {"w": ft.arange(4.0)}
    state = opt.init(params)
    traces = []

    def step(grads, state, params):
        traces.append(1)
        return opt.update(grads, state, params)

    jstep = ft.jit(step)
    jparams, jstate = params, state
    for g in _grads():
        params, state = opt.update(g, state, params)
        jparams, jstate = jstep(g, jstate, jparams)
        p.grad = g["w"]
        stateful.step()
    np.testing.assert_allclose(np.asarray(params["w"]), np.asarray(p), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jparams["w"]), np.asarray(p), rtol=1e-5, atol=1e-6)
    assert len(traces) == 1


def test_sgd_with_grad_trains_a_regression():
    rng = np.random.default_rng(0)
    x = ft.asarray(rng.standard_normal((32, 3)).astype(np.float32))
    y = x @ ft.asarray([1.0, -2.0, 0.5]) + 0.3
    params = {"w": ft.zeros(3), "b": ft.zeros(())}

    def loss(params):
        return ft.mean((x @ params["w"] + params["b"] - y) ** 2)

    opt = ft.optim.sgd(lr=0.1, momentum=0.9)
    state = opt.init(params)
    first = float(loss(params))
    for _ in range(60):
        params, state = opt.update(ft.grad(loss)(params), state, params)
    assert float(loss(params)) < 1e-3 * first


def test_none_grads_leave_leaves_alone():
    opt = ft.optim.adam(lr=0.1)
    params = {"a": ft.ones(2), "b": ft.ones(2)}
    new, _ = opt.update({"a": ft.ones(2), "b": None}, opt.init(params), params)
    assert new["b"].tolist() == [1.0, 1.0] and new["a"].tolist() != [1.0, 1.0]


@pytest.mark.parametrize(
    "fname,cname,kw,message",
    [
        ("sgd", "SGD", dict(lr=-1.0), "Invalid learning rate: -1.0"),
        ("sgd", "SGD", dict(nesterov=True), "Nesterov momentum requires"),
        ("adam", "Adam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
        ("adamw", "AdamW", dict(eps=-1.0), "Invalid epsilon value"),
        ("rmsprop", "RMSprop", dict(alpha=-1.0), "Invalid alpha value"),
        ("adagrad", "Adagrad", dict(lr_decay=-1.0), "Invalid lr_decay value"),
        ("adadelta", "Adadelta", dict(rho=2.0), "Invalid rho value"),
    ],
)
def test_pure_and_stateful_share_validation(fname, cname, kw, message):
    with pytest.raises(ValueError, match=message):
        getattr(ft.optim.functional, fname)(**kw)
    with pytest.raises(ValueError, match=message):
        getattr(ft.optim, cname)([ft.nn.Parameter(ft.ones(1))], **kw)


@pytest.mark.parametrize("fname,cname,kw", SETTINGS, ids=[f for f, _, _ in SETTINGS])
def test_pure_hyperparams_are_the_param_group_without_kernel_choices(fname, cname, kw):
    hp = getattr(ft.optim.functional, fname)(**kw).hyperparams
    group = getattr(ft.optim, cname)([ft.nn.Parameter(ft.ones(1))], **kw).param_groups[0]
    ignored = {"foreach", "capturable", "differentiable", "fused"}
    assert not ignored & set(hp)
    assert list(hp) == [k for k in group if k not in ignored | {"params"}]
    assert all(hp[k] == group[k] for k in hp)
