"""ft.jit: caching, retracing and its log, static and donated arguments, pytrees,
composition with the other transforms, lower/compile, and the W-workloads against eager."""

import logging
import threading

import numpy as np
import pytest

import fntorch as ft
from fntorch.lowering import Program
from fntorch.transforms.jit import config, jit

rng = np.random.default_rng(0)


def T(*shape, dtype=np.float32):
    return ft.asarray(rng.standard_normal(shape).astype(dtype))


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ------------------------------------------------------------------------ caching


def test_one_trace_per_signature_and_retrace_on_shape_dtype():
    f = jit(lambda x: ft.sin(x) * 2.0 + 1.0)
    x = T(3)
    for _ in range(3):
        close(f(x), ft.sin(x) * 2.0 + 1.0)
    assert f.stats == {"traces": 1, "hits": 2, "misses": 1} and f._cache_size() == 1
    f(T(4))
    f(ft.asarray(np.ones(4, np.float64)))
    assert f.stats["traces"] == 3 and f._cache_size() == 3
    f(T(4))
    assert f.stats["traces"] == 3


def test_log_says_why_it_retraced(caplog):
    f = jit(lambda x, n: x * n, static_argnums=1)
    config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="fntorch.jit"):
            f(T(3), 2)
            f(T(4), 2)
            f(T(4), 3)
            f(T(4), 3)
    finally:
        config.update("log_compiles", False)
    msgs = [r.getMessage() for r in caplog.records if r.name == "fntorch.jit"]
    assert len(msgs) == 3
    assert "first time" in msgs[0]
    assert "x: f32[3] -> f32[4]" in msgs[1]
    assert "static argument n: 2 -> 3" in msgs[2]


def test_log_new_pytree_structure(caplog):
    f = jit(lambda t: ft.tree.leaves(t)[0] * 2.0)
    config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="fntorch.jit"):
            f((T(2),))
            f({"a": T(2)})
    finally:
        config.update("log_compiles", False)
    assert "new pytree structure" in caplog.records[-1].getMessage()


def test_python_scalars_are_weak_and_do_not_retrace():
    f = jit(lambda x, s: x * s)
    x = T(3)
    assert f(x, 2.0).dtype == ft.float32
    close(f(x, 3.0), x * 3.0)
    assert f.stats["traces"] == 1
    assert jit(lambda x, s: x + s)(ft.asarray(np.ones(2, np.int32)), 1).dtype == ft.int32


def test_python_scalar_arguments_get_a_compiled_program():
    f = jit(lambda x, s: ft.tanh(x * s) + 1.0)
    lo = f.lower(T(4, 4), 2.0)
    assert isinstance(lo._entry.program, Program) and len(lo._entry.program.kernels) == 1
    assert "llvm.func" in lo.as_text()
    close(f(T(4, 4) * 0.0, 2.0), np.ones((4, 4)))


@pytest.mark.parametrize("arg", [3.0, ft.asarray(3.0)])
def test_outputs_that_are_literals_or_constants(arg):
    # The gradient of x * 2 is the literal 2: the graph's output is no traced value.
    assert float(jit(ft.grad(lambda x: x * 2.0))(arg)) == 2.0
    assert float(jit(lambda x: ft.ones(()) * 2.0)(arg)) == 2.0


def test_a_scalar_tensor_from_an_eager_reduction_is_a_cpu_argument():
    # An eager full reduction holds a numpy scalar, not a 0-d array: it must key and run
    # like any 0-d CPU tensor (it was taken for another device's buffer: a second trace,
    # and an uncompiled program).
    f = jit(lambda a: ft.exp(a) * 2.0)
    s = ft.sum(ft.ones(3))
    close(f(s), np.exp(3.0) * 2.0)
    close(f(ft.asarray(6.0)), np.exp(6.0) * 2.0)
    assert f.stats["traces"] == 1
    assert isinstance(f.lower(s)._entry.program, Program)


def test_signed_zero_literals_keep_their_sign():
    x = ft.asarray([1.0, 2.0])
    pos, neg = jit(lambda x: (1.0 / (x * 0.0), 1.0 / (x * -0.0)))(x)
    assert pos.tolist() == [np.inf] * 2 and neg.tolist() == [-np.inf] * 2
    # a kernel that differs from a compiled one only by the literal's sign
    assert jit(lambda x: 1.0 / ft.where(x > 0, -0.0, 5.0))(x).tolist() == [-np.inf] * 2


