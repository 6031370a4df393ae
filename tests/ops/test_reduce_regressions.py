"""Regressions found by comparing reductions, scans and sorting against numpy, PyTorch
and JAX: each test names the oracle it agrees with."""

import numpy as np
import pytest

import fntorch as ft


@pytest.mark.parametrize("fn", [ft.var, ft.std, ft.jit(ft.var, static_argnames="correction")])
def test_var_correction_past_n_is_inf_not_negative(fn):
    # numpy (ddof) and PyTorch clamp N - correction at 0: 0.5 / 0 is inf.
    out = float(fn(ft.asarray([1.0, 2.0]), correction=3))
    assert out == np.inf
    assert float(ft.asarray([1.0, 2.0]).var(correction=5)) == np.inf


@pytest.mark.parametrize("dtype", [ft.float16, ft.bfloat16])
@pytest.mark.parametrize("jit", [False, True])
def test_half_cumsum_accumulates_like_sum(dtype, jit):
    # PyTorch and JAX give 300 (float32 running total); rounding the total to the half
    # dtype at each step stalls it at 256 (float16) or 32 (bfloat16).
    x = ft.full((3000,), 0.1, dtype=dtype)
    f = ft.jit(ft.cumsum) if jit else ft.cumsum
    out = f(x)
    assert out.dtype == dtype
    assert float(out[-1]) == float(ft.sum(x)) == 300.0
    assert float(ft.cumulative_sum(x, include_initial=True)[-1]) == 300.0


