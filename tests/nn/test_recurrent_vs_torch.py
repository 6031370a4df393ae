"""RNN, LSTM, GRU and their cells against PyTorch: the same weights give the same outputs,
final states and gradients (``loss.backward()`` on both sides, through the outputs and
the final states), with PyTorch's state_dict keys, order and shapes; and the pure side
(grad, jit, vmap) of the same modules."""

import math

import numpy as np
import pytest

import fntorch as ft
from tests.nn.same_weights import _same_weights

torch = pytest.importorskip("torch")
nn, tnn = ft.nn, torch.nn

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _flat(out):
    """(output, h) or (output, (h, c)) as a flat list."""
    y, state = out
    return [y, *state] if isinstance(state, tuple) else [y, state]


def _check(ours, theirs, x, hx=None, train=False, rtol=1e-5, atol=1e-5):
    _same_weights(ours, theirs)
    ours.train(train)
    theirs.train(train)
    if hx is None:
        got, want = ours(ft.asarray(x)), theirs(torch.from_numpy(x))
    else:
        h_ours = tuple(map(ft.asarray, hx)) if isinstance(hx, tuple) else ft.asarray(hx)
        h_torch = (
            tuple(map(torch.from_numpy, hx)) if isinstance(hx, tuple) else torch.from_numpy(hx)
        )
        got, want = ours(ft.asarray(x), h_ours), theirs(torch.from_numpy(x), h_torch)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    loss, tloss = 0.0, 0.0
    for a, b in zip(got, want):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=rtol, atol=atol)
        g = RNG.standard_normal(b.shape).astype(np.float32)
        loss = loss + (a * ft.asarray(g)).sum()
        tloss = tloss + (b * torch.from_numpy(g)).sum()
    loss.backward()
    tloss.backward()
    tp = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(tp)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            np.asarray(p.grad), tp[name].grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name
        )


CONFIGS = [
    ("RNN", (3, 4), {}),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bidirectional": True}),
    ("RNN", (3, 4, 2, "relu"), {"bias": False}),  # nonlinearity positionally, as PyTorch
    ("LSTM", (3, 4), {}),
    ("LSTM", (3, 5, 2), {"bidirectional": True, "batch_first": True}),
    ("LSTM", (3, 5, 2), {"proj_size": 2, "bidirectional": True}),
    ("LSTM", (3, 4, 3), {"bias": False, "dropout": 0.5}),
    ("GRU", (3, 4), {}),
    ("GRU", (3, 4, 2), {"bidirectional": True, "batch_first": True}),
    ("GRU", (2, 3, 3), {"bias": False, "bidirectional": True, "dropout": 0.3}),
]


def _input(kwargs, batched=True):
    if not batched:
        return _x(6, 3)
    return _x(2, 6, 3) if kwargs.get("batch_first") else _x(6, 2, 3)


@pytest.mark.parametrize("name, args, kwargs", CONFIGS)
def test_outputs_states_and_gradients_equal_torch(name, args, kwargs):
    torch.manual_seed(0)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)
    x = _input(kwargs)
    x = x[..., : args[0]]
    _check(ours, theirs, x)


@pytest.mark.parametrize("name, args, kwargs", CONFIGS)
def test_given_initial_states_and_unbatched_input(name, args, kwargs):
    torch.manual_seed(0)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)
    n = theirs.num_layers * (2 if theirs.bidirectional else 1)
    h_size = theirs.proj_size or theirs.hidden_size
    x = _input(kwargs)[..., : args[0]]
    h0 = _x(n, 2, h_size)
    hx = (h0, _x(n, 2, theirs.hidden_size)) if name == "LSTM" else h0
    _check(ours, theirs, x, hx)
    x1 = _input(kwargs, batched=False)[..., : args[0]]
    hx1 = tuple(h[:, 0] for h in hx) if name == "LSTM" else hx[:, 0]
    _check(ours, theirs, x1, hx1)
    _check(ours, theirs, x1)


