"""Eager composites of ``nn.functional`` run as one compiled call (``nn/_fused.py``): the
same values and tape gradients as primitive by primitive, only eagerly on CPU floats,
and at most ``MAX_SIGNATURES`` compiled signatures per function."""

import numpy as np
import pytest

import fntorch as ft
from fntorch import nn
from fntorch.nn import _fused
from fntorch.nn import functional as F


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run(fn, arrays, params):
    """fn's value and the tape's gradients of sum(fn * r) for its parameter operands."""
    cells = [nn.Parameter(ft.asarray(a)) for a in params]
    out = fn(*[ft.asarray(a) for a in arrays], *cells)
    w = ft.asarray(_rand(*out.shape, seed=9))
    (out * w).sum().backward()
    return np.asarray(out), [np.asarray(c.grad) for c in cells]


CASES = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [_rand(4, 5)], [_rand(3, 5), _rand(3)]),
    "gelu": (lambda x, s: F.gelu(x * s), [_rand(4, 6)], [_rand(6)]),
    "gelu_tanh": (lambda x, s: F.gelu(x * s, approximate="tanh"), [_rand(4, 6)], [_rand(6)]),
    "relu": (lambda x, s: F.relu(x * s), [_rand(4, 6)], [_rand(6)]),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, (6,), w, b), [_rand(2, 4, 6)], [_rand(6), _rand(6)]
    ),
    "batch_norm_train": (
        lambda x, w, b: F.batch_norm(
            x, ft.zeros(3), ft.ones(3), w, b, training=True, momentum=0.1
        ),
        [_rand(4, 3, 5)], [_rand(3), _rand(3)],
    ),
    "batch_norm_eval": (
        lambda x, w, b: F.batch_norm(x, ft.zeros(3) + 0.5, ft.ones(3) * 2.0, w, b),
        [_rand(4, 3, 5)], [_rand(3), _rand(3)],
    ),
    "conv2d": (
        lambda x, w, b: F.conv2d(x, w, b, padding=1), [_rand(2, 3, 5, 5)],
        [_rand(4, 3, 3, 3), _rand(4)],
    ),
    "max_pool2d": (lambda x, s: F.max_pool2d(x * s, 2), [_rand(2, 3, 4, 6)], [_rand(6)]),
    "cross_entropy": (
        lambda x, s: F.cross_entropy(x * s, ft.asarray([0, 2, 1, 2])), [_rand(4, 3)], [_rand(3)]
    ),
    "attention": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [],
        [_rand(2, 2, 5, 4, seed=1), _rand(2, 2, 5, 4, seed=2), _rand(2, 2, 5, 4, seed=3)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_composite_equals_primitive_by_primitive(name):
    fn, arrays, params = CASES[name]
    got, got_grads = _run(fn, arrays, params)
    with ft.disable_jit():
        want, want_grads = _run(fn, arrays, params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_dropout_draws_the_same_mask():
    x, key = ft.ones((8, 16)), ft.random.key(3)
    got = F.dropout(x, 0.25, key=key)
    with ft.disable_jit():
        want = F.dropout(x, 0.25, key=key)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_only_eager_calls_compile_separately():
    fused = _fused.fused(lambda x: ft.exp(x) * 2.0)
    graph = ft.make_graph(lambda x: fused(x) + 1.0)(ft.ones(3))
    assert "jit_call" not in str(graph)  # traced inline: an enclosing jit fuses across it
    assert not fused.jits
    with ft.disable_jit():
        fused(ft.ones(3, dtype=ft.float16))
    fused(ft.ones(3, dtype=ft.float16))  # not float32/float64: primitive by primitive
    assert not fused.jits
    assert fused(ft.ones(3)).tolist() == pytest.approx([2 * np.e] * 3)
    assert len(fused.jits) == 1


def test_signatures_past_the_limit_run_primitive_by_primitive(monkeypatch):
    monkeypatch.setattr(_fused, "MAX_SIGNATURES", 2)
    fused = _fused.fused(lambda x, k: x * k)
    for n in range(1, 5):
        assert fused(ft.ones(n), k=2.0).tolist() == [2.0] * n
    assert len(fused.seen) == 2
    traces = sum(j.stats["traces"] for j in fused.jits.values())
    assert traces == 2


def test_a_parameter_no_output_reaches_keeps_grad_none():
    x = nn.Parameter(ft.asarray(_rand(4, 5)))
    w, b = nn.Parameter(ft.asarray(_rand(3, 5))), nn.Parameter(ft.asarray(_rand(3)))
    (gx,) = ft.autograd.grad(F.linear(x, w, b).sum(), x, create_graph=True)
    (gx**2).sum().backward()
    assert b.grad is None and w.grad is not None
