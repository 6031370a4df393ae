"""``ft.jit(model)`` in grad mode goes on the tape (as ``ft.compile(model)`` does), and a
compiled forward keeps working after training steps wrote its cells (BatchNorm's
``num_batches_tracked`` becomes a numpy scalar eagerly)."""

import numpy as np

import fntorch as ft


def _model():
    ft.manual_seed(0)
    return ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4), ft.nn.Linear(4, 1))


def _x():
    return ft.asarray(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))


def _grads(m):
    return [np.asarray(p.grad) for p in m.parameters()]


def test_jit_of_a_model_in_grad_mode_is_taped():
    ours, ref, x = _model(), _model(), _x()
    f = ft.jit(ours)
    for _ in range(2):  # the first call compiles, the second hits the cache
        ours.zero_grad()
        ref.zero_grad()
        y = f(x).sum()
        assert y.requires_grad
        y.backward()
        ref(x).sum().backward()
        for a, b in zip(_grads(ours), _grads(ref)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(ours[1].running_mean), np.asarray(ref[1].running_mean), rtol=1e-5
    )
    with ft.no_grad():
        assert not f(x).requires_grad


def test_compiled_forward_after_training_steps():
    m, x = _model(), _x()
    f = ft.compile(m)
    for _ in range(2):
        m.zero_grad()
        f(x).sum().backward()
    m(x).sum().backward()  # eager: num_batches_tracked + 1 is a numpy scalar
    with ft.no_grad():
        got = f(x)
    with ft.no_grad():
        want = m(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
