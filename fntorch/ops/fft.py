"""``ft.fft``: the Array API fft extension (2023.12), with PyTorch's spellings.

Every transform is the ``fft`` primitive (``_prims_fft``) with the transformed axes
moved last, the input zero-padded or cropped to ``n``/``s`` first, and ``norm`` applied
as one multiplication: ``"backward"`` (the default: the inverse divides by the number of
points), ``"ortho"`` (both by its square root) or ``"forward"`` (the forward transform
divides). ``axis=``/``axes=`` are the standard's names; ``dim=`` (PyTorch's) is accepted
too, and ``norm=None`` means ``"backward"`` as in PyTorch and numpy. Real inputs to the
complex transforms become complex of their precision (integers complex64); outputs keep
the input's precision. ``hfft``/``ihfft`` are numpy's: ``hfft(x, n)`` is
``irfft(conj(x), n)`` with the forward and backward norms swapped.

>>> import fntorch as ft
>>> x = ft.asarray([1.0, 2.0, 3.0, 4.0])
>>> ft.fft.irfft(ft.fft.rfft(x), n=4).tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as dt
from . import lax
from ._api_common import as_index, normalize_axis
from ._api_creation import _put, asarray
from ._api_manipulation import roll

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2",
    "hfftn", "ihfftn", "hfft2", "ihfft2",
]  # fmt: skip

_NORMS = ("backward", "ortho", "forward")


# ------------------------------------------------------------------------ helpers


def _tensor(name, x):
    return asarray(x) if not hasattr(x, "dtype") or not hasattr(x, "shape") else x


def _as_complex(name, x):
    x = _tensor(name, x)
    if dt.is_complex(x.dtype):
        return x
    return lax.convert_element_type(x, dt.complex_dtype(x.dtype))


def _as_real(name, x):
    x = _tensor(name, x)
    if dt.is_complex(x.dtype):
        raise TypeError(f"fft.{name}: x must be real, got {x.dtype}")
    if x.dtype not in (dt.float32, dt.float64):
        x = lax.convert_element_type(x, dt.float64 if x.dtype == dt.float64 else dt.float32)
    return x


def _norm(name, norm):
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS} or None, got {norm!r}")
    return norm


def _pick(name, axis, dim, default):
    if axis is not None and dim is not None:
        raise TypeError(f"fft.{name}: pass axis (the standard's) or dim (PyTorch's), not both")
    return default if axis is None and dim is None else (axis if axis is not None else dim)


def _axes_and_sizes(name, x, s, axes):
    """Normalized ``axes`` and the signal sizes ``s`` (None: the input's)."""
    nd = len(x.shape)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(f"fft.{name}", a, nd) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft.{name}: axes must be distinct, got {axes}")
    if not axes:
        raise ValueError(f"fft.{name}: at least one axis must be transformed")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if len(s) != len(axes):
            raise ValueError(f"fft.{name}: s {s} and axes {axes} must have one entry each")
        s = tuple(as_index(f"fft.{name}", "s", n) for n in s)
    return axes, s


def _resize(name, x, axis, n):
    """``x`` cropped or zero-padded to ``n`` along ``axis``."""
    if n < 1:
        raise ValueError(f"fft.{name}: the number of points must be positive, got {n}")
    have = x.shape[axis]
    if have == n:
        return x
    config = [(0, 0, 0)] * len(x.shape)
    config[axis] = (0, n - have, 0)
    return lax.pad(x, np.zeros((), x.dtype), config)


def _to_last(x, axes):
    nd = len(x.shape)
    rest = [i for i in range(nd) if i not in axes]
    perm = (*rest, *axes)
    return lax.transpose(x, perm) if perm != tuple(range(nd)) else x, perm


def _from_last(y, perm):
    if perm == tuple(range(len(perm))):
        return y
    return lax.transpose(y, tuple(int(i) for i in np.argsort(perm)))


def _scaled(y, norm, n_points, inverse):
    """Applies ``norm``: the primitive's forward transform is unscaled, its inverse
    divides by ``n_points``."""
    if norm == "backward":
        return y
    if norm == "ortho":
        factor = math.sqrt(n_points) if inverse else 1.0 / math.sqrt(n_points)
    else:  # "forward"
        factor = float(n_points) if inverse else 1.0 / n_points
    return lax.mul(y, np.asarray(factor, dt.real_dtype(y.dtype)).astype(y.dtype)[()])


def _c2c(name, x, s, axes, norm, fft_type):
    x = _as_complex(name, x)
    norm = _norm(name, norm)
    axes, s = _axes_and_sizes(name, x, s, axes)
    if s is not None:
        for a, n in zip(axes, s):
            x = _resize(name, x, a, n)
    xt, perm = _to_last(x, axes)
    lengths = tuple(x.shape[a] for a in axes)
    y = lax.fft(xt, fft_type, lengths)
    return _from_last(_scaled(y, norm, math.prod(lengths), fft_type == "ifft"), perm)


def _r2c(name, x, s, axes, norm):
    x = _as_real(name, x)
    norm = _norm(name, norm)
    axes, s = _axes_and_sizes(name, x, s, axes)
    if s is not None:
        for a, n in zip(axes, s):
            x = _resize(name, x, a, n)
    xt, perm = _to_last(x, axes)
    lengths = tuple(x.shape[a] for a in axes)
    y = lax.fft(xt, "rfft", lengths)
    return _from_last(_scaled(y, norm, math.prod(lengths), False), perm)


def _c2r(name, x, s, axes, norm):
    x = _as_complex(name, x)
    norm = _norm(name, norm)
    axes, s = _axes_and_sizes(name, x, s, axes)
    if s is None:
        s = tuple(x.shape[a] for a in axes[:-1]) + (2 * (x.shape[axes[-1]] - 1),)
    for a, n in zip(axes[:-1], s[:-1]):
        x = _resize(name, x, a, n)
    if s[-1] < 1:
        raise ValueError(f"fft.{name}: the number of output points must be positive, got {s[-1]}")
    x = _resize(name, x, axes[-1], s[-1] // 2 + 1)
    xt, perm = _to_last(x, axes)
    y = lax.fft(xt, "irfft", s)
    return _from_last(_scaled(y, norm, math.prod(s), True), perm)


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ------------------------------------------------------------------ one dimension


def fft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The 1-d discrete Fourier transform along ``axis`` (default -1).

    >>> import fntorch as ft
    >>> ft.fft.fft(ft.asarray([1.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    axis = _pick("fft", axis, dim, -1)
    return _c2c("fft", x, None if n is None else (n,), (axis,), norm, "fft")


def ifft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The inverse of `fft` along ``axis`` (default -1).

    >>> import fntorch as ft
    >>> ft.fft.ifft(ft.asarray([4.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    axis = _pick("ifft", axis, dim, -1)
    return _c2c("ifft", x, None if n is None else (n,), (axis,), norm, "ifft")


def rfft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The 1-d transform of a real signal: the ``n // 2 + 1`` non-negative frequencies.

    >>> import fntorch as ft
    >>> ft.fft.rfft(ft.asarray([1.0, 1.0, 1.0, 1.0])).tolist()
    [(4+0j), 0j, 0j]
    """
    axis = _pick("rfft", axis, dim, -1)
    return _r2c("rfft", x, None if n is None else (n,), (axis,), norm)


def irfft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The inverse of `rfft`: ``n`` real points (default ``2 * (m - 1)``).

    >>> import fntorch as ft
    >>> ft.fft.irfft(ft.asarray([4.0, 0.0, 0.0]), n=4).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    axis = _pick("irfft", axis, dim, -1)
    return _c2r("irfft", x, None if n is None else (n,), (axis,), norm)


def hfft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The transform of a signal with Hermitian symmetry (given by its first half): real.

    >>> import fntorch as ft
    >>> ft.fft.hfft(ft.asarray([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    axis = _pick("hfft", axis, dim, -1)
    x = _as_complex("hfft", x)
    norm = _SWAP[_norm("hfft", norm)]
    return _c2r("hfft", lax.conj(x), None if n is None else (n,), (axis,), norm)


def ihfft(x, /, *, n=None, axis=None, norm=None, dim=None):
    """The inverse of `hfft`: the first half of a Hermitian spectrum of a real signal.

    >>> import fntorch as ft
    >>> ft.fft.ihfft(ft.asarray([1.0, 1.0, 1.0, 1.0])).real.tolist()
    [1.0, 0.0, 0.0]
    """
    axis = _pick("ihfft", axis, dim, -1)
    norm = _SWAP[_norm("ihfft", norm)]
    return lax.conj(_r2c("ihfft", x, None if n is None else (n,), (axis,), norm))


# ---------------------------------------------------------------- n dimensions


def fftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The n-d transform over ``axes`` (default: all, or the last ``len(s)``).

    >>> import fntorch as ft
    >>> ft.fft.fftn(ft.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _c2c("fftn", x, s, _pick("fftn", axes, dim, None), norm, "fft")


def ifftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The inverse of `fftn`.

    >>> import fntorch as ft
    >>> ft.fft.ifftn(ft.fft.fftn(ft.ones((2, 2)))).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _c2c("ifftn", x, s, _pick("ifftn", axes, dim, None), norm, "ifft")


def rfftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The n-d transform of a real signal; the last of ``axes`` keeps ``n // 2 + 1``.

    >>> import fntorch as ft
    >>> ft.fft.rfftn(ft.ones((2, 4))).shape
    (2, 3)
    """
    return _r2c("rfftn", x, s, _pick("rfftn", axes, dim, None), norm)


def irfftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The inverse of `rfftn`; ``s[-1]`` defaults to ``2 * (m - 1)``.

    >>> import fntorch as ft
    >>> ft.fft.irfftn(ft.fft.rfftn(ft.ones((2, 4)))).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    return _c2r("irfftn", x, s, _pick("irfftn", axes, dim, None), norm)


def hfftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The n-d `hfft` (PyTorch's ``hfftn``): ``irfftn(conj(x))`` with the forward and
    backward norms swapped; the last of ``axes`` holds the Hermitian half.

    >>> import fntorch as ft
    >>> ft.fft.hfftn(ft.ones((2, 2))).shape
    (2, 2)
    """
    x = _as_complex("hfftn", x)
    norm = _SWAP[_norm("hfftn", norm)]
    return _c2r("hfftn", lax.conj(x), s, _pick("hfftn", axes, dim, None), norm)


def ihfftn(x, /, *, s=None, axes=None, norm=None, dim=None):
    """The inverse of `hfftn` (PyTorch's ``ihfftn``): ``conj(rfftn(x))`` with the norms
    swapped.

    >>> import fntorch as ft
    >>> ft.fft.ihfftn(ft.ones((2, 4))).shape
    (2, 3)
    """
    norm = _SWAP[_norm("ihfftn", norm)]
    return lax.conj(_r2c("ihfftn", x, s, _pick("ihfftn", axes, dim, None), norm))


def _two(fn, name):
    def f(x, /, *, s=None, axes=(-2, -1), norm=None, dim=None):
        return fn(x, s=s, axes=_pick(name, None if dim is not None else axes, dim, None),
                  norm=norm)  # fmt: skip

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"`{fn.__name__}` over the last two axes (PyTorch's and numpy's ``{name}``).\n\n"
        f"    >>> import fntorch as ft\n"
        f"    >>> ft.fft.{name}(ft.ones((2, 2))).shape\n"
        f"    (2, 2)\n"
    )
    return f


fft2 = _two(fftn, "fft2")
ifft2 = _two(ifftn, "ifft2")
rfft2 = _two(rfftn, "rfft2")
irfft2 = _two(irfftn, "irfft2")
hfft2 = _two(hfftn, "hfft2")
ihfft2 = _two(ihfftn, "ihfft2")


# ---------------------------------------------------------------- helpers of the standard


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an ``n``-point `fft` with sample spacing ``d``.

    >>> import fntorch as ft
    >>> ft.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    n = as_index("fft.fftfreq", "n", n)
    if n < 1:
        raise ValueError(f"fft.fftfreq: n must be positive, got {n}")
    dtype = dt.default_float if dtype is None else dt.canonicalize(dtype, where="fft.fftfreq")
    values = np.fft.fftfreq(n, d=float(d))
    return _put(values.astype(dtype), device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an ``n``-point `rfft`: ``n // 2 + 1`` of them.

    >>> import fntorch as ft
    >>> ft.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    n = as_index("fft.rfftfreq", "n", n)
    if n < 1:
        raise ValueError(f"fft.rfftfreq: n must be positive, got {n}")
    dtype = dt.default_float if dtype is None else dt.canonicalize(dtype, where="fft.rfftfreq")
    values = np.fft.rfftfreq(n, d=float(d))
    return _put(values.astype(dtype), device)


def _shift(name, x, axes, sign, dim):
    x = _tensor(name, x)
    axes = _pick(name, axes, dim, None)
    nd = len(x.shape)
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(f"fft.{name}", a, nd) for a in axes)
    if not axes:
        return x
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axis=axes)


def fftshift(x, /, *, axes=None, dim=None):
    """Moves the zero frequency to the middle (a roll by ``n // 2`` along ``axes``).

    >>> import fntorch as ft
    >>> ft.fft.fftshift(ft.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift("fftshift", x, axes, 1, dim)


def ifftshift(x, /, *, axes=None, dim=None):
    """The inverse of `fftshift`.

    >>> import fntorch as ft
    >>> ft.fft.ifftshift(ft.fft.fftshift(ft.fft.fftfreq(5))).tolist() == ft.fft.fftfreq(5).tolist()
    True
    """
    return _shift("ifftshift", x, axes, -1, dim)
