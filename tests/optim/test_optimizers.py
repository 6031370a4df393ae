"""The stateful optimizers against PyTorch's (foreach=False): parameters after 3 steps,
state_dict layout and values, load_state_dict round trips, param_groups, errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, betas=(0.5, 0.9), weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.5, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
]
IDS = [f"{n}-{'-'.join(k)}" for n, k in CASES]


def _problem(dtype, steps=3, seed=0):
    rng = np.random.default_rng(seed)
    p0 = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype)]
    grads = [[rng.standard_normal(a.shape).astype(dtype) for a in p0] for _ in range(steps)]
    return p0, grads


def _pair(name, kw, p0):
    tp = [torch.tensor(a, requires_grad=True) for a in p0]
    fp = [ft.nn.Parameter(ft.asarray(a)) for a in p0]
    return (
        tp,
        getattr(torch.optim, name)(tp, foreach=False, **kw),
        fp,
        getattr(ft.optim, name)(fp, foreach=False, **kw),
    )


def _feed(tp, fp, grads):
    for t, f, g in zip(tp, fp, grads):
        t.grad = torch.tensor(g)
        f.grad = ft.asarray(g)


def _assert_close(t, f, rtol, atol):
    np.testing.assert_allclose(np.asarray(f), t.detach().numpy(), rtol=rtol, atol=atol)


def _assert_same_state(tsd, fsd, rtol=1e-12, atol=1e-14):
    assert list(tsd) == list(fsd) == ["state", "param_groups"]
    assert list(tsd["state"]) == list(fsd["state"])
    for k, ts in tsd["state"].items():
        fs = fsd["state"][k]
        assert list(ts) == list(fs), k
        for key, tv in ts.items():
            fv = fs[key]
            if isinstance(tv, torch.Tensor):
                assert isinstance(fv, ft.Tensor), key
                assert tuple(tv.shape) == fv.shape and str(tv.dtype).split(".")[1] == str(fv.dtype)
                _assert_close(tv, fv, rtol, atol)
            else:
                assert type(tv) is type(fv) and tv == fv, key
    assert len(tsd["param_groups"]) == len(fsd["param_groups"])
    for tg, fg in zip(tsd["param_groups"], fsd["param_groups"]):
        assert list(tg) == list(fg)
        for key in tg:
            assert type(tg[key]) is type(fg[key]) and tg[key] == fg[key], key


# PyTorch's CPU kernels fuse some multiply-adds: float32 agrees to an ulp or two
TOLERANCES = {np.float64: (1e-12, 1e-14), np.float32: (2e-6, 1e-7)}


@pytest.mark.parametrize("dtype", list(TOLERANCES), ids=lambda d: d.__name__)
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_three_steps_match_pytorch(name, kw, dtype):
    rtol, atol = TOLERANCES[dtype]
    p0, grads = _problem(dtype)
    tp, to, fp, fo = _pair(name, kw, p0)
    for g in grads:
        _feed(tp, fp, g)
        to.step()
        fo.step()
    for t, f in zip(tp, fp):
        assert np.asarray(f).dtype == dtype
        _assert_close(t, f, rtol, atol)
    _assert_same_state(to.state_dict(), fo.state_dict(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,kw", CASES[1::2], ids=IDS[1::2])
def test_load_state_dict_continues_identically(name, kw):
    p0, grads = _problem(np.float64, steps=4)
    tp, to, fp, fo = _pair(name, kw, p0)
    for g in grads[:2]:
        _feed(tp, fp, g)
        to.step()
        fo.step()
    # a fresh optimizer over fresh parameters, loaded from fntorch's and from PyTorch's dicts
    sd = copy.deepcopy(fo.state_dict())
    loaded = []
    for source in (sd, to.state_dict()):
        ps = [ft.nn.Parameter(f.data) for f in fp]
        opt = getattr(ft.optim, name)(ps, lr=123.0, foreach=False)
        opt.load_state_dict(source)
        assert opt.param_groups[0]["lr"] == fo.param_groups[0]["lr"] != 123.0
        loaded.append((ps, opt))
    for g in grads[2:]:
        _feed(tp, fp, g)
        to.step()
        fo.step()
        for ps, opt in loaded:
            for p, a in zip(ps, g):
                p.grad = ft.asarray(a)
            opt.step()
    for ps, _ in loaded:
        for t, p in zip(tp, ps):
            _assert_close(t, p, 1e-12, 1e-14)


def test_state_dict_before_any_step_and_skipped_params():
    tp, to, fp, fo = _pair("Adam", dict(lr=0.1), [np.ones(2), np.ones(3)])
    _assert_same_state(to.state_dict(), fo.state_dict())
    tp[0].grad, fp[0].grad = torch.ones(2, dtype=torch.float64), ft.ones(2, dtype=ft.float64)
    to.step()
    fo.step()
    assert list(fo.state_dict()["state"]) == [0]
    assert fp[1].tolist() == [1.0, 1.0, 1.0]  # no grad: untouched
    _assert_same_state(to.state_dict(), fo.state_dict())
    # Adagrad's state exists from construction; SGD without momentum keeps none
    _, ta, _, fa = _pair("Adagrad", dict(lr=0.1), [np.ones(2)])
    _assert_same_state(ta.state_dict(), fa.state_dict())
    _, ts, fps, fs = _pair("SGD", dict(lr=0.1), [np.ones(2)])
    fps[0].grad = ft.ones(2, dtype=ft.float64)
    fs.step()
    assert fs.state_dict()["state"] == {} and dict(fs.state) == {}


def test_param_groups_and_lr_changes():
    w, b = ft.nn.Parameter(ft.ones(2)), ft.nn.Parameter(ft.ones(1))
    tw, tb = torch.ones(2, requires_grad=True), torch.ones(1, requires_grad=True)
    fo = ft.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    to = torch.optim.SGD([{"params": [tw]}, {"params": tb, "lr": 0.5}], lr=0.1, momentum=0.9)
    for step in range(3):
        if step == 1:
            fo.param_groups[0]["lr"] = 0.01
            to.param_groups[0]["lr"] = 0.01
        w.grad, b.grad = ft.ones(2), ft.ones(1)
        tw.grad, tb.grad = torch.ones(2), torch.ones(1)
        fo.step()
        to.step()
    _assert_close(tw, w, 1e-6, 1e-7)
    _assert_close(tb, b, 1e-6, 1e-7)
    _assert_same_state(to.state_dict(), fo.state_dict(), 1e-6, 1e-7)
    c, tc = ft.nn.Parameter(ft.zeros(3)), torch.zeros(3, requires_grad=True)
    fo.add_param_group({"params": [c], "momentum": 0.0})
    to.add_param_group({"params": [tc], "momentum": 0.0})
    _assert_same_state(to.state_dict(), fo.state_dict(), 1e-6, 1e-7)
    assert "Parameter Group 2" in repr(fo) and repr(fo).startswith("SGD (")


def test_zero_grad_and_closure():
    p = ft.nn.Parameter(ft.ones(2))
    opt = ft.optim.SGD([p], lr=0.5)
    p.grad = ft.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None

    def closure():
        p.grad = ft.full((2,), 2.0)
        return 7.0

    assert opt.step(closure) == 7.0
    assert p.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda p: ft.optim.SGD(p, lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda p: ft.optim.SGD(p, lr=0.1, momentum=-1), "Invalid momentum value"),
        (lambda p: ft.optim.SGD(p, nesterov=True), "Nesterov momentum requires"),
        (lambda p: ft.optim.Adam(p, lr=-0.1), "Invalid learning rate"),
        (lambda p: ft.optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
        (lambda p: ft.optim.AdamW(p, eps=-1.0), "Invalid epsilon value"),
        (lambda p: ft.optim.RMSprop(p, alpha=-1.0), "Invalid alpha value"),
        (lambda p: ft.optim.Adagrad(p, lr_decay=-1.0), "Invalid lr_decay value"),
        (lambda p: ft.optim.Adadelta(p, rho=2.0), "Invalid rho value"),
        (lambda p: ft.optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
        (lambda p: ft.optim.SGD([{"params": p}, {"params": p}]), "more than one parameter group"),
    ],
)
def test_errors_are_pytorchs(make, message):
    params = [ft.nn.Parameter(ft.ones(1))]
    with pytest.raises(ValueError, match=message):
        make(params)


def test_type_errors():
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        ft.optim.SGD(ft.nn.Parameter(ft.ones(1)))
    with pytest.raises(TypeError, match=r"ft\.nn\.Parameter\(t\)"):
        ft.optim.SGD([ft.ones(1)])
    opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
