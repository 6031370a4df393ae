"""ft.nn.init: PyTorch's fans, gains and distributions, written into cells."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fntorch as ft
from fntorch.nn import init

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (8, 4, 3), (16, 6, 3, 3), (5, 2, 3, 3, 3)]


def param(shape, dtype=ft.float32):
    return ft.nn.Parameter(ft.zeros(shape, dtype=dtype))


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    want = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    assert init._calculate_fan_in_and_fan_out(ft.zeros(shape)) == want


def test_fans_need_two_dims():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ft.zeros(3))


@pytest.mark.parametrize(
    "nl,param_",
    [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
     ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)],
)  # fmt: skip
def test_gains_match_torch(nl, param_):
    assert init.calculate_gain(nl, param_) == pytest.approx(
        torch.nn.init.calculate_gain(nl, param_)
    )


def test_unknown_gain():
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")


def _stats(p):
    a = np.asarray(p, np.float64)
    return a.min(), a.max(), a.mean(), a.std()


def test_uniform_and_normal():
    p = param((100, 100))
    assert init.uniform_(p, -2.0, 3.0) is p
    lo, hi, mean, _ = _stats(p)
    assert -2 <= lo and hi < 3 and abs(mean - 0.5) < 0.05
    init.normal_(p, 1.0, 0.5)
    _, _, mean, std = _stats(p)
    assert abs(mean - 1) < 0.02 and abs(std - 0.5) < 0.02


def test_trunc_normal():
    p = param((200, 100))
    init.trunc_normal_(p, mean=0.5, std=1.0, a=-0.5, b=1.0)
    lo, hi, mean, std = _stats(p)
    t = torch.nn.init.trunc_normal_(torch.zeros(200, 100), mean=0.5, std=1.0, a=-0.5, b=1.0)
    assert -0.5 <= lo and hi <= 1.0
    assert abs(mean - t.mean().item()) < 0.02 and abs(std - t.std().item()) < 0.02


def test_constants_eye_dirac():
    p = param((3, 4))
    assert init.constant_(p, 0.25).tolist() == [[0.25] * 4] * 3
    assert init.ones_(p).tolist() == [[1.0] * 4] * 3 and init.zeros_(p).tolist() == [[0.0] * 4] * 3
    np.testing.assert_array_equal(np.asarray(init.eye_(p)), torch.nn.init.eye_(torch.zeros(3, 4)))
    for shape, groups in [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((4, 4, 3, 3, 3), 1)]:
        w = init.dirac_(param(shape), groups)
        want = torch.nn.init.dirac_(torch.zeros(shape), groups)
        np.testing.assert_array_equal(np.asarray(w), want)
    with pytest.raises(ValueError, match="2-d"):
        init.eye_(param((2, 2, 2)))


@pytest.mark.parametrize("shape", [(300, 200), (64, 32, 3, 3)])
def test_xavier(shape):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    std = 2.0 * math.sqrt(2.0 / (fan_in + fan_out))
    p = init.xavier_uniform_(param(shape), gain=2.0)
    lo, hi, mean, s = _stats(p)
    bound = math.sqrt(3) * std
    assert -bound <= lo and hi <= bound and lo < -0.95 * bound and hi > 0.95 * bound
    assert abs(s - std) < 0.03 * std
    _, _, mean, s = _stats(init.xavier_normal_(param(shape), gain=2.0))
    assert abs(mean) < 0.05 * std and abs(s - std) < 0.03 * std


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nl,a", [("relu", 0), ("leaky_relu", math.sqrt(5)), ("tanh", 0)])
def test_kaiming(mode, nl, a):
    shape = (128, 64, 3, 3)
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    fan = fan_in if mode == "fan_in" else fan_out
    std = torch.nn.init.calculate_gain(nl, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    lo, hi, _, s = _stats(init.kaiming_uniform_(param(shape), a=a, mode=mode, nonlinearity=nl))
    assert -bound <= lo and hi <= bound and hi > 0.99 * bound and abs(s - std) < 0.02 * std
    _, _, mean, s = _stats(init.kaiming_normal_(param(shape), a=a, mode=mode, nonlinearity=nl))
    assert abs(mean) < 0.02 * std and abs(s - std) < 0.02 * std
    with pytest.raises(ValueError, match="Mode fan_sideways not supported"):
        init.kaiming_uniform_(param(shape), mode="fan_sideways")


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal(shape):
    w = np.asarray(init.orthogonal_(param(shape), gain=2.0), np.float64).reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-4)


def test_sparse():
    w = np.asarray(init.sparse_(param((20, 50)), 0.25, std=0.5))
    assert ((w == 0).sum(0) == 5).all()
    assert abs(w[w != 0].std() - 0.5) < 0.05


def test_reproducible_and_generators():
    ft.manual_seed(0)
    a = np.asarray(init.kaiming_uniform_(param((8, 8)), a=math.sqrt(5)))
    ft.manual_seed(0)
    assert (np.asarray(init.kaiming_uniform_(param((8, 8)), a=math.sqrt(5))) == a).all()
    g = ft.Generator().manual_seed(1)
    b = np.asarray(init.normal_(param((8,)), generator=g))
    g.manual_seed(1)
    assert (np.asarray(init.normal_(param((8,)), generator=g)) == b).all()


def test_dtype_and_plain_tensors():
    p = init.normal_(param((4,), ft.float64))
    assert p.dtype == ft.float64 and isinstance(p, ft.nn.Parameter)
    with pytest.raises(TypeError, match=r"immutable.*ft\.random\.uniform"):
        init.uniform_(ft.zeros(3))
    with pytest.raises(TypeError, match="expected a cell"):
        init.zeros_(ft.zeros(3))
