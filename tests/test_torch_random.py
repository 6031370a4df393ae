"""PyTorch-style randomness: reproducible, split per draw, statistically right."""

from __future__ import annotations

import numpy as np
import pytest

import fntorch as ft

N = 20000


def test_manual_seed_reproduces_and_draws_differ():
    assert ft.manual_seed(3) is ft.default_generator and ft.initial_seed() == 3
    a, b = ft.rand(5), ft.rand(5)
    assert not (a == b).all()
    ft.manual_seed(3)
    assert (ft.rand(5) == a).all() and (ft.rand(5) == b).all()
    s = ft.seed()
    assert s == ft.initial_seed() and isinstance(s, int)


def test_generators_are_independent_of_the_global_key():
    g = ft.Generator().manual_seed(11)
    assert g.initial_seed() == 11 and g.device == ft.device("cpu")
    ft.manual_seed(0)
    a = ft.randn(4, generator=g)
    after_global = ft.randn(4)
    ft.manual_seed(0)
    assert (ft.randn(4) == after_global).all()  # g's draw did not advance the global key
    g.manual_seed(11)
    assert (ft.randn(4, generator=g) == a).all()
    h = ft.Generator().manual_seed(11)
    assert (ft.randn(4, generator=h) == a).all()


def test_states_round_trip():
    g = ft.Generator().manual_seed(5)
    st = g.get_state()
    assert st.dtype == ft.uint8 and st.shape == (16,)
    a = ft.rand(3, generator=g)
    assert (ft.rand(3, generator=g.set_state(st)) == a).all() and g.initial_seed() == 5
    st = ft.get_rng_state()
    b = ft.randint(0, 100, (4,))
    ft.set_rng_state(st)
    assert (ft.randint(0, 100, (4,)) == b).all()
    with pytest.raises(ValueError, match="16-byte"):
        g.set_state(ft.zeros(3, dtype=ft.uint8))


def test_the_key_lives_in_a_cell():
    from fntorch.fx.cell import Cell

    cell = ft.default_generator._cell
    assert isinstance(cell, Cell)
    before = cell.tolist()
    ft.rand(1)
    assert cell.tolist() != before


def test_shapes_and_dtypes():
    assert ft.rand(2, 3).shape == ft.rand((2, 3)).shape == ft.rand([2, 3]).shape == (2, 3)
    assert ft.rand(ft.Size([4])).shape == (4,) and ft.rand().shape == ()
    assert ft.randn(2, dtype=ft.float64).dtype == ft.float64 and ft.rand(2).dtype == ft.float32
    assert (
        ft.randint(5, (3,)).dtype == ft.int64
        and ft.randint(0, 5, (3,), dtype=ft.int32).dtype == ft.int32
    )
    assert ft.randperm(4).dtype == ft.int64
    x = ft.zeros((2, 3), dtype=ft.float64)
    assert ft.rand_like(x).dtype == ft.float64 and ft.randn_like(x).shape == (2, 3)
    assert ft.randint_like(x, 3).dtype == ft.float64 and ft.randint_like(x, 1, 3).shape == (2, 3)
    assert ft.rand(2, device="cpu").device == ft.device("cpu")
    assert ft.rand(2, requires_grad=True).shape == (2,)  # accepted; the tape lands later
    with pytest.raises(TypeError, match="float dtype"):
        ft.rand(2, dtype=ft.int32)
    with pytest.raises(TypeError, match="generator must be an ft.Generator"):
        ft.rand(2, generator=3)


def test_continuous_statistics():
    ft.manual_seed(0)
    u = np.asarray(ft.rand(N), np.float64)
    assert (
        u.min() >= 0
        and u.max() < 1
        and abs(u.mean() - 0.5) < 0.01
        and abs(u.var() - 1 / 12) < 0.005
    )
    z = np.asarray(ft.randn(N), np.float64)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    n = np.asarray(ft.normal(2.0, 3.0, (N,)), np.float64)
    assert abs(n.mean() - 2) < 0.1 and abs(n.std() - 3) < 0.1
    m = np.asarray(ft.normal(ft.full((N,), -1.0), ft.full((N,), 0.5)))
    assert abs(m.mean() + 1) < 0.03 and abs(m.std() - 0.5) < 0.03
    assert ft.normal(ft.zeros((2, 1)), ft.ones(3)).shape == (2, 3)
    assert ft.normal(0.0, ft.ones(4)).shape == (4,)
    with pytest.raises(TypeError, match="give size="):
        ft.normal(0.0, 1.0)


def test_discrete_statistics():
    ft.manual_seed(1)
    r = np.asarray(ft.randint(3, 7, (N,)))
    assert set(np.unique(r)) == {3, 4, 5, 6}
    assert np.allclose(np.bincount(r - 3) / N, 0.25, atol=0.02)
    assert sorted(ft.randperm(50).tolist()) == list(range(50))
    p = ft.full((N,), 0.3)
    b = ft.bernoulli(p)
    assert b.dtype == ft.float32 and set(np.unique(np.asarray(b))) <= {0.0, 1.0}
    assert abs(float(b.mean()) - 0.3) < 0.02
    assert abs(float(ft.bernoulli(ft.zeros(N), p=0.8).mean()) - 0.8) < 0.02


def test_multinomial():
    ft.manual_seed(2)
    w = ft.asarray([1.0, 2.0, 3.0, 4.0])
    draws = np.asarray(ft.multinomial(w, N, replacement=True))
    assert draws.dtype == np.int64 and draws.shape == (N,)
    assert np.allclose(np.bincount(draws, minlength=4) / N, [0.1, 0.2, 0.3, 0.4], atol=0.02)
    perm = ft.multinomial(w, 4)
    assert sorted(perm.tolist()) == [0, 1, 2, 3]
    firsts = np.asarray([ft.multinomial(w, 2)[0].item() for _ in range(400)])
    assert np.bincount(firsts, minlength=4)[3] > np.bincount(firsts, minlength=4)[0]
    assert ft.multinomial(ft.asarray([0.0, 5.0, 0.0]), 1).tolist() == [1]
    assert ft.multinomial(ft.ones((3, 5)), 2).shape == (3, 2)
    assert ft.multinomial(ft.ones((3, 5)), 7, replacement=True).shape == (3, 7)
    with pytest.raises(RuntimeError, match="without replacement"):
        ft.multinomial(w, 5)


def test_cuda_seeds_are_the_global_key():
    ft.cuda.manual_seed_all(9)
    assert ft.initial_seed() == 9
