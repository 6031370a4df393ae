"""The CUDA device runs what the CPU runs, with the CPU's results: every primitive's
eager impl, jit (PTX kernels) against eager, grad/vmap/jit compositions, control flow,
random draws bit for bit, transfers and DLPack. Needs a GPU and CuPy: skips without.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

cp = pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
from fntorch.fx import dtypes as dt  # noqa: E402
from fntorch.fx.core import Tensor  # noqa: E402
from fntorch.lowering.table import lowering_table  # noqa: E402
from tests.cases import all_cases  # noqa: E402
from tests.contract import as_list, case_ids  # noqa: E402

pytestmark = pytest.mark.cuda
# no shrinking: a GPU run is short and a failure's first example says enough
SETTINGS = settings(
    max_examples=3,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate),
)


def _host(t):
    return np.asarray(t.to("cpu"))


def _compare(got, want, case, what, atol=1e-6):
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    # bfloat16 math runs in float32 on both devices, whose transcendentals may differ in
    # the last float32 bit: one bfloat16 step apart after rounding
    # (float16: a kernel's rsqrt and the host's 1/sqrt may round to neighbouring halves)
    low = 1.6e-2 if w.dtype == dt.bfloat16 else 1e-3 if w.dtype == np.float16 else 0.0
    if g.dtype.kind == "f" or g.dtype == dt.bfloat16:
        g, w = g.astype(np.float64), w.astype(np.float64)
    # complex results are floats too: cuFFT and pocketfft differ in the last bits
    if case is not None and (case.exact or g.dtype.kind not in "fc"):
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        rtol, atol = (case.rtol, case.atol) if case is not None else (1e-5, atol)
        rtol, atol = max(rtol, low), max(atol, low)
        np.testing.assert_allclose(g, w, rtol=max(rtol, 1e-5), atol=max(atol, 1e-6), err_msg=what)


def _dtypes(case):
    return list(case.dtypes)


# ------------------------------------------------------------------ the device


def test_transfers_round_trip(gpu):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = ft.asarray(a).cuda()
    assert x.device is gpu and isinstance(x._value, cp.ndarray)
    assert x.cpu().device is ft.device("cpu")
    np.testing.assert_array_equal(x.numpy(), a)
    assert not x.numpy().flags.writeable
    assert ft.device_put({"w": a}, "cuda")["w"].device is gpu
    assert ft.asarray(a).to("cuda:0").device is gpu
    assert gpu in ft.devices() and ft.cuda.is_available() and ft.cuda.device_count() >= 1
    with ft.default_device("cuda"):
        assert ft.zeros(3).device is gpu
    with pytest.raises(ValueError, match="different devices"):
        x + ft.ones((2, 3))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_eager_operators_fast_path_equals_the_general_path(gpu, dtype):
    # cpu_dispatch.register_fast_binary: cuda_eager's kernels, the scalar by value
    rng = np.random.default_rng(0)
    x = ft.asarray(rng.standard_normal((3, 4)).astype(dtype), device=gpu)
    y = ft.asarray(rng.standard_normal(4).astype(dtype), device=gpu)
    pairs = [
        (x * 1.0001, ft.multiply(x, 1.0001)), (0.5 + x, ft.add(0.5, x)),
        (x - 3, ft.subtract(x, 3)), (2.0 / x, ft.divide(2.0, x)), (x * y, ft.multiply(x, y)),
        (x + 70000, ft.add(x, 70000)),
    ]  # fmt: skip
    for got, want in pairs:
        assert got.device is gpu and got.dtype == want.dtype == dtype
        np.testing.assert_array_equal(_host(got), _host(want))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_eager_operators_equal_cupy_to_the_bit(gpu, dtype):
    # the fast path at every shape, signed zeros and specials included
    rng = np.random.default_rng(1)
    for shape in [(), (0,), (1,), (7,), (16,), (3, 5), (1000, 37)]:
        a = rng.standard_normal(shape).astype(dtype)
        b = (rng.standard_normal(shape) + 2.0).astype(dtype)
        x, y = ft.asarray(a, device=gpu), ft.asarray(b, device=gpu)
        xc, yc = cp.asarray(a), cp.asarray(b)
        s = dtype(1.0001)
        pairs = [
            (x * 1.0001, xc * s), (1.0001 * x, s * xc), (x - 0.5, xc - dtype(0.5)),
            (0.5 - x, dtype(0.5) - xc), (x / 3.0, xc / dtype(3)), (3.0 / y, dtype(3) / yc),
            (x + y, xc + yc), (x - y, xc - yc), (x * y, xc * yc), (x / y, xc / yc),
            (x * -0.0, xc * dtype(-0.0)), (x * 0.0, xc * dtype(0.0)),
            (x + float("nan"), xc + dtype("nan")), (x + float("inf"), xc + dtype("inf")),
        ]  # fmt: skip
        for got, want in pairs:
            assert got.dtype == dtype and got.shape == shape
            np.testing.assert_array_equal(_host(got), cp.asnumpy(want))
            assert np.array_equal(np.signbit(_host(got)), np.signbit(cp.asnumpy(want)))
    # strided and broadcast operands
    x = ft.asarray(rng.standard_normal((4, 6)).astype(dtype), device=gpu)
    xc = cp.asarray(x.numpy())
    np.testing.assert_array_equal(_host(x.T * 2.0), cp.asnumpy(xc.T * dtype(2)))
    np.testing.assert_array_equal(
        _host(x[:, ::2] + x[:, 1::2]), cp.asnumpy(xc[:, ::2] + xc[:, 1::2])
    )
    np.testing.assert_array_equal(_host(x * x[0]), cp.asnumpy(xc * xc[0]))
    # CuPy fills a 0-d array made from the host with a memset for zeros, -0.0 included:
    # fntorch's device constants go through a 1-element copy (cuda_bf16.to_device)
    pos = ft.asarray(np.ones(5, dtype), device=gpu)
    assert np.signbit(_host(ft.jit(lambda v: v * -0.0)(pos))).all()
    assert np.signbit(_host(ft.asarray(dtype(-0.0), device=gpu)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_eager_operators_launch_fntorch_kernels_and_fall_back_to_cupy(gpu, dtype):
    from fntorch.devices import cpu_dispatch

    ops = cpu_dispatch._DEVICE_BINARY[cp.ndarray]

    def launched(op):  # (variant, size, device) keys of this thread's dtype table
        table = ops[op].tables()[{np.float32: 0, np.float64: 1, np.float16: 2}[dtype]]
        return set(table)

    rng = np.random.default_rng(2)
    a = rng.standard_normal(1001).astype(dtype)
    x = ft.asarray(a, device=gpu)
    odd = x[1:]  # 2 or 4 bytes past an aligned block: the unaligned variants
    for got, want, op, variant in [
        (x * 3.0, a * dtype(3), "mul", "vk"), (3.0 - x, dtype(3) - a, "sub", "kv"),
        (odd / 7.0, a[1:] / dtype(7), "truediv", "ck"), (7.0 + odd, dtype(7) + a[1:], "add", "kc"),
        (x + x, a + a, "add", "vv"), (odd * odd, a[1:] * a[1:], "mul", "cc"),
    ]:  # fmt: skip
        np.testing.assert_array_equal(_host(got), want)
        assert (variant, want.size, 0) in launched(op)
    # not C-contiguous, or shapes that broadcast: CuPy's ufunc, the same values
    m = ft.asarray(a[:1000].reshape(40, 25), device=gpu)
    before = launched("mul")
    np.testing.assert_array_equal(_host(m.T * 2.0), a[:1000].reshape(40, 25).T * dtype(2))
    np.testing.assert_array_equal(_host(m * m[0]), a[:1000].reshape(40, 25) * a[:25])
    assert launched("mul") == before
    # a result is a fresh buffer: writing through one never shows in the next
    y1, y2 = x * 2.0, x * 2.0
    assert y1._value.data.ptr != y2._value.data.ptr


def test_eager_operators_over_many_grid_steps(gpu):
    # more elements than one pass of the grid covers: the grid-stride loop's tail
    n = 2**22 + 3
    a = np.arange(n, dtype=np.float32)
    x = ft.asarray(a, device=gpu)
    np.testing.assert_array_equal(_host(x * 0.5 + 1.0), a * np.float32(0.5) + np.float32(1))


def test_only_the_documented_primitives_take_the_host(gpu):
    from fntorch.devices.cuda_device import cuda_impls
    from fntorch.devices.cuda_impls import host_primitives
    from tests.devices.test_cuda_table_on_numpy import HOST_ON_A_GPU

    # scatter_add is native for the dtypes cupyx.scatter_add takes (float32/64, int32,
    # uint32) and a partial host route for the rest, as integer pow is; lu is native
    # through cupyx (cuda_solver), which numpy standing in for CuPy does not take
    want = {*HOST_ON_A_GPU, "scatter_add"} - {"lu"}
    assert host_primitives(cuda_impls) == sorted(want)


def test_dlpack_with_torch_and_cupy_shares_memory(gpu):
    from fntorch.devices.cuda_device import from_dlpack

    c = cp.arange(4, dtype=cp.float32)
    t = from_dlpack(c)
    assert t.device is gpu and t._value.data.ptr == c.data.ptr
    back = cp.from_dlpack(t)
    assert back.data.ptr == c.data.ptr
    torch = pytest.importorskip("torch")
    tt = torch.arange(3.0, device="cuda")
    ft_t = from_dlpack(tt)
    assert ft_t._value.data.ptr == tt.data_ptr()
    assert torch.from_dlpack(ft_t).data_ptr() == tt.data_ptr()


@pytest.mark.parametrize("case", all_cases(), ids=case_ids)
@SETTINGS
@given(data=st.data())
def test_every_primitive_on_the_gpu_equals_the_cpu(gpu, case, data):
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    args, params = case.draw(data, dtype)
    want = as_list(case.prim.bind(*[Tensor(a) for a in args], **params))
    with ft.default_device(gpu):  # for primitives of no operands (iota)
        got = as_list(case.prim.bind(*[ft.asarray(a, device=gpu) for a in args], **params))
    assert len(got) == len(want)
    for g in got:
        assert g.device is gpu, case.name
    got, want = [_host(g) for g in got], [np.asarray(w) for w in want]
    if case.prim.name in ("eigh", "qr", "svd") and len(got) > 1:
        got = _factors_as(got, want, case.prim.name, np.asarray(args[0]))
    for g, w in zip(got, want):
        _compare(g, w, case, case.name)


def _phase(g, w, axis):
    """The unit factor per vector (the vectors run along ``axis``) that turns ``g``'s
    into ``w``'s where they are one vector up to a sign (a complex phase)."""
    inner = np.sum(np.conj(g.astype(np.complex128)) * w, axis=axis, keepdims=True)
    size = np.abs(inner)
    return np.where(size > 0, inner / np.where(size > 0, size, 1), 1)


