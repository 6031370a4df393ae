"""``embedding(max_norm=)`` renormalizes the rows it reads as PyTorch's, in place on a
Parameter, and the lookup's gradient is the plain one."""

import numpy as np
import pytest

import fntorch as ft

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_matches_torch(norm_type):
    rng = np.random.default_rng(0)
    w0 = (3 * rng.standard_normal((6, 4))).astype(np.float32)
    idx = np.array([[0, 2], [2, 5]])
    ours = ft.nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type)
    ours.weight.data = ft.asarray(w0)
    theirs = torch.nn.Embedding(6, 4, max_norm=1.5, norm_type=norm_type)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(w0))
    out, ref = ours(ft.asarray(idx)), theirs(torch.from_numpy(idx))
    np.testing.assert_allclose(np.asarray(out), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ours.weight), theirs.weight.detach().numpy(), rtol=1e-6)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    np.testing.assert_allclose(np.asarray(ours.weight.grad), theirs.weight.grad.numpy(), rtol=1e-5)


def test_embedding_max_norm_on_a_plain_tensor_renorms_the_value_read():
    w = ft.asarray([[3.0, 4.0], [0.3, 0.4]])
    out = ft.nn.functional.embedding(ft.asarray([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(np.asarray(out), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    assert w.tolist()[0] == [3.0, 4.0]  # immutable: untouched
    g = ft.grad(lambda v: ft.nn.functional.embedding(ft.asarray([0]), v, max_norm=1.0).sum())(w)
    assert g.tolist() == [[1.0, 1.0], [0.0, 0.0]]
