"""jvp and transpose rules of the reduce, scan and sort primitives.

Choices worth knowing:
- ``reduce_max``/``reduce_min``: the tangent is averaged over the positions that tie
  for the extreme (JAX's convention), so it is a valid subgradient.
- ``reduce_prod``: each element's partial is the product of the *others*, built from an
  exclusive forward and an exclusive backward ``cumprod`` (a ``pad`` shifts each by one),
  so zeros need no division. Several axes are reduced one at a time (the chain rule).
- ``cumprod``: the tangent is the scan of the pairs ``(product, tangent)`` under
  ``(p1, t1) . (p2, t2) = (p1 p2, t1 p2 + p1 t2)``, as a Hillis-Steele scan of
  ``log2(n)`` shift-and-combine steps. No division, exact at zeros, linear in the
  tangent (only ``mul`` by primal values, ``add`` and ``pad``), so it transposes.
- ``cummax``/``cummin``: the tangent of the element holding the running extreme (the
  last such element on ties), picked with ``gather``.
- ``sort``: the tangents ride along as extra non-key operands of a second sort. The
  primal result comes from its own sort so that linearize keeps it out of the linear
  graph. Its transpose sorts the cotangents by the sorting permutation (the inverse).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_reduce as r
from ..ops import lax
from .ad import (
    Zero,
    defjvp_zero,
    deflinear,
    instantiate,
    is_undefined_primal,
    jvp_rules,
    transpose_rules,
)


def _kept_dims(ndim: int, axes) -> tuple:
    return tuple(i for i in range(ndim) if i not in axes)


def _scalar(value, dtype):
    # A 0-d array, not a numpy scalar: np.float64 subclasses float, and wrappers that
    # test isinstance(x, float) would re-type it as a weak Python float.
    return np.asarray(value, dtype=dtype)


def _iota(shape, axis: int, dtype=np.int64):
    """Positions along ``axis``, shaped to broadcast against ``shape`` (a constant)."""
    bshape = [1] * len(shape)
    bshape[axis] = shape[axis]
    return np.arange(shape[axis], dtype=dtype).reshape(bshape)


def _shift(x, s: int, axis: int, reverse: bool, fill):
    """``x`` moved ``s`` places along ``axis`` (toward the end, or the start if
    ``reverse``), the vacated places set to ``fill``; the shape is unchanged."""
    aval = get_aval(x)
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (-s, s, 0) if reverse else (s, -s, 0)
    return lax.pad(x, _scalar(fill, aval.dtype), tuple(config))


# ------------------------------------------------------------------- reduce_sum


def _reduce_sum_transpose(ct, x, *, axes):
    return [lax.broadcast_in_dim(ct, x.shape, _kept_dims(len(x.shape), axes))]


deflinear(r.reduce_sum_p, _reduce_sum_transpose)


# ------------------------------------------------------------------ reduce_prod


def _prod_along_jvp(x, t, axis: int):
    """The tangent of ``reduce_prod(x, (axis,))``: sum of t times the product of the others."""
    before = _shift(lax.cumprod(x, axis), 1, axis, False, 1)
    after = _shift(lax.cumprod(x, axis, reverse=True), 1, axis, True, 1)
    others = lax.mul(before, after)
    return lax.reduce_sum(lax.mul(others, t), (axis,))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = r.reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero:
        return ans, Zero.like(ans)
    # Highest axis first, so the lower axes keep their numbers.
    for axis in reversed(axes):
        x, t = r.reduce_prod_p.bind(x, axes=(axis,)), _prod_along_jvp(x, t, axis)
    return ans, t


jvp_rules[r.reduce_prod_p] = _reduce_prod_jvp


# -------------------------------------------------------------- reduce_max/min


def _reduce_chooser_jvp(prim, primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = prim.bind(x, axes=axes)
    aval = get_aval(x)
    at_extreme = lax.eq(x, lax.broadcast_in_dim(ans, aval.shape, _kept_dims(aval.ndim, axes)))
    zero, one = _scalar(0, aval.dtype), _scalar(1, aval.dtype)
    weights = lax.select_n(at_extreme, zero, one)
    # max(count, 1): an empty axis (or NaN) has no position to take the tangent from.
    count = lax.max(lax.reduce_sum(weights, axes), one)
    tout = lax.div(lax.reduce_sum(lax.mul(instantiate(t), weights), axes), count)
    return ans, tout


jvp_rules[r.reduce_max_p] = partial(_reduce_chooser_jvp, r.reduce_max_p)
jvp_rules[r.reduce_min_p] = partial(_reduce_chooser_jvp, r.reduce_min_p)


# ------------------------------------------------ non-differentiable outputs

defjvp_zero(r.reduce_and_p)
defjvp_zero(r.reduce_or_p)
defjvp_zero(r.argmax_p)
defjvp_zero(r.argmin_p)


# ------------------------------------------------------------------------ scans


def _cumsum_transpose(ct, x, *, axis, reverse):
    return [lax.cumsum(instantiate(ct), axis, reverse=not reverse)]


deflinear(r.cumsum_p, _cumsum_transpose)


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = r.cumprod_p.bind(x, axis=axis, reverse=reverse)
    # Hillis-Steele: after the step with shift s, place i holds the pair of the window
    # of 2s places ending at i (starting at i when reverse).
    p, d = x, instantiate(t)
    n, s = get_aval(x).shape[axis], 1
    while s < n:
        p_prev = _shift(p, s, axis, reverse, 1)
        d_prev = _shift(d, s, axis, reverse, 0)
        d = lax.add(lax.mul(p_prev, d), lax.mul(d_prev, p))
        p = lax.mul(p_prev, p)
        s *= 2
    return out, d


jvp_rules[r.cumprod_p] = _cumprod_jvp


def _cumchooser_jvp(prim, primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = prim.bind(x, axis=axis, reverse=reverse)
    aval = get_aval(x)
    n = aval.shape[axis]
    pos = _iota(aval.shape, axis)
    # Where x equals the running extreme it is the (new or tied) extreme; the running
    # index of the latest such place (the earliest, scanning from the end) is the
    # element whose tangent the output carries.
    at_extreme = lax.eq(x, out)
    if reverse:
        idx = lax.cummin(lax.select_n(at_extreme, _scalar(n - 1, pos.dtype), pos), axis, True)
    else:
        idx = lax.cummax(lax.select_n(at_extreme, _scalar(0, pos.dtype), pos), axis)
    indices = [idx if i == axis else _iota(aval.shape, i) for i in range(aval.ndim)]
    tout = lax.gather(instantiate(t), indices, tuple(range(aval.ndim)))
    if dt.is_float(aval.dtype):
        # A NaN output has no extreme to take the tangent from (x == out never holds
        # there, so idx still names the element before the NaN): zero, as JAX's
        # cummax gives and as reduce_max does here.
        keep = lax.select_n(lax.ne(out, out), _scalar(1, aval.dtype), _scalar(0, aval.dtype))
        tout = lax.mul(tout, keep)
    return out, tout


jvp_rules[r.cummax_p] = partial(_cumchooser_jvp, r.cummax_p)
jvp_rules[r.cummin_p] = partial(_cumchooser_jvp, r.cummin_p)


# ------------------------------------------------------------------------- sort


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = r.sort_p.bind(*primals, **params)
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    touts = [Zero.like(o) for o in outs]
    if live:
        moved = r.sort_p.bind(*primals, *(tangents[i] for i in live), **params)
        for i, tout in zip(live, moved[len(primals) :]):
            touts[i] = tout
    return outs, touts


jvp_rules[r.sort_p] = _sort_jvp


def _sort_transpose(cts, *args, dimension, is_stable, num_keys):
    keys = args[:num_keys]
    if any(is_undefined_primal(k) for k in keys):
        raise NotImplementedError("sort: transposing with respect to a sort key is not linear")
    shape = get_aval(keys[0]).shape
    pos = lax.broadcast_in_dim(_iota(shape, dimension).reshape(-1), shape, (dimension,))
    perm = r.sort_p.bind(*keys, pos, dimension=dimension, is_stable=True, num_keys=num_keys)[-1]
    linear = [i for i, a in enumerate(args) if is_undefined_primal(a)]
    cts_linear = [instantiate(cts[i]) for i in linear]
    # Sorting by the permutation undoes it.
    back = r.sort_p.bind(perm, *cts_linear, dimension=dimension, is_stable=True, num_keys=1)[1:]
    out = [None] * len(args)
    for i, c in zip(linear, back):
        out[i] = c
    return out


transpose_rules[r.sort_p] = _sort_transpose