def _aligned(g, w, axis, k):
    """``g`` with its first ``k`` vectors (columns for ``axis=-2``, rows for -1) turned
    to ``w``'s; the others, a basis of the complement that no solver fixes, taken as
    ``w``'s once ``g``'s are checked orthonormal."""
    out = np.array(w, copy=True)
    lead = (..., slice(None), slice(0, k)) if axis == -2 else (..., slice(0, k), slice(None))
    gk = g[lead]
    turned = gk * _phase(gk, w[lead], axis)
    out[lead] = turned if np.iscomplexobj(w) else turned.real
    cols = g if axis == -2 else np.swapaxes(g, -1, -2)
    gram = np.swapaxes(np.conj(cols), -1, -2) @ cols
    eye = np.broadcast_to(np.eye(gram.shape[-1]), gram.shape)
    np.testing.assert_allclose(gram, eye, atol=1e-4, err_msg="orthonormal")
    return out.astype(g.dtype)


def _factors_as(got, want, name, x):
    """cuSOLVER's eigen- and singular vectors and qr's factors are LAPACK's up to each
    vector's sign (phase): turned to the CPU's before comparing (``cuda_solver``), the
    factors checked to rebuild ``x``."""
    if name == "eigh":
        w, v = got
        return [w, _aligned(v, want[1], -2, v.shape[-1])]
    k = min(x.shape[-2:])
    if name == "qr":
        q, r = got
        np.testing.assert_allclose(q @ r, x, rtol=1e-4, atol=1e-4, err_msg="q @ r")
        # q's column j times p_j is the CPU's: r's row j times conj(p_j) then is too
        p = np.swapaxes(_phase(q[..., :, :k], want[0][..., :, :k], -2), -1, -2)
        turned = np.array(r, np.complex128)
        turned[..., :k, :] *= np.conj(p)
        turned = turned if np.iscomplexobj(r) else turned.real
        return [_aligned(q, want[0], -2, k), turned.astype(r.dtype)]
    s, u, vt = got
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    np.testing.assert_allclose(rebuilt, x, rtol=1e-4, atol=1e-4, err_msg="u s vt")
    return [s, _aligned(u, want[1], -2, k), _aligned(vt, want[2], -1, k)]


