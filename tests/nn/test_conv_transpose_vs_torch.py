"""ConvTranspose1d, ConvTranspose2d and Bilinear against PyTorch: the same weights give
the same outputs and the same gradients (``loss.backward()`` on both sides), with
PyTorch's state_dict keys, order and shapes; and the pure side (grad, jit)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from tests.nn.same_weights import _same_weights

torch = pytest.importorskip("torch")
nn, tnn = ft.nn, torch.nn

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(ours, theirs, *inputs, rtol=1e-5, atol=1e-5, **kwargs):
    _same_weights(ours, theirs)
    y = ours(*[ft.asarray(i) for i in inputs], **kwargs)
    ty = theirs(*[torch.from_numpy(i) for i in inputs], **kwargs)
    np.testing.assert_allclose(np.asarray(y), ty.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(ty.shape).astype(np.float32)
    (y * ft.asarray(g)).sum().backward()
    (ty * torch.from_numpy(g)).sum().backward()
    tp = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(tp)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            np.asarray(p.grad), tp[name].grad.numpy(), rtol=rtol * 10, atol=atol * 10, err_msg=name
        )


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda m: m.ConvTranspose1d(2, 3, 3), (2, 2, 5)),
        (lambda m: m.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1), (2, 4, 5)),
        (lambda m: m.ConvTranspose1d(4, 6, 2, stride=3, groups=2, dilation=2), (1, 4, 4)),
        (lambda m: m.ConvTranspose1d(2, 2, 3, padding=4, bias=False), (1, 2, 9)),
        (lambda m: m.ConvTranspose1d(2, 3, 3), (2, 5)),  # unbatched
        (lambda m: m.ConvTranspose2d(3, 4, 3), (2, 3, 4, 5)),
        (lambda m: m.ConvTranspose2d(3, 2, (3, 2), stride=(2, 1), padding=(1, 0)), (2, 3, 4, 5)),
        (
            lambda m: m.ConvTranspose2d(
                4, 4, 3, stride=2, padding=1, output_padding=1, groups=4, dilation=1
            ),
            (1, 4, 3, 3),
        ),  # fmt: skip
        (
            lambda m: m.ConvTranspose2d(
                2, 6, 2, stride=2, groups=2, dilation=3, output_padding=(1, 2)
            ),
            (2, 2, 3, 4),
        ),  # fmt: skip
        (lambda m: m.Bilinear(3, 4, 5), ((6, 3), (6, 4))),
        (lambda m: m.Bilinear(2, 2, 3, bias=False), ((2, 5, 2), (2, 5, 2))),
    ],
)
def test_outputs_and_gradients_equal_torch(make, shape):
    torch.manual_seed(0)
    shapes = shape if isinstance(shape[0], tuple) else (shape,)
    _check(make(nn), make(tnn), *[_x(*s) for s in shapes])


@pytest.mark.parametrize("output_size", [(9, 10), [1, 4, 10, 9], (10, 10)])
def test_output_size_picks_output_padding_as_torch(output_size):
    torch.manual_seed(0)
    ours = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1)
    theirs = tnn.ConvTranspose2d(3, 4, 3, stride=2, padding=1)
    _check(ours, theirs, _x(1, 3, 5, 5), output_size=output_size)


def test_output_size_out_of_range_names_the_valid_sizes():
    m = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match="valid sizes of dim 0 range from 9 to 10"):
        m(ft.ones((1, 3, 5, 5)), output_size=(12, 9))


def test_functional_entries_equal_torch():
    x, w, b = _x(2, 4, 6), _x(4, 3, 3), _x(6)
    F, TF = ft.nn.functional, torch.nn.functional
    got = F.conv_transpose1d(ft.asarray(x), ft.asarray(w), ft.asarray(b), 2, 1, 1, 2, 1)
    want = TF.conv_transpose1d(*map(torch.from_numpy, (x, w, b)), 2, 1, 1, 2, 1)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-5)
    x1, x2, wb = _x(3, 2), _x(3, 4), _x(5, 2, 4)
    got = F.bilinear(ft.asarray(x1), ft.asarray(x2), ft.asarray(wb))
    want = TF.bilinear(*map(torch.from_numpy, (x1, x2, wb)))
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-5)


def test_default_initialisation_has_torchs_bounds():
    ft.manual_seed(0)
    m = nn.ConvTranspose2d(8, 16, 3, groups=2)
    fan_in = (16 // 2) * 9  # PyTorch's fan_in of (in, out/groups, k, k): size(1) * k * k
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and the bias share it
    w, b = np.asarray(m.weight), np.asarray(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound and w.std() > 0.5 * bound / math.sqrt(3)
    bl = nn.Bilinear(4, 3, 2)
    assert np.abs(np.asarray(bl.weight)).max() <= 1 / math.sqrt(4)


def test_the_pure_side():
    ft.manual_seed(0)
    m = nn.ConvTranspose2d(2, 3, 3, stride=2)
    x = ft.asarray(_x(2, 2, 4, 4))
    g = ft.grad(lambda m, x: m(x).sum())(m, x)
    assert type(g) is type(m) and g.weight.shape == m.weight.shape
    m(x).sum().backward()
    np.testing.assert_allclose(np.asarray(g.weight), np.asarray(m.weight.grad), rtol=1e-5)
    f = ft.jit(lambda m, x: m(x))
    np.testing.assert_allclose(np.asarray(f(m, x)), np.asarray(m(x)), rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_named():
    F = ft.nn.functional
    with pytest.raises(ValueError, match="conv_transpose2d: output_padding must be smaller"):
        F.conv_transpose2d(ft.ones((1, 1, 3, 3)), ft.ones((1, 1, 2, 2)), output_padding=1)
    with pytest.raises(ValueError, match="conv_transpose1d: input has 3 channels"):
        F.conv_transpose1d(ft.ones((1, 3, 3)), ft.ones((2, 1, 2)))
    with pytest.raises(ValueError, match="ConvTranspose1d: in_channels"):
        nn.ConvTranspose1d(3, 4, 2, groups=2)
    with pytest.raises(ValueError, match="bilinear: input1's last dim"):
        F.bilinear(ft.ones((2, 3)), ft.ones((2, 3)), ft.ones((1, 2, 3)))


@st.composite
def _conv_case(draw):
    nsp = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 2]))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    size = tuple(
        draw(st.integers(max(d * (kk - 1) + 1 - 2 * p, 1), 6))
        for kk, d, p in zip(k, dilation, padding)
    )
    return nsp, groups, c_in, c_out, k, stride, dilation, padding, size


@given(_conv_case())
def test_conv_transpose_is_the_adjoint_of_conv(case):
    """<conv(x, w), y> == <x, conv_transpose(y, w)>, with the output_padding that gives
    back x's size, for random strides, paddings, dilations and groups."""
    nsp, groups, c_in, c_out, k, stride, dilation, padding, size = case
    F = ft.nn.functional
    conv = F.conv1d if nsp == 1 else F.conv2d
    convt = F.conv_transpose1d if nsp == 1 else F.conv_transpose2d
    x, w = _x(1, c_in, *size), _x(c_out, c_in // groups, *k)
    y_fwd = conv(ft.asarray(x), ft.asarray(w), None, stride, padding, dilation, groups)
    out = y_fwd.shape[2:]
    op = tuple(
        s - ((o - 1) * st_ - 2 * p + d * (kk - 1) + 1)
        for s, o, st_, p, d, kk in zip(size, out, stride, padding, dilation, k)
    )
    y = _x(*y_fwd.shape)
    back = convt(ft.asarray(y), ft.asarray(w), None, stride, padding, op, groups, dilation)
    assert back.shape == x.shape
    lhs = float((y_fwd * ft.asarray(y)).sum())
    rhs = float((ft.asarray(x) * back).sum())
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4, atol=1e-4)