def test_nan_literals_keep_their_payloads():
    # Kernels were keyed by the literal's repr: every NaN is "nan", so the second
    # function ran the first one's kernel and returned its payload.
    x = ft.asarray([-1.0, 2.0])
    for bits in (0x7FC00001, 0x7FC00002):
        nan = np.array(bits, np.uint32).view(np.float32)[()]
        out = jit(lambda x, nan=nan: ft.where(x > 0, x, nan))(x)
        assert np.asarray(out).view(np.uint32)[0] == bits


@pytest.mark.parametrize("dtype", [ft.bfloat16, ft.float16, ft.float32])
def test_adding_positive_zero_is_not_dropped(dtype):
    # -0.0 + 0.0 is +0.0: only x - 0.0 and x + -0.0 are x
    x = ft.asarray(np.array([-0.0, 1.0])).astype(dtype)
    for f in (lambda x: x + 0.0, lambda x: x - (-0.0)):
        got = np.signbit(np.asarray(jit(f)(x), np.float32))
        np.testing.assert_array_equal(got, np.signbit(np.asarray(f(x), np.float32)))
    assert np.signbit(np.asarray(jit(lambda x: x - 0.0)(x), np.float32))[0]


@pytest.mark.parametrize("y", [2.0, 3.0, -1.0, -2.0, 4.0])
def test_float64_power_by_a_small_integer_literal_is_computed_by_products(y):
    x = np.array([3.0, 10.0, 7.0, 1.1, -0.0, 0.0, -np.inf, np.inf, np.nan, -2.5])
    got = np.asarray(jit(lambda x: x**y)(ft.asarray(x)))
    with np.errstate(divide="ignore"):
        want = np.power(x, y)
    # exact for these (numpy's pow is correctly rounded), signed zeros and infinities too
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize(
    "f",
    [
        lambda t: ft.sum(t) + 1.0,
        lambda t: ft.prod(t) * 2.0,
        lambda t: ft.mean(t),
        lambda t: ft.logical_not(ft.any(t > 0)),
    ],
)
def test_full_reductions_of_empty_tensors_feed_kernels(f):
    # numpy's impls return scalars here; a kernel reading one as an array crashed
    x = ft.zeros((0, 3))
    got, want = np.asarray(jit(f)(x)), np.asarray(f(x))
    np.testing.assert_array_equal(got, want)


def test_outputs_are_never_written_again():
    f = jit(lambda x: ft.exp(ft.exp(x) + 1.0) * 2.0)
    a = f(ft.zeros(5))
    before = a.numpy().copy()
    f(ft.ones(5))
    np.testing.assert_array_equal(a.numpy(), before)


def test_inputs_never_written_without_donation():
    x = T(4, 4)
    before = x.numpy().copy()
    jit(lambda x: ft.exp(x) - 1.0)(x)
    np.testing.assert_array_equal(x.numpy(), before)


def test_identity_constant_and_literal_outputs():
    c = T(3)
    f = jit(lambda x: (x, c, ft.asarray(2.0), x.T))
    x = T(2, 3)
    a, b, d, e = f(x)
    close(a, x), close(b, c), close(d, 2.0), close(e, x.numpy().T)


