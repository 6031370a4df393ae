"""Control flow (cond, switch, while_loop, fori_loop, scan) under every transform.

Forward values against the Python-loop equivalent; gradients against central finite
differences in float64; vmap against a loop over the batch; jit against eager; the
errors by their messages.
"""

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cpu_impls
from fntorch.ops import _prims_control as pc

RNG = np.random.default_rng(0)


def t(x):
    return ft.asarray(np.asarray(x, np.float64))


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of a scalar function of one float64 array."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(t(x + e))) - float(f(t(x - e)))) / (2 * eps)
    return g


def check_grad(f, x, rtol=1e-6, atol=1e-8):
    got = ft.grad(f)(t(x)).numpy()
    np.testing.assert_allclose(got, fd_grad(f, x), rtol=rtol, atol=atol)


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **{"rtol": 1e-6, **kw})


# ----------------------------------------------------------------------- forward values


def cond_fn(x):
    return ft.cond(x.sum() > 0, lambda a: ft.sin(a) * 2.0, lambda a: a**3 - a, x)


def switch_fn(i, x):
    fs = [lambda a: a + 1.0, lambda a: ft.exp(a), lambda a: (a * a).sum() * a]
    return ft.switch(i, fs, x)


def scan_fn(h, xs):
    def step(c, x):
        c = ft.tanh(c * 0.9 + x)
        return c, (c * x).sum()

    return ft.scan(step, h, xs)


