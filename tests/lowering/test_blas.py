"""Matrix products of compiled programs and eager impls (``devices/cpu_blas.py``): small
ones run on one BLAS thread, large ones on OpenBLAS's threads, with numpy's setting
restored after each."""

import threading

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cpu_blas as blas

openblas = pytest.mark.skipif(blas._openblas() is None, reason="numpy's BLAS is not OpenBLAS")


def _threads():
    return blas._openblas()[0]()


def _products(one_thread=True):
    p = blas.Products()
    p.one_thread = one_thread
    return p


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((5, 7), (7, 3)), ((3, 5, 7), (3, 7, 2)), ((7,), (7, 4)), ((512, 256), (256, 256))],
)
def test_equals_numpy(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    want = a @ b
    out = np.empty_like(want)
    assert _products().matmul(a, b, out) is out
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@openblas
def test_small_product_runs_on_one_thread_and_restores(monkeypatch):
    before = _threads()
    seen = []

    def spy(a, b, out):
        seen.append((_threads(), a.shape))
        return np.dot(a, b, out=out)

    monkeypatch.setattr(blas.np, "matmul", spy)
    a, b = np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)
    _products().matmul(a, b, np.empty((8, 8), np.float32))
    _products(one_thread=False).matmul(a, b, np.empty((8, 8), np.float32))
    assert seen == [(1, (8, 8)), (1, (8, 8))]
    seen.clear()
    big = np.ones((512, 256), np.float32), np.ones((256, 256), np.float32)
    _products().matmul(*big, np.empty((512, 256), np.float32))  # 2^25 multiply-adds
    assert seen == [(before, (512, 256))]
    assert _threads() == before


@openblas
def test_mid_size_products_keep_the_threads_only_where_no_kernel_splits(monkeypatch):
    before = _threads()
    seen = []

    def spy(a, b, out):
        seen.append(_threads())
        return np.dot(a, b, out=out)

    monkeypatch.setattr(blas.np, "matmul", spy)
    a, b = np.ones((64, 128), np.float32), np.ones((128, 128), np.float32)  # 2^20 macs
    assert a.shape[0] * a.shape[1] * b.shape[1] == blas.THREADED_MACS
    _products(one_thread=False).matmul(a, b, np.empty((64, 128), np.float32))
    _products(one_thread=True).matmul(a, b, np.empty((64, 128), np.float32))
    blas.matmul(a, b)  # eager impls: as a program that splits
    assert seen == [before, 1, 1]
    assert _threads() == before


@openblas
def test_concurrent_products_restore_the_users_setting():
    get, put = blas._openblas()
    before = get()
    put(2)
    try:
        a, products = np.ones((16, 16), np.float32), _products()

        def work():
            for _ in range(300):
                products.matmul(a, a, np.empty((16, 16), np.float32))

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert get() == 2 and blas._one_thread.depth == 0
    finally:
        put(before)


def _built(f):
    (entry,) = f._cache.values()
    return entry.program


@openblas
def test_programs_with_threaded_kernels_use_one_blas_thread():
    before = _threads()
    big = ft.jit(lambda x, w, y: (ft.tanh(x @ w), ft.exp(y)))  # exp(y): a threaded kernel
    small = ft.jit(lambda x, w: ft.tanh(x @ w))
    x, w, y = ft.ones((4, 8)), ft.ones((8, 3)), ft.ones((1024, 1024))
    got = big(x, w, y)[0], small(x, w)
    for g in got:
        np.testing.assert_allclose(np.asarray(g), np.tanh(np.full((4, 3), 8.0)), rtol=1e-6)
    flags = [s.products.one_thread for s in (_built(big), _built(small))]
    assert flags == [True, False]
    assert _threads() == before


@pytest.mark.parametrize(
    "a_shape, b_shape", [((1024, 128), (128, 512)), ((4, 1024, 128), (128, 512)),
                         ((64, 256, 128), (64, 128, 256)), ((8, 300, 700), (1, 700, 100))],
)  # fmt: skip
def test_large_products_equal_numpy(a_shape, b_shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    np.testing.assert_allclose(blas.matmul(a, b), a @ b, rtol=1e-4, atol=1e-3)


def test_without_openblas_calls_numpy(monkeypatch):
    monkeypatch.setattr(blas, "_openblas", lambda: None)
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    out = np.empty((2, 2))
    np.testing.assert_array_equal(_products().matmul(a, a.T, out), a @ a.T)
