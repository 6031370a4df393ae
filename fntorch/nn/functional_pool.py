"""``ft.nn.functional``'s pools: max (with PyTorch's ``return_indices``), average and
adaptive average over the last one, two or three dims; re-exported by
``nn/functional.py``.

>>> import fntorch as ft
>>> ft.nn.functional.avg_pool1d(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
[[[2.0, 1.0]]]
"""

from __future__ import annotations

import itertools
import math

from ..fx import dtypes as _dt
from ..ops import api as _api
from ..ops import lax as _lax
from ._fused import fused as _fused


def _tuple(v, n: int) -> tuple:
    """``v`` as an ``n``-tuple: PyTorch's int-or-tuple size arguments (``nn/functional``'s
    convolutions use it too)."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _pool_args(x, kernel_size, stride, padding, nsp, ceil_mode):
    k = _tuple(kernel_size, nsp)
    s = k if stride is None or stride == [] else _tuple(stride, nsp)
    p = _tuple(padding, nsp)
    pads = []
    for size, kk, ss, pp in zip(x.shape[-nsp:], k, s, p):
        hi = pp
        if ceil_mode:
            out = -(-(size + 2 * pp - kk) // ss) + 1
            if (out - 1) * ss >= size + pp:
                out -= 1
            hi = (out - 1) * ss + kk - size - pp
        pads.append((pp, max(hi, pp)))
    lead = x.ndim - nsp
    return (1,) * lead + k, (1,) * lead + s, ((0, 0),) * lead + tuple(pads)


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nsp):
    win, strides, pads = _pool_args(x, kernel_size, stride, padding, nsp, ceil_mode)
    dil = (1,) * (x.ndim - nsp) + _tuple(dilation, nsp)
    out = _window_max(x, win=win, strides=strides, pads=pads, dil=dil)
    if not return_indices:
        return out
    return out, _window_argmax(x, out.shape[-nsp:], win, strides, pads, dil, nsp)


def _window_argmax(x, out_shape, win, strides, pads, dil, nsp):
    """PyTorch's ``return_indices``: for each window the flat index (into the input's
    last ``nsp`` dims) of its first maximal element, in the window's row-major order.
    One strided view of the padded input per window offset, and an argmax across them."""
    lead = x.ndim - nsp
    w, s, d = win[lead:], strides[lead:], dil[lead:]
    lo = [p[0] for p in pads[lead:]]
    xp = _api.pad(x, pads, constant_values=-_api.inf)
    views = []
    for offs in itertools.product(*(range(k) for k in w)):
        index = [slice(None)] * lead
        for o, n, st, dd in zip(offs, out_shape, s, d):
            index.append(slice(o * dd, o * dd + (n - 1) * st + 1, st))
        views.append(xp[tuple(index)])
    k = _api.argmax(_api.stack(views), axis=0)  # the first window offset holding the max
    flat, inner = None, 1
    for dim in reversed(range(nsp)):
        offset = (k // math.prod(w[dim + 1 :])) % w[dim]
        shape = [1] * nsp
        shape[dim] = out_shape[dim]
        start = _api.reshape(_api.arange(out_shape[dim], device=x.device) * s[dim], shape)
        coord = start - lo[dim] + offset * d[dim]
        flat = coord * inner if flat is None else flat + coord * inner
        inner *= x.shape[lead + dim]
    return _api.astype(flat, _dt.int64)


@_fused
def _window_max(x, win, strides, pads, dil):
    return _lax.reduce_window_max(x, win, strides, pads, window_dilation=dil)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):  # fmt: skip
    """Max over windows of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.functional.max_pool1d(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):  # fmt: skip
    """Max over windows of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.functional.max_pool2d(ft.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):  # fmt: skip
    """Max over windows of the last three dims.

    >>> import fntorch as ft
    >>> ft.nn.functional.max_pool3d(ft.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
    [[[[[7.0]]]]]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor, nsp):
    win, strides, pads = _pool_args(x, kernel_size, stride, padding, nsp, ceil_mode)
    total = _lax.reduce_window_sum(x, win, strides, pads)
    if divisor is not None:
        return total / divisor
    if count_include_pad and not ceil_mode:
        return total / math.prod(win)
    # PyTorch counts the explicit padding but not the ceil_mode overhang
    ones = _api.ones(x.shape[-nsp:], dtype=x.dtype, device=x.device)
    inner = [(lo, lo) if count_include_pad else (0, 0) for lo, _ in pads[-nsp:]]
    ones = _api.pad(ones, inner, constant_values=1.0) if count_include_pad else ones
    rest = [(lo - a, hi - b) for (lo, hi), (a, b) in zip(pads[-nsp:], inner)]
    count = _lax.reduce_window_sum(ones, win[-nsp:], strides[-nsp:], tuple(rest))
    return total / count


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):  # fmt: skip
    """Mean over windows of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.functional.avg_pool1d(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):  # fmt: skip
    """Mean over windows of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.functional.avg_pool2d(ft.ones((1, 1, 4, 6)), 2).shape
    (1, 1, 2, 3)
    """
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2
    )


def _adaptive_avg(x, output_size, nsp):
    out = _tuple(output_size, nsp)
    for d, o in zip(range(x.ndim - nsp, x.ndim), out):
        size = x.shape[d]
        o = size if o is None else o
        if size % o == 0:
            k = size // o
            shape = x.shape[:d] + (o, k) + x.shape[d + 1 :]
            x = _api.mean(_api.reshape(x, shape), axis=d + 1)
            continue
        parts = []
        for i in range(o):  # PyTorch's bins: [floor(i*s/o), ceil((i+1)*s/o))
            lo, hi = (i * size) // o, -(-((i + 1) * size) // o)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(lo, hi)
            parts.append(_api.mean(x[tuple(idx)], axis=d, keepdims=True))
        x = _api.concat(parts, axis=d)
    return x


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Mean over ``output_size`` bins of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.functional.adaptive_avg_pool1d(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]]), 1).tolist()
    [[[1.5]]]
    """
    return _adaptive_avg(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Mean over ``output_size`` bins of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.functional.adaptive_avg_pool2d(ft.ones((2, 3, 4, 6)), (2, 3)).shape
    (2, 3, 2, 3)
    """
    return _adaptive_avg(input, output_size, 2)
