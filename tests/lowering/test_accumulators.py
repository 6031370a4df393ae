"""Scan accumulators taken out of the loop (lowering/accumulators.py): which carries
qualify, and jit against eager for each shape of the pattern."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.lowering.accumulators import split_accumulators
from fntorch.lowering.passes import run_passes


def _scan_eqns(f, *args):
    g = ft.make_graph(f)(*args)
    found = []

    def walk(graph):
        for e in graph.eqns:
            if e.primitive.name == "scan":
                found.append(e)
            for v in e.params.values():
                if isinstance(v, type(graph)):
                    walk(v)

    walk(g)
    return found


def _split(e):
    p = e.params
    return split_accumulators(run_passes(p["body"]), p["num_consts"], p["num_carry"])


def _close(got, want, rtol=2e-5, atol=2e-5):
    for a, b in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _rnn_loss(p, xs):
    def cell(h, x):
        return ft.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None

    h, _ = ft.scan(cell, ft.zeros((3, 5)), xs)
    return ft.sum(h)


def _rnn_args(seed=0):
    rng = np.random.default_rng(seed)
    p = {
        "wx": ft.asarray(rng.standard_normal((4, 5)).astype(np.float32) * 0.5),
        "wh": ft.asarray(rng.standard_normal((5, 5)).astype(np.float32) * 0.5),
        "b": ft.asarray(rng.standard_normal(5).astype(np.float32) * 0.1),
    }
    return p, ft.asarray(rng.standard_normal((7, 3, 4)).astype(np.float32))


def test_rnn_gradient_scan_accumulates_every_weight_after_the_loop():
    p, xs = _rnn_args()
    f = ft.value_and_grad(_rnn_loss)
    scans = _scan_eqns(f, p, xs)
    splits = [_split(e) for e in scans]
    backward = [s for s in splits if s is not None]
    assert len(backward) == 1  # the forward scan has no accumulator
    _, accs, kept = backward[0]
    assert sorted(a.prim for a in accs) == ["dot_general", "dot_general", "reduce_sum"]
    assert len(kept) == 1  # only dh stays a carry
    _close(ft.jit(f)(p, xs), f(p, xs))


@pytest.mark.parametrize("reverse", [False, True])
def test_accumulator_patterns_against_eager(reverse):
    rng = np.random.default_rng(1)
    xs = ft.asarray(rng.standard_normal((6, 2, 3)).astype(np.float32))
    w = ft.asarray(rng.standard_normal((3, 3)).astype(np.float32))

    def f(xs, w):
        def body(carry, x):
            gram, colsum, h, seen = carry
            t = ft.tanh(x @ w)
            gram = gram + x.T @ t  # qualifies: both operands per step
            colsum = ft.sum(t, axis=0) + colsum  # qualifies, operands swapped
            h = h + x @ w  # a const operand: stays a carry
            seen = seen + x[0, 0]  # not a dot or a sum: stays
            return (gram, colsum, h, seen), ft.sum(gram)  # gram is read: it stays

        init = (ft.zeros((3, 3)), ft.full((3,), 1.5), ft.zeros((2, 3)), ft.zeros(()))
        return ft.scan(body, init, xs, reverse=reverse)

    (e,) = _scan_eqns(f, xs, w)
    _, accs, kept = _split(e)
    assert [a.carry for a in accs] == [1] and kept == [0, 2, 3]
    _close(ft.jit(f)(xs, w), f(xs, w))


def test_no_split_for_a_single_step_or_batched_products():
    rng = np.random.default_rng(2)
    xs = ft.asarray(rng.standard_normal((4, 2, 3, 3)).astype(np.float32))

    def f(xs):
        return ft.scan(lambda c, x: (c + x @ x, None), ft.zeros((2, 3, 3)), xs)[0]

    (e,) = _scan_eqns(f, xs)
    assert _split(e) is None  # a batched product: the sum over steps is not one dot
    _close(ft.jit(f)(xs), f(xs))
    one = xs[:1]
    _close(ft.jit(f)(one), f(one))
