"""SyncBatchNorm under a named vmap equals BatchNorm on the concatenated batch: outputs,
running statistics and gradients (the 2-process DDP test checks it across processes)."""

import numpy as np

import fntorch as ft


def test_sync_batchnorm_over_a_vmap_axis_is_whole_batch_batchnorm():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 2, 5, 5)).astype(np.float32)  # 3 members of 4 images
    ct = rng.standard_normal(x.shape).astype(np.float32)
    sync, plain = ft.nn.SyncBatchNorm(2, axis_name="i"), ft.nn.BatchNorm2d(2)
    with ft.no_grad():
        sync.weight.copy_(ft.asarray([1.5, -0.5]))
        plain.weight.copy_(ft.asarray([1.5, -0.5]))
    got = ft.vmap(sync, axis_name="i")(ft.asarray(x))
    want = plain(ft.asarray(x.reshape(12, 2, 5, 5)))
    np.testing.assert_allclose(np.asarray(got).reshape(want.shape), np.asarray(want), atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(
            np.asarray(getattr(sync, name)), np.asarray(getattr(plain, name)), rtol=1e-5
        )

    def loss_sync(v):
        return (ft.vmap(sync, axis_name="i")(v) * ft.asarray(ct)).sum()

    def loss_plain(v):
        return (plain(v.reshape(12, 2, 5, 5)) * ft.asarray(ct.reshape(12, 2, 5, 5))).sum()

    g_sync = ft.grad(loss_sync)(ft.asarray(x))
    g_plain = ft.grad(loss_plain)(ft.asarray(x))
    np.testing.assert_allclose(np.asarray(g_sync), np.asarray(g_plain), atol=1e-4)


def test_sync_batchnorm_alone_is_batchnorm():
    x = ft.asarray(np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32))
    got = ft.nn.SyncBatchNorm(3)(x)  # no process group, no axis: a plain BatchNorm
    np.testing.assert_allclose(np.asarray(got), np.asarray(ft.nn.BatchNorm1d(3)(x)), atol=1e-6)


def test_convert_sync_batchnorm_keeps_the_cells():
    m = ft.nn.Sequential(ft.nn.Conv2d(1, 2, 3), ft.nn.BatchNorm2d(2))
    bn = m[1]
    out = ft.nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert isinstance(out[1], ft.nn.SyncBatchNorm)
    assert out[1].weight is bn.weight and out[1].running_mean is bn.running_mean
    assert list(out.state_dict()) == [
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked",
    ]  # fmt: skip
