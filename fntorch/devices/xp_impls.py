"""Impls written once over an array module ``xp``, for the CPU (numpy) and the CUDA
device (CuPy): ``div``/``rem``, ``integer_pow``, the shifts, the complex parts, ``pad``
and the dynamic slices. Each ``*_impls(xp)`` returns ``{primitive: impl}``; the CPU registers
``xp_impls(numpy)`` at import and ``cuda_impls`` builds ``xp_impls(cupy)``.

What they must keep to run on both: only functions numpy and CuPy share, no numpy
array mixed into a CuPy call (constants are made with ``xp.full``/``xp.zeros``, which on
a GPU are fill kernels, not host copies), and a host read only where the value is a
shape (the dynamic slices' clamped starts).

>>> import numpy as np
>>> from fntorch.ops import _prims_elementwise as ew
>>> xp_impls(np)[ew.integer_pow_p](np.array([3.0], np.float32), y=-2)
array([0.11111111], dtype=float32)
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_elementwise as ew
from ..ops import _prims_structural as ps


def quiet(xp):
    """numpy's warnings off (overflow, invalid values); CuPy never warns.

    >>> with quiet(np):
    ...     _ = np.float32(1e38) * np.float32(10)
    """
    return np.errstate(all="ignore") if xp is np else contextlib.nullcontext()


def elementwise_impls(xp) -> dict:
    """``integer_pow``, the three shifts and the complex parts over ``xp``.

    >>> elementwise_impls(np)[ew.shift_left_p](np.int8([1, 1]), np.int8([3, 8])).tolist()
    [8, 0]
    """

    def integer_pow(x, *, y):
        # Square and multiply in the compiled kernel's order (``rules._integer_pow``) and
        # XLA's: integers wrap like the products they stand for; floats round at each
        # product (np.power rounds once, so eager and jit differed in the last bit).
        # float16/bfloat16 are computed in float32 and rounded once, as the kernels do:
        # 300**2 overflows float16, yet 300**-2 does not underflow.
        x = xp.asarray(x)
        half = x.dtype.kind not in "iu" and x.dtype.itemsize == 2
        w = x.astype(np.float32) if half else x
        out, base, n = None, w, abs(y)
        with quiet(xp):
            while n:
                if n & 1:
                    out = base if out is None else xp.multiply(out, base)
                n >>= 1
                if n:
                    base = xp.multiply(base, base)
            out = xp.ones_like(w) if out is None else out
            if y < 0:
                out = xp.reciprocal(out)
        return out.astype(x.dtype, copy=False)

    def in_range(x, y):
        return (y >= 0) & (y < x.dtype.itemsize * 8)

    def shift_left(x, y):
        ok = in_range(x, y)
        s = xp.where(ok, y, xp.zeros((), y.dtype))
        return xp.where(ok, xp.left_shift(x, s), xp.zeros((), x.dtype))

    def shift_right_logical(x, y):
        ok = in_range(x, y)
        u = np.dtype(f"u{x.dtype.itemsize}")
        s = xp.where(ok, y, xp.zeros((), y.dtype)).astype(u)
        r = xp.right_shift(xp.asarray(x).view(u), s)
        return xp.where(ok, xp.asarray(r).view(x.dtype), xp.zeros((), x.dtype))

    def shift_right_arithmetic(x, y):
        # Out of range shifts by bits - 1: every bit becomes the sign bit.
        ok = in_range(x, y)
        i = np.dtype(f"i{x.dtype.itemsize}")
        s = xp.where(ok, y, xp.full((), x.dtype.itemsize * 8 - 1, y.dtype)).astype(i)
        return xp.asarray(xp.right_shift(xp.asarray(x).view(i), s)).view(x.dtype)

    def imag(x):
        # numpy's imag of a real array is a read-only zero view; a fresh zeros keeps
        # buffers plain arrays.
        return xp.imag(x) if xp.iscomplexobj(x) else xp.zeros_like(x)

    def complex_(x, y):
        dtype = dt.complex_dtype(xp.asarray(x).dtype)
        out = xp.empty(xp.broadcast_shapes(xp.shape(x), xp.shape(y)), dtype)
        out.real = x  # parts set, not re + 1j * im: inf * 1j would make NaNs
        out.imag = y
        return out

    return {
        ew.integer_pow_p: integer_pow,
        ew.shift_left_p: shift_left,
        ew.shift_right_logical_p: shift_right_logical,
        ew.shift_right_arithmetic_p: shift_right_arithmetic,
        ew.real_p: xp.real,
        ew.imag_p: imag,
        ew.conj_p: xp.conjugate,
        ew.complex_p: complex_,
    }


def division_impls(xp) -> dict:
    """``div`` and ``rem`` over ``xp``: numpy's (CuPy's) float forms, and for integers
    XLA's results where C's are undefined: ``x / 0`` has every bit set (-1; the max for
    unsigned), ``x % 0 == x``; ``INT_MIN / -1 == INT_MIN`` and ``INT_MIN % -1 == 0``.
    Integer division truncates and the remainder takes the dividend's sign. Those cases
    divide by 1 instead, so no device ever executes them.

    >>> d = division_impls(np)
    >>> x, y = np.array([7, -7, 5, -128], np.int8), np.array([2, 2, 0, -1], np.int8)
    >>> d[ew.div_p](x, y).tolist(), d[ew.rem_p](x, y).tolist()
    ([3, -3, -1, -128], [1, -1, 5, 0])
    """

    def safe_divisor(x, y):
        undefined = y == 0
        if x.dtype.kind == "i":
            undefined = undefined | ((x == np.iinfo(x.dtype).min) & (y == -1))
        return y == 0, xp.where(undefined, xp.ones((), y.dtype), y)

    def int_div(x, y):
        zero, ys = safe_divisor(x, y)
        with quiet(xp):
            q = xp.floor_divide(x, ys)
            # floor -> trunc: step toward zero where the exact quotient was negative.
            fix = (xp.multiply(q, ys) != x) & ((x < 0) != (ys < 0))
            q = xp.where(fix, q + xp.ones((), q.dtype), q)
        return xp.where(zero, ~xp.zeros((), q.dtype), q)

    def int_rem(x, y):
        zero, ys = safe_divisor(x, y)
        with quiet(xp):
            r = xp.fmod(x, ys)
        return xp.where(zero, x, r)

    def float_or_int(float_fn, int_fn):
        def run(x, y):
            if getattr(x, "dtype", _FLOAT).kind in "iu":  # (a Python float stays weak)
                return int_fn(x, y)
            return float_fn(x, y)

        return run

    return {
        ew.div_p: float_or_int(xp.true_divide, int_div),
        ew.rem_p: float_or_int(xp.fmod, int_rem),
    }


_FLOAT = np.dtype(float)


def _window(shape, starts, sizes):
    # lax semantics: each start is clamped so that the whole window is in bounds.
    out = []
    for n, s, k in zip(shape, starts, sizes):
        s = min(max(int(s), 0), n - k)
        out.append(slice(s, s + k))
    return tuple(out)


def structural_impls(xp) -> dict:
    """``pad``, ``dynamic_slice`` and ``dynamic_update_slice`` over ``xp``.

    >>> structural_impls(np)[ps.dynamic_slice_p](np.arange(5), 9, slice_sizes=(2,)).tolist()
    [3, 4]
    """

    def dynamic_slice(x, *start_indices, slice_sizes):
        x = xp.asarray(x)
        return x[_window(x.shape, start_indices, slice_sizes)]

    def dynamic_update_slice(x, update, *start_indices):
        out = xp.array(x, copy=True)
        update = xp.asarray(update)
        out[_window(out.shape, start_indices, update.shape)] = update
        return out

    def pad(x, padding_value, *, padding_config):
        x = xp.asarray(x)
        # Pad with the non-negative parts (and interior) first, then crop the negative ones.
        grown = [
            ps.pad_output_size(n, max(lo, 0), max(hi, 0), k)
            for n, (lo, hi, k) in zip(x.shape, padding_config)
        ]
        out = xp.empty(grown, dtype=x.dtype)
        out[...] = padding_value  # a 0-d device array stays on the device
        out[
            tuple(
                slice(max(lo, 0), max(lo, 0) + (n - 1) * (k + 1) + 1, k + 1) if n else slice(0, 0)
                for n, (lo, hi, k) in zip(x.shape, padding_config)
            )
        ] = x
        crop = tuple(
            slice(max(-lo, 0), g - max(-hi, 0)) for g, (lo, hi, _) in zip(grown, padding_config)
        )
        return out[crop]

    return {
        ps.dynamic_slice_p: dynamic_slice,
        ps.dynamic_update_slice_p: dynamic_update_slice,
        ps.pad_p: pad,
    }


def xp_impls(xp) -> dict:
    """Every impl of this module over ``xp``.

    >>> ew.div_p in xp_impls(np) and ps.pad_p in xp_impls(np)
    True
    """
    return {**elementwise_impls(xp), **division_impls(xp), **structural_impls(xp)}
