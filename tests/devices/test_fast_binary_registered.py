"""A second device's eager fast path for ``* + - /`` (``register_fast_binary``), as the
CUDA device registers its own: on the fake device (numpy ufuncs on a numpy subclass),
every result, dtype and error equals the general path's, and the path is taken."""

import operator

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cpu_dispatch
from tests.devices.fake import FakeBuffer, fake_device

OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv}
GENERAL = {"add": ft.add, "sub": ft.subtract, "mul": ft.multiply, "truediv": ft.divide}


@pytest.fixture(scope="module")
def fake():
    yield from fake_device()


@pytest.fixture
def counted(monkeypatch):
    """The fake buffer's fast path registered, counting its calls."""
    calls = []

    def counting(uf):
        def run(a, b):
            calls.append(uf.__name__)
            return uf(a, b)

        return run

    ufuncs = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}
    handlers = cpu_dispatch.ufunc_handlers({k: counting(u) for k, u in ufuncs.items()})
    monkeypatch.setitem(cpu_dispatch._DEVICE_BINARY, FakeBuffer, handlers)
    return calls


def _same(got, want):
    assert got.device == want.device and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got.to("cpu")), np.asarray(want.to("cpu")))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPS))
def test_scalars_and_same_dtype_tensors_take_the_fast_path(fake, counted, dtype, name):
    rng = np.random.default_rng(0)
    x = ft.asarray(rng.standard_normal((3, 4)).astype(dtype), device=fake)
    y = ft.asarray(rng.standard_normal((4,)).astype(dtype), device=fake)
    op, general = OPS[name], GENERAL[name]
    for other in (1.0001, 3, -0.5, 1e30, 70000, 2**200):  # the last ones overflow: inf
        _same(op(x, other), general(x, other))
        _same(op(other, x), general(other, x))
    _same(op(x, y), general(x, y))
    _same(op(y, x), general(y, x))
    assert len(counted) == 14
    assert isinstance(op(x, 2.0)._value, FakeBuffer)


def test_everything_else_takes_the_general_path(fake, counted):
    x32 = ft.asarray(np.ones((2, 3), np.float32), device=fake)
    x64 = ft.asarray(np.ones((2, 3), np.float64), device=fake)
    i32 = ft.asarray(np.ones((2, 3), np.int32), device=fake)
    _same(x32 * x64, ft.multiply(x32, x64))  # promotion
    _same(i32 * 2, ft.multiply(i32, 2))  # integers
    _same(i32 / 2, ft.divide(i32, 2))
    assert counted == []
    with pytest.raises(ValueError, match="broadcast") as fast:
        x32 * ft.asarray(np.ones((4,), np.float32), device=fake)
    with pytest.raises(ValueError) as general:
        ft.multiply(x32, ft.asarray(np.ones((4,), np.float32), device=fake))
    assert str(fast.value) == str(general.value)
    cpu = ft.ones((2, 3))
    with pytest.raises(ValueError, match="different devices"):
        x32 * cpu


def test_under_a_transform_the_tracer_sees_the_primitive(fake, counted):
    x = ft.asarray(np.arange(3.0, dtype=np.float32), device=fake)
    g = ft.grad(lambda x: (x * 3.0 + 1.0).sum())(x)
    _same(g, ft.asarray(np.full(3, 3.0, np.float32), device=fake))
    assert "multiply" not in counted


def test_registering_needs_all_four():
    with pytest.raises(ValueError, match="register_fast_binary: handlers lacks"):
        cpu_dispatch.register_fast_binary(FakeBuffer, {"add": np.add})


def test_eager_threefry_in_a_registered_module_gives_the_cpu_bits(fake, monkeypatch):
    # the CUDA device registers cupy.ndarray: cupy; the fake buffer's is numpy whose
    # new arrays are fake buffers
    import types

    from fntorch.fx import core
    from fntorch.ops import _threefry

    def broadcast_arrays(*xs):
        shape = np.broadcast_shapes(*map(np.shape, xs))
        return [np.broadcast_to(x, shape).view(FakeBuffer) for x in xs]

    fake_np = types.SimpleNamespace(
        broadcast_arrays=broadcast_arrays,
        empty_like=np.empty_like,
        left_shift=np.left_shift,
        full=lambda *a: np.full(*a).view(FakeBuffer),
    )

    want = [ft.random.normal(ft.random.key(7), (4, 3)), ft.random.bits(ft.random.key(1), (5,))]
    binds = []
    real_bind = core.Primitive.bind
    monkeypatch.setattr(
        core.Primitive,
        "bind",
        lambda self, *a, **k: binds.append(self.name) or real_bind(self, *a, **k),
    )
    for registered in (False, True):
        if registered:
            monkeypatch.setitem(_threefry.word_modules, FakeBuffer, fake_np)
        binds.clear()
        with ft.default_device(fake):
            got = [
                ft.random.normal(ft.random.key(7), (4, 3)),
                ft.random.bits(ft.random.key(1), (5,)),
            ]
        for g, w in zip(got, want):
            assert isinstance(g._value, FakeBuffer)
            _same(g, w.to(fake))
        rounds = binds.count("add")
        assert (rounds < 10) if registered else (rounds > 40), binds
