"""ft.autocast: dtypes and values against torch.autocast on the CPU, and the policy under
jit, grad, vmap and the tape."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fntorch as ft
import fntorch.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 8)).astype(np.float32)
W = RNG.standard_normal((8, 8)).astype(np.float32)
B = RNG.standard_normal(8).astype(np.float32)
T = RNG.integers(0, 8, 4)
IMG = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
K = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)


def _ops(m, F_, tensor, bf16):
    """The listed operations (and some unlisted ones) with the same arguments in both
    libraries: ``m`` is ft or torch, ``F_`` its functional, ``tensor`` makes a tensor,
    ``bf16`` casts one to bfloat16. Inputs are float32 unless the name says bf16."""
    x, w, b, img, k = tensor(X), tensor(W), tensor(B), tensor(IMG), tensor(K)
    t = tensor(T)
    xb = bf16(x)
    tgt = tensor(np.abs(X[:, :8]) / 4)
    return {
        # low precision
        "matmul": lambda: x @ w,
        "bmm": lambda: m.bmm(x[None], w[None]),
        "mm": lambda: m.mm(x, w),
        "linear": lambda: F_.linear(x, w, b),
        "conv2d": lambda: F_.conv2d(img, k, tensor(B[:4])),
        "conv_transpose2d": lambda: F_.conv_transpose2d(img, tensor(K.transpose(1, 0, 2, 3))),
        "einsum": lambda: m.einsum("ij,jk->ik", x, w),
        "tensordot": lambda: (
            m.tensordot(x, w, dims=1) if m is not ft else m.tensordot(x, w, axes=1)
        ),
        "sdpa": lambda: F_.scaled_dot_product_attention(x[None], x[None], x[None]),
        # float32 (CPU list): losses and friends, with bfloat16 inputs
        "cross_entropy_bf16": lambda: F_.cross_entropy(xb, t),
        "nll_loss_bf16": lambda: F_.nll_loss(F_.log_softmax(xb, dim=1), t),
        "mse_loss_bf16": lambda: F_.mse_loss(xb, bf16(tgt)),
        "l1_loss_bf16": lambda: F_.l1_loss(xb, bf16(tgt)),
        "smooth_l1_loss_bf16": lambda: F_.smooth_l1_loss(xb, bf16(tgt)),
        "huber_loss_bf16": lambda: F_.huber_loss(xb, bf16(tgt)),
        "kl_div_bf16": lambda: F_.kl_div(
            F_.log_softmax(xb, dim=1), bf16(tgt), reduction="batchmean"
        ),
        "bce_bf16": lambda: F_.binary_cross_entropy(m.sigmoid(xb), bf16(m.sigmoid(tgt))),
        "bce_logits_bf16": lambda: F_.binary_cross_entropy_with_logits(xb, bf16(m.sigmoid(tgt))),
        "prod_bf16": lambda: (xb / 4 + 1).prod(),
        # not listed on the CPU: follow the inputs
        "softmax_bf16": lambda: F_.softmax(xb, dim=-1),
        "layer_norm_bf16": lambda: F_.layer_norm(xb, (8,)),
        "sum_bf16": lambda: xb.sum(),
        "exp_bf16": lambda: xb.exp(),
        "relu": lambda: F_.relu(x),
        "add_mixed": lambda: x + xb,
        "cat_mixed": lambda: m.cat([x, xb]),
        "matmul_bf16_f64": lambda: x.double() @ w.double(),
    }


def _torch_ops(torch):
    def tensor(a):
        return torch.from_numpy(np.asarray(a))

    return _ops(torch, torch.nn.functional, tensor, lambda t: t.to(torch.bfloat16))


def _ft_ops():
    return _ops(ft, F, ft.asarray, lambda t: t.astype(ft.bfloat16))


NAMES = list(_ft_ops())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dtypes_and_values_match_torch_autocast_on_cpu(name, dtype):
    torch = pytest.importorskip("torch")
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        want = _torch_ops(torch)[name]()
    with ft.autocast("cpu", dtype=getattr(ft, dtype)):
        got = _ft_ops()[name]()
    assert str(got.dtype) == str(want.dtype).removeprefix("torch."), name
    tol = 3e-2 if dtype == "bfloat16" else 5e-3
    np.testing.assert_allclose(
        np.asarray(got.astype(ft.float64)), want.double().numpy(), rtol=tol, atol=tol * 4
    )


def test_outside_autocast_nothing_is_cast():
    with ft.autocast("cpu"):
        pass
    assert (ft.asarray(X) @ ft.asarray(W)).dtype == ft.float32
    assert not ft.is_autocast_enabled()


def test_nested_disabled_and_decorator():
    x, w = ft.asarray(X), ft.asarray(W)
    with ft.autocast("cpu"):
        with ft.autocast("cpu", enabled=False):
            assert (x @ w).dtype == ft.float32
        assert (x @ w).dtype == ft.bfloat16
        with ft.autocast("cpu", dtype=ft.float16):
            assert (x @ w).dtype == ft.float16

    @ft.autocast("cpu")
    def f(a, b):
        return a @ b

    assert f(x, w).dtype == ft.bfloat16
    assert (x @ w).dtype == ft.float32
    assert ft.amp.autocast is ft.autocast


def test_float64_and_integers_are_not_cast():
    with ft.autocast("cpu"):
        assert (
            ft.asarray(X, dtype=ft.float64) @ ft.asarray(W, dtype=ft.float64)
        ).dtype == ft.float64
        assert (ft.ones((2, 2), dtype=ft.int32) @ ft.ones((2, 2), dtype=ft.int32)).dtype == ft.int32


def test_errors_and_cuda_without_gpu():
    with pytest.raises(ValueError, match="autocast: device_type must be one of"):
        ft.autocast("tpu")
    with pytest.raises(ValueError, match="dtype must be float16 or bfloat16.*float32"):
        ft.autocast("cpu", dtype=ft.float32)
    if not ft.cuda.is_available():
        with pytest.warns(UserWarning, match="no CUDA device"):
            ac = ft.autocast("cuda")
        with ac:
            assert (ft.asarray(X) @ ft.asarray(W)).dtype == ft.float32
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert ft.cuda.amp.autocast().device_type == "cuda"


def _lsm_sum(w):
    return (F.log_softmax(ft.asarray(X) @ w, dim=-1).exp() * ft.asarray(W[:4])).sum()


def test_cuda_policy_lists_softmax_and_reductions_as_float32():
    # The CUDA lists, checked on CPU tensors through a policy made for the "cuda" type
    # that applies to the host's tensors (the device filter is the only difference).
    from fntorch.amp import _autocast
    from fntorch.fx import autocast as fx_autocast

    class _AnyDevice(_autocast._Policy):
        def _applies(self, x):
            return True

    xb = ft.asarray(X).astype(ft.float16)
    ref = ft.grad(_lsm_sum)(ft.asarray(W))
    token = fx_autocast.enter(_AnyDevice("cuda", ft.float16, True))
    try:
        assert F.softmax(xb, dim=-1).dtype == ft.float32
        assert F.layer_norm(xb, (8,)).dtype == ft.float32
        assert xb.sum().dtype == ft.float32 and ft.exp(xb).dtype == ft.float32
        assert F.relu(xb).dtype == ft.float16  # unlisted: follows its input
        assert (xb.astype(ft.float32) @ ft.asarray(W)).dtype == ft.float16
        g = ft.grad(_lsm_sum)(ft.asarray(W))  # rules and transposes keep their dtypes
        assert g.dtype == ft.float32
        np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=2e-2, atol=2e-2)
        lin = ft.nn.Linear(8, 8)
        opt = ft.optim.Adam(lin.parameters(), lr=0.1)
        F.mse_loss(lin(ft.asarray(X)), ft.zeros((4, 8))).backward()
        opt.step()  # the update itself is never autocast
        assert lin.weight.dtype == ft.float32
    finally:
        fx_autocast.exit(token)


# ------------------------------------------------------------------ transforms


def _mlp(params, x):
    w1, b1, w2 = params
    h = F.relu(F.linear(x, w1, b1))
    return F.cross_entropy(h @ w2, ft.asarray(T))


PARAMS = (ft.asarray(W), ft.asarray(B), ft.asarray(W))


def test_grad_flows_through_the_casts_in_float32():
    with ft.autocast("cpu"):
        loss, grads = ft.value_and_grad(_mlp)(PARAMS, ft.asarray(X))
    assert loss.dtype == ft.float32
    assert [g.dtype for g in grads] == [ft.float32] * 3
    ref = ft.grad(_mlp)(PARAMS, ft.asarray(X))
    for g, r in zip(grads, ref):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=0.1, atol=0.05)
    # autocast inside the differentiated function works the same
    inner = ft.grad(ft.autocast("cpu")(_mlp))(PARAMS, ft.asarray(X))
    for g, r in zip(inner, grads):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-6)


def test_vmap_under_autocast():
    with ft.autocast("cpu"):
        y = ft.vmap(lambda a: a @ ft.asarray(W))(ft.asarray(X))
    assert y.dtype == ft.bfloat16 and y.shape == (4, 8)


def test_jit_stages_the_casts_and_keys_on_the_autocast_state():
    f = ft.jit(lambda x, w: x @ w)
    x, w = ft.asarray(X), ft.asarray(W)
    assert f(x, w).dtype == ft.float32
    with ft.autocast("cpu"):
        y = f(x, w)
        prims = [e.primitive.name for e in f.lower(x, w).graph.eqns]
    assert y.dtype == ft.bfloat16
    assert prims.count("convert_element_type") == 2 and "dot_general" in prims
    assert f(x, w).dtype == ft.float32  # the first trace is still the one used outside
    with ft.autocast("cpu", dtype=ft.float16):
        assert f(x, w).dtype == ft.float16
    assert f.stats["traces"] >= 3
    np.testing.assert_allclose(np.asarray(y.astype(ft.float32)), X @ W, rtol=3e-2, atol=0.1)


def test_jit_of_grad_under_autocast_matches_eager():
    x = ft.asarray(X)
    with ft.autocast("cpu"):
        eager = ft.grad(_mlp)(PARAMS, x)
        jitted = ft.jit(ft.grad(_mlp))(PARAMS, x)
    for a, b in zip(eager, jitted):
        assert a.dtype == b.dtype == ft.float32
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-2, atol=1e-2)


def _torch_model(torch, model):
    tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    with torch.no_grad():
        for tp, p in zip(tm.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(np.asarray(p)))
    return tm


def test_tape_backward_after_autocast_matches_torch():
    torch = pytest.importorskip("torch")
    ft.manual_seed(0)
    model = ft.nn.Sequential(ft.nn.Linear(8, 16), ft.nn.ReLU(), ft.nn.Linear(16, 8))
    tm = _torch_model(torch, model)
    with ft.autocast("cpu"):
        out = model(ft.asarray(X))
        loss = F.cross_entropy(out, ft.asarray(T))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tout = tm(torch.from_numpy(X))
        tloss = torch.nn.functional.cross_entropy(tout, torch.from_numpy(T))
    assert out.dtype == ft.bfloat16 and loss.dtype == ft.float32
    loss.backward()
    tloss.backward()
    for p, tp in zip(model.parameters(), tm.parameters()):
        assert p.grad.dtype == ft.float32
        np.testing.assert_allclose(np.asarray(p.grad), tp.grad.numpy(), rtol=5e-2, atol=2e-2)


def test_tape_backward_inside_autocast():
    model = ft.nn.Linear(8, 8)
    with ft.autocast("cpu"):
        loss = F.mse_loss(model(ft.asarray(X)), ft.zeros((4, 8)))
        loss.backward()
    assert model.weight.grad.dtype == ft.float32


def test_cache_reuses_a_frozen_weights_cast():
    lin = ft.nn.Linear(8, 8)
    lin.requires_grad_(False)
    with ft.autocast("cpu"):
        a = lin(ft.asarray(X))
        b = lin(ft.asarray(X))
    assert a.dtype == b.dtype == ft.bfloat16
    np.testing.assert_array_equal(
        np.asarray(a.astype(ft.float32)), np.asarray(b.astype(ft.float32))
    )


def test_compiled_training_step_with_autocast_matches_eager():
    y = ft.asarray(np.arange(4) % 4)
    results = []
    for compiled in (False, True):
        ft.manual_seed(0)
        model = ft.nn.Sequential(ft.nn.Linear(8, 16), ft.nn.ReLU(), ft.nn.Linear(16, 4))
        opt = ft.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            with ft.autocast("cpu"):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        run = ft.jit(step) if compiled else step
        losses = [float(run(ft.asarray(X), y)) for _ in range(3)]
        assert model[0].weight.dtype == ft.float32
        results.append((losses, np.asarray(model[0].weight)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)
