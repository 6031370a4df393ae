"""Linalg primitives and their abstract-eval rules (see docs/primitives.md).

``dot_general`` is lax's; ``conv_general_dilated`` is lax's with PyTorch's layouts fixed
(lhs ``(N, C, *spatial)``, rhs ``(O, C/groups, *window)``, out ``(N, O, *out_spatial)``);
``reduce_window_{sum,max,min}`` are lax's over every dim. Params are normalized by the
wrappers at the bottom (tuples, dilations of 1 instead of None), so the rules only check.
"""

from __future__ import annotations

from functools import partial

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules

__all__ = [
    "dot_general_p", "conv_general_dilated_p", "reduce_window_sum_p", "reduce_window_max_p",
    "reduce_window_min_p", "dot_general", "conv_general_dilated", "reduce_window_sum",
    "reduce_window_max", "reduce_window_min", "dilate_shape", "conv_out_spatial",
]  # fmt: skip


def dilate_shape(shape, dilation) -> tuple:
    """Sizes after inserting ``d - 1`` zeros between neighbours (0 stays 0).

    >>> dilate_shape((3, 0, 1), (2, 2, 5))
    (5, 0, 1)
    """
    return tuple(0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation))


def _window_out(name, in_shape, window, strides, padding, base_dilation, window_dilation):
    """Output sizes of a strided, dilated window sweep over a padded, dilated input."""
    padded = [s + lo + hi for s, (lo, hi) in zip(dilate_shape(in_shape, base_dilation), padding)]
    if any(p < 0 for p in padded):
        raise ValueError(
            f"{name}: padding {tuple(padding)} crops more than the (dilated) input of sizes "
            f"{tuple(in_shape)} holds"
        )
    win = dilate_shape(window, window_dilation)
    # An empty sweep (window longer than the input) is an empty result, as in lax.
    return tuple(max(0, (p - w) // s + 1) for p, w, s in zip(padded, win, strides))


def conv_out_spatial(in_spatial, window, window_strides, padding, lhs_dilation, rhs_dilation):
    """Output spatial sizes of ``conv_general_dilated``.

    >>> conv_out_spatial((5,), (3,), (2,), ((1, 1),), (1,), (1,))
    (3,)
    """
    return _window_out(
        "conv_general_dilated",
        in_spatial,
        window,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
    )


def _check_tuple(name, what, value, n, minimum):
    if len(value) != n:
        raise ValueError(
            f"{name}: {what} {tuple(value)} must have {n} entries, one per "
            f"{'spatial ' if name.startswith('conv') else ''}dim"
        )
    if any(v < minimum for v in value):
        raise ValueError(f"{name}: {what} {tuple(value)} must be >= {minimum}")


def _check_padding(name, padding, n):
    if len(padding) != n or any(len(p) != 2 for p in padding):
        raise ValueError(
            f"{name}: padding {tuple(padding)} must be one (lo, hi) pair per "
            f"{'spatial ' if name.startswith('conv') else ''}dim ({n} pairs)"
        )


# ---------------------------------------------------------------------- dot_general
dot_general_p = Primitive("dot_general")


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, preferred_element_type):
    name = "dot_general"
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = tuple(lhs.shape), tuple(rhs.shape)
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"{name}: operands must share one dtype, got lhs {lhs.dtype} and rhs {rhs.dtype}"
        )
    for side, shape, dims in (("lhs", ls, lc + lb), ("rhs", rs, rc + rb)):
        if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
            raise ValueError(
                f"{name}: {side} contracting and batch dims {tuple(dims)} must be distinct dims "
                f"of the {side} shape {shape}"
            )
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(
            f"{name}: lhs and rhs must name as many contracting dims ({tuple(lc)} vs "
            f"{tuple(rc)}) and batch dims ({tuple(lb)} vs {tuple(rb)})"
        )
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        lsz, rsz = tuple(ls[d] for d in ld), tuple(rs[d] for d in rd)
        if lsz != rsz:
            raise ValueError(
                f"{name}: {what} dims have different sizes: lhs shape {ls} dims {tuple(ld)} "
                f"(sizes {lsz}) vs rhs shape {rs} dims {tuple(rd)} (sizes {rsz})"
            )
    lfree = [s for i, s in enumerate(ls) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(rs) if i not in rc and i not in rb]
    shape = tuple(ls[d] for d in lb) + tuple(lfree) + tuple(rfree)
    return ShapedArray(shape, preferred_element_type or lhs.dtype)


abstract_eval_rules[dot_general_p] = _dot_general_abstract


# ---------------------------------------------------------------------- conv_general_dilated
conv_general_dilated_p = Primitive("conv_general_dilated")


