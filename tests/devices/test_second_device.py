"""A second device, registered through the device registry, runs what the CPU runs.

The fake device holds its buffers as a numpy subclass and reuses the CPU's impls on
plain views of them, so every result can be compared with the CPU's bit for bit. What
it checks is the seam: scalars belong to no device, results stay on the device of their
operands, and mixing devices is refused by name.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from fntorch.devices import cpu_impls
from fntorch.fx.core import Tensor
from fntorch.fx.device import Device, ImplTable, register_device, unregister_device
from tests.cases import all_cases
from tests.contract import as_list, case_ids
from tests.devices.fake import FakeBuffer, fake_device, to_fake, to_plain


@pytest.fixture(scope="module")
def fake():
    yield from fake_device()


def _put(dev, a):
    a = np.asarray(a)
    return ft.asarray(a.astype(np.float32) if a.dtype == np.float64 else a, device=dev)


def _same(got, want):
    assert got.device is not ft.device("cpu")
    np.testing.assert_array_equal(np.asarray(got.to("cpu")), np.asarray(want))


def test_the_registry_names_the_fake_device(fake):
    assert ft.device("fake:0") is fake and fake in ft.devices()
    assert ft.devices()[0] is ft.device("cpu")
    with pytest.raises(RuntimeError, match="fake:1"):
        ft.device("fake:1")


def test_scalars_take_the_device_of_the_tensor(fake):
    x = _put(fake, [1.0, -2.0, 3.0])
    for got, want in [
        (x * 2.0, [2.0, -4.0, 6.0]),
        (2.0 - x, [1.0, 4.0, -1.0]),
        (x * np.float32(3.0), [3.0, -6.0, 9.0]),
        (ft.maximum(x, 0), [1.0, 0.0, 3.0]),
        (x.sum() * 2, 4.0),
    ]:
        assert got.device is fake
        _same(got, want)


def test_mixing_devices_raises_naming_both(fake):
    with pytest.raises(ValueError, match=r"different devices \(fake:0 and cpu\)"):
        _put(fake, [1.0]) + ft.ones(1)


def test_default_device_places_new_tensors(fake):
    with ft.default_device(fake):
        assert ft.zeros(3).device is fake
        assert ft.arange(3).device is fake
        assert (ft.ones(2) * 2.0).device is fake


@pytest.mark.parametrize("case", all_cases(), ids=case_ids)
@given(data=st.data())
def test_every_primitive_runs_on_the_second_device(fake, case, data):
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    want = as_list(case.prim.bind(*[Tensor(a) for a in args], **params))
    with ft.default_device(fake):  # for primitives of no operands (iota)
        got = as_list(case.prim.bind(*[ft.asarray(a, device=fake) for a in args], **params))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device is fake, case.name
        g, w = np.asarray(g.to("cpu")), np.asarray(w)
        if g.dtype.kind in "fV" or str(g.dtype) == "bfloat16":
            g, w = g.astype(np.float64), w.astype(np.float64)  # bfloat16 NaNs compare here
        if case.exact or g.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=case.name)
        else:  # the device's copies are contiguous: BLAS may round a product differently
            np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol, err_msg=case.name)


def test_transforms_run_on_the_second_device(fake):
    def loss(w, x):
        return ft.sum(ft.tanh(x @ w) ** 2)

    w, x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), np.ones((4, 3), np.float32)
    for transform in (
        ft.grad(loss),
        ft.vmap(lambda w, x: ft.tanh(x @ w), in_axes=(None, 0)),
        lambda w, x: ft.jvp(lambda w: loss(w, x), (w,), (ft.ones_like(w),))[1],
    ):
        got = transform(_put(fake, w), _put(fake, x))
        want = transform(ft.asarray(w), ft.asarray(x))
        assert got.device is fake
        np.testing.assert_allclose(np.asarray(got.to("cpu")), np.asarray(want), rtol=1e-6)


def test_control_flow_runs_on_the_second_device(fake):
    x = _put(fake, [1.0, 2.0, 3.0])
    c = ft.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    s = ft.scan(lambda carry, v: (carry + v, carry * v), ft.zeros((), device=fake), x)
    w = ft.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 3.0, x)
    f = ft.fori_loop(0, 3, lambda i, v: v + i, x)
    _same(c, [2.0, 4.0, 6.0])
    _same(s[0], 6.0)
    _same(s[1], [0.0, 2.0, 9.0])
    _same(w, [27.0, 54.0, 81.0])
    _same(f, [4.0, 5.0, 6.0])


def test_random_draws_on_the_second_device_equal_the_cpu_draws(fake):
    want = ft.random.normal(ft.random.key(0), (5,))
    with ft.default_device(fake):
        key = ft.random.key(0)
        got = ft.random.normal(key, (5,))
        bits = ft.random.bits(ft.random.split(key)[1], (3,))
    assert got.device is fake and bits.device is fake
    _same(got, want)
    _same(bits, ft.random.bits(ft.random.split(ft.random.key(0))[1], (3,)))


def test_the_numpy_fast_path_is_the_cpu_devices_not_the_tensors():
    # ops attaches the general operators; the CPU device wraps four of them
    for name in ("__add__", "__rsub__", "__mul__", "__truediv__"):
        assert getattr(ft.Tensor, name).__module__ == "fntorch.devices.cpu_dispatch", name
    assert ft.Tensor.__matmul__.__module__ == "fntorch.ops._tensor"
    from fntorch.ops import _index_read, _index_update

    for table in (_index_read.eager_reads, _index_update.eager_updates):
        assert set(table) == {np.ndarray}  # not the fake device's buffers: the general path
        assert table[np.ndarray].__module__ == "fntorch.devices.cpu_dispatch"


def test_basic_indexing_on_the_second_device(fake):
    x = _put(fake, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for got, want in [
        (x[1], [4.0, 5.0, 6.0]),
        (x[:, ::-1][0], [3.0, 2.0, 1.0]),
    ]:
        assert got.device is fake
        _same(got, want)


def test_jit_compiles_for_the_second_device(fake):
    from fntorch.lowering import Program

    def step(w, x):  # kernels, a BLAS product, a library step (sort), a scan, a reduction
        h = ft.tanh(x @ w) * 2.0 + 1.0
        c = ft.scan(lambda carry, r: (carry + r, carry * r), ft.zeros(h.shape[1:]), h)
        return ft.sort(h, axis=-1), c[0].sum(), ft.grad(lambda w: ft.sum((x @ w) ** 2))(w)

    w, x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), np.ones((4, 3), np.float32)
    f = ft.jit(step)
    got = f(_put(fake, w), _put(fake, x))
    want = step(ft.asarray(w), ft.asarray(x))
    for g, e in zip(got, want):
        assert g.device is fake
        np.testing.assert_allclose(np.asarray(g.to("cpu")), np.asarray(e), rtol=1e-6)
    entry = f.lower(_put(fake, w), _put(fake, x))._entry
    assert entry.device is fake and isinstance(entry.program, Program)
    assert entry.program.kernels  # compiled, not run eagerly
    assert all(k.target is fake.target for k in entry.program.kernels)
    # the CPU signature is another entry, compiled for the CPU
    f(ft.asarray(w), ft.asarray(x))
    assert f.lower(ft.asarray(w), ft.asarray(x))._entry.device is ft.device("cpu")


def test_a_jit_call_on_device_tensors_keys_them_without_flattening(fake, monkeypatch):
    # positional tensors of the second device take the signature's fast path (no optree),
    # under the key the general path gives them: one entry whichever path made it
    from fntorch.transforms import jit_keys

    f = ft.jit(lambda a, b: a * b + 1.0)
    x = _put(fake, [1.0, 2.0])
    with monkeypatch.context() as m:
        m.setattr(jit_keys, "buffer_devices", {}, raising=False)  # the general path
        f(x, x)
    monkeypatch.setattr(jit_keys._ArgumentKeys, "_split", None)  # the general path fails
    _same(f(x, x), [2.0, 5.0])
    assert f.stats["traces"] == 1 and f.stats["hits"] == 1


def test_jit_of_no_arguments_compiles_for_the_default_device(fake):
    f = ft.jit(lambda: ft.arange(3.0) * 2.0)
    with ft.default_device(fake):
        got = f()
    assert got.device is fake
    _same(got, [0.0, 2.0, 4.0])
    assert f().device is ft.device("cpu")  # another key, another program
    assert f.stats["traces"] == 2


def test_jit_refuses_arguments_on_two_devices_naming_them(fake):
    f = ft.jit(lambda a, b: a + b)
    with pytest.raises(ValueError, match=r"jit\(<lambda>\).*different devices.*b is on cpu"):
        f(_put(fake, [1.0]), ft.ones(1))


def test_jit_on_a_device_without_a_compiler_says_so():
    impls = ImplTable(cpu_impls)
    dev = register_device(Device("bare", 0, impls, to_fake, to_plain), (FakeBuffer,))
    try:
        x = ft.asarray(np.ones(2, np.float32), device=dev)
        assert (x * 2.0).device is dev  # eager works
        with pytest.raises(RuntimeError, match=r"jit\(<lambda>\): device bare:0 has no compiler"):
            ft.jit(lambda v: v * 2.0)(x)
    finally:
        unregister_device(dev)
