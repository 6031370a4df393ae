"""conv_general_dilated and reduce_window_* against torch.nn.functional (values and
gradients), higher-order and batched derivatives, and the text of the shape errors."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx.core import Tensor
from fntorch.ops import lax
from tests.contract import to_np

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape)


def _sum(x):
    return lax.reduce_sum(x, tuple(range(x.ndim)))


def _vjp(f, *args):
    """Output and the gradient of <output, ct> for a random ct, in fntorch and as arrays."""
    out, vjp_fn = ft.vjp(f, *[Tensor(a) for a in args])
    ct = _rand(*out.shape)
    return to_np(out), ct, [to_np(g) for g in vjp_fn(Tensor(ct))]


def _torch_vjp(f, ct, *args):
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    out = f(*ts)
    out.backward(torch.tensor(ct))
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


def _check(fn_ft, fn_torch, *args):
    out, ct, grads = _vjp(fn_ft, *args)
    t_out, t_grads = _torch_vjp(fn_torch, ct, *args)
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-10)
    for g, tg in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-10)


CONV2D = [
    # (N, C, H, W), (O, C/g, kh, kw), stride, padding, dilation, groups
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 8, 7), (6, 2, 3, 3), (2, 1), (1, 2), (1, 2), 2),
    ((2, 6, 9, 9), (6, 1, 3, 3), (2, 3), (1, 1), (2, 1), 6),  # depthwise
    ((3, 2, 5, 5), (2, 2, 1, 1), (2, 2), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("xs, ws, stride, pad, dil, groups", CONV2D)
def test_conv2d_matches_torch(xs, ws, stride, pad, dil, groups):
    def f(x, w):
        return lax.conv_general_dilated(
            x, w, stride, [(p, p) for p in pad], None, dil, feature_group_count=groups
        )

    def g(x, w):
        return F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups)

    _check(f, g, _rand(*xs), _rand(*ws))


@pytest.mark.parametrize("stride, pad, dil, groups", [(1, 0, 1, 1), (3, 2, 2, 1), (2, 1, 1, 2)])
def test_conv1d_matches_torch(stride, pad, dil, groups):
    def f(x, w):
        return lax.conv_general_dilated(
            x, w, (stride,), [(pad, pad)], None, (dil,), feature_group_count=groups
        )

    def g(x, w):
        return F.conv1d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups)

    _check(f, g, _rand(2, 4, 11), _rand(6, 4 // groups, 3))


@pytest.mark.parametrize(
    "stride, pad, outpad, dil, groups", [(2, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 0, 2, 2)]
)
def test_conv_transpose_via_lhs_dilation_matches_torch(stride, pad, outpad, dil, groups):
    """conv_transpose2d is a conv with the input dilated by the stride and the kernel
    flipped, its in/out channels swapped within each group."""
    cin, cout, k = 4, 6, 3
    x, w = _rand(2, cin, 5, 4), _rand(cin, cout // groups, k, k)

    def f(x, w):
        wt = lax.reshape(w, (groups, cin // groups, cout // groups, k, k))
        wt = lax.reshape(lax.transpose(wt, (0, 2, 1, 3, 4)), (cout, cin // groups, k, k))
        wt = lax.rev(wt, (2, 3))
        lo = dil * (k - 1) - pad
        return lax.conv_general_dilated(
            x,
            wt,
            (1, 1),
            [(lo, lo + outpad)] * 2,
            (stride,) * 2,
            (dil,) * 2,
            feature_group_count=groups,
        )

    def g(x, w):
        return F.conv_transpose2d(
            x, w, stride=stride, padding=pad, output_padding=outpad, groups=groups, dilation=dil
        )

    _check(f, g, x, w)


@pytest.mark.parametrize("k, stride, pad, dil", [(2, 2, 0, 1), (3, 2, 1, 1), (3, 1, 1, 2)])
def test_max_pool2d_matches_torch(k, stride, pad, dil):
    def f(x):
        return lax.reduce_window_max(
            x,
            (1, 1, k, k),
            (1, 1, stride, stride),
            [(0, 0), (0, 0), (pad, pad), (pad, pad)],
            None,
            (1, 1, dil, dil),
        )

    def g(x):
        return F.max_pool2d(x, k, stride, pad, dilation=dil)

    _check(f, g, _rand(2, 3, 7, 8))


@pytest.mark.parametrize("k, stride, pad", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_avg_pool2d_matches_torch(k, stride, pad):
    def f(x):
        s = lax.reduce_window_sum(
            x, (1, 1, k, k), (1, 1, stride, stride), [(0, 0), (0, 0), (pad, pad), (pad, pad)]
        )
        return lax.div(s, float(k * k))

    def g(x):
        return F.avg_pool2d(x, k, stride, pad, count_include_pad=True)

    _check(f, g, _rand(2, 3, 7, 8))


def test_min_window_is_negated_max_window():
    x = _rand(3, 8)
    args = ((2, 3), (1, 2), [(1, 0), (1, 1)], (1, 2), (1, 1))
    out_min, ct, (g_min,) = _vjp(lambda x: lax.reduce_window_min(x, *args), x)
    _, vjp_max = ft.vjp(lambda x: lax.reduce_window_max(x, *args), Tensor(-x))
    (g_max,) = vjp_max(Tensor(ct))
    np.testing.assert_array_equal(out_min, -to_np(lax.reduce_window_max(Tensor(-x), *args)))
    np.testing.assert_array_equal(g_min, to_np(g_max))


def test_conv_second_order_matches_torch():
    x, w = _rand(2, 2, 6, 5), _rand(3, 2, 3, 2)
    v = _rand(*x.shape)

    def loss_ft(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 1)], None, (1, 2))
        return _sum(lax.mul(lax.mul(y, y), y))

    tangents = (Tensor(v), Tensor(np.zeros_like(w)))
    hv = to_np(ft.jvp(ft.grad(loss_ft), (Tensor(x), Tensor(w)), tangents)[1])

    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w)
    # torch cannot pad asymmetrically inside conv2d: pad first.
    y = F.conv2d(F.pad(xt, (0, 1, 1, 1)), wt, stride=(2, 1), dilation=(1, 2))
    (gx,) = torch.autograd.grad((y**3).sum(), xt, create_graph=True)
    (hvt,) = torch.autograd.grad(gx, xt, torch.tensor(v))
    np.testing.assert_allclose(hv, hvt.numpy(), rtol=1e-9, atol=1e-9)


def test_vmap_of_grad_of_max_pool():
    xs = _rand(3, 2, 6, 6)

    def loss(x):
        y = lax.reduce_window_max(x, (1, 3, 3), (1, 2, 2), [(0, 0), (1, 1), (1, 1)])
        return _sum(lax.mul(y, y))

    got = to_np(ft.vmap(ft.grad(loss))(Tensor(xs)))
    for i in range(3):
        xt = torch.tensor(xs[i], requires_grad=True)
        (F.max_pool2d(xt[None], 3, 2, 1)[0] ** 2).sum().backward()
        np.testing.assert_allclose(got[i], xt.grad.numpy(), rtol=1e-12)


def test_vmap_of_vjp_of_grouped_conv():
    xs, w = _rand(2, 1, 4, 6), _rand(4, 2, 3)
    cts = _rand(2, 1, 4, 4)

    def one(x, ct):
        _, f = ft.vjp(
            lambda x, w: lax.conv_general_dilated(x, w, (1,), [(0, 0)], feature_group_count=2),
            x,
            Tensor(w),
        )
        return f(ct)

    gx, gw = ft.vmap(one)(Tensor(xs), Tensor(cts))
    for i in range(2):
        _, (tx, tw) = _torch_vjp(lambda x, w: F.conv1d(x, w, groups=2), cts[i], xs[i], w)
        np.testing.assert_allclose(to_np(gx)[i], tx, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(to_np(gw)[i], tw, rtol=1e-10, atol=1e-10)


def test_dot_general_int_keeps_dtype_exact():
    a = RNG.integers(-5, 5, (3, 40, 30)).astype(np.int32)
    b = RNG.integers(-5, 5, (3, 30, 20)).astype(np.int32)
    out = to_np(lax.dot_general(Tensor(a), Tensor(b), (((2,), (1,)), ((0,), (0,)))))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, a @ b)


# ---------------------------------------------------------------------- errors


def test_dot_general_contracting_mismatch_names_shapes_and_dims():
    a, b = np.ones((2, 3)), np.ones((4, 5))
    with pytest.raises(ValueError) as e:
        lax.dot_general(Tensor(a), Tensor(b), (((1,), (0,)), ((), ())))
    msg = str(e.value)
    assert "dot_general" in msg and "(2, 3)" in msg and "(4, 5)" in msg
    assert "(1,)" in msg and "(0,)" in msg and "contracting" in msg


def test_dot_general_dtype_mismatch():
    with pytest.raises(TypeError, match="dot_general.*float32.*float64"):
        lax.dot_general(
            Tensor(np.ones((2, 2), np.float32)), Tensor(np.ones((2, 2))), (((1,), (0,)), ((), ()))
        )


def test_conv_channel_and_group_mismatch():
    x = Tensor(np.ones((1, 4, 5)))
    with pytest.raises(ValueError, match=r"conv_general_dilated.*channels 4.*rhs input channels 3"):
        lax.conv_general_dilated(x, Tensor(np.ones((2, 3, 3))), (1,), [(0, 0)])
    with pytest.raises(ValueError, match=r"conv_general_dilated.*output channels 3.*divisible"):
        lax.conv_general_dilated(
            x, Tensor(np.ones((3, 2, 3))), (1,), [(0, 0)], feature_group_count=2
        )
    with pytest.raises(ValueError, match=r"conv_general_dilated.*window_strides"):
        lax.conv_general_dilated(x, Tensor(np.ones((2, 4, 3))), (1, 1), [(0, 0)])


def test_reduce_window_rank_mismatch():
    with pytest.raises(ValueError, match=r"reduce_window_max.*window_dimensions \(2,\).*rank 2"):
        lax.reduce_window_max(Tensor(np.ones((3, 3))), (2,), (1,), [(0, 0)])


def test_large_windows_match_torch():
    """Windows of more than 64 taps take the impl's sliding-view path."""
    x = _rand(2, 3, 10, 9)
    pads = [(0, 0), (0, 0), (1, 0), (0, 0)]

    def f(x):
        return lax.reduce_window_max(x, (1, 1, 9, 9), (1, 1, 2, 1), pads)

    def g(x):
        return F.max_pool2d(F.pad(x, (0, 0, 1, 0), value=-np.inf), 9, (2, 1))

    _check(f, g, x)
    s = lax.reduce_window_sum(Tensor(x), (1, 1, 9, 9), (1, 1, 2, 1), pads)
    ref = F.avg_pool2d(F.pad(torch.tensor(x), (0, 0, 1, 0)), 9, (2, 1)) * 81
    np.testing.assert_allclose(to_np(s), ref.numpy(), rtol=1e-12, atol=1e-12)


def test_max_pool_hessian_vector_product_matches_torch():
    x, v = _rand(2, 5, 5), _rand(2, 5, 5)

    def loss(x):
        y = lax.reduce_window_max(x, (1, 2, 2), (1, 1, 1), [(0, 0), (1, 0), (0, 1)])
        return _sum(lax.mul(lax.mul(y, y), y))

    hv = to_np(ft.jvp(ft.grad(loss), (Tensor(x),), (Tensor(v),))[1])
    xt = torch.tensor(x, requires_grad=True)
    y = F.max_pool2d(F.pad(xt, (0, 1, 1, 0), value=-np.inf), 2, 1)
    (g,) = torch.autograd.grad((y**3).sum(), xt, create_graph=True)
    (h,) = torch.autograd.grad(g, xt, torch.tensor(v))
    np.testing.assert_allclose(hv, h.numpy(), rtol=1e-10, atol=1e-10)
