"""Batching rules of the linalg primitives.

``dot_general``: a batch axis on both operands becomes a dot_general batch dim; on one
operand it is a free dim, and the output says where it landed. ``conv_general_dilated``
folds the batch into N (lhs batched), into O through groups (rhs batched), or into the
groups (both), as JAX's ``_conv_general_dilated_batch_rule``. ``reduce_window_*`` get a
window of size 1 over the batch axis.
"""

from __future__ import annotations

from functools import partial

from ..fx.core import ShapedArray, get_aval
from ..ops import lax
from ..ops._prims_linalg import (
    conv_general_dilated_p,
    dot_general_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_sum_p,
)
from .batching import batch_rules
from .jvp_linalg import reshape_axis_into, reshape_axis_out_of


def _bump(dims, bdim):
    """Operand dims renumbered for a batch axis inserted at ``bdim``."""
    return tuple(d + (d >= bdim) for d in dims)


def _dot_general_batch(axis_size, args, dims, *, dimension_numbers, preferred_element_type):
    lhs, rhs = args
    ld, rd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    lc2, lb2 = (lc, lb) if ld is None else (_bump(lc, ld), _bump(lb, ld))
    rc2, rb2 = (rc, rb) if rd is None else (_bump(rc, rd), _bump(rb, rd))
    if ld is not None and rd is not None:
        dn = ((lc2, rc2), ((ld, *lb2), (rd, *rb2)))
        out_dim = 0
    elif ld is not None:
        dn = ((lc2, rc2), (lb2, rb2))
        lfree = [i for i in range(get_aval(lhs).ndim) if i not in lc2 and i not in lb2]
        out_dim = len(lb) + lfree.index(ld)
    else:
        dn = ((lc2, rc2), (lb2, rb2))
        rfree = [i for i in range(get_aval(rhs).ndim) if i not in rc2 and i not in rb2]
        n_lfree = get_aval(lhs).ndim - len(lc) - len(lb)
        out_dim = len(lb) + n_lfree + rfree.index(rd)
    out = dot_general_p.bind(
        lhs, rhs, dimension_numbers=dn, preferred_element_type=preferred_element_type
    )
    return out, out_dim


batch_rules[dot_general_p] = _dot_general_batch


def _conv_batch(axis_size, args, dims, **params):
    lhs, rhs = args
    ld, rd = dims
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    conv = conv_general_dilated_p.bind
    if axis_size == 0:
        # Groups cannot absorb an empty batch; the result is empty anyway.
        la = get_aval(lhs)
        ra = get_aval(rhs)
        lshape = la.shape if ld is None else la.shape[:ld] + la.shape[ld + 1 :]
        rshape = ra.shape if rd is None else ra.shape[:rd] + ra.shape[rd + 1 :]
        out = conv_general_dilated_p.abstract_eval(
            ShapedArray(lshape, la.dtype), ShapedArray(rshape, ra.dtype), **params
        )
        return lax.full((0, *out.shape), 0, out.dtype), 0
    if ld is not None and rd is not None:
        if bg > 1:
            new_lhs = reshape_axis_into(ld, 0, lhs)
            params = {**params, "batch_group_count": bg * axis_size}
        else:
            new_lhs = reshape_axis_into(ld, 1, lhs)
            params = {**params, "feature_group_count": fg * axis_size}
        out = conv(new_lhs, reshape_axis_into(rd, 0, rhs), **params)
        return reshape_axis_out_of(1, axis_size, out), 1
    if ld is not None:
        if bg == 1:
            out = conv(reshape_axis_into(ld, 0, lhs), rhs, **params)
            return reshape_axis_out_of(0, axis_size, out), 0
        # Batch groups must stay outermost in N: (bg, N/bg) with the vmap axis inside.
        new_lhs = reshape_axis_out_of(int(ld <= 0), bg, lhs)
        new_lhs = reshape_axis_into(ld + int(0 < ld), 1, new_lhs)
        new_lhs = reshape_axis_into(0, 0, new_lhs)
        out = conv(new_lhs, rhs, **params)
        return reshape_axis_out_of(0, axis_size, out), 0
    if fg == 1 and bg == 1:
        out = conv(lhs, reshape_axis_into(rd, 0, rhs), **params)
        return reshape_axis_out_of(1, axis_size, out), 1
    # Groups must stay outermost in O: (groups, vmap, O/groups), and the same on the output.
    groups = max(fg, bg)
    new_rhs = reshape_axis_out_of(int(rd <= 0), groups, rhs)
    new_rhs = reshape_axis_into(rd + int(0 < rd), 1, new_rhs)
    new_rhs = reshape_axis_into(0, 0, new_rhs)
    out = conv(lhs, new_rhs, **params)
    out = reshape_axis_out_of(1, groups, out)
    out = reshape_axis_out_of(2, axis_size, out)
    return reshape_axis_into(1, 2, out), 1


batch_rules[conv_general_dilated_p] = _conv_batch


def _insert(t, i, v):
    return (*t[:i], v, *t[i:])


def _reduce_window_batch(
    prim,
    axis_size,
    args,
    dims,
    *,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    (x,), (d,) = args, dims
    out = prim.bind(
        x,
        window_dimensions=_insert(window_dimensions, d, 1),
        window_strides=_insert(window_strides, d, 1),
        padding=_insert(padding, d, (0, 0)),
        base_dilation=_insert(base_dilation, d, 1),
        window_dilation=_insert(window_dilation, d, 1),
    )
    return out, d


batch_rules[reduce_window_sum_p] = partial(_reduce_window_batch, reduce_window_sum_p)
batch_rules[reduce_window_max_p] = partial(_reduce_window_batch, reduce_window_max_p)
batch_rules[reduce_window_min_p] = partial(_reduce_window_batch, reduce_window_min_p)
