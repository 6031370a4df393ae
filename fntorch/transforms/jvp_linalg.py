"""jvp and transpose rules of the linalg primitives.

``dot_general`` and ``conv_general_dilated`` are bilinear: their jvp is the sum of the
primitive applied to one tangent and the other primal, and each operand has a transpose
(JAX's ``_dot_general_transpose_lhs/rhs`` and ``_conv_general_dilated_transpose_lhs/rhs``,
with the conv layouts fixed to PyTorch's). ``reduce_window_sum`` is linear; its transpose
pads the cotangent and sums windows again. ``reduce_window_max/min`` send each output the
tangent at the window's first arg-extreme; rather than a ``select_and_gather_add``
primitive, the rule walks the window offsets: each offset is a strided ``slice`` of the
padded operand and of the padded tangent, and a ``select`` keeps the tangent where the
operand equals the result. Everything it binds is an ordinary primitive, so the rule is
linear in the tangent, transposes, batches and nests without rules of its own.
"""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np

from ..ops import lax
from ..ops._prims_linalg import (
    conv_general_dilated_p,
    dilate_shape,
    dot_general_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_sum_p,
)
from .ad import defjvp, deflinear, is_undefined_primal, jvp_rules, transpose_rules

# --------------------------------------------------------------------- shape helpers