def test_forward_values_match_python_loops():
    x = RNG.standard_normal(3)
    for v in (x, -np.abs(x)):
        ref = np.sin(v) * 2 if v.sum() > 0 else v**3 - v
        close(cond_fn(t(v)).numpy(), ref)
    for i, ref in [
        (0, x + 1),
        (1, np.exp(x)),
        (2, (x * x).sum() * x),
        (-4, x + 1),
        (9, (x * x).sum() * x),
    ]:
        close(switch_fn(i, t(x)).numpy(), ref)

    # while_loop: Collatz steps, integer carry
    def collatz(n):
        return ft.while_loop(
            lambda c: c[0] != 1,
            lambda c: (ft.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
            (ft.asarray(n), 0),
        )[1]

    def collatz_py(n):
        k = 0
        while n != 1:
            n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
        return k

    assert [int(collatz(n)) for n in (1, 6, 27)] == [collatz_py(n) for n in (1, 6, 27)]
    # fori_loop, static and traced bounds
    acc = 0.0
    for i in range(2, 7):
        acc = acc * 0.5 + i
    body = lambda i, v: v * 0.5 + i  # noqa: E731
    close(ft.fori_loop(2, 7, body, 0.0).item(), acc)
    close(ft.fori_loop(ft.asarray(2), ft.asarray(7), body, 0.0).item(), acc)
    assert ft.fori_loop(5, 2, body, 3.0).item() == 3.0
    # scan, forward and reverse
    h, xs = RNG.standard_normal(4), RNG.standard_normal((5, 4))
    for reverse in (False, True):
        c, ys = h.copy(), np.zeros(5)
        for i in reversed(range(5)) if reverse else range(5):
            c = np.tanh(c * 0.9 + xs[i])
            ys[i] = (c * xs[i]).sum()
        step = lambda c, x: (ft.tanh(c * 0.9 + x), (ft.tanh(c * 0.9 + x) * x).sum())  # noqa: E731
        got_c, got_ys = ft.scan(step, t(h), t(xs), reverse=reverse)
        close(got_c.numpy(), c)
        close(got_ys.numpy(), ys)


def test_scan_pytrees_length_and_weak_carry():
    xs = {"a": t(np.arange(4.0)), "b": (t(np.ones((4, 2))),)}

    def step(carry, x):
        s, n = carry["s"], carry["n"]
        return {"s": s + x["a"] * x["b"][0], "n": n + 1}, (x["a"], None, {"k": s.sum()})

    carry, ys = ft.scan(step, {"s": ft.zeros(2, dtype=ft.float64), "n": 0}, xs)
    close(carry["s"].numpy(), [6.0, 6.0])
    assert int(carry["n"]) == 4 and ys[1] is None
    close(ys[0].numpy(), np.arange(4.0))
    close(ys[2]["k"].numpy(), [0.0, 0.0, 2.0, 6.0])
    # no xs: length; a weakly typed init (a Python float) takes the body's dtype
    c, ys = ft.scan(lambda c, _: (c + t(1.0), c), 0.0, length=3)
    assert c.dtype == ft.float64 and ys.tolist() == [0.0, 1.0, 2.0]


def test_cond_closes_over_values_and_runs_only_the_taken_branch(monkeypatch):
    x, y = t(2.0), t(5.0)
    assert ft.cond(x > 0, lambda: x * 2, lambda: x * 3).item() == 4.0
    assert ft.cond(False, lambda a: a + y, lambda a: a - y, t(1.0)).item() == -4.0
    # eagerly, only the taken branch runs: the other one's primitives are never called
    exp_p = ft.ops.lax.exp_p
    calls = []
    impl = cpu_impls[exp_p]
    monkeypatch.setitem(cpu_impls, exp_p, lambda v: calls.append(1) or impl(v))
    assert ft.cond(True, lambda a: a * 2, ft.exp, t(1.0)).item() == 2.0
    assert not calls
    ft.cond(False, lambda a: a * 2, ft.exp, t(1.0))
    assert calls


# ----------------------------------------------------------------------------- gradients


def test_grad_cond_and_switch_match_finite_differences():
    x = RNG.standard_normal(3)
    for v in (x, -np.abs(x) - 0.1, np.abs(x) + 0.1):
        check_grad(lambda a: cond_fn(a).sum(), v)
    for i in (0, 1, 2, 5):
        check_grad(lambda a, i=i: switch_fn(i, a).sum(), x)
    # the index traced too, and a closed-over differentiated value
    w = RNG.standard_normal(3)
    check_grad(lambda a: ft.switch(ft.asarray(1), [lambda b: b, lambda b: b * a], t(w)).sum(), x)


def test_grad_scan_and_fori_loop_match_finite_differences():
    h, xs = RNG.standard_normal(4), RNG.standard_normal((6, 4))
    check_grad(lambda a: sum(v.sum() for v in scan_fn(a, t(xs))), h)
    check_grad(lambda a: sum(v.sum() for v in scan_fn(t(h), a)), xs)
    check_grad(
        lambda a: ft.scan(lambda c, x: (c * ft.sin(x), c), 1.0, a, reverse=True)[1].sum(), xs[0]
    )
    check_grad(lambda a: ft.fori_loop(0, 5, lambda i, v: ft.sin(v) * a + i, a).sum(), h)
    check_grad(lambda a: ft.fori_loop(0, 3, lambda i, v: v * a, 1.0), np.array(1.7))


def test_rnn_scan_gradient():
    hidden, steps = 16, 10
    rng = np.random.default_rng(1)
    W_h = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    W_x = rng.standard_normal((3, hidden)) / np.sqrt(3)
    xs = rng.standard_normal((steps, 3))

    def loss(W):
        def step(h, x):
            h = ft.tanh(h @ W + x @ t(W_x))
            return h, (h**2).sum()

        h, ys = ft.scan(step, ft.zeros(hidden, dtype=ft.float64), t(xs))
        return h.sum() + ys.mean()

    got = ft.grad(loss)(t(W_h)).numpy()
    np.testing.assert_allclose(got, fd_grad(loss, W_h), rtol=1e-5, atol=1e-8)


def test_higher_order_derivatives_of_scan():
    xs = RNG.standard_normal(4)
    f = lambda s: ft.scan(lambda c, a: (c * ft.sin(a * s), None), 1.0, t(xs))[0]  # noqa: E731
    g = ft.grad(f)
    close(float(ft.grad(g)(t(0.7))), fd_grad(g, np.array(0.7)), rtol=1e-5)
    prod = lambda x: ft.scan(lambda c, a: (c * ft.sin(a), None), 1.0, x)[0]  # noqa: E731
    hess = ft.hessian(prod)(t(xs)).numpy()
    s, c = np.sin(xs), np.cos(xs)
    ref = np.outer(c, c) * np.prod(s) / np.outer(s, s)
    np.fill_diagonal(ref, -np.prod(s))
    close(hess, ref, rtol=1e-6)


def test_jvp_of_while_loop_and_reverse_mode_error():
    def f(x):
        return ft.while_loop(
            lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * ft.sin(c[1]) + 0.5), (0, x)
        )[1]

    _, tan = ft.jvp(f, (t(1.3),), (t(1.0),))
    close(float(tan), fd_grad(f, np.array(1.3)), rtol=1e-6)
    _, f_jvp = ft.linearize(f, t(1.3))
    close(float(f_jvp(t(1.0))), float(tan))
    with pytest.raises(ValueError, match=r"Reverse-mode.*while_loop.*scan.*fori_loop"):
        ft.grad(f)(t(1.3))
    with pytest.raises(ValueError, match="Reverse-mode"):
        # traced bounds (under jit) make fori_loop a while_loop
        ft.jit(lambda x, n: ft.grad(lambda y: ft.fori_loop(0, n, lambda i, v: v * y, y))(x))(
            t(1.0), ft.asarray(3)
        )