def _conv_abstract(
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
    name = "conv_general_dilated"
    ls, rs = tuple(lhs.shape), tuple(rhs.shape)
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"{name}: lhs and rhs must share one dtype, got {lhs.dtype} and {rhs.dtype}"
        )
    if lhs.dtype == dt.bool_:
        raise TypeError(f"{name}: expected a numeric dtype, got {lhs.dtype}")
    if len(ls) < 2 or len(rs) != len(ls):
        raise ValueError(
            f"{name}: lhs (N, C, *spatial) and rhs (O, C/groups, *window) must have the same "
            f"rank >= 2, got lhs shape {ls} and rhs shape {rs}"
        )
    nsp = len(ls) - 2
    _check_tuple(name, "window_strides", window_strides, nsp, 1)
    _check_tuple(name, "lhs_dilation", lhs_dilation, nsp, 1)
    _check_tuple(name, "rhs_dilation", rhs_dilation, nsp, 1)
    _check_padding(name, padding, nsp)
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1 or (g > 1 and b > 1):
        raise ValueError(
            f"{name}: feature_group_count {g} and batch_group_count {b} must be "
            ">= 1 and at most one of them > 1"
        )
    n, c = ls[:2]
    o, i = rs[:2]
    if c != i * g:
        raise ValueError(
            f"{name}: lhs channels {c} (lhs shape {ls}) must equal rhs input channels {i} "
            f"(rhs shape {rs}) times feature_group_count {g}"
        )
    if o % g or o % b:
        raise ValueError(
            f"{name}: rhs output channels {o} (rhs shape {rs}) must be divisible "
            f"by feature_group_count {g} and batch_group_count {b}"
        )
    if n % b:
        raise ValueError(
            f"{name}: lhs batch size {n} (lhs shape {ls}) must be divisible by "
            f"batch_group_count {b}"
        )
    out = conv_out_spatial(ls[2:], rs[2:], window_strides, padding, lhs_dilation, rhs_dilation)
    return ShapedArray((n // b, o, *out), lhs.dtype)


abstract_eval_rules[conv_general_dilated_p] = _conv_abstract


# ---------------------------------------------------------------------- reduce_window
reduce_window_sum_p = Primitive("reduce_window_sum")
reduce_window_max_p = Primitive("reduce_window_max")
reduce_window_min_p = Primitive("reduce_window_min")


def _reduce_window_abstract(
    name, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    if len(window_dimensions) != len(x.shape):
        raise ValueError(
            f"{name}: window_dimensions {tuple(window_dimensions)} must have one entry per dim "
            f"of the operand (rank {len(x.shape)}, shape {tuple(x.shape)})"
        )
    nd = len(x.shape)
    _check_tuple(name, "window_dimensions", window_dimensions, nd, 1)
    _check_tuple(name, "window_strides", window_strides, nd, 1)
    _check_tuple(name, "base_dilation", base_dilation, nd, 1)
    _check_tuple(name, "window_dilation", window_dilation, nd, 1)
    _check_padding(name, padding, nd)
    if name == "reduce_window_sum" and x.dtype == dt.bool_:
        raise TypeError(f"{name}: expected a numeric dtype, got {x.dtype}")
    out = _window_out(
        name, x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return ShapedArray(out, x.dtype)


abstract_eval_rules[reduce_window_sum_p] = partial(_reduce_window_abstract, "reduce_window_sum")
abstract_eval_rules[reduce_window_max_p] = partial(_reduce_window_abstract, "reduce_window_max")
abstract_eval_rules[reduce_window_min_p] = partial(_reduce_window_abstract, "reduce_window_min")


# --------------------------------------------------------------------- lax-style wrappers


def _ints(x):
    return tuple(int(v) for v in x)


def _pairs(padding):
    return tuple((int(lo), int(hi)) for lo, hi in padding)


def dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    """lax.dot_general: contract ``lhs`` and ``rhs`` over the given dims.

    ``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; the
    output dims are the batch dims, then lhs's free dims, then rhs's.

    >>> import numpy as np
    >>> a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    >>> dot_general(a, b, (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb)))
    pet = None if preferred_element_type is None else dt.canonicalize(preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, preferred_element_type=pet)


def conv_general_dilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    feature_group_count=1,
    batch_group_count=1,
):
    """lax.conv_general_dilated with PyTorch's layouts: lhs ``(N, C, *spatial)``, rhs
    ``(O, C/feature_group_count, *window)``, output ``(N/batch_group_count, O, *out)``.

    A cross-correlation (no kernel flip); ``padding`` is one ``(lo, hi)`` per spatial dim.

    >>> import numpy as np
    >>> x, w = np.ones((1, 2, 5), np.float32), np.ones((4, 2, 3), np.float32)
    >>> conv_general_dilated(x, w, (1,), ((1, 1),)).shape
    (1, 4, 5)
    """
    nsp = len(window_strides)
    return conv_general_dilated_p.bind(
        lhs, rhs,
        window_strides=_ints(window_strides),
        padding=_pairs(padding),
        lhs_dilation=_ints(lhs_dilation) if lhs_dilation is not None else (1,) * nsp,
        rhs_dilation=_ints(rhs_dilation) if rhs_dilation is not None else (1,) * nsp,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count),
    )  # fmt: skip


def _reduce_window(
    p, x, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
):
    nd = len(window_dimensions)
    return p.bind(
        x,
        window_dimensions=_ints(window_dimensions),
        window_strides=_ints(window_strides),
        padding=_pairs(padding),
        base_dilation=_ints(base_dilation) if base_dilation is not None else (1,) * nd,
        window_dilation=_ints(window_dilation) if window_dilation is not None else (1,) * nd,
    )


def reduce_window_sum(
    x, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
):
    """Sum over sliding windows of ``x`` (lax.reduce_window with ``add``; pads with 0).

    >>> import numpy as np
    >>> reduce_window_sum(np.ones((4,), np.float32), (2,), (2,), ((0, 0),)).shape
    (2,)
    """
    return _reduce_window(
        reduce_window_sum_p,
        x,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def reduce_window_max(
    x, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
):
    """Max over sliding windows of ``x`` (pads with -inf, or the dtype's minimum).

    >>> import numpy as np
    >>> reduce_window_max(np.arange(4.0), (2,), (1,), ((1, 0),)).shape
    (4,)
    """
    return _reduce_window(
        reduce_window_max_p,
        x,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def reduce_window_min(
    x, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
):
    """Min over sliding windows of ``x`` (pads with +inf, or the dtype's maximum).

    >>> import numpy as np
    >>> reduce_window_min(np.arange(6.0).reshape(2, 3), (1, 2), (1, 2), ((0, 0), (0, 1))).shape
    (2, 2)
    """
    return _reduce_window(
        reduce_window_min_p,
        x,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
