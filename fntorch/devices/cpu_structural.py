"""CPU (numpy) impls of the structural primitives.

Buffers are never mutated, so numpy views (reshape, transpose, slices, broadcast_to's
read-only views) are returned as they are; only `copy` and `dynamic_update_slice`
allocate.
"""

from __future__ import annotations

import functools

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_structural as ps
from ._device import cpu_impls
from .xp_impls import structural_impls


def _convert_element_type(x, *, new_dtype):
    x = np.asarray(x)
    if dt.is_complex(x.dtype) and not dt.is_complex(new_dtype):
        x = x.real  # the real part, as lax (numpy warns and does the same)
    if dt.is_float(x.dtype) and dt.is_integer(new_dtype):
        return float_to_int(x, np.dtype(new_dtype))
    with np.errstate(over="ignore"):  # float64 -> float32 overflows to inf, as it should
        if x.dtype == np.float64 and new_dtype == dt.bfloat16:
            x = _round_to_odd_f32(x)
        return x.astype(new_dtype)


def float_to_int(x, dtype, xp=np):
    """Toward zero, saturating as XLA (and the compiled cast, ``rules._convert``) does:
    NaN -> 0, too large or +inf -> the max, too small or -inf -> the min. numpy's cast
    is C's, undefined there: x86 gives INT_MIN for NaN and wraps narrow types. Over any
    array module ``xp`` (the CUDA device's casts), with no host read but numpy's check
    for the common all-in-range case.

    >>> float_to_int(np.array([np.nan, -np.inf, 1e10, -1.5]), np.dtype(np.int8)).tolist()
    [0, -128, 127, -1]
    """
    # float32 holds every float16/bfloat16 exactly.
    w = x if x.dtype.itemsize >= 4 else x.astype(np.float32)
    below, above, lo, hi = _int_bounds(w.dtype, dtype)
    if xp is np and (w.size == 0 or (below < w.min() and w.max() < above)):  # NaN fails
        return w.astype(dtype)
    inside = (w > below) & (w < above)  # so only values C's cast defines are cast
    out = xp.where(inside, w, xp.zeros((), w.dtype)).astype(dtype)
    out = xp.where(w >= above, hi, out)
    return xp.where(w <= below, lo, out)  # NaN: neither, so the 0 cast above


@functools.cache
def _int_bounds(float_dtype, dtype):
    """Floats ``below``/``above`` which every value that truncates into ``dtype`` lies
    strictly between (both exact, but ``min - 1`` rounds to ``min`` for 32 and 64 bits,
    which only sends ``min`` itself down the slow path), and the int extremes."""
    info, f = np.iinfo(dtype), float_dtype.type
    below = f(info.min) - f(1)
    above = f(2.0 ** (info.bits - (info.min < 0)))
    return below, above, dtype.type(info.min), dtype.type(info.max)


def _round_to_odd_f32(x):
    """float64 -> float32 rounded to odd, so that rounding on to bfloat16 is correct:
    ml_dtypes goes through float32 rounded to nearest, which rounds twice (1 + 2^-8 +
    2^-40 became 1.0). The compiled cast does the same (``rules._round_to_odd_f32``).

    >>> import ml_dtypes
    >>> _round_to_odd_f32(np.array([1 + 2**-8 + 2**-40])).astype(ml_dtypes.bfloat16)
    array([1.00781], dtype=bfloat16)
    """
    t = x.astype(np.float32)
    back = t.astype(np.float64)
    bits = t.view(np.uint32)
    # One step toward zero where float32 rounded away from it, then the last bit set.
    bits = np.where(np.abs(back) > np.abs(x), bits - np.uint32(1), bits)
    odd = (bits | np.uint32(1)).view(np.float32)
    keep = (back == x) | np.isnan(x) | ~(np.abs(back) < 3.4e38)
    return np.where(keep, t, odd)


cpu_impls[ps.convert_element_type_p] = _convert_element_type


def _iota(*, dtype, shape, dimension):
    n = shape[dimension]
    line = np.arange(n, dtype=np.int64).astype(dtype)
    line = line.reshape((1,) * dimension + (n,) + (1,) * (len(shape) - dimension - 1))
    return np.broadcast_to(line, shape)


cpu_impls[ps.iota_p] = _iota


def _broadcast_in_dim(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        order = sorted(range(x.ndim), key=lambda i: broadcast_dimensions[i])
        x = x.transpose(order)
        broadcast_dimensions = sorted(broadcast_dimensions)
    if x.ndim != len(shape):
        expanded = [1] * len(shape)
        for i, d in enumerate(broadcast_dimensions):
            expanded[d] = x.shape[i]
        x = x.reshape(expanded)
    return np.broadcast_to(x, shape)


cpu_impls[ps.broadcast_in_dim_p] = _broadcast_in_dim


def _reshape(x, *, new_sizes):
    return np.reshape(x, new_sizes)


cpu_impls[ps.reshape_p] = _reshape


def _transpose(x, *, permutation):
    return np.transpose(x, permutation)


cpu_impls[ps.transpose_p] = _transpose


def _squeeze(x, *, dimensions):
    return np.squeeze(x, axis=dimensions)


cpu_impls[ps.squeeze_p] = _squeeze


def _expand_dims(x, *, dimensions):
    return np.expand_dims(x, dimensions)


cpu_impls[ps.expand_dims_p] = _expand_dims


def _rev(x, *, dimensions):
    return np.flip(x, dimensions)


cpu_impls[ps.rev_p] = _rev


def _slice(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(map(slice, start_indices, limit_indices, strides))]


cpu_impls[ps.slice_p] = _slice


cpu_impls.update(structural_impls(np))  # pad, dynamic_slice, dynamic_update_slice


def _concatenate(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


cpu_impls[ps.concatenate_p] = _concatenate


def _copy(x):
    return np.array(x, copy=True)


cpu_impls[ps.copy_p] = _copy


def _stop_gradient(x):
    return x


cpu_impls[ps.stop_gradient_p] = _stop_gradient
