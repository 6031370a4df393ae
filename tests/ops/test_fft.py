"""``ft.fft`` against numpy (every function, norm, ``n``/``s`` and axes), PyTorch's
spellings, jit and vmap, the errors, and gradients against JAX's (skipped without JAX)."""

import numpy as np
import pytest

import fntorch as ft

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 6))
C = X + 1j * RNG.standard_normal((3, 6))
NORMS = ["backward", "ortho", "forward"]


def _close(got, want, tol=1e-12):
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "name, x, kw",
    [
        ("fft", C, {}), ("fft", X, {"n": 4}), ("fft", C, {"n": 9, "axis": 0}),
        ("ifft", C, {}), ("ifft", C, {"n": 5, "axis": 0}),
        ("rfft", X, {}), ("rfft", X, {"n": 7}), ("rfft", X, {"axis": 0, "n": 2}),
        ("irfft", C, {}), ("irfft", C, {"n": 7}), ("irfft", C, {"n": 3, "axis": 0}),
        ("hfft", C, {}), ("hfft", C, {"n": 5}), ("ihfft", X, {}), ("ihfft", X, {"n": 5}),
    ],
)  # fmt: skip
def test_one_dimensional_matches_numpy(name, x, kw, norm):
    got = getattr(ft.fft, name)(ft.asarray(x), norm=norm, **kw)
    _close(got, getattr(np.fft, name)(x, norm=norm, **kw))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "name, x, kw",
    [
        ("fftn", C, {}), ("fftn", C, {"s": (4, 4)}), ("fftn", X, {"axes": (0,)}),
        ("ifftn", C, {"axes": (1, 0)}), ("ifftn", C, {"s": (2, 8), "axes": (0, 1)}),
        ("rfftn", X, {}), ("rfftn", X, {"axes": (1, 0)}),
        ("rfftn", X, {"s": (5, 5), "axes": (0, 1)}),
        ("irfftn", C, {}), ("irfftn", C, {"s": (3, 9), "axes": (0, 1)}),
        ("irfftn", C, {"axes": (1, 0)}),
        ("fft2", C, {}), ("ifft2", C, {}), ("rfft2", X, {}), ("irfft2", C, {}),
    ],
)  # fmt: skip
def test_n_dimensional_matches_numpy(name, x, kw, norm):
    got = getattr(ft.fft, name)(ft.asarray(x), norm=norm, **kw)
    _close(got, getattr(np.fft, name)(x, norm=norm, **kw))


def test_dtypes_precision_and_helpers():
    x32 = ft.asarray(X, dtype=ft.float32)
    assert ft.fft.rfft(x32).dtype == ft.complex64
    assert ft.fft.fft(x32).dtype == ft.complex64
    assert ft.fft.irfft(ft.fft.rfft(x32)).dtype == ft.float32
    assert ft.fft.fft(ft.asarray(C)).dtype == ft.complex128
    assert ft.fft.fft(ft.asarray([1, 2, 3])).dtype == ft.complex64
    _close(ft.fft.rfft(x32), np.fft.rfft(X.astype(np.float32)), 1e-5)
    for n in (1, 4, 5):
        for d in (1.0, 0.1):
            _close(ft.fft.fftfreq(n, d=d, dtype=ft.float64), np.fft.fftfreq(n, d=d))
            _close(ft.fft.rfftfreq(n, d=d, dtype=ft.float64), np.fft.rfftfreq(n, d=d))
    assert ft.fft.fftfreq(4).dtype == ft.float32
    for axes in (None, 0, (1,), (0, 1)):
        _close(ft.fft.fftshift(ft.asarray(X), axes=axes), np.fft.fftshift(X, axes=axes))
        _close(ft.fft.ifftshift(ft.asarray(X), axes=axes), np.fft.ifftshift(X, axes=axes))


