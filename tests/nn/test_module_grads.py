"""``ft.grad(loss)(model, ...)``: module-shaped gradients of the parameters, ``None`` for
buffers (API.md "Decisions"), and gradients that combine with the model in pytree maps
and the pure optimizers."""

import numpy as np
import pytest

import fntorch as ft
from fntorch import nn


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 4, bias=False)
        self.tied = self.head  # the same module twice: its weight is one leaf

    def forward(self, x):
        return self.tied(ft.relu(self.bn(self.lin(x))))


def _loss(m, x):
    return (m(x) ** 2).mean()


def _data():
    return ft.asarray(np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32))


@pytest.mark.parametrize("train", [True, False])
def test_grad_of_a_module_is_its_parameters_and_none_for_buffers(train):
    ft.manual_seed(0)
    model, x = _Net().train(train), _data()
    g = ft.grad(_loss)(model, x)
    assert type(g) is _Net and type(g.bn) is nn.BatchNorm1d
    assert g.bn.running_mean is None and g.bn.running_var is None
    assert g.bn.num_batches_tracked is None
    assert list(g.named_buffers()) == []
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in model.named_parameters()]
    _loss(model, x).backward()
    for (name, p), (_, d) in zip(model.named_parameters(), g.named_parameters()):
        # lin.bias feeds BatchNorm in training: its gradient is zero up to rounding, which
        # differs between the tape's compiled composites and grad's inline primitives.
        np.testing.assert_allclose(
            np.asarray(d), np.asarray(p.grad), rtol=1e-5, atol=1e-7, err_msg=name
        )


def test_grad_does_not_differentiate_buffers_that_the_output_depends_on():
    # in eval mode the output depends on running_mean; PyTorch gives it no gradient
    model, x = _Net().eval(), _data()
    model.bn.running_mean.set_(ft.ones(4))
    g = ft.grad(_loss)(model, x)
    assert g.bn.running_mean is None
    assert float(ft.abs(g.lin.weight).sum()) > 0


def test_gradients_under_jit_vmap_and_inside_containers():
    ft.manual_seed(0)
    model, x = _Net().eval(), _data()
    g = ft.grad(_loss)(model, x)
    gj = ft.jit(ft.grad(_loss))(model, x)
    assert gj.bn.running_var is None
    np.testing.assert_allclose(np.asarray(gj.lin.weight), np.asarray(g.lin.weight), rtol=1e-5)
    per = ft.vmap(ft.grad(_loss), in_axes=(None, 0))(model, x[:, None])
    assert per.lin.weight.shape == (6, 4, 3) and per.bn.running_mean is None
    pair = ft.grad(lambda ms, x: _loss(ms[0], x) + _loss(ms[1], x))((model, model), x)
    assert pair[1].bn.running_mean is None
    np.testing.assert_allclose(np.asarray(pair[0].head.weight), np.asarray(g.head.weight))


def test_module_gradients_feed_the_pure_optimizers_and_tree_map():
    ft.manual_seed(0)
    model, x = _Net(), _data()
    opt = ft.optim.sgd(0.1)
    state = opt.init(model)
    g = ft.grad(_loss)(model, x)
    new, state = opt.update(g, state, model)
    assert type(new) is _Net
    np.testing.assert_allclose(
        np.asarray(new.lin.weight), np.asarray(model.lin.weight - 0.1 * g.lin.weight), rtol=1e-6
    )
    np.testing.assert_array_equal(np.asarray(new.bn.running_var), np.ones(4, np.float32))
    stepped = ft.tree.map(lambda p, d: p if d is None else p - 0.1 * d, model, g)
    np.testing.assert_allclose(np.asarray(stepped.head.weight), np.asarray(new.head.weight))
    # a gradient of the copy is again a gradient of the same structure
    g2 = ft.grad(_loss)(new, x)
    new2, _ = opt.update(g2, state, new)
    assert new2.tied is new2.head


def test_value_and_grad_and_has_aux_with_a_module():
    model, x = _Net(), _data()
    (v, aux), g = ft.value_and_grad(lambda m, x: (_loss(m, x), 3), has_aux=True)(model, x)
    assert aux == 3 and g.bn.running_mean is None
    assert abs(float(v) - float(_loss(model, x))) < 1e-6


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_in_a_functional_copy_keeps_its_new_statistics(momentum):
    # Inside ft.grad the module is a copy with no cells; its training-mode statistics go
    # into the copy, which the loss can return as aux (the pure-step idiom), and the
    # original module's cells are untouched.
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=(6, 3, 4)).astype(np.float32)
    bn = ft.nn.BatchNorm1d(3, momentum=momentum)
    ref = torch.nn.BatchNorm1d(3, momentum=momentum)

    def loss(m):
        return (m(ft.asarray(x)) ** 2).sum(), m

    (_, copy), _ = ft.jit(ft.value_and_grad(loss, has_aux=True))(bn)
    ref(torch.tensor(x))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(
            np.asarray(getattr(copy, name)), getattr(ref, name).numpy(), rtol=1e-5
        )
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0]
    assert int(bn.num_batches_tracked) == 0