def reshape_axis_into(src: int, dst: int, x):
    """Merges axis ``src`` of ``x`` into axis ``dst`` (numbered with ``src`` removed), as
    the major part.

    >>> import numpy as np
    >>> reshape_axis_into(0, 1, np.zeros((2, 3, 4))).shape
    (3, 8)
    """
    shape = list(x.shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [s for i, s in enumerate(shape) if i != src]
    new[dst] *= shape[src]
    if perm != sorted(perm):
        x = lax.transpose(x, tuple(perm))
    return lax.reshape(x, tuple(new))


def reshape_axis_out_of(src: int, size1: int, x):
    """Splits axis ``src`` of ``x`` into ``(size1, rest)``.

    >>> import numpy as np
    >>> reshape_axis_out_of(1, 2, np.zeros((3, 8))).shape
    (3, 2, 4)
    """
    shape = list(x.shape)
    shape[src : src + 1] = [size1, shape[src] // size1]
    return lax.reshape(x, tuple(shape))


def _transpose_01(x):
    nd = len(x.shape)
    return lax.transpose(x, (1, 0, *range(2, nd)))


def conv_vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    """Padding of the conv that maps an output cotangent back onto the input (JAX's
    ``_conv_general_vjp_lhs_padding``)."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window, rhs_dilation)
    out_d = dilate_shape(out_shape, strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding)]
    after = [ld + r - 1 - od - b for ld, r, od, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def conv_vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
    """Padding of the conv that correlates input and output cotangent into a kernel
    cotangent (JAX's ``_conv_general_vjp_rhs_padding``)."""
    lhs_d = dilate_shape(in_shape, lhs_dilation)
    rhs_d = dilate_shape(window, rhs_dilation)
    out_d = dilate_shape(out_shape, strides)
    los = [lo for lo, _ in padding]
    his = [od - ld + r - lo - 1 for od, ld, r, lo in zip(out_d, lhs_d, rhs_d, los)]
    return tuple(zip(los, his))


def _zeros(shape, dtype):
    return lax.full(tuple(shape), 0, dtype)


# ---------------------------------------------------------------------- dot_general


def _dot_general_jvp_lhs(t, lhs, rhs, **params):
    return dot_general_p.bind(t, rhs, **params)


def _dot_general_jvp_rhs(t, lhs, rhs, **params):
    return dot_general_p.bind(lhs, t, **params)


defjvp(dot_general_p, _dot_general_jvp_lhs, _dot_general_jvp_rhs)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_operand(ct, x_aval, y, x_contract, y_contract, x_batch, y_batch, swap_ans):
    """The cotangent of operand ``x`` of ``dot_general`` (the other operand is ``y``)."""
    x_nd, y_nd = len(x_aval.shape), len(y.shape)
    x_kept = [i for i in range(x_nd) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(y_nd) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = tuple(int(i) for i in np.argsort([*x_batch, *x_kept, *x_contract_by_y]))
    if ct.dtype != y.dtype:  # preferred_element_type: contract in the wider output dtype
        y = lax.convert_element_type(y, ct.dtype)
    res = lax.dot_general(ct, y, dims)
    if out_axes != tuple(range(len(out_axes))):
        res = lax.transpose(res, out_axes)
    if res.dtype != x_aval.dtype:
        res = lax.convert_element_type(res, x_aval.dtype)
    return res


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined_primal(lhs):
        return [_dot_transpose_operand(ct, lhs.aval, rhs, lc, rc, lb, rb, False), None]
    return [None, _dot_transpose_operand(ct, rhs.aval, lhs, rc, lc, rb, lb, True)]


transpose_rules[dot_general_p] = _dot_general_transpose


# ---------------------------------------------------------------------- conv_general_dilated


def _conv_jvp_lhs(t, lhs, rhs, **params):
    return conv_general_dilated_p.bind(t, rhs, **params)


def _conv_jvp_rhs(t, lhs, rhs, **params):
    return conv_general_dilated_p.bind(lhs, t, **params)


defjvp(conv_general_dilated_p, _conv_jvp_lhs, _conv_jvp_rhs)


def _conv_transpose_lhs(
    ct,
    lhs_aval,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    in_sp = lhs_aval.shape[2:]
    o, i, *window = rhs.shape
    if 0 in ct.shape or 0 in rhs.shape:
        return _zeros(lhs_aval.shape, lhs_aval.dtype)
    nsp = len(window)
    groups = max(feature_group_count, batch_group_count)
    # The kernel of the transposed conv maps O channels back to C: swap its O and I axes,
    # keeping the groups outermost on the new output-channel axis.
    if groups == 1:
        k = _transpose_01(rhs)
    else:
        k = reshape_axis_out_of(0, groups, rhs)  # (G, O/G, I, *w)
        k = lax.transpose(k, (0, 2, 1, *range(3, 3 + nsp)))
        k = lax.reshape(k, (groups * i, o // groups, *window))
    k = lax.rev(k, tuple(range(2, 2 + nsp)))
    pads = conv_vjp_lhs_padding(
        in_sp, window, window_strides, ct.shape[2:], padding, lhs_dilation, rhs_dilation
    )
    out = lax.conv_general_dilated(
        ct, k, lhs_dilation, pads, window_strides, rhs_dilation, feature_group_count=groups
    )
    if batch_group_count > 1:
        # (N/B, B*C, ...) -> (N, C, ...): the batch groups are the major part of N.
        out = reshape_axis_out_of(1, batch_group_count, out)
        out = reshape_axis_into(1, 0, out)
    return out


def _conv_transpose_rhs(
    ct,
    lhs,
    rhs_aval,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    if 0 in ct.shape or 0 in lhs.shape:
        # Avoids a degenerate conv whose kernel (the cotangent) has a size-0 window.
        return _zeros(rhs_aval.shape, rhs_aval.dtype)
    window = rhs_aval.shape[2:]
    # Input channels play the batch, the batch plays the channels: feature groups of the
    # forward conv become batch groups here and vice versa.
    fg, bg = batch_group_count, feature_group_count
    pads = conv_vjp_rhs_padding(
        lhs.shape[2:], window, window_strides, ct.shape[2:], padding, lhs_dilation, rhs_dilation
    )
    out = lax.conv_general_dilated(
        _transpose_01(lhs),
        _transpose_01(ct),
        rhs_dilation,
        pads,
        lhs_dilation,
        window_strides,
        feature_group_count=fg,
        batch_group_count=bg,
    )
    return _transpose_01(out)


def _conv_transpose(ct, lhs, rhs, **params):
    if is_undefined_primal(lhs):
        return [_conv_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _conv_transpose_rhs(ct, lhs, rhs.aval, **params)]


transpose_rules[conv_general_dilated_p] = _conv_transpose


# ---------------------------------------------------------------------- reduce_window


def _reduce_window_sum_transpose(
    ct, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    in_shape = x.aval.shape
    pads = conv_vjp_lhs_padding(
        in_shape,
        window_dimensions,
        window_strides,
        ct.shape,
        padding,
        base_dilation,
        window_dilation,
    )
    cfg = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides))
    padded = lax.pad(ct, np.zeros((), ct.dtype), cfg)
    res = lax.reduce_window_sum(
        padded, window_dimensions, base_dilation, ((0, 0),) * len(in_shape), None, window_dilation
    )
    return [res]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _reduce_window_chooser_jvp(
    prim,
    pad_value,
    primals,
    tangents,
    *,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    (x,), (t,) = primals, tangents
    out = prim.bind(
        x,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
        base_dilation=base_dilation,
        window_dilation=window_dilation,
    )
    tout = _zeros(out.shape, t.dtype)
    if 0 in out.shape:
        return out, tout
    # Holes of the base dilation and the padding never win: they hold the identity.
    cfg = tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation))
    xp = lax.pad(x, np.asarray(pad_value, x.dtype), cfg)
    tp = lax.pad(t, np.zeros((), t.dtype), cfg)
    offsets = list(itertools.product(*(range(w) for w in window_dimensions)))
    # Walk the offsets last to first so that the first position equal to the result wins.
    for off in reversed(offsets):
        start = tuple(k * d for k, d in zip(off, window_dilation))
        limit = tuple(s + (n - 1) * st + 1 for s, n, st in zip(start, out.shape, window_strides))
        xs = lax.slice(xp, start, limit, window_strides)
        ts = lax.slice(tp, start, limit, window_strides)
        tout = lax.select(lax.eq(xs, out), ts, tout)
    return out, tout


jvp_rules[reduce_window_max_p] = partial(_reduce_window_chooser_jvp, reduce_window_max_p, -np.inf)
jvp_rules[reduce_window_min_p] = partial(_reduce_window_chooser_jvp, reduce_window_min_p, np.inf)
