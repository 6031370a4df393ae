"""``ft.pad``: numpy's pad, every mode but a callable, as structural primitives (pad,
slices, concatenation, gathers) and reductions for the statistic modes.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor
from . import lax
from ._api_common import cast, is_pyscalar
from ._api_creation import asarray
from ._api_manipulation import (
    _concrete_ints,
    _slice_axis,
    _t,
    astype,
    broadcast_to,
    concat,
    take,
)

__all__ = ["pad"]


def _pad_width(x, pad_width) -> np.ndarray:
    try:
        pw = _concrete_ints(pad_width, "ft.pad (pad_width)")
        if x.ndim == 0:
            return np.zeros((0, 2), np.int64)  # nothing to pad
        pw = np.broadcast_to(pw, (x.ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: pad_width {pad_width!r} does not fit a tensor of shape {tuple(x.shape)}: "
            "expected an int, (before, after), or one (before, after) per dim"
        ) from None
    if (pw < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    return pw


def pad(
    x,
    pad_width,
    mode: str = "constant",
    constant_values=0,
    *,
    stat_length=None,
    end_values=0,
    reflect_type: str = "even",
) -> Tensor:
    """``x`` padded as ``numpy.pad``: ``pad_width`` is an int, ``(before, after)`` or one
    pair per dim; every numpy mode but a callable: ``"constant"``, ``"edge"``,
    ``"linear_ramp"`` (``end_values``), ``"maximum"``, ``"mean"``, ``"median"``,
    ``"minimum"`` (``stat_length``), ``"reflect"``, ``"symmetric"`` (``reflect_type``),
    ``"wrap"``, and ``"empty"`` (zeros, as in JAX).

    >>> import fntorch as ft
    >>> ft.pad(ft.asarray([1, 2]), (1, 2)).tolist()
    [0, 1, 2, 0, 0]
    >>> ft.pad(ft.asarray([1, 2, 3]), 2, mode="reflect").tolist()
    [3, 2, 1, 2, 3, 2, 1]
    """
    x = _t(x)
    pw = _pad_width(x, pad_width)
    if mode == "empty":
        mode, constant_values = "constant", 0
    if mode == "constant":
        cv = constant_values
        if not is_pyscalar(cv) and not isinstance(cv, Tensor):
            cv = np.asarray(cv)
            if cv.ndim:
                try:
                    cvs = np.broadcast_to(cv, (x.ndim, 2))
                except ValueError:
                    raise ValueError(
                        f"pad: constant_values {constant_values!r} does not fit a tensor of "
                        f"shape {tuple(x.shape)}: expected a scalar, (before, after), or one "
                        "(before, after) per dim"
                    ) from None
                for ax in range(x.ndim):
                    for side in (0, 1):
                        cfg = [(0, 0, 0)] * x.ndim
                        cfg[ax] = (int(pw[ax, 0]), 0, 0) if side == 0 else (0, int(pw[ax, 1]), 0)
                        x = lax.pad(x, cast(cvs[ax, side].item(), x.dtype), cfg)
                return x
            cv = cv.item()
        value = cast(cv, x.dtype) if is_pyscalar(cv) else cast(_t(cv), x.dtype)
        return lax.pad(x, value, [(int(lo), int(hi), 0) for lo, hi in pw])
    if mode not in _PAD_MODES:
        raise ValueError(
            f"pad: unsupported mode {mode!r}; expected one of {', '.join(map(repr, _PAD_MODES))}"
        )
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    lengths = _pad_pairs(x, stat_length, "stat_length") if mode in _PAD_STATS else None
    ends = _pad_pairs(x, end_values, "end_values") if mode == "linear_ramp" else None
    for ax in range(x.ndim):
        lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
        if lo == hi == 0:
            continue
        n = x.shape[ax]
        if n == 0:
            raise ValueError(f"pad: cannot pad an empty axis {ax} with mode {mode!r}")
        if mode in _PAD_STATS:
            x = _pad_stat(x, ax, (lo, hi), lengths[ax], mode)
        elif mode == "linear_ramp":
            x = _pad_ramp(x, ax, (lo, hi), ends[ax])
        elif reflect_type == "odd" and mode != "wrap" and n > 1:
            x = _pad_odd(x, ax, lo, hi, mode == "symmetric")
        else:
            # The source index of every output position: numpy.pad of the index vector.
            idx = np.pad(np.arange(n, dtype=np.int64), (lo, hi), mode=mode)
            x = take(x, idx, axis=ax)
    return x


_PAD_STATS = ("maximum", "mean", "median", "minimum")
_PAD_MODES = (
    "constant", "edge", "empty", "linear_ramp", *_PAD_STATS, "reflect", "symmetric", "wrap",
)  # fmt: skip


def _pad_pairs(x, v, what: str) -> list:
    """``stat_length`` or ``end_values`` as one (before, after) pair per dim."""
    if v is None:
        return [(None, None)] * x.ndim
    if what == "stat_length":
        a = _concrete_ints(v, "ft.pad (stat_length)")
        if (a < 0).any():
            raise ValueError(f"pad: stat_length must be non-negative, got {v!r}")
    else:
        a = np.asarray(v)
    try:
        return np.broadcast_to(a, (x.ndim, 2)).tolist()
    except ValueError:
        raise ValueError(
            f"pad: {what} {v!r} does not fit a tensor of shape {tuple(x.shape)}: expected a "
            "scalar, (before, after), or one (before, after) per dim"
        ) from None


def _along(x, axis: int, values):
    """``values`` (one per position) as a tensor broadcasting along ``axis`` of ``x``."""
    shape = [1] * x.ndim
    shape[axis] = -1
    return asarray(np.asarray(values).reshape(shape), device=x.device)


def _pad_stat(x, axis: int, widths, lengths, mode: str):
    """numpy's maximum/mean/median/minimum modes: each side is filled with the statistic
    of the ``stat_length`` entries nearest it (the whole axis when None)."""
    from . import _api_reduce as red

    n = x.shape[axis]
    parts = []
    for side, (w, k) in enumerate(zip(widths, lengths)):
        k = n if k is None else min(k, n)
        if k == 0 and mode in ("maximum", "minimum"):
            raise ValueError(f"pad: stat_length of 0 yields no value for mode {mode!r}")
        chunk = _slice_axis(x, axis, 0, k) if side == 0 else _slice_axis(x, axis, n - k, n)
        if mode in ("maximum", "minimum"):
            stat = getattr(red, mode[:3])(chunk, axis=axis, keepdims=True)
        else:
            stat = _mean_or_median(chunk, axis, mode, red)
        shape = list(x.shape)
        shape[axis] = w
        parts.append(broadcast_to(stat, shape))
    return concat([parts[0], x, parts[1]], axis=axis)


def _mean_or_median(chunk, axis: int, mode: str, red):
    """numpy's statistic, cast back to the dtype: integers in float64, then rounded."""
    dtype = chunk.dtype
    wide = dt.float64 if not dt.is_float(dtype) else dtype
    c = lax.convert_element_type(chunk, wide)
    if mode == "mean":
        stat = red.mean(c, axis=axis, keepdims=True)
    else:
        k = c.shape[axis]
        c = red.sort(c, axis=axis)
        mid = _slice_axis(c, axis, (k - 1) // 2, k // 2 + 1)
        stat = red.mean(mid, axis=axis, keepdims=True)
        if dt.is_float(dtype):  # a NaN anywhere makes numpy's median NaN
            nan = red.any(lax.ne(c, c), axis=axis, keepdims=True)
            stat = lax.select(nan, lax.full((), np.nan, wide), stat)
    if dt.is_integer(dtype):
        stat = lax.round(stat)  # half to even, as numpy rounds
    return lax.convert_element_type(stat, dtype)


def _pad_ramp(x, axis: int, widths, ends):
    """numpy's linear_ramp: ``linspace(end_value, edge, width, endpoint=False)`` on each
    side (floored for integer dtypes, as numpy >= 2 does)."""
    n = x.shape[axis]
    wide = x.dtype if dt.is_float(x.dtype) else dt.float64
    parts = []
    for side, (w, end) in enumerate(zip(widths, ends)):
        edge = lax.convert_element_type(
            _slice_axis(x, axis, *((0, 1) if side == 0 else (n - 1, n))), wide
        )
        end = lax.full((), end, wide)
        t = _along(x, axis, np.arange(w) if side == 0 else np.arange(w - 1, -1, -1))
        t = lax.convert_element_type(t, wide)
        step = lax.div(lax.sub(edge, end), lax.full((), w, wide))
        ramp = lax.add(lax.mul(t, step), end)
        if not dt.is_float(x.dtype):
            # Through int64, which wraps into a narrower int as numpy's cast does here (a
            # float cast saturates: an end value of -2 would pad uint8 with 0, not 254).
            ramp = lax.convert_element_type(lax.floor(ramp), dt.int64)
        parts.append(lax.convert_element_type(ramp, x.dtype))
    return concat([parts[0], x, parts[1]], axis=axis)


def _pad_odd(x, axis: int, lo: int, hi: int, include_edge: bool):
    """reflect/symmetric with ``reflect_type="odd"`` (``2 * edge - reflection``), in numpy's
    rounds: each round reflects at most the values padded so far, about the current edge."""
    n = x.shape[axis]
    period, off = (n, 1) if include_edge else (n - 1, 0)
    while lo > 0 or hi > 0:
        m = x.shape[axis]
        old = (m if include_edge else m - 1) // period * period
        left = right = None
        if lo > 0:
            k = min(old, lo)
            chunk = take(x, np.arange(k - off, -off, -1), axis=axis)
            left = 2 * _slice_axis(x, axis, 0, 1) - chunk
            lo -= k
        if hi > 0:
            k = min(old, hi)
            chunk = take(x, np.arange(m - 2 + off, m - 2 + off - k, -1), axis=axis)
            right = 2 * _slice_axis(x, axis, m - 1, m) - chunk
            hi -= k
        # (bools computed as ints, cast back as numpy's assignment does)
        parts = [astype(p, x.dtype, copy=False) for p in (left, x, right) if p is not None]
        x = concat(parts, axis=axis)
    return x
