"""CPU (numpy) impls of the linalg primitives.

Both ``dot_general`` and ``conv_general_dilated`` end in one batched ``np.matmul`` over
large matrices, so BLAS does the work: dot_general after transposing to
``(batch, free, contract)``; conv after im2col (whole-slab copies, one matmul per
group). ``reduce_window_*`` pad with the reduction's identity and combine one strided
slice per window tap (or reduce a sliding view of many-tap windows).

The conv and window reductions are written over an array module ``xp`` and a batched
``matmul``: the CUDA device builds its own from CuPy and cuBLAS
(``conv_impl(cupy, gemm)``), so both devices run one algorithm.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..fx import dtypes as dt
from ..ops._prims_linalg import (
    _window_out,
    conv_general_dilated_p,
    conv_out_spatial,
    dilate_shape,
    dot_general_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_sum_p,
)
from . import cpu_blas
from ._device import cpu_impls

# numpy has no fast (or, for bfloat16, any) matmul for half floats: compute in float32.
_HALF = (dt.float16, dt.bfloat16)


def _compute_dtype(dtype):
    return dt.float32 if dtype in _HALF else dtype


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64))


def _dot_general_impl(lhs, rhs, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
    out_dtype = preferred_element_type or lhs.dtype
    if dt.is_float(lhs.dtype) and not np.can_cast(lhs.dtype, out_dtype, "safe"):
        # A float product asked for in ints or a narrower float is computed in the
        # operands' dtype and converted, as in lax; casting the operands would truncate.
        res = _dot_general_impl(
            lhs, rhs, dimension_numbers=dimension_numbers, preferred_element_type=None
        )
        return res.astype(out_dtype)
    out_shape = tuple(lhs.shape[d] for d in (*lb, *lfree)) + tuple(rhs.shape[d] for d in rfree)
    cdt = _compute_dtype(out_dtype)
    bsz = _prod([lhs.shape[d] for d in lb])
    m, n = _prod([lhs.shape[d] for d in lfree]), _prod([rhs.shape[d] for d in rfree])
    k = _prod([lhs.shape[d] for d in lc])
    a = np.transpose(lhs, (*lb, *lfree, *lc)).astype(cdt, copy=False).reshape(bsz, m, k)
    b = np.transpose(rhs, (*rb, *rc, *rfree)).astype(cdt, copy=False).reshape(bsz, k, n)
    if k == 1:
        # An outer product (per-example gradients of a dense layer): numpy's matmul
        # runs k=1 through a slow non-BLAS loop; a broadcast multiply streams it.
        res = np.multiply(a, b.reshape(bsz, 1, n))
    elif bsz == 1:
        res = cpu_blas.matmul(a[0], b[0])
    else:
        res = cpu_blas.matmul(a, b)
    return res.reshape(out_shape).astype(out_dtype, copy=False)


cpu_impls[dot_general_p] = _dot_general_impl


def _window_out_shape(*args):
    return _window_out("reduce_window", *args)


def _dilate_and_pad(x, dilation, padding, fill, axes_from: int, xp=np):
    """``x`` with zeros (``fill``) between neighbours and ``padding`` (negative: crop) on
    its dims from ``axes_from`` on."""
    lead = x.shape[:axes_from]
    dshape = dilate_shape(x.shape[axes_from:], dilation)
    if any(d > 1 for d in dilation):
        y = xp.full(lead + dshape, fill, x.dtype)
        y[(slice(None),) * axes_from + tuple(slice(None, None, d) for d in dilation)] = x
        x = y
    # Pad first, then crop: lo and hi act independently (a crop may eat into padding).
    pads = [(0, 0)] * axes_from + [(max(0, lo), max(0, hi)) for lo, hi in padding]
    if any(p != (0, 0) for p in pads):  # np.pad's Python costs ~40 us a call
        y = xp.full([n + lo + hi for n, (lo, hi) in zip(x.shape, pads)], fill, x.dtype)
        y[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pads))] = x
        x = y
    crop = (slice(None),) * axes_from + tuple(
        slice(max(0, -lo), s - max(0, -hi)) for (lo, hi), s in zip(padding, x.shape[axes_from:])
    )
    return x[crop]


def _windows(x, window, strides, window_dilation, axes_from: int):
    """A view of shape ``x.shape[:axes_from] + out + window`` of every window position."""
    nd = len(window)
    win = dilate_shape(window, window_dilation)
    axes = tuple(range(axes_from, axes_from + nd))
    v = sliding_window_view(x, win, axis=axes)
    sel = (slice(None),) * axes_from + tuple(slice(None, None, s) for s in strides)
    sel += tuple(slice(None, None, d) for d in window_dilation)
    return v[sel]


def conv_impl(xp, matmul):
    """The ``conv_general_dilated`` impl over array module ``xp`` (numpy, CuPy) with
    ``matmul(a, b)`` for ``(batch, m, k) @ (batch, k, n)``: im2col, then one product per
    group.

    >>> conv = conv_impl(np, np.matmul)
    >>> conv(np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 2, 2), np.float32),
    ...      window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
    ...      rhs_dilation=(1, 1), feature_group_count=1, batch_group_count=1).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """

    def conv(
        lhs,
        rhs,
        *,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    ):
        n, o, ci, window = lhs.shape[0], rhs.shape[0], rhs.shape[1], rhs.shape[2:]
        g, b = feature_group_count, batch_group_count
        osp = conv_out_spatial(
            lhs.shape[2:], window, window_strides, padding, lhs_dilation, rhs_dilation
        )
        out_shape = (n // b, o, *osp)
        if _prod(out_shape) == 0 or rhs.size == 0:
            return xp.zeros(out_shape, lhs.dtype)
        cdt = _compute_dtype(lhs.dtype)
        nsp = len(window)
        xc = _channels_last_padded(xp, lhs.astype(cdt, copy=False), lhs_dilation, padding)
        cols = _im2col(xp, xc, window, window_strides, rhs_dilation, osp)  # (N, *out, *win, C)
        # -> (groups, N/B * positions, window * C/G): rows are output positions, columns a
        # window's taps, channels fastest.
        npos, ntap = _prod(osp), _prod(window)
        cols = cols.reshape(b, n // b, npos, ntap, g, ci)
        if b * g > 1:
            cols = xp.transpose(cols, (0, 4, 1, 2, 3, 5))
        patches = cols.reshape(b * g, (n // b) * npos, ntap * ci)
        kernel = xp.moveaxis(rhs.astype(cdt, copy=False), 1, -1).reshape(b * g, o // (b * g), -1)
        res = matmul(patches, xp.swapaxes(kernel, 1, 2))  # (groups, N/B * P, O/groups)
        res = res.reshape(b, g, n // b, *osp, o // (b * g))
        res = xp.transpose(res, (2, 0, 1, 3 + nsp, *range(3, 3 + nsp)))
        return xp.ascontiguousarray(res.reshape(out_shape)).astype(lhs.dtype, copy=False)

    return conv


def _channels_last_padded(xp, x, dilation, padding):
    """``x`` (``(N, C, *spatial)``) dilated and padded, as a C-contiguous
    ``(N, *spatial, C)``: one copy where nothing is cropped or dilated (the zero
    border, then the transposed interior), else padding then transposing."""
    if any(d > 1 for d in dilation) or any(lo < 0 or hi < 0 for lo, hi in padding):
        x = _dilate_and_pad(x, dilation, padding, 0, 2, xp)
        return xp.ascontiguousarray(xp.moveaxis(x, 1, -1))
    n, c, *spatial = x.shape
    out = xp.empty((n, *(s + lo + hi for s, (lo, hi) in zip(spatial, padding)), c), x.dtype)
    if any(lo or hi for lo, hi in padding):
        out.fill(0)  # only the border needs it, but one fill is cheaper than 2 * nsp slabs
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
    out[(slice(None), *inner)] = xp.moveaxis(x, 1, -1)
    return out


def _im2col(xp, xc, window, strides, dilation, osp):
    """``(N, *out, *window, C)``: every window of ``xc`` (``(N, *spatial, C)``, padded,
    C-contiguous). Built by whole-slab copies, one per window tap or one per output
    position, whichever is fewer: numpy's strided copy of a sliding-window view (inner
    runs of a window's width) measured 3-5x slower on the digits CNN's convolutions."""
    nsp = len(window)
    n, c = xc.shape[0], xc.shape[-1]
    cols = xp.empty((n, *osp, *window, c), xc.dtype)
    every = (slice(None),)
    if _prod(window) <= _prod(osp):
        for tap in itertools.product(*(range(w) for w in window)):
            src = tuple(
                slice(k * d, k * d + (o - 1) * s + 1, s)
                for k, d, o, s in zip(tap, dilation, osp, strides)
            )
            cols[every + (slice(None),) * nsp + tap] = xc[every + src]
    else:
        for pos in itertools.product(*(range(o) for o in osp)):
            src = tuple(
                slice(p * s, p * s + (w - 1) * d + 1, d)
                for p, s, w, d in zip(pos, strides, window, dilation)
            )
            cols[every + pos] = xc[every + src]
    return cols


cpu_impls[conv_general_dilated_p] = conv_impl(np, cpu_blas.matmul)


def _identity(kind, dtype):
    if kind == "sum":
        return np.zeros((), dtype)
    if dt.is_float(dtype):
        return np.asarray(-np.inf if kind == "max" else np.inf, dtype)
    if dtype == dt.bool_:
        return np.asarray(kind == "min", dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.min if kind == "max" else info.max, dtype)


# Up to this many window taps, one whole-array ufunc call per tap beats reducing the
# (badly strided) window axes of a sliding view; past it, Python overhead dominates.
_MAX_TAP_LOOP = 64


def reduce_window_impl(xp, kind: str):
    """The ``reduce_window_<kind>`` impl (``kind``: sum, max, min) over array module
    ``xp``. Besides numpy every tap is one whole-array call: on a GPU each is a kernel,
    and the sliding view's reduction is numpy's own.

    >>> reduce_window_impl(np, "max")(np.arange(4.0), window_dimensions=(2,),
    ...     window_strides=(2,), padding=((0, 0),), base_dilation=(1,),
    ...     window_dilation=(1,)).tolist()
    [1.0, 3.0]
    """
    ufunc = getattr(xp, {"sum": "add", "max": "maximum", "min": "minimum"}[kind])

    def accumulate(acc, tap):
        return ufunc(acc, tap, out=acc)

    def second_of_equals(acc, tap):
        # of two equal values (+0.0, -0.0) the second, as numpy's float32 loops and the
        # kernels keep (CuPy's maximum does not say which)
        return xp.where(acc == tap, tap, ufunc(acc, tap))

    def reduce_window(
        x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        nd = x.ndim
        out_shape = _window_out_shape(
            x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
        )
        if _prod(out_shape) == 0:
            return xp.zeros(out_shape, x.dtype)
        # Half floats are summed in float32 (as an accumulator would); max/min are exact,
        # and float16's go through float32 too: numpy's float16 loops keep the first of
        # two equal values (+0, -0), its float32 ones and the kernels the second.
        cdt = _compute_dtype(x.dtype) if kind == "sum" or x.dtype == np.float16 else x.dtype
        fill = _identity(kind, x.dtype).item()  # a Python scalar: any xp's ``full`` takes it
        y = _dilate_and_pad(xp.asarray(x), base_dilation, padding, fill, 0, xp)
        y = y.astype(cdt, copy=False)
        if xp is np and _prod(window_dimensions) > _MAX_TAP_LOOP:
            v = _windows(y, window_dimensions, window_strides, window_dilation, 0)
            res = ufunc.reduce(v, axis=tuple(range(nd, 2 * nd)), dtype=cdt)
            return np.asarray(res, x.dtype).reshape(out_shape)
        ties = xp is not np and kind != "sum" and y.dtype.kind == "f"
        combine = second_of_equals if ties else accumulate
        res = None
        for off in itertools.product(*(range(w) for w in window_dimensions)):
            tap = y[
                tuple(
                    slice(k * d, k * d + (n - 1) * s + 1, s)
                    for k, d, n, s in zip(off, window_dilation, out_shape, window_strides)
                )
            ]
            if res is None:
                res = xp.array(tap, cdt)
            else:
                res = combine(res, tap)
        return res.astype(x.dtype, copy=False)

    return reduce_window


cpu_impls[reduce_window_sum_p] = reduce_window_impl(np, "sum")
cpu_impls[reduce_window_max_p] = reduce_window_impl(np, "max")
cpu_impls[reduce_window_min_p] = reduce_window_impl(np, "min")