def test_threads_get_their_own_buffers():
    f = jit(lambda x: ft.tanh(ft.exp(x) * 0.5).sum())
    xs = [ft.full((64,), float(i) / 10) for i in range(8)]
    want = [float(ft.tanh(ft.exp(x) * 0.5).sum()) for x in xs]
    got = [None] * 8

    def work(i):
        for _ in range(50):
            got[i] = float(f(xs[i]))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_threads_calling_at_once_trace_once():
    # Without the lock each thread's first call traced and compiled the same signature.
    f = jit(lambda x: ft.tanh(x) * 3.0 + 1.0)
    x = ft.ones((8,))
    barrier = threading.Barrier(6)
    got = []

    def work():
        barrier.wait()
        got.append(float(f(x).sum()))

    ts = [threading.Thread(target=work) for _ in range(6)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert f.stats["traces"] == 1 and f.stats["misses"] == 1 and f.stats["hits"] == 5
    np.testing.assert_allclose(got, [8 * (np.tanh(1.0) * 3 + 1)] * 6, rtol=1e-6)


def test_threads_never_share_a_recycled_result():
    f = jit(lambda x: x * 0.5 + 1.0)  # 256 KiB results: recycled
    held = {}

    def work(i):
        for j in range(20):  # every result stays alive: none may be written again
            held[i, j] = f(ft.full((256, 256), float(100 * i + j)))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    bad = [k for k, out in held.items() if not np.all(out.numpy() == (100 * k[0] + k[1]) / 2 + 1)]
    assert not bad


# ------------------------------------------------------------ static arguments


def test_static_argnums_and_argnames():
    def f(x, n, mode="add"):
        return x + n if mode == "add" else x * n

    g = jit(f, static_argnums=1, static_argnames="mode")
    x = T(3)
    close(g(x, 2), x + 2)
    close(g(x, 2, mode="mul"), x * 2)
    close(g(x, n=3), x + 3)  # static by name too
    assert g.stats["traces"] == 3
    g(x, 2, mode="mul")
    assert g.stats["traces"] == 3


def test_negative_static_and_donated_argnums_count_from_the_end():
    def f(x, n):
        return x * n if n > 1 else x

    g = jit(f, static_argnums=-1)
    x = T(3)
    close(g(x, 3), x * 3)
    assert g.lower(x, 3).graph.invars[0].aval.shape == (3,) and len(g.lower(x, 3).graph.invars) == 1
    h = jit(lambda *xs: xs[0] * xs[-1], static_argnums=-1)  # *args: read at each call
    close(h(x, 2), x * 2)
    close(h(x, x, 3), x * 3)
    with pytest.raises(ValueError, match="both static and donated"):
        jit(f, static_argnums=-1, donate_argnums=1)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"static_argnums": 2}, r"static_argnums=\(2,\), but f takes 2 positional arguments"),
        ({"static_argnums": -3}, r"static_argnums=\(-3,\)"),
        ({"donate_argnums": (0, 5)}, r"donate_argnums=\(0, 5\), but f takes 2"),
        ({"static_argnames": ("n", "mode")}, r"static_argnames=.*'mode', which f does not take"),
    ],
)
def test_argnums_and_argnames_the_function_does_not_have(kw, match):
    def f(x, n):
        return x

    with pytest.raises(ValueError, match=match):
        jit(f, **kw)
    jit(lambda x, **kw: x, static_argnames="anything")  # **kwargs may take any name


def test_static_tuples_retrace_when_an_element_changes_type():
    g = jit(lambda x, s: x * s[0], static_argnums=1)
    x = ft.asarray(np.arange(3, dtype=np.int32))
    assert g(x, (2,)).dtype == ft.int32
    assert g(x, (2.0,)).dtype == ft.float32  # (2,) == (2.0,), but not the same program
    assert g.stats["traces"] == 2


def test_arrays_and_tensors_of_one_signature_share_a_trace(caplog):
    f = jit(lambda x, y: x + y)
    f(T(3), T(3))
    f(np.ones(3, np.float32), T(3))
    assert f.stats["traces"] == 1 and f._cache_size() == 1
    config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="fntorch.jit"):
            f(T(3), 2.0)
    finally:
        config.update("log_compiles", False)
    assert "y: f32[3] -> f32[]{weak}" in caplog.records[-1].getMessage()


def test_leaves_that_are_not_arrays_are_named():
    x = T(3)
    with pytest.raises(TypeError, match=r"argument mode is a str"):
        jit(lambda x, mode: x)(x, "fast")
    with pytest.raises(TypeError, match=r"argument cfg\['act'\] is a str"):
        jit(lambda x, cfg: x)(x, {"act": "relu", "s": 1.0})
    with pytest.raises(TypeError, match=r"output \[1\] is a str"):
        jit(lambda x: (x, "tag"))(x)


def test_unhashable_static_names_the_argument():
    g = jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(TypeError, match="static argument shape must be hashable"):
        g(T(4), [2, 2])
    assert g(T(4), (2, 2)).shape == (2, 2)


