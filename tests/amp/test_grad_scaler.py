"""ft.amp.GradScaler step by step against torch.amp.GradScaler (CPU, float16 autocast)."""

from __future__ import annotations

import numpy as np
import pytest

import fntorch as ft
import fntorch.nn.functional as F

RNG = np.random.default_rng(1)
STEPS = 6
XS = [RNG.standard_normal((16, 8)).astype(np.float32) for _ in range(STEPS)]
XS[3][0, 0] = np.inf  # one step whose gradients are not finite: skipped by both
YS = [RNG.integers(0, 4, 16) for _ in range(STEPS)]


def _models(torch):
    ft.manual_seed(3)
    model = ft.nn.Sequential(ft.nn.Linear(8, 16), ft.nn.ReLU(), ft.nn.Linear(16, 4))
    tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        for tp, p in zip(tm.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(np.asarray(p)))
    return model, tm


@pytest.mark.parametrize("clip", [False, True])
def test_matches_torch_step_by_step(clip):
    torch = pytest.importorskip("torch")
    model, tm = _models(torch)
    opt = ft.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    kw = dict(init_scale=2.0**14, growth_interval=2)
    scaler = ft.amp.GradScaler("cpu", **kw)
    tscaler = torch.amp.GradScaler("cpu", **kw)
    for x, y in zip(XS, YS):
        opt.zero_grad()
        topt.zero_grad()
        with ft.autocast("cpu", dtype=ft.float16):
            loss = F.cross_entropy(model(ft.asarray(x)), ft.asarray(y))
        with torch.autocast("cpu", dtype=torch.float16):
            tloss = torch.nn.functional.cross_entropy(tm(torch.from_numpy(x)), torch.from_numpy(y))
        assert loss.dtype == ft.float32
        scaler.scale(loss).backward()
        tscaler.scale(tloss).backward()
        if clip:
            scaler.unscale_(opt)
            tscaler.unscale_(topt)
            ft.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            torch.nn.utils.clip_grad_norm_(tm.parameters(), 1.0)
        ran = scaler.step(opt)
        tran = tscaler.step(topt)
        assert (ran is None) == (tran is None)
        scaler.update()
        tscaler.update()
        assert scaler.get_scale() == tscaler.get_scale()
        assert scaler.state_dict() == tscaler.state_dict()
        for p, tp in zip(model.parameters(), tm.parameters()):
            assert p.dtype == ft.float32
            np.testing.assert_allclose(np.asarray(p), tp.detach().numpy(), rtol=2e-2, atol=2e-3)
    # the inf step backed off once; the good ones grew it every growth_interval steps
    assert scaler.get_scale() != 2.0**14


def test_skips_the_step_with_an_inf_gradient_and_backs_off():
    w = ft.nn.Parameter(ft.ones(2))
    opt = ft.optim.SGD([w], lr=0.1)
    scaler = ft.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
    w.grad = ft.asarray([1.0, float("nan")])
    assert scaler.step(opt) is None
    scaler.update()
    assert w.tolist() == [1.0, 1.0] and scaler.get_scale() == 4.0
    scaler.scale((w * w).sum()).backward()
    opt.zero_grad()
    w.grad = ft.asarray([8.0, 8.0])
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8, 0.8]) and scaler.get_scale() == 8.0


def test_errors_name_the_misuse():
    w = ft.nn.Parameter(ft.ones(1))
    opt = ft.optim.SGD([w], lr=0.1)
    scaler = ft.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="no inf checks were recorded prior to update"):
        scaler.update()
    with pytest.raises(RuntimeError, match="no inf checks were recorded for this optimizer"):
        scaler.step(opt)
    w.grad = ft.ones(1)
    scaler = ft.amp.GradScaler("cpu")
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="closure"):
        ft.amp.GradScaler("cpu").step(opt, closure=lambda: 0.0)
    h = ft.nn.Parameter(ft.ones(1, dtype=ft.float16))
    h.grad = ft.ones(1, dtype=ft.float16)
    with pytest.raises(ValueError, match="unscale FP16 gradients"):
        ft.amp.GradScaler("cpu").unscale_(ft.optim.SGD([h], lr=0.1))
    with pytest.raises(ValueError, match="growth_factor must be > 1.0"):
        ft.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(RuntimeError, match="state dict is empty"):
        ft.amp.GradScaler("cpu").load_state_dict({})


def test_disabled_is_a_passthrough_and_cuda_without_gpu_disables():
    w = ft.nn.Parameter(ft.ones(1))
    opt = ft.optim.SGD([w], lr=0.5)
    scaler = ft.amp.GradScaler("cpu", enabled=False)
    loss = (w * 3.0).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [-0.5] and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    if not ft.cuda.is_available():
        with pytest.warns(UserWarning, match="no CUDA device"):
            assert not ft.cuda.amp.GradScaler().is_enabled()


def test_scale_keeps_dtypes_and_structure_and_state_round_trips():
    torch = pytest.importorskip("torch")
    scaler = ft.amp.GradScaler("cpu", init_scale=2.0**16)
    tscaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    h = scaler.scale(ft.asarray(0.5, dtype=ft.float16))
    th = tscaler.scale(torch.tensor(0.5, dtype=torch.float16))
    assert h.dtype == ft.float16 and float(h) == float(th)
    a, b = scaler.scale([ft.asarray(1.0), ft.asarray(2.0)])
    assert (float(a), float(b)) == (65536.0, 131072.0)
    loaded = ft.amp.GradScaler("cpu")
    loaded.load_state_dict(tscaler.state_dict())
    assert loaded.state_dict() == tscaler.state_dict()