KERNEL_CASES = [
    c
    for c in all_cases()
    if lowering_table[c.prim].kind in ("elementwise", "reduction") and c.name == c.prim.name
]


@pytest.mark.parametrize("case", KERNEL_CASES, ids=case_ids)
@SETTINGS
@given(data=st.data())
def test_jit_on_the_gpu_equals_eager(gpu, case, data):
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    args, params = case.draw(data, dtype)

    def f(*xs):
        return case.prim.bind(*xs, **params)

    want = as_list(f(*[Tensor(np.asarray(a)) for a in args]))
    got = as_list(ft.jit(f)(*[ft.asarray(a, device=gpu) for a in args]))
    for g, w in zip(got, want):
        assert g.device is gpu
        _compare(_host(g), np.asarray(w), case, case.name)


def test_linear_algebra_on_the_gpu_under_jit_and_grad_equals_the_cpu(gpu):
    # cuSOLVER (cuda_solver) in compiled programs and in the solves' derivatives
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 6, 6)) + 6 * np.eye(6)
    b = rng.standard_normal((8, 6, 2))
    spd = a @ np.swapaxes(a, -1, -2)

    def f(a, b, spd):
        x = ft.linalg.solve(a, b)
        low = ft.linalg.cholesky(spd)
        y = ft.linalg.solve_triangular(low, b, upper=False)
        s = ft.linalg.svdvals(a)
        w = ft.linalg.eigvalsh(spd)
        q, r = ft.linalg.qr(a)
        return ft.sum(x**2) + ft.sum(y**2) + ft.sum(s) + ft.sum(w) + ft.sum(ft.abs(r))

    step = ft.jit(ft.value_and_grad(f, argnums=(0, 1, 2)))
    want = step(ft.asarray(a), ft.asarray(b), ft.asarray(spd))
    got = step(*[ft.asarray(v, device=gpu) for v in (a, b, spd)])
    np.testing.assert_allclose(_host(got[0]), np.asarray(want[0]), rtol=1e-9)
    for g, w in zip(got[1], want[1]):
        assert g.device is gpu
        np.testing.assert_allclose(_host(g), np.asarray(w), rtol=1e-8, atol=1e-10)
    # a matrix cuSOLVER fails on takes the host, which gives it NaNs, as on the CPU
    bad = np.stack([spd[0], -np.eye(6)])
    chol = _host(ft.linalg.cholesky(ft.asarray(bad, device=gpu)))
    assert np.isfinite(chol[0]).all() and np.isnan(chol[1]).all()


