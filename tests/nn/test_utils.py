"""ft.nn.utils against torch.nn.utils: gradient clipping (returned norms and the clipped
.grad) and parameters <-> vector; their errors, which leave every cell as it was."""

from __future__ import annotations

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")


def _pair(seed=0, dtype=np.float32, scale=3.0):
    """Three fntorch parameters and their torch twins with the same .grad (one has none)."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (5,), (2,)]
    values = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [scale * rng.standard_normal(s).astype(dtype) for s in shapes[:2]] + [None]
    fp, tp = [], []
    for v, g in zip(values, grads):
        f, t = ft.nn.Parameter(ft.asarray(v)), torch.tensor(v, requires_grad=True)
        if g is not None:
            f.grad, t.grad = ft.asarray(g), torch.tensor(g)
        fp.append(f)
        tp.append(t)
    return fp, tp


def _same_grads(fp, tp, rtol=1e-6, atol=1e-7):
    for f, t in zip(fp, tp):
        assert (f.grad is None) == (t.grad is None)
        if f.grad is not None:
            assert np.asarray(f.grad).dtype == t.grad.numpy().dtype
            np.testing.assert_allclose(np.asarray(f.grad), t.grad.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.0, float("inf"), "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    fp, tp = _pair()
    fn = ft.nn.utils.clip_grad_norm_(fp, max_norm, norm_type=norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type, foreach=False)
    assert isinstance(fn, ft.Tensor) and fn.shape == () and str(fn.dtype) == "float32"
    np.testing.assert_allclose(float(fn), float(tn), rtol=1e-6)
    _same_grads(fp, tp)


def test_clip_grad_norm_float64_single_tensor_and_generator():
    fp, tp = _pair(dtype=np.float64)
    fn = ft.nn.utils.clip_grad_norm_(fp[0], 1.0)
    tn = torch.nn.utils.clip_grad_norm_(tp[0], 1.0)
    np.testing.assert_allclose(float(fn), float(tn), rtol=1e-12)
    assert str(fn.dtype) == "float64"
    _same_grads(fp, tp, rtol=1e-12, atol=1e-14)
    fn = ft.nn.utils.clip_grad_norm_(iter(fp), 0.1)  # a generator, as model.parameters()
    tn = torch.nn.utils.clip_grad_norm_(iter(tp), 0.1)
    np.testing.assert_allclose(float(fn), float(tn), rtol=1e-12)
    _same_grads(fp, tp, rtol=1e-12, atol=1e-14)


def test_clip_grad_norm_of_a_module_after_backward():
    ft.manual_seed(0)
    m = ft.nn.Linear(3, 2)
    t = torch.nn.Linear(3, 2)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(np.asarray(m.weight)))
        t.bias.copy_(torch.tensor(np.asarray(m.bias)))
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    (m(ft.asarray(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    fn = ft.nn.utils.clip_grad_norm_(m.parameters(), 2.0)
    tn = torch.nn.utils.clip_grad_norm_(t.parameters(), 2.0)
    np.testing.assert_allclose(float(fn), float(tn), rtol=1e-5)
    _same_grads(list(m.parameters()), list(t.parameters()), rtol=1e-5, atol=1e-6)


def test_no_grads_gives_a_zero_norm():
    p = ft.nn.Parameter(ft.ones(2))
    assert float(ft.nn.utils.clip_grad_norm_([p], 1.0)) == 0.0
    assert float(torch.nn.utils.clip_grad_norm_([torch.ones(2, requires_grad=True)], 1.0)) == 0
    assert float(ft.nn.utils.clip_grad_norm_([], 1.0)) == 0.0 and p.grad is None


def test_nonfinite_norm_raises_and_changes_nothing():
    fp, tp = _pair()
    fp[0].grad = fp[0].grad.at[0, 0].set(float("nan"))
    before = [np.asarray(p.grad).copy() for p in fp[:2]]
    with pytest.raises(RuntimeError, match="clip_grad_norm_|non-finite"):
        ft.nn.utils.clip_grad_norm_(fp, 1.0, error_if_nonfinite=True)
    for p, b in zip(fp, before):
        np.testing.assert_array_equal(np.asarray(p.grad), b)
    # without the flag, PyTorch scales by the nan norm: every gradient becomes nan
    assert np.isnan(float(ft.nn.utils.clip_grad_norm_(fp, 1.0)))
    assert np.isnan(np.asarray(fp[1].grad)).all()


@pytest.mark.parametrize("clip", [0.1, 1, 100.0])
def test_clip_grad_value_matches_torch(clip):
    fp, tp = _pair(seed=3)
    assert ft.nn.utils.clip_grad_value_(fp, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip, foreach=False)
    _same_grads(fp, tp, rtol=0, atol=0)


def test_get_total_norm_and_clip_grads_with_norm_match_torch():
    fp, tp = _pair(seed=5)
    grads_f = [p.grad for p in fp if p.grad is not None]
    grads_t = [p.grad for p in tp if p.grad is not None]
    fn = ft.nn.utils.get_total_norm(grads_f, 3.0)
    tn = torch.nn.utils.get_total_norm(grads_t, 3.0)
    np.testing.assert_allclose(float(fn), float(tn), rtol=1e-6)
    ft.nn.utils.clip_grads_with_norm_(fp, 0.7, fn)
    torch.nn.utils.clip_grads_with_norm_(tp, 0.7, tn)
    _same_grads(fp, tp)


def test_parameters_to_vector_and_back_match_torch():
    ft.manual_seed(1)
    m = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.ReLU(), ft.nn.Linear(4, 2))
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    t.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in m.state_dict().items()})
    fv = ft.nn.utils.parameters_to_vector(m.parameters())
    tv = torch.nn.utils.parameters_to_vector(t.parameters())
    np.testing.assert_array_equal(np.asarray(fv), tv.detach().numpy())
    new = np.arange(fv.shape[0], dtype=np.float32) / 10
    ft.nn.utils.vector_to_parameters(ft.asarray(new), m.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t.parameters())
    for (name, f), (tname, tt) in zip(m.named_parameters(), t.named_parameters()):
        assert name == tname and isinstance(f, ft.nn.Parameter)
        np.testing.assert_array_equal(np.asarray(f), tt.detach().numpy())
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(
        np.asarray(m(ft.asarray(x))), t(torch.tensor(x)).detach().numpy(), rtol=1e-6
    )


def test_parameters_to_vector_is_differentiable():
    w = ft.nn.Parameter(ft.asarray([1.0, 2.0]))
    b = ft.nn.Parameter(ft.asarray([3.0]))
    (ft.nn.utils.parameters_to_vector([w, b]) ** 2).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0] and b.grad.tolist() == [6.0]
    g = ft.grad(lambda ps: ft.nn.utils.parameters_to_vector(ps).sum())([ft.ones(2), ft.ones(1)])
    assert [x.tolist() for x in g] == [[1.0, 1.0], [1.0]]


def test_vector_to_parameters_casts_to_each_cell():
    p = ft.nn.Parameter(ft.zeros(2, dtype=ft.float64))
    ft.nn.utils.vector_to_parameters(ft.asarray([1.5, 2.5]), [p])
    assert p.dtype == ft.float64 and p.tolist() == [1.5, 2.5]


def test_vector_to_parameters_errors_write_nothing():
    ps = [ft.nn.Parameter(ft.zeros(2)), ft.nn.Parameter(ft.zeros(3))]
    with pytest.raises(TypeError, match="vector_to_parameters: expected vec to be a tensor"):
        ft.nn.utils.vector_to_parameters(np.ones(5), ps)
    with pytest.raises(ValueError, match="vec has 4 elements, but the parameters hold 5"):
        ft.nn.utils.vector_to_parameters(ft.ones(4), ps)
    with pytest.raises(ValueError, match="vec must be 1-d"):
        ft.nn.utils.vector_to_parameters(ft.ones((5, 1)), ps)
    with pytest.raises(TypeError, match=r"parameters\[1\] must be a cell"):
        ft.nn.utils.vector_to_parameters(ft.ones(4), [ps[0], ft.zeros(2)])
    assert all(p.tolist() == [0.0] * p.shape[0] for p in ps)
    with pytest.raises(TypeError, match="parameters_to_vector: parameters must be a tensor or"):
        ft.nn.utils.parameters_to_vector(3)
    with pytest.raises(TypeError, match=r"clip_grad_norm_: parameters\[0\] must be a tensor"):
        ft.nn.utils.clip_grad_norm_([1.0], 1.0)
    with pytest.raises(TypeError, match="clip_grad_value_: clip_value must be a number"):
        ft.nn.utils.clip_grad_value_(ps, "big")
    with pytest.raises(TypeError, match="get_total_norm: norm_type must be a number"):
        ft.nn.utils.get_total_norm([ft.ones(1)], norm_type=None)
