"""An eager ``step()`` runs as one compiled program per param group (``optim/_fused.py``):
the same numbers as the per-parameter path for every optimizer, no retrace when a
scheduler changes ``lr``, and the per-parameter path where fusing cannot apply."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.optim import _fused

from .test_optimizers import CASES, IDS, _problem


def _run(name, kw, fused, dtype=np.float32):
    p0, grads = _problem(dtype)
    params = [ft.nn.Parameter(ft.asarray(a)) for a in p0]
    opt = getattr(ft.optim, name)(params, **kw)
    taken = []
    original = _fused.fused_step

    def spy(*args):
        taken.append(original(*args) if fused else False)
        return taken[-1]

    _fused.fused_step = spy
    try:
        for g in grads:
            for p, a in zip(params, g):
                p.grad = ft.asarray(a)
            opt.step()
    finally:
        _fused.fused_step = original
    state = [{k: np.asarray(v) for k, v in opt.state[p].items()} for p in params]
    return [np.asarray(p) for p in params], state, taken


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_fused_step_equals_the_per_parameter_path(name, kw):
    values, state, taken = _run(name, kw, fused=True)
    want_values, want_state, _ = _run(name, kw, fused=False)
    assert all(taken), "the fused path was not taken"
    # To rounding: the kernels may contract a multiply-add that eager rounds twice.
    for a, b in zip(values, want_values):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
    for s, w in zip(state, want_state):
        assert list(s) == list(w)
        for k in s:
            np.testing.assert_allclose(s[k], w[k], rtol=2e-6, atol=1e-7, err_msg=k)


def test_float64_groups_take_the_per_parameter_path():
    *_, taken = _run("Adam", dict(lr=0.1), fused=True, dtype=np.float64)
    assert not any(taken)


def test_a_scheduler_changing_lr_does_not_retrace():
    p = ft.nn.Parameter(ft.ones(3))
    opt = ft.optim.Adam([p], lr=0.1)
    sched = ft.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    program = _fused._program("adam")
    for _ in range(4):
        p.grad = ft.ones(3)
        opt.step()
        sched.step()
        if _ == 0:
            traces = program.stats["traces"]
    assert program.stats["traces"] == traces


def test_changing_other_settings_falls_back_after_a_few_configurations():
    p = ft.nn.Parameter(ft.ones(3))
    opt = ft.optim.SGD([p], lr=0.1, momentum=0.5)
    for i in range(_fused.MAX_CONFIGS + 3):
        opt.param_groups[0]["momentum"] = 0.5 + 0.01 * i
        p.grad = ft.ones(3)
        opt.step()
    assert len(opt._fused_configs) == _fused.MAX_CONFIGS


def test_compiled_steps_take_the_traced_path():
    results = []
    for compiled in (True, False):
        p = ft.nn.Parameter(ft.ones(3))
        opt = ft.optim.Adam([p], lr=0.1)

        def step():
            opt.zero_grad()
            (p**2).sum().backward()
            opt.step()

        run = ft.compile(step) if compiled else step
        run()
        run()
        results.append(np.asarray(p))
        # under the trace fused_step declines: the compiled program has the update
        assert bool(getattr(opt, "_fused_configs", set())) is not compiled
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
