"""More of ``ft.nn.functional`` (re-exported there): the less common activations,
channel dropout, ``interpolate``, ``pixel_shuffle``, ``cosine_similarity`` and
``pairwise_distance``, with PyTorch's signatures and numerics.

>>> import fntorch as ft
>>> F = ft.nn.functional
>>> F.interpolate(ft.arange(4.0).reshape(1, 1, 2, 2), scale_factor=2).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

import math

import numpy as np

from .. import random as _random
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from ..ops import api as _api

__all__ = [
    "selu", "celu", "softsign", "hardswish", "hardsigmoid", "logsigmoid", "softmin", "glu",
    "prelu", "dropout1d", "dropout2d", "interpolate", "pixel_shuffle", "cosine_similarity",
    "pairwise_distance",
]  # fmt: skip

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def selu(input, inplace: bool = False):  # noqa: A002 - PyTorch's names
    """``scale * elu(x, alpha)`` with SELU's constants.

    >>> import fntorch as ft
    >>> round(float(ft.nn.functional.selu(ft.asarray(1.0))), 4)
    1.0507
    """
    neg = _SELU_ALPHA * _api.expm1(_api.minimum(input, 0.0))
    return _SELU_SCALE * _api.where(input > 0, input, neg)


def celu(input, alpha: float = 1.0, inplace: bool = False):  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import fntorch as ft
    >>> ft.nn.functional.celu(ft.asarray([1.0, 0.0])).tolist()
    [1.0, 0.0]
    """
    return _api.where(input > 0, input, alpha * _api.expm1(_api.minimum(input, 0.0) / alpha))


def softsign(input):  # noqa: A002
    """``x / (1 + |x|)``.

    >>> import fntorch as ft
    >>> ft.nn.functional.softsign(ft.asarray([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """
    return input / (1 + _api.abs(input))


def hardsigmoid(input, inplace: bool = False):  # noqa: A002
    """``clip(x / 6 + 1 / 2, 0, 1)``.

    >>> import fntorch as ft
    >>> ft.nn.functional.hardsigmoid(ft.asarray([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return _api.clip(input / 6.0 + 0.5, 0.0, 1.0)


def hardswish(input, inplace: bool = False):  # noqa: A002
    """``x * hardsigmoid(x)``.

    >>> import fntorch as ft
    >>> ft.nn.functional.hardswish(ft.asarray([-4.0, 4.0])).tolist()
    [-0.0, 4.0]
    """
    return input * hardsigmoid(input)


def logsigmoid(input):  # noqa: A002
    """``log(sigmoid(x))``, computed stably.

    >>> import fntorch as ft
    >>> round(float(ft.nn.functional.logsigmoid(ft.asarray(-100.0))), 1)
    -100.0
    """
    return -_api.logaddexp(-input, 0.0)


@_autocast_op("softmin")
def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """``softmax(-x)`` over ``dim``.

    >>> import fntorch as ft
    >>> ft.nn.functional.softmin(ft.zeros(2), dim=0).tolist()
    [0.5, 0.5]
    """
    x = input if dtype is None else input.astype(dtype)
    return _api.softmax(-x, axis=-1 if dim is None else dim)


def glu(input, dim: int = -1):  # noqa: A002
    """The first half of ``dim`` gated by the sigmoid of the second half.

    >>> import fntorch as ft
    >>> ft.nn.functional.glu(ft.asarray([2.0, 0.0])).tolist()
    [1.0]
    """
    n = input.shape[dim]
    if n % 2:
        raise ValueError(f"glu: dim {dim} must have an even size, got {n}")
    a, b = _api.split(input, n // 2, dim)
    return a * _api.sigmoid(b)


@_autocast_op("prelu")
def prelu(input, weight):  # noqa: A002
    """``x`` where positive, else ``weight * x``; ``weight`` has one entry, or one per
    channel (dim 1).

    >>> import fntorch as ft
    >>> ft.nn.functional.prelu(ft.asarray([[-2.0, 3.0]]), ft.asarray([0.25])).tolist()
    [[-0.5, 3.0]]
    """
    w = weight
    if weight.size > 1 and input.ndim > 1:
        w = _api.reshape(weight, (1, -1) + (1,) * (input.ndim - 2))
    return _api.where(input > 0, input, w * input)


def _channel_dropout(input, p, training, where, nsp, key):  # noqa: A002
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{where}: p must be a number between 0 and 1, got {p!r}")
    if not training or p == 0.0:
        return input
    if input.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(
            f"{where}: expected a {nsp + 1}-d or {nsp + 2}-d input, got shape {input.shape}"
        )
    if p == 1.0:
        return _api.zeros_like(input)
    if key is None:
        from ..random._torch_style import draw_key

        key = draw_key(device=input.device)
    # one draw per (sample, channel): a whole feature map is kept or dropped
    shape = input.shape[: input.ndim - nsp] + (1,) * nsp
    keep = _random.bernoulli(key, 1.0 - p, shape)
    return _api.where(keep, input / (1.0 - p), _api.zeros_like(input))


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False, *, key=None):  # noqa: A002
    """Zeroes whole channels of ``(N, C, L)`` with probability ``p`` (training only).

    >>> import fntorch as ft
    >>> y = ft.nn.functional.dropout1d(ft.ones((2, 3, 4)), 0.5, key=ft.random.key(0))
    >>> bool(((y == 0).all(-1) | (y == 2).all(-1)).all())
    True
    """
    return _channel_dropout(input, float(p), training, "dropout1d", 1, key)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False, *, key=None):  # noqa: A002
    """Zeroes whole channels of ``(N, C, H, W)`` with probability ``p`` (training only).

    >>> import fntorch as ft
    >>> x = ft.ones((1, 4, 2, 2))
    >>> ft.nn.functional.dropout2d(x, 0.5, training=False) is x
    True
    """
    return _channel_dropout(input, float(p), training, "dropout2d", 2, key)


# --------------------------------------------------------------------------- resampling


def _linear_taps(size_in, size_out, scale, align_corners):
    """Source indices (low, high) and the high tap's weight for each output index."""
    i = np.arange(size_out, dtype=np.float64)
    if align_corners:
        src = i * ((size_in - 1) / (size_out - 1)) if size_out > 1 else np.zeros_like(i)
    else:
        src = np.maximum((i + 0.5) * scale - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), size_in - 1)
    hi = np.minimum(lo + 1, size_in - 1)
    return lo, hi, src - lo