def test_train_mode_dropout_between_layers_runs_and_is_the_identity_at_p_0():
    torch.manual_seed(0)
    ours = nn.LSTM(3, 4, 2, dropout=0.5)
    y1, _ = ours(ft.asarray(_x(5, 2, 3)))
    assert y1.shape == (5, 2, 4) and np.isfinite(np.asarray(y1)).all()
    ours.train()
    ours(ft.asarray(_x(5, 2, 3)))[0].sum().backward()
    assert ours.weight_ih_l0.grad is not None
    _check(nn.GRU(3, 4, 2), tnn.GRU(3, 4, 2), _x(5, 2, 3), train=True)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [("RNNCell", (3, 4), {"nonlinearity": "relu"}), ("LSTMCell", (3, 4), {}),
     ("GRUCell", (3, 4), {"bias": False})],
)  # fmt: skip
def test_cells_equal_torch(name, args, kwargs):
    torch.manual_seed(0)
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(tnn, name)(*args, **kwargs)
    _same_weights(ours, theirs)
    x, h, c = _x(2, 3), _x(2, 4), _x(2, 4)
    hx = (h, c) if name == "LSTMCell" else h
    for xx, hh in [(x, None), (x, hx), (x[0], None)]:
        a = (
            ours(ft.asarray(xx))
            if hh is None
            else ours(ft.asarray(xx), ft.tree.map(ft.asarray, hh))
        )
        b = theirs(torch.from_numpy(xx)) if hh is None else theirs(
            torch.from_numpy(xx), tuple(map(torch.from_numpy, hh)) if name == "LSTMCell"
            else torch.from_numpy(hh))  # fmt: skip
        for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_allclose(np.asarray(u), v.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_default_initialisation_is_torchs_uniform():
    ft.manual_seed(0)
    m = nn.GRU(4, 16, 2, bidirectional=True)
    bound = 1 / math.sqrt(16)
    for name, p in m.named_parameters():
        v = np.asarray(p)
        assert np.abs(v).max() <= bound, name
        assert np.abs(v).max() > 0.8 * bound, name
    a, b = np.asarray(m.weight_ih_l0), np.asarray(m.weight_ih_l0_reverse)
    assert not np.array_equal(a, b)


def test_the_pure_side_grad_jit_and_vmap():
    ft.manual_seed(0)
    m = nn.LSTM(3, 4, 2, bidirectional=True)
    x = ft.asarray(_x(5, 2, 3))

    def loss(m, x):
        y, (h, c) = m(x)
        return (y**2).sum() + h.sum() + c.sum()

    g = ft.grad(loss)(m, x)
    assert type(g) is type(m)
    loss(m, x).backward()
    for name, p in m.named_parameters():
        np.testing.assert_allclose(
            np.asarray(getattr(g, name)), np.asarray(p.grad), rtol=1e-4, atol=1e-5, err_msg=name
        )
    jitted = ft.jit(lambda m, x: m(x)[0])
    np.testing.assert_allclose(np.asarray(jitted(m, x)), np.asarray(m(x)[0]), rtol=1e-5, atol=1e-5)
    gj = ft.jit(ft.grad(loss))(m, x)
    np.testing.assert_allclose(
        np.asarray(gj.weight_hh_l1_reverse),
        np.asarray(g.weight_hh_l1_reverse),
        rtol=1e-4,
        atol=1e-5,
    )
    per = ft.vmap(lambda x: m(x)[0], in_axes=1, out_axes=1)(x)  # unbatched calls, batched
    np.testing.assert_allclose(np.asarray(per), np.asarray(m(x)[0]), rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="input.size\\(-1\\) must be equal to input_size"):
        nn.GRU(3, 4)(ft.ones((5, 2, 2)))
    with pytest.raises(ValueError, match="expected h_0 of shape \\(2, 2, 4\\)"):
        nn.LSTM(3, 4, 2)(ft.ones((5, 2, 3)), (ft.zeros((1, 2, 4)), ft.zeros((2, 2, 4))))
    with pytest.raises(TypeError, match="hx must be a tuple"):
        nn.LSTM(3, 4)(ft.ones((5, 2, 3)), ft.zeros((1, 2, 4)))
    with pytest.raises(ValueError, match="RNN: nonlinearity must be"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="proj_size is supported only by LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout must be a number in"):
        nn.LSTM(3, 4, dropout=2.0)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_float64_matches_torch_to_rounding(name):
    torch.manual_seed(0)
    ours = getattr(nn, name)(3, 4, 2, bidirectional=True).double()
    theirs = getattr(tnn, name)(3, 4, 2, bidirectional=True).double()
    _same_weights(ours, theirs)
    x = RNG.standard_normal((6, 2, 3))
    for a, b in zip(_flat(ours(ft.asarray(x))), _flat(theirs(torch.from_numpy(x)))):
        assert a.dtype == np.float64
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-12, atol=1e-12)
