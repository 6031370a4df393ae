"""``ft.debug.print``: eagerly, under jit, vmap (lane order), grad (forward values,
once) and control-flow bodies, eagerly and compiled; the passes keep it."""

from __future__ import annotations

import fntorch as ft
from fntorch.lowering.passes import run_passes


def lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_eager_prints_at_once(capsys):
    ft.debug.print("x={} y={y} n={}", ft.asarray([1.0, 2.0]), 3, y=ft.asarray(0.5))
    assert lines(capsys) == ["x=[1. 2.] y=0.5 n=3"]


def test_jit_prints_each_call_from_the_compiled_program(capsys):
    f = ft.jit(lambda x: (ft.debug.print("in jit {}", x * 2.0), x + 1.0)[1])
    x = ft.asarray([1.0, 2.0])
    f(x)
    f(x)
    assert lines(capsys) == ["in jit [2. 4.]", "in jit [2. 4.]"]
    assert f.stats["traces"] == 1


def test_jit_keeps_a_print_of_constants_and_two_equal_prints(capsys):
    def f(x):
        ft.debug.print("const {}", ft.asarray(3.0))
        ft.debug.print("same {}", x)
        ft.debug.print("same {}", x)
        return x

    ft.jit(f)(ft.asarray(1.0))
    assert lines(capsys) == ["const 3.0", "same 1.0", "same 1.0"]
    g = ft.make_graph(f)(ft.asarray(1.0))
    names = [e.primitive.name for e in run_passes(g).eqns]
    assert names.count("debug_callback") == 3


def test_vmap_prints_one_line_per_lane_in_order(capsys):
    ft.vmap(lambda x: ft.debug.print("lane {}", x))(ft.asarray([3.0, 1.0, 2.0]))
    assert lines(capsys) == ["lane 3.0", "lane 1.0", "lane 2.0"]


def test_vmap_over_axis_1_under_jit(capsys):
    x = ft.asarray([[1.0, 2.0], [3.0, 4.0]])
    ft.jit(ft.vmap(lambda r: ft.debug.print("col {}", r), in_axes=1))(x)
    assert lines(capsys) == ["col [1. 3.]", "col [2. 4.]"]


def test_grad_prints_forward_values_once(capsys):
    def f(x):
        ft.debug.print("fwd {}", x)
        return ft.sin(x) * x

    ft.grad(f)(ft.asarray(2.0))
    assert lines(capsys) == ["fwd 2.0"]
    ft.jit(ft.grad(f))(ft.asarray(2.0))
    assert lines(capsys) == ["fwd 2.0"]


def _body(c, x):
    ft.debug.print("c={} x={}", c, x)
    return c + x, c


def test_scan_prints_once_per_iteration_eager_and_compiled(capsys):
    xs = ft.asarray([1.0, 2.0, 3.0])
    want = ["c=0.0 x=1.0", "c=1.0 x=2.0", "c=3.0 x=3.0"]
    ft.scan(_body, ft.asarray(0.0), xs)
    assert lines(capsys) == want
    f = ft.jit(lambda xs: ft.scan(_body, ft.asarray(0.0), xs))
    f(xs)
    assert lines(capsys) == want
    f(xs)
    assert lines(capsys) == want


def test_fori_while_and_cond_bodies(capsys):
    def fori(x):
        return ft.fori_loop(0, 3, lambda i, c: (ft.debug.print("i={}", i), c + 1.0)[1], x)

    def loop(x):
        return ft.while_loop(
            lambda c: c < 2.0, lambda c: (ft.debug.print("w={}", c), c + 1.0)[1], x
        )

    def branch(x):
        return ft.cond(
            x > 0.0,
            lambda v: (ft.debug.print("pos {}", v), v)[1],
            lambda v: (ft.debug.print("neg {}", v), v)[1],
            x,
        )

    for run in (lambda f: f, ft.jit):
        run(fori)(ft.asarray(0.0))
        assert lines(capsys) == ["i=0", "i=1", "i=2"]
        run(loop)(ft.asarray(0.0))
        assert lines(capsys) == ["w=0.0", "w=1.0"]
        run(branch)(ft.asarray(-1.0))
        assert lines(capsys) == ["neg -1.0"]


def test_grad_of_scan_prints_forward_once_per_iteration(capsys):
    xs = ft.asarray([1.0, 2.0])
    ft.grad(lambda xs: ft.scan(_body, ft.asarray(0.0), xs)[0])(xs)
    assert lines(capsys) == ["c=0.0 x=1.0", "c=1.0 x=2.0"]


def test_callback_gets_numpy_arrays():
    import numpy as np

    got = []
    ft.jit(lambda x: ft.debug.callback(got.append, x) or x)(ft.ones(2))
    assert isinstance(got[0], np.ndarray) and got[0].tolist() == [1.0, 1.0]