def test_concretization_error_names_static_argnums():
    def f(x, n):
        return x * 2 if n > 0 else x

    with pytest.raises(ft.ConcretizationError, match="static_argnums") as e:
        jit(f)(T(2), ft.asarray(1.0))
    assert "n (f32[])" in str(e.value)
    x = T(2)
    close(jit(f, static_argnums=1)(x, 1), x * 2)
    close(jit(f, static_argnames="n")(x, n=-1), x)


# ------------------------------------------------------------------- donation


def test_donation_reuses_the_buffer_and_invalidates_the_tensor():
    f = jit(lambda x, y: ft.exp(x) + y, donate_argnums=0)
    x = ft.asarray(np.zeros((8, 8), np.float32))
    y = T(8, 8)
    address = x._value.ctypes.data  # no reference: one would stop the donation
    out = f(x, y)
    assert out._value.ctypes.data == address  # the output was written into x's buffer
    close(out, 1.0 + y.numpy())
    with pytest.raises(RuntimeError, match="donated"):
        x + 1.0
    with pytest.raises(RuntimeError, match="donated"):
        x.numpy()


def test_donation_skipped_while_someone_else_sees_the_buffer():
    f = jit(lambda x: ft.exp(x), donate_argnums=0)
    x = ft.asarray(np.zeros(4, np.float32))
    view = x.numpy()  # a live view of the buffer
    out = f(x)
    np.testing.assert_array_equal(view, 0.0)  # not overwritten
    close(out, 1.0)


def test_no_donation_to_a_kernel_that_writes_before_its_last_read():
    # The softmax kernel stashes exp(x - max) in its output during the sum pass; with the
    # output in x's buffer, a last pass reading x would see exp values instead.
    def f(x):
        z = ft.exp(x - ft.max(x, axis=-1, keepdims=True))
        return z / ft.sum(z, axis=-1, keepdims=True) + x

    x0 = np.random.default_rng(0).standard_normal((16, 33)).astype(np.float32)
    want = f(ft.asarray(x0))
    x = ft.asarray(x0.copy())
    buf_id = id(x._value)
    out = jit(f, donate_argnums=0)(x)
    assert id(out._value) != buf_id
    close(out, want)


# ---------------------------------------------------------- pytrees and kwargs


def test_pytrees_and_kwargs():
    def f(params, x, *, scale):
        return {"y": (params["w"] * x + params["b"]) * scale, "n": [x.sum()]}

    g = jit(f)
    p = {"w": T(3), "b": T(3)}
    x = T(3)
    got = g(p, x, scale=2.0)
    want = f(p, x, scale=2.0)
    close(got["y"], want["y"]), close(got["n"][0], want["n"][0])
    g(p, x, scale=3.0)
    assert g.stats["traces"] == 1


# ------------------------------------------------------------------ composition


def loss(x):
    return (ft.sin(x) ** 2 * ft.exp(-x)).sum()


def test_grad_of_jit_and_jit_of_grad():
    x = T(5)
    want = ft.grad(loss)(x)
    close(ft.grad(jit(loss))(x), want)
    close(jit(ft.grad(loss))(x), want)
    close(jit(jit(ft.grad(loss)))(x), want)


def test_vmap_of_jit_and_jit_of_vmap():
    x = T(4, 5)
    f = lambda r: ft.softmax(r, axis=-1) * r.sum()
    want = ft.vmap(f)(x)
    close(ft.vmap(jit(f))(x), want)
    close(jit(ft.vmap(f))(x), want)


def test_jit_inside_make_graph_is_one_call():
    g = ft.make_graph(lambda x: jit(ft.sin)(x) + 1.0)(T(3))
    assert [e.primitive.name for e in g.eqns] == ["jit_call", "add"]
    assert [e.primitive.name for e in g.eqns[0].params["graph"].eqns] == ["sin"]


# ------------------------------------------------------------- lower / compile


