"""10 steps of each lr scheduler give PyTorch's lr list (and its state_dict round trip)."""

from __future__ import annotations

import pytest

import fntorch as ft

torch = pytest.importorskip("torch")

CASES = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=4),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=11),
    "OneCycleLR3": lambda m, o: m.OneCycleLR(
        o, max_lr=[1.0, 2.0], total_steps=12, three_phase=True, anneal_strategy="linear"
    ),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.5, total_iters=3), m.ExponentialLR(o, 0.8)], [3]
    ),
}


def _opts(lib, cls="SGD"):
    ps = [lib.nn.Parameter(lib.zeros(1)), lib.nn.Parameter(lib.zeros(1))]
    return getattr(lib.optim, cls)(
        [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1, momentum=0.9
    )


@pytest.mark.parametrize("name", list(CASES))
def test_ten_steps_match_pytorch(name):
    lrs = {}
    for lib in (torch, ft):
        opt = _opts(lib)
        sched = CASES[name](lib.optim.lr_scheduler, opt)
        seq = [sched.get_last_lr()]
        for _ in range(10):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        lrs[lib.__name__] = (seq, [dict(g, params=None) for g in opt.param_groups])
    (tseq, tgroups), (fseq, fgroups) = lrs["torch"], lrs["fntorch"]
    assert [x for r in fseq for x in r] == pytest.approx([x for r in tseq for x in r], rel=1e-12)
    for tg, fg in zip(tgroups, fgroups):
        assert set(tg) == set(fg) and tg["initial_lr"] == pytest.approx(fg["initial_lr"])
        assert fg["momentum"] == pytest.approx(tg["momentum"])


def test_reduce_lr_on_plateau_matches_pytorch():
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.4]
    seqs = []
    for lib in (torch, ft):
        opt = _opts(lib)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, patience=1, cooldown=1, factor=0.5, min_lr=0.01
        )
        seq = []
        for m in metrics:
            s.step(m)
            seq.append(s.get_last_lr())
        seqs.append(seq)
    assert seqs[0] == seqs[1]


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "SequentialLR"])
def test_state_dict_round_trip(name):
    opt = _opts(ft)
    sched = CASES[name](ft.optim.lr_scheduler, opt)
    for _ in range(4):
        sched.step()
    sd = sched.state_dict()
    assert sd["last_epoch"] == 4 and "optimizer" not in sd
    opt2 = _opts(ft)
    opt2.load_state_dict(opt.state_dict())
    sched2 = CASES[name](ft.optim.lr_scheduler, opt2)
    sched2.load_state_dict(sd)
    opt2.load_state_dict(opt.state_dict())
    for _ in range(3):
        sched.step()
        sched2.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr())