def test_torch_spellings():
    torch = pytest.importorskip("torch")
    t = torch.tensor(X)
    x = ft.asarray(X)
    _close(ft.fft.rfft(x, dim=0), torch.fft.rfft(t, dim=0).numpy())
    _close(
        ft.fft.fftn(x, dim=(0,), norm="ortho"), torch.fft.fftn(t, dim=(0,), norm="ortho").numpy()
    )
    _close(ft.fft.irfft2(ft.fft.rfft2(x), s=(3, 6)), X)
    _close(ft.fft.fftshift(x, dim=1), torch.fft.fftshift(t, dim=1).numpy())
    c = torch.tensor(C)
    for norm in (None, "ortho", "forward"):
        for name, a, b, kw in (
            ("hfftn", C, c, {}), ("hfftn", C, c, {"s": (3, 5)}), ("hfft2", C, c, {}),
            ("ihfftn", X, t, {}), ("ihfft2", X, t, {}), ("hfftn", C, c, {"dim": (0,)}),
        ):  # fmt: skip
            got = getattr(ft.fft, name)(ft.asarray(a), norm=norm, **kw)
            _close(got, getattr(torch.fft, name)(b, norm=norm, **kw).numpy())


def test_errors_name_the_function():
    x = ft.asarray(X)
    with pytest.raises(ValueError, match="fft.fft: norm must be one of"):
        ft.fft.fft(x, norm="both")
    with pytest.raises(TypeError, match="fft.rfft: x must be real"):
        ft.fft.rfft(ft.asarray(C))
    with pytest.raises(ValueError, match="fft.fft: the number of points must be positive"):
        ft.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="fft.fftn: s .* and axes"):
        ft.fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(TypeError, match="axis .* or dim"):
        ft.fft.fft(x, axis=0, dim=0)
    with pytest.raises(ValueError, match="axes must be distinct"):
        ft.fft.fftn(x, axes=(0, 0))


def test_jit_and_vmap():
    def roundtrip(x):
        return ft.fft.irfft2(ft.fft.rfft2(x) * 2.0, s=x.shape[-2:])

    x = ft.asarray(RNG.standard_normal((2, 4, 6)))
    _close(ft.jit(roundtrip)(x), 2 * np.asarray(x))
    _close(ft.vmap(lambda r: ft.fft.fft(r))(x), np.fft.fft(np.asarray(x)))
    _close(
        ft.vmap(lambda r: ft.fft.fft(r), in_axes=2, out_axes=2)(x),
        np.fft.fft(np.asarray(x), axis=1),
    )
    g = ft.jit(ft.grad(lambda x: ft.sum(ft.abs(ft.fft.rfft(x)))))(x)
    _close(g, ft.grad(lambda x: ft.sum(ft.abs(ft.fft.rfft(x))))(x).numpy())


GRADS = {
    "fft_abs": (lambda m, z: m.sum(m.abs(m.fft.fft(z, norm="ortho")) ** 3), C),
    "ifft_real": (lambda m, z: m.sum(m.real(m.fft.ifft(z, n=8) * m.arange(8))), C),
    "rfft_abs": (lambda m, x: m.sum(m.abs(m.fft.rfft(x, n=7))), X),
    "irfft": (lambda m, z: m.sum(m.fft.irfft(z, n=9) ** 2), C),
    "irfft_even": (lambda m, z: m.sum(m.sin(m.fft.irfft(z, norm="forward"))), C),
    "rfftn_irfftn": (lambda m, x: m.sum(m.fft.irfftn(m.fft.rfftn(x) * (1 + 1j)) ** 3), X),
    "fftn_imag": (lambda m, z: m.sum(m.imag(m.fft.fftn(z, axes=(0,))) ** 2), C),
    "hfft": (lambda m, z: m.sum(m.fft.hfft(z) ** 2), C),
    "ihfft": (lambda m, x: m.sum(m.abs(m.fft.ihfft(x))), X),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_matches_jax(name, jax64):
    f, x = GRADS[name]
    got = ft.grad(lambda v: f(ft, v))(ft.asarray(x))
    want = jax64.grad(lambda v: f(jax64.numpy, v))(jax64.numpy.asarray(x))
    _close(got, np.asarray(want), 1e-9)