def test_lower_graph_text_and_compile():
    f = jit(lambda x, y: ft.exp(x) * y + 1.0)
    x, y = T(4, 3), T(3)
    lo = f.lower(x, y)
    assert [e.primitive.name for e in lo.graph.eqns] == ["exp", "mul", "add"]
    assert len(lo.plan.kernels) == 1
    text = lo.as_text()
    assert "kernel 0: exp mul add" in text and len(text) > 50
    c = lo.compile()
    close(c(x, y), ft.exp(x) * y + 1.0)
    with pytest.raises(TypeError, match="lowered for other argument types"):
        c(T(5, 3), y)


def _headers(text):
    return [line for line in text.splitlines() if line.startswith("//")]


def test_as_text_lists_template_kernels_and_those_of_sub_programs():
    a, idx = T(8, 8), ft.asarray([0, 3, 3])
    text = jit(lambda a: ft.take(a, idx, axis=0) * 2.0 + 1.0).lower(a).as_text()
    assert _headers(text) == ["// kernel 0: gather (template)", "// kernel 1: mul add"]
    assert text.count("llvm.func") == 2
    assert _headers(jit(lambda a: a.at[idx].add(1.0)).lower(a).as_text()) == [
        "// kernel 0: scatter_add (template)"
    ]
    f = jit(lambda x: ft.cond(x.sum() > 0, lambda x: ft.exp(x), lambda x: ft.sin(x) * 2.0, x))
    assert _headers(f.lower(T(3)).as_text()) == [
        "// kernel 0: reduce_sum gt convert_element_type",
        "// cond branch 0 > kernel 0: sin mul",
        "// cond branch 1 > kernel 0: exp",
    ]
    g = jit(lambda x: ft.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, x))
    assert _headers(g.lower(T(3)).as_text()) == [
        "// while_loop cond > kernel 0: reduce_sum lt",
        "// while_loop body > kernel 0: mul",
    ]


# ------------------------------------------------------------------ flat kernels


def _program_kernels(f, *args):
    return f.lower(*args)._entry.program.kernels


def test_full_shape_elementwise_kernels_run_flat_and_share_one_compile():
    f = jit(lambda p, g: p - 0.01 * g)
    w, gw, b, gb = T(6, 5), T(6, 5), T(5), T(5)
    (kw,) = _program_kernels(f, w, gw)
    (kb,) = _program_kernels(f, b, gb)
    assert kw is kb and kw.spec.rank == 1  # a weight's update and a bias's: one kernel
    out = f(w, gw)
    assert out.shape == (6, 5)
    close(out, w.numpy() - np.float32(0.01) * gw.numpy())
    close(f(b, gb), b.numpy() - np.float32(0.01) * gb.numpy())


def test_flat_kernels_read_strided_and_single_element_inputs():
    f = jit(lambda x, s: ft.exp(x) * s + 1.0)
    xt = ft.asarray(rng.standard_normal((5, 4)).astype(np.float32).T)  # not contiguous
    s = T(1, 1)
    assert _program_kernels(f, xt, s)[0].spec.rank == 1
    close(f(xt, s), np.exp(xt.numpy()) * s.numpy() + 1.0)


@pytest.mark.parametrize(
    "fn, args, rank",
    [
        (lambda x, b: x * b, ((4, 3), (3,)), 2),  # a broadcast bias needs the row structure
        (lambda x: x + ft.arange(3, dtype=ft.float32), ((4, 3),), 2),  # reads the index
        (lambda x: ft.sum(ft.exp(x), axis=-1), ((4, 3),), 2),  # a row kernel
        # full-shape inputs that are broadcast views (per-example outer products):
        # raveling them would copy
        (
            lambda a, x: (
                ft.broadcast_to(a[:, :, None], (4, 3, 5))
                * ft.broadcast_to(x[:, None, :], (4, 3, 5))
            ),
            ((4, 3), (4, 5)),
            3,
        ),
    ],
)
def test_kernels_keep_their_rank_where_flat_would_change_them(fn, args, rank):
    xs = [T(*a) for a in args]
    assert [k.spec.rank for k in _program_kernels(jit(fn), *xs)] == [rank]
    close(jit(fn)(*xs), fn(*xs), rtol=1e-5)


def _step_kinds(program):
    return [s.__qualname__.split(".")[0].lstrip("_") for s in program._steps]


