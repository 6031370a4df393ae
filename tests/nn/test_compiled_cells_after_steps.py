"""A compiled forward keeps working after training steps wrote its cells (BatchNorm's
``num_batches_tracked`` becomes a numpy scalar eagerly, which a kernel must not be fed
as a pointer)."""

import numpy as np

import fntorch as ft


def _model():
    ft.manual_seed(0)
    return ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4), ft.nn.Linear(4, 1))


def _x():
    return ft.asarray(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))


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
