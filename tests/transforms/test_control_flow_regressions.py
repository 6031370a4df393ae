"""Regression tests for control flow (cond, switch, while_loop, fori_loop, scan) and
autodiff through it."""

import numpy as np
import pytest

import fntorch as ft

_X = np.array([0.3, -0.7, 1.2])


def _scan_body(c, xi):
    return ft.sin(c) * xi, c * c


def _scan_loss(body):
    def loss(x):
        c, ys = ft.scan(body, x[0], x, reverse=True)
        return c + ys.sum()

    return loss


@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jit_grad", "hessian"])
def test_checkpoint_inside_a_scan_body_differentiates(transform):
    # custom_lin (checkpoint's and custom_vjp's linear primitive) held its residuals in
    # a param, not as operands: scan's rule, moving the body's linear part into its own
    # graph, carried tracers of a finished trace there (UnexpectedTracerError).
    t = {
        "grad": ft.grad,
        "jacfwd": ft.jacfwd,
        "jit_grad": lambda f: ft.jit(ft.grad(f)),
        "hessian": ft.hessian,
    }[transform]
    x = ft.asarray(_X)
    got = t(_scan_loss(ft.checkpoint(_scan_body)))(x)
    want = t(_scan_loss(_scan_body))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


def test_custom_vjp_inside_a_cond_branch_differentiates():
    @ft.custom_vjp
    def f(x):
        return ft.sin(x)

    f.defvjp(lambda x: (ft.sin(x), ft.cos(x)), lambda cos_x, g: (g * cos_x,))

    def loss(x):
        return ft.cond(x[0] > 0, lambda a: f(a).sum(), lambda a: a.sum(), x)

    got = ft.grad(loss)(ft.asarray(_X))
    np.testing.assert_allclose(np.asarray(got), np.cos(_X), rtol=1e-12)


@pytest.mark.parametrize(
    "body, got",
    [
        (lambda c, x: c, r"f64\[3\]"),
        (lambda c, x: (c, x, x), "a tuple of length 3"),
        (lambda c, x: None, "NoneType"),
    ],
)
def test_scan_not_a_pair_error_names_f_and_what_it_returned(body, got):
    # A traced output used to be described by its class name, GraphTracer.
    with pytest.raises(TypeError, match=rf"scan: f must return a pair \(carry, y\), got {got}$"):
        ft.scan(body, ft.asarray(_X), ft.asarray(_X))


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize(
    "body, got",
    [
        (lambda i, x: (x, x), r"returned \(f32\[\], f32\[\]\)"),
        (lambda i, x: x.astype(ft.float64), r"returned f64\[\]"),
        (lambda i, x: ft.stack([x, x]), r"returned f32\[2\]"),
    ],
)
def test_fori_loop_carry_error_names_fori_loop_not_its_lowering(body, got, traced):
    # Static bounds lower to scan, traced ones to while_loop; both carry the counter.
    def run(n):
        return ft.fori_loop(0, n, body, ft.asarray(0.5))

    f = ft.jit(run) if traced else run
    expected = r"fori_loop: body_fun .* the carry is f32\[\] but body_fun " + got
    with pytest.raises(TypeError, match=expected):
        f(ft.asarray(3) if traced else 3)


def test_fori_loop_weak_carry_still_promotes():
    out = ft.fori_loop(0, 3, lambda i, x: x * ft.asarray(2.0, dtype=ft.float16), 1.0)
    assert out.dtype == ft.float16 and out.item() == 8.0


def test_scan_negative_length_is_a_named_value_error():
    with pytest.raises(ValueError, match=r"scan: length must be a non-negative integer, got -1"):
        ft.scan(lambda c, x: (c, c), ft.asarray(0.5), None, length=-1)


def _add_counter(lo, hi):
    return ft.fori_loop(lo, hi, lambda i, c: c + i, ft.asarray(1, dtype=ft.int8))


@pytest.mark.parametrize(
    "run",
    [
        lambda: _add_counter(0, 4),  # static Python ints
        lambda: _add_counter(ft.asarray(0, dtype=ft.int32), ft.asarray(4, dtype=ft.int32)),
        lambda: ft.jit(lambda n: _add_counter(0, n))(ft.asarray(4, dtype=ft.int32)),
    ],
)
def test_fori_loop_counter_is_weak_like_jax(run):
    # JAX's counter is weak for static bounds and for a Python-int lower bound, so an
    # int8 carry may add it and stay int8 (it used to be a strong int64/int32 and the
    # carry check raised).
    out = run()
    assert out.dtype == ft.int8 and out.item() == 7


def test_fori_loop_strong_traced_lower_keeps_a_strong_counter():
    # As JAX: a tensor lower bound under jit is strong, so int8 + counter widens.
    def f(lo):
        return ft.fori_loop(lo, 4, lambda i, c: c + i, ft.asarray(1, dtype=ft.int8))

    with pytest.raises(TypeError, match=r"fori_loop: body_fun .* i8\[\] but body_fun returned i32"):
        ft.jit(f)(ft.asarray(0, dtype=ft.int32))


def test_fori_loop_counter_keeps_the_bounds_dtype():
    assert ft.fori_loop(0, 3, lambda i, c: i, 0).dtype == ft.int64
    lo, hi = ft.asarray(0, dtype=ft.int32), ft.asarray(3, dtype=ft.int32)
    out = ft.fori_loop(lo, hi, lambda i, c: i, ft.asarray(0, dtype=ft.int32))
    assert out.dtype == ft.int32 and out.item() == 2