def test_views_of_inputs_run_before_the_first_library_call():
    f = jit(lambda a, b, bias: ft.relu(a @ b + bias))
    a, b, bias = T(8, 6), T(6, 5), T(5)
    kinds = _step_kinds(f.lower(a, b, bias)._entry.program)
    assert kinds[0] == "view_step"  # the bias broadcast, made while the caches are warm
    assert kinds.index("matmul_step") > max(i for i, k in enumerate(kinds) if k == "view_step")
    close(f(a, b, bias), np.maximum(a.numpy() @ b.numpy() + bias.numpy(), 0), rtol=1e-5)


def test_a_chain_of_views_is_one_step():
    # a[:, :, None] is expand_dims then a broadcast into the kernel's iteration space
    f = jit(lambda a, b: a[:, :, None] * b[:, None, :])
    a, b = T(4, 3), T(4, 5)
    program = f.lower(a, b)._entry.program
    assert _step_kinds(program) == ["view_step", "view_step", "kernel_step"]
    assert all(s.__name__ == "step_strided" for s in program._steps[:2])
    close(f(a, b), a.numpy()[:, :, None] * b.numpy()[:, None, :])


@pytest.mark.parametrize("result", ["flat", "full rank"])
def test_views_of_large_buffers_are_made_by_numpy(monkeypatch, result):
    # Above the recycling limit a buffer gets no build-time stand-in (a view chain that
    # copies would copy it too): views of it take numpy's route, with the same values.
    from fntorch.lowering import program

    monkeypatch.setattr(program, "RECYCLE_MAX_BYTES", 8)

    def fn(a, b, c):  # a broadcast operand keeps the result's kernel at full rank
        r = a * 2.0 + (c if result == "full rank" else 1.0)
        return r[:, :, None] * b[:, None, :], r

    f = jit(fn)
    args = T(4, 3), T(4, 5), T(3)
    steps = f.lower(*args)._entry.program._steps
    views = [s.__name__ for s in steps if "view_step" in s.__qualname__]
    assert views and all(name == "step" for name in views)
    close(f(*args)[0], fn(*args)[0])


def test_views_of_a_strided_input_go_through_numpy():
    # Built for C-contiguous inputs; a transposed array of the same shape and dtype
    # (the same signature) must be viewed by numpy, not by the strides of the build.
    def fn(a, b):  # a flip and slices: views at an offset, with negative strides
        return ft.flip(a, axis=0)[1:, :, None] * b[1:, None, :] + ft.sum(a.T[None])

    f = jit(fn)
    a, b = T(4, 3), T(4, 5)
    close(f(a, b), fn(a, b))
    strided = ft.asarray(np.ascontiguousarray(T(3, 4).numpy()).T)
    assert not strided.numpy().flags.c_contiguous
    close(f(strided, b), fn(strided, b))
    close(f(b[:, :3], b), fn(b[:, :3], b))  # a column slice: strides of the wider array
    assert f._cache_size() == 1


# ------------------------------------------------------------ recycled results


def _address(t):
    return t._value.__array_interface__["data"][0]


def test_large_results_reuse_a_buffer_the_caller_dropped_and_never_one_it_holds():
    f = jit(lambda x: ft.exp(x) + 1.0)
    x = T(256, 256)  # 256 KiB: recycled
    first = f(x)
    held = first.numpy().copy()
    kept = f(x * 2.0)  # `first` is held: a new buffer
    assert _address(kept) != _address(first)
    np.testing.assert_array_equal(first.numpy(), held)  # not overwritten
    address = _address(first)
    del first
    _filler = np.ones((256, 256), np.float32)  # takes the block if it went back to malloc
    again = f(x)  # `first` was dropped: its buffer is written again
    assert _address(again) == address
    close(again, np.exp(x.numpy()) + 1.0)
    close(kept, np.exp(2.0 * x.numpy()) + 1.0)


def test_a_view_of_a_result_keeps_its_buffer_from_being_reused():
    f = jit(lambda x: ft.exp(x) * 3.0)
    x = T(256, 256)
    view = f(x).numpy()[:2]  # the tensor is gone, a view of its buffer is not
    saved = view.copy()
    for _ in range(3):
        f(x * 0.5)
    np.testing.assert_array_equal(view, saved)