def test_half_cumprod_rounds_once():
    x = np.full(30, 1.1, np.float16)
    out = ft.cumprod(ft.asarray(x))
    ref = np.cumprod(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(np.asarray(out), ref)


@pytest.mark.parametrize("jit", [False, True])
def test_bfloat16_sort_puts_nan_last(jit):
    # As float32 and float16 do (and numpy, PyTorch): NaN sorts after +inf.
    x = np.array([3, np.nan, 1, np.inf, -1, 0, 5, 4], np.float32)
    xb = ft.asarray(x).astype(ft.bfloat16)
    sort = ft.jit(ft.sort) if jit else ft.sort
    np.testing.assert_array_equal(np.asarray(sort(xb)).astype(np.float32), np.sort(x))
    idx = ft.argsort(xb, descending=True)
    assert np.asarray(idx).tolist() == [1, 3, 6, 7, 0, 2, 5, 4]
    values, indices = ft.top_k(xb, 2)
    assert np.asarray(indices).tolist() == [1, 3]


@pytest.mark.parametrize(
    "call",
    [lambda x: ft.top_k(x, 1.5), lambda x: ft.top_k(x, "2"), lambda x: ft.diff(x, n=1.5)],
)
def test_counts_refuse_floats_instead_of_truncating(call):
    # numpy's diff and PyTorch's topk raise TypeError; int() silently truncated 1.5.
    with pytest.raises(TypeError, match=r"(top_k: k|diff: n) must be an integer, got"):
        call(ft.asarray([[1.0, 4.0, 9.0]]))


def test_diff_negative_order_raises():
    # numpy: "order must be non-negative"; returning x unchanged hid the mistake.
    with pytest.raises(ValueError, match="diff: n must be non-negative, got -1"):
        ft.diff(ft.asarray([1, 4, 9]), n=-1)
    assert ft.diff(ft.asarray([1, 4, 9]), n=0).tolist() == [1, 4, 9]


def test_traced_count_still_asks_for_static():
    with pytest.raises(ft.ConcretizationError, match="static"):
        ft.jit(lambda x, k: ft.top_k(x, k))(ft.ones((2, 5)), ft.asarray(2))
    assert ft.top_k(ft.asarray([1.0, 3.0, 2.0]), ft.asarray(2))[1].tolist() == [1, 2]


def test_searchsorted_memory_is_linear():
    # Comparing every value with every entry built an (m, n) int64 intermediate: 2000
    # bins and 200k values took 3.5 GB and 11 s (numpy: milliseconds).
    a, v = ft.linspace(0.0, 1.0, 1000), ft.linspace(-0.5, 1.5, 3000)
    g = ft.make_graph(ft.searchsorted)(a, v)
    biggest = max(int(np.prod(o.aval.shape)) for e in g.eqns for o in e.outputs)
    assert biggest <= 1000 + 3000


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_searchsorted_matches_numpy(side, dtype):
    rng = np.random.default_rng(0)
    for n, vshape in [(0, (3,)), (9, ()), (9, (0,)), (12, (2, 5))]:
        a = np.sort(rng.integers(0, 4, n).astype(dtype))
        v = rng.integers(-1, 5, vshape).astype(dtype)
        if dtype is np.float32 and n:
            a[-2:], v.reshape(-1)[:1] = np.nan, np.nan  # NaN sorts last
        ref = np.searchsorted(a, v, side=side)
        f = lambda x, y: ft.searchsorted(x, y, side=side)  # noqa: E731
        for out in (f(ft.asarray(a), ft.asarray(v)), ft.jit(f)(ft.asarray(a), ft.asarray(v))):
            assert out.dtype == ft.int64 and out.shape == ref.shape
            np.testing.assert_array_equal(np.asarray(out), ref)
    a = rng.integers(0, 4, 12).astype(dtype)
    s = np.argsort(a, kind="stable")
    out = ft.searchsorted(ft.asarray(a), ft.asarray(v), side=side, sorter=ft.asarray(s))
    np.testing.assert_array_equal(np.asarray(out), np.searchsorted(a, v, side=side, sorter=s))


@pytest.mark.parametrize("dtype", [ft.float16, ft.bfloat16])
def test_half_std_rooted_before_rounding(dtype):
    # PyTorch: 500 and 707; the float16 variance (250000) overflowed to inf first.
    x = ft.asarray([0.0, 1000.0], dtype=dtype)
    for out, ref in [(ft.std(x), 500.0), (x.std(), 707.0), (ft.jit(ft.std)(x), 500.0)]:
        assert out.dtype == dtype
        assert float(out) == pytest.approx(ref, rel=4e-3)
    with pytest.raises(ValueError, match="std: axis 2"):
        ft.std(x, axis=2)


@pytest.mark.parametrize("jit", [False, True])
def test_float16_softmax_sums_in_float32(jit):
    # 70000 * exp(0) overflows float16: softmax was 1/inf = 0 (PyTorch: 1.43e-05),
    # logsumexp inf and log_softmax -inf (bfloat16, with float32's range, was right).
    x = ft.zeros(70000, dtype=ft.float16)
    wrap = ft.jit if jit else (lambda f: f)
    for fn, ref in [(ft.softmax, 1 / 70000), (ft.logsumexp, np.log(70000)),
                    (ft.log_softmax, -np.log(70000))]:  # fmt: skip
        out = wrap(fn)(x)
        assert out.dtype == ft.float16
        assert float(np.asarray(out).ravel()[0]) == pytest.approx(ref, rel=2e-3)


@pytest.mark.parametrize("fn", [ft.sum, ft.prod, ft.cumsum, ft.cumulative_prod])
def test_bool_accumulation_dtype_error_names_the_function(fn):
    # The error came from the primitive ("reduce_sum: expected a numeric ... dtype"),
    # naming neither the function called nor its dtype= argument.
    with pytest.raises(TypeError, match=rf"^{fn.__name__}: dtype must be a numeric dtype"):
        fn(ft.asarray([1, 2]), dtype=ft.bool)


@pytest.mark.parametrize(
    ("name", "reverse", "expected"),
    [("cummax", False, [1, 0, 0, 0]), ("cummin", False, [1, 0, 0, 0]),
     ("cummax", True, [0, 0, 100, 1000]), ("cummin", True, [0, 0, 0, 1100])],
)  # fmt: skip
def test_cummax_nan_outputs_carry_no_gradient(name, reverse, expected):
    # JAX's gradients. The NaN outputs sent their cotangents to the element before the
    # NaN (forward: 1111 at x[0]), a value of no output.
    from fntorch.ops import lax

    x = ft.asarray([1.0, np.nan, 2.0, 0.5], dtype=ft.float64)
    w = ft.asarray([1.0, 10.0, 100.0, 1000.0], dtype=ft.float64)
    f = lambda y: ft.sum(getattr(lax, name)(y, 0, reverse) * w)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(ft.grad(f)(x)), expected)
    np.testing.assert_array_equal(np.asarray(ft.jit(ft.grad(f))(x)), expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=str)
def test_signed_zero_ties_are_the_same_eagerly_and_under_jit(dtype):
    # Kernels order -0 below +0 in max/min reductions and take the second of two equal
    # values in scans, windows and scatters; numpy's reduce kept whichever zero it met
    # first, and its float16 loops the first of two equal values.
    from fntorch.ops import lax

    x = ft.asarray(np.array([[-2.0, 0.0, -0.0], [-1.0, -0.0, 0.0], [-3.0, -0.0, -0.0]], dtype))
    fns = [
        lambda x: ft.max(x, axis=1),
        lambda x: ft.min(-x, axis=1),
        lambda x: lax.cummax(x, 1),
        lambda x: lax.cummin(-x, 1),
        lambda x: lax.reduce_window_max(x, (1, 2), (1, 1), ((0, 0), (0, 0))),
        lambda x: lax.scatter_max(x, [ft.asarray([1])], ft.reshape(x[:, 2], (1, 3)), (1,)),
    ]
    for f in fns:
        eager, jitted = np.asarray(f(x)), np.asarray(ft.jit(f)(x))
        np.testing.assert_array_equal(eager, jitted)
        np.testing.assert_array_equal(np.signbit(eager), np.signbit(jitted))