def test_jit_runs_ptx_kernels(gpu):
    from fntorch.devices.cuda_program import CudaProgram

    x = ft.asarray(np.linspace(-3, 3, 4096 * 33, dtype=np.float32).reshape(4096, 33), device=gpu)

    def f(x):
        y = ft.softmax(x, axis=-1)
        return ft.gelu(x) * 2.0 + 1.0, y, (x - x.mean(-1, keepdims=True)).sum(0)

    fn = ft.jit(f)
    got = fn(x)
    want = f(x.cpu())
    for g, w, atol in zip(got, want, (1e-6, 1e-6, 1e-3)):
        # the column sums add 4096 values in another order than the CPU's pairwise sum
        _compare(_host(g), np.asarray(w), None, "fused", atol)
    entry = fn.lower(x)._entry
    assert isinstance(entry.program, CudaProgram) and len(entry.program.kernels) >= 2


def test_large_elementwise_and_strided_inputs(gpu):
    a = np.random.default_rng(0).standard_normal((1 << 20,), np.float32)
    m = np.random.default_rng(1).standard_normal((300, 70), np.float32)
    b = np.random.default_rng(2).standard_normal((70,), np.float32)

    def f(x, m, b):
        return ft.tanh(x) * x, m.T * 3.0 + 1.0, m + b, ft.exp(m[:, ::2]).sum(-1)

    got = ft.jit(f)(*[ft.asarray(v, device=gpu) for v in (a, m, b)])
    want = f(*map(ft.asarray, (a, m, b)))
    for g, w in zip(got, want):
        _compare(_host(g), np.asarray(w), None, "strided")


