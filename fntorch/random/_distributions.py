"""``ft.random``'s samplers: ``uniform``, ``normal``, ``truncated_normal``, ``bernoulli``,
``randint``, ``gumbel``, ``categorical``, ``permutation`` and ``choice``.

Each draws its bits from a key (``_keys.py``; threefry-2x32 through ``ops/_threefry``)
and shapes them into the distribution as JAX does, so the draws equal ``jax.random``'s
(the package docstring, ``fntorch/random/__init__.py``, says to what precision).
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as _dt
from ..fx.core import Tensor, Tracer, get_aval
from ..ops import _threefry as _tf
from ..ops import api as _api
from ..ops import lax
from ..ops._prims_elementwise import broadcast_shapes as _broadcast_shapes
from ._keys import _as_tensor, _check_key, _check_shape, split

_UINT = _tf.UINT


def _shape_of(x) -> tuple:
    return tuple(np.shape(x)) if not isinstance(x, Tensor) else x.shape


def _param(x, dtype):
    """A distribution parameter as ``dtype``: Python numbers become numpy scalars (constants)."""
    if type(x) in (bool, int, float):
        return np.asarray(x, dtype)[()]
    return lax.convert_element_type(_as_tensor(x), dtype)


def _float_dtype(name: str, dtype):
    dtype = _dt.canonicalize(dtype, where=f"ft.random.{name}")
    if not _dt.is_float(dtype):
        raise TypeError(f"ft.random.{name}: dtype must be a floating dtype, got {dtype}")
    return dtype


def uniform(key, shape=(), dtype=_dt.float32, minval=0.0, maxval=1.0) -> Tensor:
    """Uniform floats in ``[minval, maxval)``; ``minval``/``maxval`` broadcast to ``shape``.

    >>> import fntorch as ft
    >>> u = ft.random.uniform(ft.random.key(0), (1000,), minval=-1.0, maxval=1.0)
    >>> bool((u >= -1).all() and (u < 1).all())
    True
    """
    k = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _check_shape("uniform", shape, _shape_of(minval), _shape_of(maxval))
    minval, maxval = _param(minval, dtype), _param(maxval, dtype)
    return _uniform(k, shape, dtype, minval, maxval)


def _uniform(k, shape, dtype, minval, maxval):
    info = _dt.finfo(dtype)
    nbits, nmant = np.dtype(dtype).itemsize * 8, int(info.nmant)
    rng_bits = nbits if nmant >= 8 else 8  # bfloat16 draws 8 bits, as JAX
    b = _tf.random_bits(k, rng_bits, shape)
    b = lax.convert_element_type(b, _UINT[nbits])
    # JAX's mantissa trick sets the top `nmant` random bits as the mantissa of a float
    # in [1, 2) and subtracts 1. That float minus 1 is exactly m * 2**-nmant for the
    # integer m of those bits (m < 2**nmant converts exactly; scaling by a power of two
    # is exact), so this gives JAX's floats bit for bit without a bitcast primitive.
    m = lax.shift_right_logical(b, np.asarray(rng_bits - nmant, _UINT[nbits])[()])
    floats = lax.mul(lax.convert_element_type(m, dtype), np.asarray(2.0**-nmant, dtype)[()])
    scaled = lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))
    # The scale-and-shift rounds up to maxval for ~1 in 7 ranges when floats is its
    # largest value (1 draw in 2**nmant: ~1e-3 in float16). Only those draws move below
    # maxval: an empty range (minval >= maxval) still gives minval with JAX's gradients.
    below = lax.nextafter(lax.stop_gradient(maxval), np.asarray(-np.inf, dtype)[()])
    at_max = lax.bitwise_and(lax.ge(scaled, maxval), lax.lt(minval, maxval))
    return _as_shape(lax.select(at_max, below, scaled), shape)


def _as_shape(x, shape):
    x = _as_tensor(x)
    if x.shape == shape:
        return x
    return _api.broadcast_to(x, shape)


def normal(key, shape=(), dtype=_dt.float32) -> Tensor:
    """Standard normal samples: ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1), as JAX.

    >>> import fntorch as ft
    >>> z = ft.random.normal(ft.random.key(0), (10000,))
    >>> abs(float(z.mean())) < 0.05 and abs(float(z.std()) - 1) < 0.05
    True
    """
    k = _check_key("normal", key)
    dtype = _float_dtype("normal", dtype)
    shape = _check_shape("normal", shape)
    nmant = int(_dt.finfo(dtype).nmant)
    lo = np.asarray(-(1.0 - 2.0 ** -(nmant + 1)), dtype)[()]  # nextafter(-1, 0): erf_inv finite
    u = _uniform(k, shape, dtype, lo, np.asarray(1.0, dtype)[()])
    return lax.mul(np.asarray(np.sqrt(2.0), dtype)[()], lax.erf_inv(u))


def _rounded_once(fn, x, dtype):
    """``fn(x)`` computed in float64 and rounded once to ``dtype``.

    numpy's float32 ``erf`` and ``log`` and the compiled kernels' differ by an ulp for a
    third to a half of all inputs, so draws through them differed between eager and
    ``jit``; rounding float64 results makes them agree (and nearer the exact value).
    """
    if np.dtype(dtype).itemsize >= 8:
        return fn(x)
    return lax.convert_element_type(fn(lax.convert_element_type(x, _dt.float64)), dtype)


def truncated_normal(key, lower, upper, shape=None, dtype=_dt.float32) -> Tensor:
    """Standard normal samples conditioned on ``lower < x < upper`` (by inverse CDF), as JAX.

    ``shape`` defaults to the broadcast shape of ``lower`` and ``upper``.

    >>> import fntorch as ft
    >>> x = ft.random.truncated_normal(ft.random.key(0), -1.0, 2.0, (1000,))
    >>> bool((x > -1).all() and (x < 2).all())
    True
    """
    k = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = _broadcast_shapes("truncated_normal", _shape_of(lower), _shape_of(upper))
    else:
        shape = _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    sqrt2 = np.asarray(np.sqrt(2.0), dtype)[()]
    lower, upper = _param(lower, dtype), _param(upper, dtype)
    a = _rounded_once(lax.erf, lax.div(lower, sqrt2), dtype)
    b = _rounded_once(lax.erf, lax.div(upper, sqrt2), dtype)
    out = lax.mul(sqrt2, lax.erf_inv(_uniform(k, shape, dtype, a, b)))
    # Clamped into the open interval: rounding (or u == a) could land on a bound.
    inf = np.asarray(np.inf, dtype)[()]
    lo = lax.nextafter(lax.stop_gradient(lower), inf)
    hi = lax.nextafter(lax.stop_gradient(upper), lax.neg(inf))
    return _as_shape(lax.min(lax.max(out, lo), hi), shape)


def bernoulli(key, p=0.5, shape=None) -> Tensor:
    """Booleans that are True with probability ``p``; ``shape`` defaults to ``p``'s shape.

    >>> import fntorch as ft
    >>> b = ft.random.bernoulli(ft.random.key(0), 0.25, (10000,))
    >>> b.dtype, abs(float(b.float().mean()) - 0.25) < 0.02
    (dtype('bool'), True)
    """
    k = _check_key("bernoulli", key)
    p_dtype = get_aval(p).dtype if isinstance(p, (Tensor, np.ndarray)) else _dt.default_float
    if not _dt.is_float(p_dtype):
        p_dtype = _dt.default_float
    shape = _shape_of(p) if shape is None else _check_shape("bernoulli", shape, _shape_of(p))
    p = _param(p, p_dtype)
    return lax.lt(uniform(k, shape, p_dtype), p)


def _convert_and_clip_integer(x, dtype):
    """An integer tensor as ``dtype``, clipped into its range rather than wrapped (JAX's)."""
    src = get_aval(x).dtype
    lo = max(int(_dt.iinfo(dtype).min), int(_dt.iinfo(src).min))
    hi = min(int(_dt.iinfo(dtype).max), int(_dt.iinfo(src).max))
    clipped = lax.clamp(np.asarray(lo, src)[()], x, np.asarray(hi, src)[()])
    return lax.convert_element_type(clipped, dtype)


def _urem(x, span):
    """``x % span`` on unsigned ints, with ``x % 0 == x`` (XLA's rule, which JAX relies on)."""
    zero = lax.eq(span, np.asarray(0, get_aval(span).dtype)[()])
    safe = lax.select(zero, np.asarray(1, get_aval(span).dtype)[()], span)
    return lax.select(zero, x, lax.rem(x, safe))


def _int_bound(v, dtype):
    """A randint bound as an integer of ``dtype`` (clipped), and whether it exceeds its max."""
    if type(v) is float:
        v = int(v)  # truncated, as JAX's astype(int)
    if type(v) is int or isinstance(v, np.integer):
        info = _dt.iinfo(dtype)
        clipped = min(max(int(v), int(info.min)), int(info.max))
        return np.asarray(clipped, dtype)[()], np.bool_(int(v) > int(info.max))
    v = _as_tensor(v)
    if not _dt.is_integer(v.dtype):
        v = lax.convert_element_type(v, _dt.default_int)  # floats truncate, as JAX's astype
    top = _convert_and_clip_integer(_api.asarray(np.asarray(_dt.iinfo(dtype).max, dtype)), v.dtype)
    return _convert_and_clip_integer(v, dtype), lax.gt(v, top)


def _check_bounds(minval, maxval):
    """ValueError when concrete bounds give an empty range (traced ones follow JAX: minval)."""
    if isinstance(minval, Tracer) or isinstance(maxval, Tracer):
        return
    lo, hi = np.broadcast_arrays(np.asarray(minval), np.asarray(maxval))
    # Float bounds of any kind are truncated first, as the draw truncates them.
    trunc = lambda v: np.trunc(v) if v.dtype.kind == "f" else v
    bad = np.argwhere(np.atleast_1d(~(trunc(lo) < trunc(hi))))
    if bad.size:
        i = tuple(int(j) for j in bad[0]) if lo.ndim else ()
        at = f" at index {i}" if lo.ndim else ""
        raise ValueError(
            f"ft.random.randint: minval ({lo[i]}) must be less than maxval ({hi[i]}){at}"
            f"{' once truncated to integers' if 'f' in (lo.dtype.kind, hi.dtype.kind) else ''}: "
            "the range [minval, maxval) is empty"
        )


def randint(key, shape, minval, maxval, dtype=_dt.int64) -> Tensor:
    """Uniform integers in ``[minval, maxval)`` (int64 by default), as JAX's ``randint``.

    Each value is 2 * nbits random bits reduced mod the span, as JAX does (a relative bias
    below span / 2**(2 * nbits) for spans up to 2**(nbits / 2); wider spans keep a small
    modulo bias, as in JAX); dtypes narrower than 32 bits are drawn as int32. Concrete
    bounds with ``minval >= maxval`` raise ValueError naming both; traced ones give
    ``minval``, as JAX.

    >>> import fntorch as ft
    >>> r = ft.random.randint(ft.random.key(0), (1000,), 3, 7)
    >>> r.dtype, int(r.min()), int(r.max())
    (dtype('int64'), 3, 6)
    """
    k = _check_key("randint", key)
    dtype = _dt.canonicalize(dtype, where="ft.random.randint")
    if not _dt.is_integer(dtype):
        raise TypeError(f"ft.random.randint: dtype must be an integer dtype, got {dtype}")
    shape = _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    _check_bounds(minval, maxval)
    info = _dt.iinfo(dtype)
    if info.bits < 32:
        # Narrow dtypes are drawn as int32 and cast (current JAX's rule): the modulo bias
        # of a 2 * 8-bit draw would be visible.
        minval = _int32_clipped(minval, int(info.min), int(info.max))
        maxval = _int32_clipped(maxval, int(info.min), int(info.max) + 1)
        return lax.convert_element_type(_randint(k, shape, minval, maxval, _dt.int32), dtype)
    return _randint(k, shape, minval, maxval, dtype)


def _int32_clipped(v, lo: int, hi: int):
    if type(v) in (int, float) or isinstance(v, np.integer):
        return np.int32(min(max(int(v), lo), hi))
    v = lax.convert_element_type(_as_tensor(v), _dt.int32)
    return lax.clamp(np.int32(lo), v, np.int32(hi))


def _randint(k, shape, minval, maxval, dtype):
    minval, _ = _int_bound(minval, dtype)
    maxval, out_of_range = _int_bound(maxval, dtype)
    nbits = np.dtype(dtype).itemsize * 8
    udt = _UINT[nbits]
    k1, k2 = split(k)
    higher, lower = _tf.random_bits(k1, nbits, shape), _tf.random_bits(k2, nbits, shape)

    # Subtracting in the unsigned type wraps exactly as the signed difference would.
    span = lax.sub(lax.convert_element_type(maxval, udt), lax.convert_element_type(minval, udt))
    empty = lax.le(maxval, minval)
    span = lax.select(empty, np.asarray(1, udt)[()], span)
    # A maxval beyond dtype's range (randint(k, s, 0, 256, uint8)) makes the span one
    # larger; 2**nbits wraps to 0, whose remainders leave the bits whole (_urem).
    grow = lax.bitwise_and(out_of_range, lax.bitwise_not(empty))
    span = lax.select(grow, lax.add(span, np.asarray(1, udt)[()]), span)
    # (hi * 2**nbits + lo) % span, without 2*nbits-wide integers: 2**nbits % span first.
    mult = _urem(np.asarray(2 ** (nbits // 2), udt)[()], span)
    mult = _urem(lax.mul(mult, mult), span)
    offset = lax.add(lax.mul(_urem(higher, span), mult), _urem(lower, span))
    offset = _urem(offset, span)
    return _as_shape(lax.add(minval, lax.convert_element_type(offset, dtype)), shape)


def gumbel(key, shape=(), dtype=_dt.float32) -> Tensor:
    """Standard Gumbel samples, ``-log(-log(u))`` with ``u`` uniform in ``[tiny, 1)``.

    >>> import fntorch as ft
    >>> g = ft.random.gumbel(ft.random.key(0), (10000,))
    >>> abs(float(g.mean()) - 0.5772) < 0.05
    True
    """
    k = _check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    shape = _check_shape("gumbel", shape)
    return _gumbel(k, shape, dtype)


def _gumbel(k, shape, dtype):
    tiny = np.asarray(_dt.finfo(dtype).tiny, dtype)[()]
    u = _uniform(k, shape, dtype, tiny, np.asarray(1.0, dtype)[()])
    return _rounded_once(lambda u: lax.neg(lax.log(lax.neg(lax.log(u)))), u, dtype)


def categorical(key, logits, axis: int = -1, shape=None) -> Tensor:
    """Indices drawn with probabilities ``softmax(logits, axis)`` (the Gumbel-max trick).

    The result has ``logits``' shape without ``axis`` (the batch shape), or ``shape``,
    which must end with the batch shape (leading dims are independent draws).

    >>> import fntorch as ft
    >>> ft.random.categorical(ft.random.key(0), ft.asarray([0.0, 1e9, 0.0]), shape=(3,)).tolist()
    [1, 1, 1]
    """
    k = _check_key("categorical", key)
    logits = _as_tensor(logits)
    if not _dt.is_float(logits.dtype):
        logits = lax.convert_element_type(logits, _dt.default_float)
    if logits.ndim == 0:
        raise ValueError("ft.random.categorical: logits must have at least one dimension")
    if not -logits.ndim <= axis < logits.ndim:
        raise ValueError(
            f"ft.random.categorical: axis {axis} is out of range for logits of rank {logits.ndim}"
        )
    axis = axis - logits.ndim if axis >= 0 else axis  # counted from the end, as JAX
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    shape = batch_shape if shape is None else _check_shape("categorical", shape, batch_shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    noise_shape = list(shape[len(shape) - len(batch_shape) :])
    noise_shape.insert(axis % logits.ndim, logits.shape[axis])
    noise = _gumbel(k, (*prefix, *noise_shape), logits.dtype)
    shifted = lax.add(noise, lax.expand_dims(logits, tuple(range(len(prefix)))))
    return _api.argmax(shifted, axis=axis)


def _shuffle(k, x, axis: int):
    # Sorting by fresh random 32-bit keys (JAX's method, from XLA's): repeated until
    # key collisions are unlikely (3 * log(n) / log(2**32) rounds), each sort stable.
    n = x.size
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, sub = split(k)
        sort_keys = _tf.random_bits(sub, 32, x.shape)
        _, x = lax.sort([sort_keys, x], axis, True, 1)
    return x


def _range_length(name: str, arg: str, x):
    """``n`` when ``x`` stands for ``range(n)`` (any 0-d integer), else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (Tensor, np.ndarray)):
        aval = get_aval(x)
        if aval.shape != ():
            return None
        if _dt.is_integer(aval.dtype):
            return int(x.item())  # a traced x raises here: the output shape must be static
    elif _shape_of(x) != ():
        return None
    raise TypeError(
        f"ft.random.{name}: {arg} must be an integer or at least 1-dimensional, got {x!r}"
    )


def permutation(key, x, axis: int = 0, independent: bool = False) -> Tensor:
    """A random permutation of ``range(x)`` (an int) or of ``x``'s slices along ``axis``.

    With ``independent=True`` each 1-d slice along ``axis`` is shuffled on its own.

    >>> import fntorch as ft
    >>> sorted(ft.random.permutation(ft.random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    k = _check_key("permutation", key)
    n = _range_length("permutation", "x", x)
    if n is not None:
        if n < 0:
            raise ValueError(f"ft.random.permutation: x must be >= 0, got {n}")
        return _shuffle(k, lax.on_device_of(k, _api.arange(n)), 0)
    x = _as_tensor(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"ft.random.permutation: axis {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    idx = _shuffle(k, lax.on_device_of(k, _api.arange(x.shape[axis])), 0)
    return _api.take(x, idx, axis=axis)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0) -> Tensor:
    """Samples from ``a`` (an int n for ``range(n)``, or a tensor's slices along ``axis``).

    With ``p`` (probabilities along ``axis``) draws follow it; ``replace=False`` draws
    distinct elements (a permutation's prefix, or the Gumbel top-k trick with ``p``).

    >>> import fntorch as ft
    >>> p = ft.asarray([0.0, 1.0, 0.0])
    >>> ft.random.choice(ft.random.key(0), ft.asarray([10, 20, 30]), (4,), p=p).tolist()
    [20, 20, 20, 20]
    """
    k = _check_key("choice", key)
    shape = _check_shape("choice", shape)
    n = _range_length("choice", "a", a)
    if n is not None:
        arr = None
    else:
        arr = _as_tensor(a)
        if not -arr.ndim <= axis < arr.ndim:
            raise ValueError(f"ft.random.choice: axis {axis} is out of range for rank {arr.ndim}")
        axis %= arr.ndim
        n = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return _api.zeros(shape, dtype=_dt.int64 if arr is None else arr.dtype)
    if n <= 0:
        raise ValueError("ft.random.choice: a must be non-empty unless no samples are taken")
    if not replace and n_draws > n:
        raise ValueError(
            f"ft.random.choice: cannot take {n_draws} samples from a population of {n} "
            "with replace=False"
        )
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n)
        else:
            ind = lax.slice(permutation(k, n), (0,), (n_draws,))
    else:
        p = _as_tensor(p)
        if not _dt.is_float(p.dtype):
            p = lax.convert_element_type(p, _dt.default_float)
        if p.shape != (n,):
            raise ValueError(
                f"ft.random.choice: p must have shape ({n},) (a's size along axis), got {p.shape}"
            )
        if replace:
            cum = _api.cumsum(p)
            total = lax.slice(cum, (n - 1,), (n,))
            r = lax.mul(total, lax.sub(np.asarray(1, p.dtype)[()], uniform(k, shape, p.dtype)))
            ind = _api.searchsorted(cum, lax.reshape(r, (n_draws,)))
        else:
            g = lax.add(_gumbel(k, (n,), p.dtype), lax.log(p))
            ind = lax.convert_element_type(_api.top_k(g, n_draws)[1], _dt.int64)
    if arr is None:
        return lax.reshape(ind, shape)
    out = _api.take(arr, lax.reshape(ind, (n_draws,)), axis=axis)
    return lax.reshape(out, arr.shape[:axis] + shape + arr.shape[axis + 1 :])
