"""The less common functional ops and layers against PyTorch: values and gradients."""

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")
F, TF = ft.nn.functional, torch.nn.functional
RNG = np.random.default_rng(0)


def _pair(shape):
    x = RNG.standard_normal(shape)
    return ft.nn.Parameter(ft.asarray(x)), torch.tensor(x, requires_grad=True)


def _check(ours, theirs, *shapes, tol=1e-10):
    pairs = [_pair(s) for s in shapes]
    got = ours(*(p for p, _ in pairs))
    want = theirs(*(t for _, t in pairs))
    np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=tol, atol=tol)
    w = RNG.standard_normal(want.shape)
    (got * ft.asarray(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    for p, t in pairs:
        np.testing.assert_allclose(np.asarray(p.grad), t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name", ["selu", "celu", "softsign", "hardswish", "hardsigmoid", "logsigmoid", "glu"]
)
def test_activations_match_torch(name):
    # torch's hard* kernels use a float32 1/6 even in float64
    tol = 1e-7 if name.startswith("hard") else 1e-10
    _check(getattr(F, name), getattr(TF, name), (3, 4), tol=tol)


def test_softmin_prelu_and_distances_match_torch():
    _check(lambda x: F.softmin(x, dim=1), lambda x: TF.softmin(x, dim=1), (3, 4))
    _check(F.prelu, TF.prelu, (2, 3, 4), (3,))
    _check(F.cosine_similarity, TF.cosine_similarity, (3, 5), (3, 5))
    _check(
        lambda a, b: F.pairwise_distance(a, b, 3.0, keepdim=True),
        lambda a, b: TF.pairwise_distance(a, b, 3.0, keepdim=True),
        (3, 5),
        (3, 5),
    )
    _check(lambda x: F.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2), (2, 8, 3, 2))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(scale_factor=2, mode="nearest"),
        dict(size=(5, 7), mode="nearest"),
        dict(scale_factor=1.5, mode="nearest"),
        dict(scale_factor=2, mode="bilinear", align_corners=False),
        dict(size=(5, 3), mode="bilinear", align_corners=True),
        dict(size=(7, 9), mode="bilinear", align_corners=False),
        dict(scale_factor=1.5, mode="nearest-exact"),
        dict(size=(3, 7), mode="nearest-exact"),
        dict(scale_factor=2, mode="bicubic", align_corners=False),
        dict(size=(5, 9), mode="bicubic", align_corners=True),
        dict(size=(3, 4), mode="bicubic"),
        dict(size=(3, 4), mode="area"),
        dict(size=(5, 4), mode="area"),
        dict(scale_factor=0.5, mode="area"),
    ],
)
def test_interpolate_matches_torch(kwargs):
    _check(
        lambda x: F.interpolate(x, **kwargs), lambda x: TF.interpolate(x, **kwargs), (2, 3, 4, 6)
    )


def test_interpolate_linear_and_errors():
    kw = dict(size=9, mode="linear", align_corners=False)
    _check(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), (2, 3, 4))
    x = ft.zeros((1, 1, 4))
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="'bilinear' needs 2 spatial dims"):
        F.interpolate(x, scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="'bicubic' needs 2 spatial dims"):
        F.interpolate(x, scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.interpolate(x, scale_factor=2, mode="lanczos")
    with pytest.raises(ValueError, match="antialias"):
        F.interpolate(ft.zeros((1, 1, 4, 4)), size=2, mode="bilinear", antialias=True)
    kw = dict(size=3, mode="area")  # 1-d area: adaptive average pooling
    _check(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), (2, 3, 7))


def test_layers_match_torch_with_the_same_weights():
    nn, tnn = ft.nn, torch.nn
    x = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32)
    for ours, theirs in [
        (nn.PReLU(4), tnn.PReLU(4)),
        (
            nn.Upsample(scale_factor=2, mode="bilinear"),
            tnn.Upsample(scale_factor=2, mode="bilinear"),
        ),
        (nn.ZeroPad2d((1, 2, 0, 1)), tnn.ZeroPad2d((1, 2, 0, 1))),
        (nn.ConstantPad2d(1, 3.0), tnn.ConstantPad2d(1, 3.0)),
        (nn.ReflectionPad2d(2), tnn.ReflectionPad2d(2)),
        (nn.ReplicationPad2d((1, 0, 2, 1)), tnn.ReplicationPad2d((1, 0, 2, 1))),
        (nn.Hardswish(), tnn.Hardswish()),
        (nn.GLU(dim=1), tnn.GLU(dim=1)),
        (nn.PixelShuffle(2), tnn.PixelShuffle(2)),
    ]:
        ours.load_state_dict(theirs.state_dict())
        np.testing.assert_allclose(
            np.asarray(ours(ft.asarray(x))), theirs(torch.tensor(x)).detach().numpy(), atol=1e-6
        )
    a, b = RNG.standard_normal((2, 2, 3, 5)).astype(np.float32)
    got = nn.CosineSimilarity(dim=2)(ft.asarray(a), ft.asarray(b))
    np.testing.assert_allclose(
        np.asarray(got), tnn.CosineSimilarity(dim=2)(torch.tensor(a), torch.tensor(b)), atol=1e-6
    )


def test_channel_dropout_drops_whole_feature_maps():
    ft.manual_seed(0)
    drop = ft.nn.Dropout2d(0.5)
    y = np.asarray(drop(ft.ones((8, 16, 3, 3))))
    per_map = y.reshape(8, 16, 9)
    assert ((per_map == 0).all(-1) | (per_map == 2).all(-1)).all()
    assert 0.2 < (per_map[..., 0] == 0).mean() < 0.8
    assert drop.eval()(ft.ones((1, 2, 2, 2))).tolist() == np.ones((1, 2, 2, 2)).tolist()
    with pytest.raises(ValueError, match="dropout2d: expected a 3-d or 4-d input"):
        F.dropout2d(ft.ones(3), 0.5)
    assert ft.nn.Dropout1d(0.5)(ft.ones((2, 3, 4))).shape == (2, 3, 4)