def test_grad_vmap_jit_compositions(gpu):
    def loss(w, x):
        return ft.sum(ft.tanh(x @ w) ** 2)

    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 2), np.float32), rng.standard_normal((4, 3), np.float32)
    for transform in (
        ft.grad(loss),
        ft.jit(ft.grad(loss)),
        ft.vmap(lambda w, x: ft.tanh(x @ w), in_axes=(None, 0)),
        ft.jit(ft.vmap(ft.grad(lambda w, x: ft.sum(ft.sin(x @ w))), in_axes=(None, 0))),
        ft.grad(ft.jit(loss)),
        lambda w, x: ft.jvp(lambda w: loss(w, x), (w,), (ft.ones_like(w),))[1],
    ):
        got = transform(ft.asarray(w, device=gpu), ft.asarray(x, device=gpu))
        want = transform(ft.asarray(w), ft.asarray(x))
        assert got.device is gpu
        _compare(_host(got), np.asarray(want), None, "composition")


def test_control_flow_on_the_gpu(gpu):
    x = ft.asarray([1.0, 2.0, 3.0], device=gpu)

    def f(x):
        c = ft.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        s = ft.scan(lambda carry, v: (carry + v, carry * v), ft.zeros(()), x)
        w = ft.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 3.0, x)
        return c, s[0], s[1], w, ft.fori_loop(0, 3, lambda i, v: v + i, x)

    want = [[2.0, 4.0, 6.0], 6.0, [0.0, 2.0, 9.0], [27.0, 54.0, 81.0], [4.0, 5.0, 6.0]]
    with ft.default_device(gpu):
        for run in (f, ft.jit(f)):
            for g, w in zip(run(x), want):
                assert g.device is gpu
                np.testing.assert_array_equal(_host(g), np.asarray(w, np.float32))


def test_random_draws_on_the_gpu_equal_the_cpu_draws(gpu):
    def draws(key):
        return [
            ft.random.normal(key, (1000,)),
            ft.random.uniform(ft.random.key(3), (7, 5)),
            ft.random.bits(ft.random.split(key)[1], (3,)),
        ]

    want = draws(ft.random.key(0))
    with ft.default_device(gpu):
        key = ft.random.key(0)
        for got in (draws(key), ft.jit(draws)(key)):
            for g, w in zip(got, want):
                assert g.device is gpu
                np.testing.assert_array_equal(_host(g), np.asarray(w))


def test_ptx_kernels_are_cached_on_disk(gpu, tmp_path, monkeypatch):
    from fntorch.lowering import cache

    monkeypatch.setenv("FNTORCH_CACHE_DIR", str(tmp_path))
    f = lambda x: ft.cosh(x) * 0.25 - 7.0  # noqa: E731  (a kernel no other test compiles)
    x = ft.ones(10, device=gpu)
    before = cache.stats["compiles"]
    ft.jit(f)(x)
    assert cache.stats["compiles"] == before + 1 and list(tmp_path.glob("kernels/*.o"))
    cache.kernels.clear()
    cache.clear_memory()
    np.testing.assert_allclose(_host(ft.jit(f)(x)), np.cosh(1.0) * 0.25 - 7.0, rtol=1e-6)
    assert cache.stats["compiles"] == before + 1  # read back from disk


def test_argmax_rows_combine_lanes_as_numpy(gpu):
    from fntorch.devices.cuda_program import CudaProgram

    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (64, 100)).astype(np.float32)  # many ties across lanes
    x[3, [40, 7, 90]] = np.nan  # the first NaN wins
    x[5, 70] = np.nan
    x[9] = -np.inf
    f = ft.jit(lambda v: (ft.argmax(v, axis=-1), ft.argmin(v, axis=-1), ft.argmax(v, axis=0)))
    got = f(ft.asarray(x, device=gpu))
    for g, w in zip(got, (np.argmax(x, -1), np.argmin(x, -1), np.argmax(x, 0))):
        np.testing.assert_array_equal(_host(g), w)
    program = f.lower(ft.asarray(x, device=gpu))._entry.program
    assert isinstance(program, CudaProgram) and program.kernels  # PTX, not the eager path