# --------------------------------------------------------------------------------- vmap


def test_vmap_cond_batched_predicate_and_operands():
    X = RNG.standard_normal((6, 3))
    got = ft.vmap(cond_fn)(t(X)).numpy()
    close(got, np.stack([cond_fn(t(r)).numpy() for r in X]))
    # batched operands, unbatched predicate (a cond of batched branches)
    g = lambda p, a, b: ft.cond(p, lambda u, v: u * v, lambda u, v: u - v, a, b)  # noqa: E731
    for p in (True, False):
        got = ft.vmap(g, in_axes=(None, 0, None))(p, t(X), t(X[0]))
        close(got.numpy(), np.stack([g(p, t(r), t(X[0])).numpy() for r in X]))
    # batched switch index, with clamping
    idx = ft.asarray(np.array([0, 2, 1, 7, -2, 1]))
    got = ft.vmap(switch_fn)(idx, t(X)).numpy()
    close(got, np.stack([switch_fn(int(i), t(r)).numpy() for i, r in zip(idx.tolist(), X)]))


def test_vmap_while_loop_batched_predicate():
    def f(n, x):
        return ft.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (0, x))

    ns, xs = np.array([0, 3, 1, 5]), RNG.standard_normal(4)
    got_i, got_x = ft.vmap(f)(ft.asarray(ns), t(xs))
    ref = [f(ft.asarray(n), t(x)) for n, x in zip(ns, xs)]
    assert got_i.tolist() == [int(r[0]) for r in ref]
    close(got_x.numpy(), [float(r[1]) for r in ref])
    # unbatched predicate, batched carry
    got = ft.vmap(lambda x: f(ft.asarray(3), x)[1])(t(xs))
    close(got.numpy(), [float(f(ft.asarray(3), t(x))[1]) for x in xs])


def test_vmap_scan_and_vmap_grad_scan():
    H, XS = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 5, 4))
    c, ys = ft.vmap(scan_fn)(t(H), t(XS))
    for k in range(3):
        rc, rys = scan_fn(t(H[k]), t(XS[k]))
        close(c.numpy()[k], rc.numpy())
        close(ys.numpy()[k], rys.numpy())
    # xs batched on a later axis, init unbatched
    c2, _ = ft.vmap(scan_fn, in_axes=(None, 2))(t(H[0]), t(np.moveaxis(XS, 0, 2)))
    close(c2.numpy()[1], scan_fn(t(H[0]), t(XS[1]))[0].numpy())
    loss = lambda h, xs: sum(v.sum() for v in scan_fn(h, xs))  # noqa: E731
    got = ft.vmap(ft.grad(loss))(t(H), t(XS)).numpy()
    for k in range(3):
        close(got[k], ft.grad(loss)(t(H[k]), t(XS[k])).numpy())


# ---------------------------------------------------------------------------------- jit