def test_donating_a_recycled_result_still_writes_in_place():
    f = jit(lambda x, b: x * 2.0 + b, donate_argnums=0)  # rank 2: its buffer is y's own
    x, b = T(256, 256), T(256)
    _seen = x.numpy()  # a live view: x is not donated, so y comes from the recycler
    y = f(x, b)
    address = _address(y)
    z = f(y, b)  # y came from the recycler; its buffer is still donated
    assert _address(z) == address


_VIEWS_OF_Y = {
    "numpy": lambda y: (y, y.numpy()),
    "eager slice": lambda y: (y, y[:2]),
    "reshape by jit": lambda y: (jit(lambda t: t.reshape(-1))(y), y),
    "broadcast by jit": lambda y: (jit(lambda t: ft.broadcast_to(t, (1, 256, 256)))(y), y),
}


@pytest.mark.parametrize("view", sorted(_VIEWS_OF_Y))
def test_donating_never_writes_memory_that_another_view_shows(view):
    # Tensors are immutable: a donated buffer is reused only when no other array sees
    # its memory, whichever of the two (the donated tensor or the other view) came first.
    y = jit(lambda x: x * 2.0)(T(256, 256))  # a recycled result
    donated, other = _VIEWS_OF_Y[view](y)
    seen, want = np.array(other), np.array(donated) + 1.0
    del y
    out = jit(lambda t: t + 1.0, donate_argnums=0)(donated)
    np.testing.assert_array_equal(np.asarray(other), seen)
    np.testing.assert_array_equal(out.numpy(), want)


# --------------------------------------------------------------- W-workloads


def gelu(x):
    return 0.5 * x * (1 + ft.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def layernorm(x, w, b):
    m = ft.mean(x, axis=-1, keepdims=True)
    v = ft.var(x, axis=-1, keepdims=True)
    return (x - m) / ft.sqrt(v + 1e-5) * w + b


def mlp_loss(params, x, labels):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = ft.relu(h)
    logp = ft.log_softmax(h, axis=-1)
    onehot = (labels[:, None] == ft.arange(h.shape[-1])).astype(h.dtype)
    return -(logp * onehot).sum() / x.shape[0]


def mlp_params(sizes):
    return [(T(a, b) * (1 / np.sqrt(a)), T(b) * 0.1) for a, b in zip(sizes[:-1], sizes[1:])]


def sgd_step(params, x, labels):
    g = ft.grad(mlp_loss)(params, x, labels)
    return ft.tree.map(lambda p, d: p - 0.01 * d, params, g)


@pytest.mark.parametrize("name", ["gelu", "softmax", "layernorm"])
def test_elementwise_workloads(name):
    x = T(16, 32)
    if name == "gelu":
        f, args = gelu, (x,)
    elif name == "softmax":
        f, args = (lambda x: ft.softmax(x, axis=-1)), (x,)
    else:
        f, args = layernorm, (x, T(32), T(32))
    close(jit(f)(*args), f(*args), rtol=2e-5, atol=2e-6)


def test_mlp_training_step():
    params = mlp_params([20, 16, 16, 10])
    x = T(8, 20)
    labels = ft.asarray(rng.integers(0, 10, 8))
    got = jit(sgd_step)(params, x, labels)
    want = sgd_step(params, x, labels)
    for g, w in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
        close(g, w, rtol=1e-4, atol=1e-5)


def test_per_example_grads():
    params = mlp_params([12, 8, 10])
    x = T(6, 12)
    labels = ft.asarray(rng.integers(0, 10, 6))

    def one(p, xi, li):
        return mlp_loss(p, xi[None], li[None])

    f = ft.vmap(ft.grad(one), in_axes=(None, 0, 0))
    got, want = jit(f)(params, x, labels), f(params, x, labels)
    for g, w in zip(ft.tree.leaves(got), ft.tree.leaves(want)):
        close(g, w, rtol=1e-4, atol=1e-5)


def test_hessian():
    W = T(20, 20) * 0.2
    f = lambda x: (ft.tanh(W @ x) ** 2).sum()
    x = T(20)
    close(jit(ft.hessian(f))(x), ft.hessian(f)(x), rtol=1e-4, atol=1e-5)
