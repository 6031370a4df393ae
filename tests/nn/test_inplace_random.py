"""The random in-place fills of cells (normal_, uniform_, ...: PyTorch's distributions,
checked with a two-sample KS test against torch's draws) and requires_grad_ on plain
tensors (a new leaf cell, the same as ft.tensor(..., requires_grad=True))."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fntorch as ft

N = 20_000

# (method, args, the out-of-place form its TypeError names)
FILLS = [
    ("normal_", (2.0, 0.5), "ft.normal(mean, std, t.shape)"),
    ("uniform_", (-1.0, 3.0), "ft.rand_like(t)"),
    ("exponential_", (4.0,), "ft.log1p(-ft.rand_like(t)) / lambd"),
    ("log_normal_", (0.5, 0.25), "ft.exp(ft.normal(mean, std, t.shape))"),
    ("cauchy_", (1.0, 2.0), "ft.tan(ft.pi"),
    ("geometric_", (0.3,), "math.log1p(-p)"),
    ("bernoulli_", (0.3,), "ft.bernoulli(ft.full_like(t, p))"),
    ("random_", (2, 9), "ft.randint_like(t, low, high)"),
]
IDS = [f[0] for f in FILLS]


def _draw(method, args, dtype=ft.float32, seed=0):
    ft.manual_seed(seed)
    cell = ft.nn.Buffer(ft.zeros(N, dtype=dtype))
    assert getattr(cell, method)(*args) is cell
    return cell


@pytest.mark.parametrize("method,args,form", FILLS, ids=IDS)
def test_distribution_is_torchs(method, args, form):
    torch = pytest.importorskip("torch")
    stats = pytest.importorskip("scipy.stats")
    ours = np.asarray(_draw(method, args))
    torch.manual_seed(0)
    theirs = getattr(torch.zeros(N), method)(*args).numpy()
    assert ours.dtype == np.float32 and ours.shape == (N,)
    if method in ("bernoulli_", "random_", "geometric_"):
        # discrete: the frequencies of each value agree (a chi-square-like bound)
        values = np.union1d(np.unique(ours), np.unique(theirs))
        for v in values[:20]:
            p = (theirs == v).mean()
            assert abs((ours == v).mean() - p) < 5 * math.sqrt(p * (1 - p) / N) + 1e-3, v
    else:
        assert stats.ks_2samp(ours, theirs).pvalue > 1e-4
    # and it is not a constant fill
    assert len(np.unique(ours)) > 1


@pytest.mark.parametrize("method,args,form", FILLS, ids=IDS)
def test_seeded_generator_and_global_key_reproduce(method, args, form):
    a, b = np.asarray(_draw(method, args)), np.asarray(_draw(method, args))
    np.testing.assert_array_equal(a, b)
    c = np.asarray(_draw(method, args, seed=1))
    assert not np.array_equal(a, c)
    g = ft.Generator().manual_seed(5)
    x = np.asarray(getattr(ft.nn.Buffer(ft.zeros(50)), method)(*args, generator=g))
    g.manual_seed(5)
    ft.manual_seed(123)  # the global key plays no part
    y = np.asarray(getattr(ft.nn.Buffer(ft.zeros(50)), method)(*args, generator=g))
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("method,args,form", FILLS, ids=IDS)
def test_plain_tensors_raise_naming_the_out_of_place_form(method, args, form):
    t = ft.zeros(3)
    with pytest.raises(TypeError, match=rf"Tensor\.{method}: fntorch tensors are immutable") as e:
        getattr(t, method)(*args)
    assert form in str(e.value)
    assert t.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("method,args,form", FILLS, ids=IDS)
def test_parameters_take_fills_under_no_grad_or_through_data(method, args, form):
    p = ft.nn.Parameter(ft.zeros(4))
    with pytest.raises(RuntimeError, match=f"{method}: a leaf Parameter that requires grad"):
        getattr(p, method)(*args)
    assert p.tolist() == [0.0] * 4
    with ft.no_grad():
        getattr(p, method)(*args)
    getattr(p.data, method)(*args)
    assert isinstance(p, ft.nn.Parameter) and p.dtype == ft.float32 and p.shape == (4,)


def test_dtypes_are_kept_and_checked():
    for dtype in (ft.float16, ft.bfloat16, ft.float64):
        assert _draw("normal_", (), dtype).dtype == dtype
        assert _draw("uniform_", (), dtype).dtype == dtype
    r = _draw("random_", (), ft.int32)
    assert r.dtype == ft.int32 and int(r.min()) >= 0 and int(r.max()) > 2**30
    f = np.asarray(_draw("random_", (), ft.float32))
    assert f.min() >= 0 and f.max() <= 2**24 and f.max() > 2**23 and (f == np.round(f)).all()
    assert set(np.asarray(_draw("random_", (5,), ft.int64)).tolist()) == set(range(5))
    assert set(np.asarray(_draw("bernoulli_", (), ft.int64)).tolist()) == {0, 1}
    for method in ("normal_", "uniform_", "exponential_", "log_normal_", "cauchy_"):
        with pytest.raises(TypeError, match=f"Tensor.{method}: needs a floating-point cell"):
            getattr(ft.nn.Buffer(ft.zeros(2, dtype=ft.int64)), method)()


def test_bernoulli_with_a_tensor_of_probabilities():
    b = ft.nn.Buffer(ft.zeros((2, 3))).bernoulli_(ft.asarray([0.0, 1.0, 1.0]))
    assert b.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    with pytest.raises(TypeError, match="p must be a float tensor"):
        ft.nn.Buffer(ft.zeros(3)).bernoulli_(ft.ones(3, dtype=ft.int64))


def test_uniform_takes_torchs_from_and_to_keywords():
    b = ft.nn.Buffer(ft.zeros(100)).uniform_(**{"from": 5.0, "to": 6.0})
    assert float(b.min()) >= 5.0 and float(b.max()) < 6.0
    with pytest.raises(TypeError, match=r"Tensor.uniform_: unexpected keyword arguments \['low'\]"):
        ft.nn.Buffer(ft.zeros(1)).uniform_(low=1.0)


@pytest.mark.parametrize(
    "method,args,message",
    [
        ("normal_", (0.0, -1.0), "normal_: std must be >= 0, got -1.0"),
        ("uniform_", (2.0, 1.0), r"from=2.0 > to=1.0"),
        ("exponential_", (0.0,), "lambd must be > 0"),
        ("log_normal_", (0.0, 0.0), "std must be > 0"),
        ("cauchy_", (0.0, -2.0), "sigma must be > 0"),
        ("geometric_", (1.5,), r"p must be in \(0, 1\)"),
        ("bernoulli_", (1.5,), r"p must be in \[0, 1\]"),
        ("random_", (5, 5), "expects from < to, got from=5, to=5"),
    ],
)
def test_bad_arguments_raise_and_write_nothing(method, args, message):
    cell = ft.nn.Buffer(ft.full((3,), 7.0))
    with pytest.raises(ValueError, match=message):
        getattr(cell, method)(*args)
    assert cell.tolist() == [7.0, 7.0, 7.0]
    with pytest.raises(TypeError, match=f"Tensor.{method}: "):
        getattr(cell, method)(*(["x"] * len(args)))
    assert cell.tolist() == [7.0, 7.0, 7.0]


# ------------------------------------------------------------------- requires_grad_


def test_requires_grad_returns_a_new_leaf_and_leaves_the_tensor_alone():
    x = ft.asarray([1.0, 2.0])
    leaf = x.requires_grad_()
    assert leaf is not x and isinstance(leaf, ft.nn.Parameter)
    assert leaf.requires_grad and leaf.is_leaf and leaf.grad is None and leaf.grad_fn is None
    assert not x.requires_grad  # immutable: x itself does not change
    (leaf**2).sum().backward()
    assert leaf.grad.tolist() == [2.0, 4.0]
    # the PyTorch idiom: use the result
    ft.manual_seed(0)
    w = ft.randn(3).requires_grad_()
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0, 3.0]


def test_requires_grad_without_using_the_result_records_nothing():
    x = ft.ones(2)
    x.requires_grad_()
    y = (x * 2).sum()
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_tensor_requires_grad_is_the_same_leaf():
    a = ft.tensor([1.0, 2.0], requires_grad=True)
    b = ft.tensor([1.0, 2.0]).requires_grad_()
    assert type(a) is type(b) is ft.nn.Parameter and a.tolist() == b.tolist()
    assert type(ft.tensor([1.0])) is ft.Tensor and not ft.tensor([1.0]).requires_grad
    (a * b).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] == b.grad.tolist()
    assert ft.tensor([1, 2], dtype=ft.float64, requires_grad=True).dtype == ft.float64


def test_requires_grad_on_other_values():
    x = ft.ones(2)
    assert x.requires_grad_(False) is x
    p = ft.nn.Parameter(ft.ones(2))
    assert p.requires_grad_() is p  # a parameter sets its flag in place
    y = p * 2
    assert y.requires_grad_() is y  # already requires grad: unchanged
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(TypeError, match=r"a Buffer never requires grad.*ft.nn.Parameter"):
        ft.nn.Buffer(ft.ones(1)).requires_grad_()
    with pytest.raises(RuntimeError, match="only tensors of floating point and complex dtype"):
        ft.arange(3).requires_grad_()
    with pytest.raises(RuntimeError, match="only tensors of floating point and complex dtype"):
        ft.tensor([1, 2], requires_grad=True)

    def traced(v):
        v.requires_grad_()
        return v

    with pytest.raises(ValueError, match="Tensor.requires_grad_: got a traced value"):
        ft.grad(lambda v: traced(v).sum())(ft.ones(2))


def test_requires_grad_matches_torch_on_a_small_problem():
    torch = pytest.importorskip("torch")
    data = np.asarray([[0.5, -1.0], [2.0, 3.0]], np.float32)
    x = ft.tensor(data).requires_grad_()
    t = torch.tensor(data).requires_grad_()
    (ft.tanh(x @ x).sum()).backward()
    (torch.tanh(t @ t).sum()).backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-4, atol=1e-6)