def _cubic_taps(size_in, size_out, scale, align_corners):
    """PyTorch's bicubic taps (A = -0.75): the four clamped source indices and their
    weights for each output index."""
    i = np.arange(size_out, dtype=np.float64)
    if align_corners:
        src = i * ((size_in - 1) / (size_out - 1)) if size_out > 1 else np.zeros_like(i)
    else:
        src = (i + 0.5) * scale - 0.5  # not clamped at 0, unlike the linear taps
    base = np.floor(src)
    t = src - base
    a = -0.75
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731 - |x| <= 1
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731 - 1 < |x| < 2
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    taps = [np.clip(base.astype(np.int64) + k, 0, size_in - 1) for k in (-1, 0, 1, 2)]
    return taps, weights


def _area_matrix(size_in, size_out):
    """The (size_out, size_in) averaging matrix of adaptive average pooling along one
    dim (PyTorch's windows: floor(j * in / out) to ceil((j + 1) * in / out))."""
    m = np.zeros((size_out, size_in))
    for j in range(size_out):
        lo, hi = (j * size_in) // size_out, -(-((j + 1) * size_in) // size_out)
        m[j, lo:hi] = 1.0 / (hi - lo)
    return m


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias=False):  # fmt: skip
    """Resizes the spatial dims of ``(N, C, *spatial)`` to ``size`` or by
    ``scale_factor``, with ``mode`` "nearest", "nearest-exact", "linear", "bilinear",
    "trilinear", "bicubic" or "area" (``align_corners`` as PyTorch), PyTorch's
    source-index rules. ``antialias=True`` is not supported (ValueError).

    >>> import fntorch as ft
    >>> x = ft.asarray([[[0.0, 2.0]]])
    >>> ft.nn.functional.interpolate(x, scale_factor=2, mode="linear").tolist()
    [[[0.0, 0.5, 1.5, 2.0]]]
    >>> y = ft.asarray([[[0.0, 2.0, 4.0, 6.0]]])
    >>> ft.nn.functional.interpolate(y, size=2, mode="area").tolist()
    [[[1.0, 5.0]]]
    """
    nsp = input.ndim - 2
    if nsp < 1:
        raise ValueError(f"interpolate: expected (N, C, *spatial), got shape {input.shape}")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    linear = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
    modes = ("nearest", "nearest-exact", "area", *linear)
    if mode not in modes:
        raise ValueError(f"interpolate: mode must be one of {modes}, got {mode!r}")
    if antialias:
        raise ValueError("interpolate: antialias=True is not supported (PyTorch's own "
                         "antialiasing filter); resize without it")  # fmt: skip
    if mode in linear and linear[mode] != nsp:
        raise ValueError(f"interpolate: mode {mode!r} needs {linear[mode]} spatial dims, "
                         f"got input of shape {input.shape}")  # fmt: skip
    if mode not in linear and align_corners is not None:
        raise ValueError("interpolate: align_corners only applies to the linear and cubic modes")
    ins = input.shape[2:]
    if size is not None:
        outs = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nsp
        scales = [i / o for i, o in zip(ins, outs)]
    else:
        sf = (
            tuple(scale_factor)
            if isinstance(scale_factor, (tuple, list))
            else (scale_factor,) * nsp
        )
        outs = tuple(int(math.floor(i * s)) for i, s in zip(ins, sf))
        scales = [i / o if recompute_scale_factor else 1.0 / s for i, o, s in zip(ins, outs, sf)]
    x = input
    dev = x.device

    def const(a, dtype=None):  # index and weight arrays live beside the input
        return _api.asarray(a, dtype=dtype, device=dev)

    for d, (n_in, n_out, scale) in enumerate(zip(ins, outs, scales)):
        axis = 2 + d
        shape = [1] * x.ndim
        shape[axis] = n_out
        if mode in ("nearest", "nearest-exact"):
            offset = 0.5 if mode == "nearest-exact" else 0.0
            src = np.floor((np.arange(n_out) + offset) * scale).astype(np.int64)
            x = _api.take(x, const(np.minimum(src, n_in - 1)), axis=axis)
        elif mode == "area":
            m = const(_area_matrix(n_in, n_out).T, x.dtype)  # (n_in, n_out)
            x = _api.moveaxis(_api.moveaxis(x, axis, -1) @ m, -1, axis)
        elif mode == "bicubic":
            taps, weights = _cubic_taps(n_in, n_out, scale, bool(align_corners))
            parts = [
                _api.take(x, const(i), axis=axis) * _api.reshape(const(w, x.dtype), tuple(shape))
                for i, w in zip(taps, weights)
            ]
            x = parts[0] + parts[1] + parts[2] + parts[3]
        else:
            lo, hi, w = _linear_taps(n_in, n_out, scale, bool(align_corners))
            w = _api.reshape(const(w, x.dtype), tuple(shape))
            a, b = _api.take(x, const(lo), axis=axis), _api.take(x, const(hi), axis=axis)
            x = a + (b - a) * w
    return x


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``, as PyTorch's.

    >>> import fntorch as ft
    >>> ft.nn.functional.pixel_shuffle(ft.zeros((1, 8, 2, 3)), 2).shape
    (1, 2, 4, 6)
    """
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: channels {c} not divisible by {r}^2")
    x = _api.reshape(input, (*lead, c // (r * r), r, r, h, w))
    k = len(lead)
    x = _api.permute_dims(x, (*range(k), k, k + 3, k + 1, k + 4, k + 2))
    return _api.reshape(x, (*lead, c // (r * r), h * r, w * r))


# ---------------------------------------------------------------------------- distances


@_autocast_op("cosine_similarity")
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``<x1, x2> / max(|x1| |x2|, eps)`` along ``dim`` (PyTorch's, norms clamped).

    >>> import fntorch as ft
    >>> a, b = ft.asarray([[1.0, 0.0]]), ft.asarray([[1.0, 1.0]])
    >>> ft.nn.functional.cosine_similarity(a, b).tolist()
    [0.7071067690849304]
    """
    n1 = _api.sqrt(_api.sum(x1 * x1, axis=dim))
    n2 = _api.sqrt(_api.sum(x2 * x2, axis=dim))
    return _api.sum(x1 * x2, axis=dim) / _api.maximum(n1 * n2, eps)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``||x1 - x2 + eps||_p`` along the last dim.

    >>> import fntorch as ft
    >>> round(float(ft.nn.functional.pairwise_distance(ft.zeros(2), ft.asarray([3.0, 4.0]))), 4)
    5.0
    """
    d = _api.abs(x1 - x2 + eps)
    out = _api.sum(d**p, axis=-1, keepdims=keepdim) ** (1.0 / p)
    return out if isinstance(out, Tensor) else _api.asarray(out)