def test_jit_matches_eager_and_runs_compiled_sub_programs(monkeypatch):
    x, xs = t(RNG.standard_normal(4)), t(RNG.standard_normal((5, 4)))
    fns = [
        (cond_fn, (x,)),
        (cond_fn, (-abs(x),)),
        (switch_fn, (ft.asarray(2), x)),
        (
            lambda n, v: ft.while_loop(
                lambda c: c[0] < n, lambda c: (c[0] + 1, ft.sin(c[1])), (0, v)
            ),
            (ft.asarray(3), x),
        ),
        (lambda n, v: ft.fori_loop(0, n, lambda i, a: a * 0.5 + i, v), (ft.asarray(4), x)),
        (lambda v: ft.fori_loop(1, 4, lambda i, a: a * 0.5 + i, v), (x,)),
        (scan_fn, (x, xs)),
        (lambda h, a: ft.scan(lambda c, b: (c + b, c * b), h, a, reverse=True), (x, xs)),
    ]
    eager = [f(*a) for f, a in fns]
    # the compiled program must not fall back to the eager impls
    for p in (pc.cond_p, pc.while_p, pc.scan_p):
        monkeypatch.setitem(cpu_impls, p, None)
    for (f, a), e in zip(fns, eager):
        got = ft.jit(f)(*a)
        for g, r in zip(ft.tree.leaves(got), ft.tree.leaves(e)):
            assert g.dtype == r.dtype
            close(g.numpy(), r.numpy())


def test_grad_jit_scan_compositions():
    h, xs = RNG.standard_normal(4), RNG.standard_normal((6, 4))
    loss = lambda a, b: sum(v.sum() for v in scan_fn(a, b))  # noqa: E731
    ref = fd_grad(lambda a: loss(a, t(xs)), h)
    close(ft.grad(ft.jit(loss))(t(h), t(xs)).numpy(), ref, atol=1e-8)
    close(ft.jit(ft.grad(loss))(t(h), t(xs)).numpy(), ref, atol=1e-8)
    close(
        ft.jit(ft.vmap(ft.grad(loss), in_axes=(0, None)))(t(h[None]), t(xs)).numpy()[0],
        ref,
        atol=1e-8,
    )


# -------------------------------------------------------------------------------- errors


def test_error_messages():
    with pytest.raises(
        TypeError, match=r"false_fun returns f32\[2\] and true_fun returns f32\[3\]"
    ):
        ft.cond(True, lambda: ft.zeros(3), lambda: ft.zeros(2))
    with pytest.raises(TypeError, match=r"branch 0 returns .* branch 1 returns"):
        ft.switch(0, [lambda: ft.zeros(3), lambda: (ft.zeros(3), ft.zeros(3))])
    with pytest.raises(TypeError, match=r"carry is f32\[3\] but f returned f32\[2\]"):
        ft.scan(lambda c, x: (c[:2], x), ft.zeros(3), ft.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"carry is \(i64\[\], f32\[\]\) but body_fun returned"):
        ft.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, ft.zeros(2)), (0, ft.zeros(())))
    with pytest.raises(TypeError, match="cond_fun must return a bool scalar"):
        ft.while_loop(lambda c: c, lambda c: c, 1.0)
    with pytest.raises(TypeError, match="pred must be a scalar"):
        ft.cond(ft.ones(2) > 0, lambda: 1.0, lambda: 2.0)
    with pytest.raises(ValueError, match="disagree on the scan length"):
        ft.scan(lambda c, x: (c, None), 0.0, (ft.zeros(2), ft.zeros(3)))
    with pytest.raises(ValueError, match="length must be given"):
        ft.scan(lambda c, x: (c, None), 0.0)


def test_matches_jax_scan_on_pytrees():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    xs = RNG.standard_normal((5, 3)).astype(np.float32)

    def body(np_):
        def f(c, x):
            a, b = c
            return (a * 0.5 + np_.sin(x), b + x.sum()), {"y": a * x}

        return f

    jc, jys = jax.lax.scan(body(jnp), (jnp.ones(3), jnp.zeros(())), xs, reverse=True)
    fc, fys = ft.scan(body(ft), (ft.ones(3), ft.zeros(())), ft.asarray(xs), reverse=True)
    close(fc[0].numpy(), np.asarray(jc[0]), rtol=1e-5)
    close(fc[1].numpy(), np.asarray(jc[1]), rtol=1e-5)
    close(fys["y"].numpy(), np.asarray(jys["y"]), rtol=1e-5)
