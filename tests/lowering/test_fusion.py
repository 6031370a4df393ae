"""Fusion: which kernels a graph becomes, and that index ops on a group's inputs are
views (no copies, no extra steps)."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.lowering import partition, run_passes
from fntorch.lowering.fusion import KernelStep, LibraryStep
from fntorch.lowering.interpret import run_spec
from fntorch.transforms.jit import jit

rng = np.random.default_rng(1)


def T(*shape):
    return ft.asarray(rng.standard_normal(shape).astype(np.float32))


def plan_of(f, *args):
    return partition(run_passes(ft.make_graph(f)(*args)))


def layernorm(x, w, b):
    m = ft.mean(x, axis=-1, keepdims=True)
    v = ft.var(x, axis=-1, keepdims=True)
    return (x - m) / ft.sqrt(v + 1e-5) * w + b


def test_softmax_is_one_row_kernel():
    p = plan_of(lambda x: ft.softmax(x, axis=-1), T(8, 16))
    assert len(p.steps) == 1 and isinstance(p.steps[0], KernelStep)
    spec = p.steps[0].spec
    assert spec.reduce_rank == 1
    assert [o.prim for o in spec.ops if o.prim.startswith("reduce")] == ["reduce_max", "reduce_sum"]


def test_log_softmax_is_one_row_kernel():
    p = plan_of(lambda x: ft.log_softmax(x, axis=-1), T(8, 16))
    assert len(p.kernels) == 1 and not p.library_calls


def test_layernorm_is_one_row_kernel():
    p = plan_of(layernorm, T(8, 16), T(16), T(16))
    assert len(p.steps) == 1 and p.steps[0].spec.reduce_rank == 1
    assert len(p.steps[0].inputs) == 3  # x, w, b: nothing else is materialized


def test_gelu_is_one_elementwise_kernel():
    p = plan_of(lambda x: 0.5 * x * (1 + ft.tanh(0.79788456 * (x + 0.044715 * x**3))), T(64))
    assert len(p.steps) == 1 and p.steps[0].spec.reduce_rank == 0


def test_broadcasts_and_transposes_of_inputs_are_views(monkeypatch):
    from fntorch.lowering import program as program_mod

    seen = []
    real = program_mod.get_kernel

    def recording(spec, backend="auto", target=None):
        k = real(spec, backend, target)

        def run(inputs, outputs):
            seen.append(list(inputs))
            k(inputs, outputs)

        return run

    monkeypatch.setattr(program_mod, "get_kernel", recording)

    def f(x, b, c):
        return ft.exp(x.T + b[None, :]) * c.reshape(1, 4) + x.T[::-1]

    x, b, c = T(4, 3), T(4), T(4)
    g = jit(f)
    assert len(g.lower(x, b, c).plan.steps) == 1  # one kernel, no copy steps
    np.testing.assert_allclose(np.asarray(g(x, b, c)), np.asarray(f(x, b, c)), rtol=1e-6)
    (inputs,) = seen[-1:]
    assert len(inputs) == 4
    for a in inputs:  # every kernel input is a view of a caller's buffer
        assert any(np.shares_memory(a, t._value) for t in (x, b, c))


def test_reduction_over_leading_axis_is_a_permuted_row_kernel():
    def batchnorm(x):
        m = ft.mean(x, axis=(0, 2), keepdims=True)
        v = ft.mean((x - m) ** 2, axis=(0, 2), keepdims=True)
        return (x - m) / ft.sqrt(v + 1e-5)

    x = T(4, 3, 5)
    p = plan_of(batchnorm, x)
    assert len(p.kernels) == 1 and p.kernels[0].perm == (1, 0, 2)
    np.testing.assert_allclose(
        np.asarray(jit(batchnorm)(x)), np.asarray(batchnorm(x)), rtol=1e-5, atol=1e-6
    )


def test_matmul_and_non_kernel_ops_are_library_steps():
    p = plan_of(lambda a, b: ft.relu(a @ b + 1.0).cumsum(0), T(4, 5), T(5, 3))
    kinds = [
        type(s).__name__ + ":" + (s.eqn.primitive.name if isinstance(s, LibraryStep) else "")
        for s in p.steps
    ]
    # cumsum is a template kernel: a library step that carries its own compiled kernel
    assert kinds == ["LibraryStep:dot_general", "KernelStep:", "TemplateStep:cumsum"]


def test_a_group_is_sealed_when_another_step_reads_it():
    # exp(x) feeds a matmul and is used again after it: two kernels, in a valid order.
    def f(x):
        e = ft.exp(x)
        return (e @ e) + e

    x = T(4, 4)
    p = plan_of(f, x)
    assert [type(s).__name__ for s in p.steps] == ["KernelStep", "LibraryStep", "KernelStep"]
    np.testing.assert_allclose(np.asarray(jit(f)(x)), np.asarray(f(x)), rtol=1e-5)


def test_a_sealed_group_still_computes_what_reads_only_its_own_values():
    # Adam's scalar step math: sealed when the first parameter-shaped op reads it; the
    # scalar ops after (neg, convert of the step size) read only its values, so the
    # same kernel computes them, before every step that could read them.
    opt = ft.optim.functional.adam(lr=1e-3)
    p = {"w": T(4, 8), "b": T(8)}
    state = opt.init(p)
    g = {"w": T(4, 8), "b": T(8)}
    plan = partition(run_passes(ft.make_graph(opt.update)(g, state, p)))
    shapes = [tuple(s.logical_shape) for s in plan.steps if isinstance(s, KernelStep)]
    assert sorted(shapes) == [(), (), (4, 8), (8,)]  # one scalar kernel per parameter
    got = jit(opt.update)(g, state, p)
    want = opt.update(g, state, p)
    for a, b in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)

    # a sealed group is not joined by an op that also reads a later step's value
    def f(x):
        e = ft.exp(x)
        m = e @ e  # reads e: the group of e is sealed
        return (e + 1.0) * m

    x = T(4, 4)
    kinds = [type(s).__name__ for s in plan_of(f, x).steps]
    assert kinds == ["KernelStep", "LibraryStep", "KernelStep"]
    np.testing.assert_allclose(np.asarray(jit(f)(x)), np.asarray(f(x)), rtol=1e-5)


@pytest.mark.parametrize("shape,axis", [((6, 5), -1), ((6, 5), 0), ((2, 3, 4), (0, 2))])
def test_specs_agree_with_the_interpreter(shape, axis):
    """Every kernel spec of a plan, run by the interpreter and by the compiled program."""
    f = lambda x: ft.exp(x - ft.max(x, axis=axis, keepdims=True)).sum(axis=axis) * 2.0
    x = T(*shape)
    p = plan_of(f, x)
    for st in p.kernels:
        assert st.spec.reduce_rank == (1 if isinstance(axis, int) else 2)
    np.testing.assert_allclose(np.asarray(jit(f)(x)), np.asarray(f(x)), rtol=1e-5)
    # the interpreter is the spec's reference semantics
    (st,) = p.kernels
    xv = np.asarray(x).transpose(st.perm)
    out = [np.empty(st.rows if row else st.iter_shape, np.float32) for _, row in st.outputs]
    run_spec(st.spec, [xv], out)
    np.testing.assert_allclose(out[0], np.asarray(f(x)) if len(out) == 1 else out[0], rtol=1e-5)


def test_every_primitive_has_a_lowering_rule():
    from fntorch.fx.core import primitives
    from fntorch.lowering.table import KINDS, Lowering, lowering_table

    missing = sorted(n for n, p in primitives.items() if p not in lowering_table)
    assert not missing, f"primitives without a lowering rule: {missing}"
    assert all(isinstance(e, Lowering) for e in lowering_table.values())
    assert {e.kind for e in lowering_table.values()} <= set(KINDS)


def test_sums_over_leading_axes_are_blas_column_sums():
    def f(x, w):
        d = x * w
        return d, ft.sum(d, axis=0), ft.sum(x, axis=(0, 1)), ft.sum(x[:, :2], axis=0)

    rng = np.random.default_rng(0)
    x = ft.asarray(rng.standard_normal((6, 5, 16)).astype(np.float32))
    w = ft.asarray(rng.standard_normal(16).astype(np.float32))
    plan = partition(run_passes(ft.make_graph(f)(x, w)))
    # The two leading-axis sums of buffers are library steps; the last reads a slice
    # view (its rows are not one block) and stays a row kernel.
    assert plan.summary().count("library reduce_sum") == 2, plan.summary()
    for got, want in zip(ft.jit(f)(x, w), f(x, w)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    # Narrow rows, integers and last-axis sums stay in kernels.
    for g, x in [
        (lambda x: ft.sum(x, axis=0), ft.ones((4, 3))),
        (lambda x: ft.sum(x, axis=0), ft.ones((4, 16), dtype=ft.int32)),
        (lambda x: ft.sum(x, axis=-1), ft.ones((4, 16))),
    ]:
        assert "library" not in partition(run_passes(ft.make_graph(g)(x))).summary()
