"""CPU (numpy) impls of the reduce, scan and sort primitives.

Dtypes are kept exact: numpy promotes small and 32-bit integer sums to int64, so every
accumulating call passes ``dtype=``.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_reduce as r
from ._device import cpu_impls


def _identity_low(dtype):
    """The identity of max: -inf for floats, the smallest value for ints, False for bools."""
    if dtype == dt.bool_:
        return False
    if dt.is_integer(dtype):
        return np.iinfo(dtype).min
    return -np.inf


def _identity_high(dtype):
    if dtype == dt.bool_:
        return True
    if dt.is_integer(dtype):
        return np.iinfo(dtype).max
    return np.inf


def _acc(dtype):
    """The accumulator of a sum or product: float32 for float16 and bfloat16, which
    round once at the end (as the compiled kernels do, and XLA and PyTorch on the CPU;
    bfloat16's numpy loop would round after every addition), else the dtype itself."""
    return dt.float32 if dt.is_float(dtype) and dtype.itemsize == 2 else dtype


def _reduce_sum(x, *, axes):
    return np.sum(x, axis=axes, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)


cpu_impls[r.reduce_sum_p] = _reduce_sum


def _reduce_prod(x, *, axes):
    return np.prod(x, axis=axes, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)


cpu_impls[r.reduce_prod_p] = _reduce_prod


def _signed_zero(res, x, axes, positive: bool):
    """``res`` with each zero result signed as the kernels (and XLA) order zeros, -0 below
    +0: a max is +0 when any +0 was reduced, a min -0 when any -0 was (numpy's reduce
    keeps whichever zero its loop met first)."""
    if not dt.is_float(res.dtype) or not np.any(res == 0):
        return res
    hit = np.any((x == 0) & (np.signbit(x) != positive), axis=axes)
    zero = np.zeros((), res.dtype)
    return np.where(res == 0, np.where(hit == positive, zero, -zero), res)


def _reduce_max(x, *, axes):
    # np.maximum propagates NaN; `initial` gives the identity for empty axes.
    res = np.maximum.reduce(x, axis=axes, initial=_identity_low(x.dtype))
    return _signed_zero(res, x, axes, True)


cpu_impls[r.reduce_max_p] = _reduce_max


def _reduce_min(x, *, axes):
    res = np.minimum.reduce(x, axis=axes, initial=_identity_high(x.dtype))
    return _signed_zero(res, x, axes, False)


cpu_impls[r.reduce_min_p] = _reduce_min


def _reduce_and(x, *, axes):
    return np.all(x, axis=axes)


cpu_impls[r.reduce_and_p] = _reduce_and


def _reduce_or(x, *, axes):
    return np.any(x, axis=axes)


cpu_impls[r.reduce_or_p] = _reduce_or


def _argmax(x, *, axes, index_dtype):
    # numpy returns the first NaN, which is the documented semantics.
    return np.argmax(x, axis=axes[0]).astype(index_dtype)


cpu_impls[r.argmax_p] = _argmax


def _argmin(x, *, axes, index_dtype):
    return np.argmin(x, axis=axes[0]).astype(index_dtype)


cpu_impls[r.argmin_p] = _argmin


def scan_impls(xp) -> dict:
    """``cumsum`` and ``cumprod`` over array module ``xp`` (numpy, CuPy), in the
    operand's dtype.

    >>> scan_impls(np)[r.cumsum_p](np.arange(4), axis=0, reverse=True).tolist()
    [6, 6, 5, 3]
    """

    def rule(accumulate):
        def impl(x, *, axis, reverse):
            if reverse:
                return xp.flip(accumulate(xp.flip(x, axis), axis=axis, dtype=x.dtype), axis)
            return accumulate(x, axis=axis, dtype=x.dtype)

        return impl

    return {r.cumsum_p: rule(xp.cumsum), r.cumprod_p: rule(xp.cumprod)}


def cum_extreme_impls(xp) -> dict:
    """``cummax`` and ``cummin`` over array module ``xp`` (CuPy has no
    ``maximum.accumulate``): log2(n) doubling steps whose combine is numpy's, by
    selection only, hence exact: the first NaN wins, of equal values the later one.

    >>> cum_extreme_impls(np)[r.cummax_p](np.array([1.0, 3.0, 2.0]), axis=0, reverse=False)
    array([1., 3., 3.])
    """

    def rule(greater):
        def combine(a, b):  # a before b
            take_a = greater(a, b)
            if a.dtype.kind == "f":
                take_a = take_a | xp.isnan(a)
            return xp.where(take_a, a, b)

        def impl(x, *, axis, reverse):
            y = xp.moveaxis(xp.flip(x, axis) if reverse else x, axis, 0)
            n, step = y.shape[0], 1
            while step < n:
                y = xp.concatenate([y[:step], combine(y[: n - step], y[step:])])
                step *= 2
            y = xp.moveaxis(y, 0, axis)
            return xp.ascontiguousarray(xp.flip(y, axis) if reverse else y)

        return impl

    return {r.cummax_p: rule(xp.greater), r.cummin_p: rule(xp.less)}


def _scan_impl(accumulate, x, *, axis, reverse):
    if reverse:
        return np.flip(accumulate(np.flip(x, axis), axis), axis)
    return accumulate(x, axis)


def _cummax(x, axis):
    return _exact_half(np.maximum.accumulate, x, axis)


def _cummin(x, axis):
    return _exact_half(np.minimum.accumulate, x, axis)


def _exact_half(fn, x, axis):
    """``fn`` (a max or min) on float16 through float32, exactly: of two equal values
    (+0 and -0) numpy's float16 loops keep the first, its float32 ones and the kernels
    the second."""
    if x.dtype == np.float16:
        return fn(x.astype(np.float32), axis=axis).astype(np.float16)
    return fn(x, axis=axis)


def _scan_rule(accumulate):
    def impl(x, *, axis, reverse):
        return _scan_impl(accumulate, x, axis=axis, reverse=reverse)

    return impl


cpu_impls.update(scan_impls(np))
cpu_impls[r.cummax_p] = _scan_rule(_cummax)
cpu_impls[r.cummin_p] = _scan_rule(_cummin)


def sort_permutation(keys, axis: int, xp=np):
    """The stable lexicographic sorting permutation of ``keys`` along ``axis``, NaNs last,
    over array module ``xp`` (numpy; CuPy, whose float keys are made +0.0 and positive
    NaNs first: its radix sort orders the bits).

    Successive stable argsorts from the least significant key, which works for every
    dtype numpy can argsort (bfloat16 included, unlike ``np.lexsort``).

    >>> sort_permutation([np.array([1.0, 0.0, 1.0]), np.array([2, 5, 1])], 0).tolist()
    [1, 2, 0]
    """
    perm = None
    for k in reversed(keys):
        k = xp.asarray(k)
        if dt.is_float(k.dtype) and k.dtype.kind != "f":
            # ml_dtypes' bfloat16 sorts by plain comparisons, which leave NaNs where they
            # fall; float32 holds every bfloat16 exactly and sorts NaNs last.
            k = k.astype(np.float32)
        if xp is not np and k.dtype.kind == "f":
            # CuPy radix-sorts float bits: -0.0 before +0.0 and a negative NaN first.
            # One +0.0 and one positive NaN make numpy's order (zeros equal, NaNs last).
            k = xp.where(xp.isnan(k), xp.full((), np.nan, k.dtype), k + k.dtype.type(0))
        if perm is None:
            perm = xp.argsort(k, axis=axis, kind="stable")
        else:
            sub = xp.argsort(xp.take_along_axis(k, perm, axis), axis=axis, kind="stable")
            perm = xp.take_along_axis(perm, sub, axis)
    return perm


def sort_impl(xp):
    """The ``sort`` impl over array module ``xp``: every operand ordered by the first
    ``num_keys``.

    >>> keys, vals = sort_impl(np)(np.array([2.0, 1.0]), np.array([7, 8]), dimension=0,
    ...                            is_stable=True, num_keys=1)
    >>> keys.tolist(), vals.tolist()
    ([1.0, 2.0], [8, 7])
    """

    def sort(*operands, dimension, is_stable, num_keys):
        perm = sort_permutation(operands[:num_keys], dimension, xp)
        return [xp.take_along_axis(xp.asarray(x), perm, dimension) for x in operands]

    return sort


cpu_impls[r.sort_p] = sort_impl(np)
