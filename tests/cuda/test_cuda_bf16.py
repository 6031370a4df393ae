"""bfloat16 on the GPU (``fntorch.devices.cuda_bf16``): storage, every primitive that
takes it against the CPU, eagerly and under jit, autocast, and the DLPack refusal.
Needs a GPU and CuPy: skips without.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

cp = pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
from fntorch.fx import dtypes as dt  # noqa: E402
from fntorch.fx.core import Tensor  # noqa: E402
from tests.cases import all_cases  # noqa: E402
from tests.contract import as_list, case_ids  # noqa: E402
from tests.cuda.test_cuda import KERNEL_CASES, SETTINGS, _compare, _host  # noqa: E402

pytestmark = pytest.mark.cuda
BF16_CASES = [c for c in all_cases() if dt.bfloat16 in c.dtypes]


def test_bfloat16_storage_round_trips_bit_for_bit(gpu):
    bits = np.array([0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC1, 0xFFC0, 0x0001],
                    np.uint16)  # fmt: skip
    a = bits.view(dt.bfloat16)
    x = ft.asarray(a).cuda()
    assert x.device is gpu and x.dtype == dt.bfloat16
    np.testing.assert_array_equal(x.numpy().view(np.uint16), bits)
    assert x.to("cpu").numpy().view(np.uint16).tolist() == bits.tolist()


def test_casts_round_to_nearest_even_as_the_cpu(gpu):
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal(4096).astype(np.float32) * 1e3
    f32[:8] = [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 3.3895314e38, 1e-40]
    f64 = f32.astype(np.float64) * (1 + 2.0**-30)  # between float32s: one rounding only
    for host in (f32, f64):
        want = ft.asarray(host).astype(ft.bfloat16).numpy()
        got = ft.asarray(host).cuda().astype(ft.bfloat16)
        assert got.dtype == dt.bfloat16
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))
        back = got.astype(ft.float32).numpy()
        np.testing.assert_array_equal(back, want.astype(np.float32))


@pytest.mark.parametrize("case", BF16_CASES, ids=case_ids)
@SETTINGS
@given(data=st.data())
def test_every_bfloat16_primitive_on_the_gpu_equals_the_cpu(gpu, case, data):
    args, params = case.draw(data, np.dtype(dt.bfloat16))
    want = as_list(case.prim.bind(*[Tensor(a) for a in args], **params))
    with ft.default_device(gpu):
        got = as_list(case.prim.bind(*[ft.asarray(a, device=gpu) for a in args], **params))
    for g, w in zip(got, want):
        assert g.device is gpu and g.dtype == w.dtype, (case.name, g.dtype, w.dtype)
        _compare(_host(g), np.asarray(w), case, case.name)


@pytest.mark.parametrize("case", [c for c in KERNEL_CASES if c in BF16_CASES], ids=case_ids)
@SETTINGS
@given(data=st.data())
def test_bfloat16_kernels_equal_eager(gpu, case, data):
    args, params = case.draw(data, np.dtype(dt.bfloat16))

    def f(*xs):
        return case.prim.bind(*xs, **params)

    want = as_list(f(*[Tensor(np.asarray(a)) for a in args]))
    got = as_list(ft.jit(f)(*[ft.asarray(a, device=gpu) for a in args]))
    for g, w in zip(got, want):
        assert g.device is gpu and g.dtype == w.dtype
        _compare(_host(g), np.asarray(w), case, case.name)


def test_a_bfloat16_mlp_step_under_jit_equals_the_cpu(gpu):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 8)).astype(dt.bfloat16)
    x = rng.standard_normal((4, 16)).astype(dt.bfloat16)

    def step(w, x):
        g = ft.grad(lambda w: ft.sum(ft.tanh(x @ w).astype(ft.float32) ** 2))(w)
        return w - (0.1 * g).astype(ft.bfloat16)

    want = ft.jit(step)(ft.asarray(w), ft.asarray(x)).numpy().astype(np.float32)
    got = ft.jit(step)(ft.asarray(w).cuda(), ft.asarray(x).cuda())
    assert got.dtype == dt.bfloat16 and got.device is gpu
    np.testing.assert_allclose(got.numpy().astype(np.float32), want, rtol=2e-2, atol=2e-2)


def test_autocast_to_bfloat16_on_the_gpu(gpu):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 32)).astype(np.float32)
    b = rng.standard_normal((32, 4)).astype(np.float32)
    with ft.autocast("cpu", dtype=ft.bfloat16):
        want = (ft.asarray(a) @ ft.asarray(b)).numpy()
    with ft.autocast("cuda", dtype=ft.bfloat16):
        got = ft.asarray(a).cuda() @ ft.asarray(b).cuda()
    assert got.dtype == dt.bfloat16
    np.testing.assert_allclose(
        got.numpy().astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2
    )


def test_bfloat16_dlpack_export_is_refused_by_name(gpu):
    x = ft.ones(3, dtype=ft.bfloat16).cuda()
    with pytest.raises(TypeError, match="bfloat16 tensor on the GPU cannot be exported"):
        cp.from_dlpack(x)
