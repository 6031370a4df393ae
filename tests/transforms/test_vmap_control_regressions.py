"""Regressions of vmap (and its compositions) over the control-flow primitives."""

import numpy as np

import fntorch as ft


def t(x):
    return ft.asarray(np.asarray(x, np.float64))


def test_grad_of_vmap_cond_batched_pred_no_nan_from_untaken_branch():
    # The lanes with x <= 0 take the linear branch: sqrt's infinite derivative there
    # must not leak into the gradient (eager grad and vmap(grad) give 2 there).
    def f(x):
        return ft.cond(x > 0, ft.sqrt, lambda v: v * 2.0, x)

    x = t([-1.0, 4.0, 0.0])
    want = [2.0, 0.25, 2.0]
    got = ft.grad(lambda x: ft.vmap(f)(x).sum())(x)
    np.testing.assert_allclose(got.numpy(), want)
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(x).numpy(), want)

    # An unbatched operand, where the untaken branches are not even defined.
    def h(i, v):
        return ft.switch(i, [lambda a: a * 3.0, ft.sqrt, ft.log], v)

    g = ft.grad(lambda v: ft.vmap(h, in_axes=(0, None))(ft.asarray([0, 0]), v).sum())
    assert float(g(t(-1.0))) == 6.0


def test_loop_counters_and_unbatched_branch_outputs_stay_unbatched():
    # As in JAX: a carry the batch never reaches (a counter) comes out unbatched, so
    # out_axes=None accepts it; it used to be broadcast, and out_axes=None raised.
    xs = t(np.arange(12.0).reshape(3, 4))

    def scan_f(xs):
        return ft.scan(lambda c, x: ((c[0] + 1, c[1] + x), (c[0], x * 2.0)), (0, 0.0), xs)

    (n, tot), (ks, ys) = ft.vmap(scan_f, in_axes=1, out_axes=((None, 0), (None, 1)))(xs)
    assert n.shape == () and int(n) == 3 and ks.tolist() == [0, 1, 2]
    np.testing.assert_allclose(tot.numpy(), xs.numpy().sum(0))
    np.testing.assert_allclose(ys.numpy(), 2 * xs.numpy())

    def while_f(x):
        return ft.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))

    n, y = ft.vmap(while_f, out_axes=(None, 0))(xs[0])
    assert n.shape == () and int(n) == 3
    np.testing.assert_allclose(y.numpy(), 8 * xs[0].numpy())

    def cond_f(x):
        return ft.cond(True, lambda x: (1.0, x), lambda x: (2.0, -x), x)

    one, y = ft.vmap(cond_f, out_axes=(None, 0))(xs[0])
    assert one.shape == () and float(one) == 1.0

    # A carry still becomes batched once a step mixes the batch into it.
    def chain(c, x):  # a meets the batch one step after b does
        a, b = c
        return (a + b, b + x), a

    (a, b), ys = ft.vmap(lambda xs: ft.scan(chain, (t(0.0), t(0.0)), xs), in_axes=1)(xs)
    assert a.shape == b.shape == (4,) and ys.shape == (4, 3)
    col = xs.numpy()[:, 1]
    assert float(a[1]) == col[0] * 2 + col[1] and ys[1].tolist() == [0.0, 0.0, col[0]]

    def tri(n):  # the sum meets the batch through the predicate
        return ft.while_loop(lambda c: c[1] < n, lambda c: (c[0] + c[1], c[1] + 1), (0, 0))

    k, _ = ft.jit(ft.vmap(tri))(ft.asarray([2, 4]))
    assert k.tolist() == [1, 6]


def test_fori_loop_python_int_bound_takes_the_traced_bounds_dtype():
    # As JAX: with one Python-int bound the counter has the other bound's dtype, so an
    # int32 carry may add it (it used to be int64 and the carry check raised).
    def f(n):
        return ft.fori_loop(0, n, lambda i, c: c + i, ft.asarray(0, dtype=ft.int32))

    n = ft.asarray(np.array([1, 3, 0], np.int32))
    out = ft.vmap(f)(n)
    assert out.dtype == ft.int32 and out.tolist() == [0, 3, 0]
    assert ft.jit(f)(n[1]).tolist() == 3
    g = ft.vmap(lambda lo: ft.fori_loop(lo, 4, lambda i, c: c + i, ft.asarray(0, dtype=ft.int32)))
    assert g(n).tolist() == [6, 3, 6]


def test_python_number_carry_is_weak_inside_the_body():
    # As JAX: a Python-number carry is weakly typed where the body first sees it, so it
    # takes the narrower dtype of what it meets (it used to stay int64 / float32).
    i8 = ft.asarray([1, 2, 3], dtype=ft.int8)
    h16 = ft.asarray([1.0, 2.0, 3.0], dtype=ft.float16)
    c, ys = ft.scan(lambda c, x: (c + x, c), 0, i8)
    assert c.dtype == ys.dtype == ft.int8 and c.tolist() == 6 and ys.tolist() == [0, 1, 3]
    one = ft.asarray(1, dtype=ft.int8)
    assert ft.while_loop(lambda c: c < 3, lambda c: c + one, 0).dtype == ft.int8
    out = ft.vmap(lambda x: ft.fori_loop(0, 3, lambda i, c: c + x[i], 0.0))(ft.stack([h16, -h16]))
    assert out.dtype == ft.float16 and out.tolist() == [6.0, -6.0]
    c, ys = ft.scan(lambda c, x: (c * 0.5, c), 1, None, length=2)  # weak int -> float
    assert c.dtype == ft.float32 and ys.tolist() == [1.0, 0.5]
