"""``ft.random``: explicit, splittable, counter-based random keys (threefry-2x32, as JAX).

A key is an ordinary ``uint32`` tensor of shape ``(2,)`` (JAX's "raw" legacy keys), so a
key array from ``split`` supports ``len``, indexing and unpacking, and keys pass through
``jit``, ``vmap`` and pytrees like any tensor. A draw is a pure function of its key: the
same key gives the same values eagerly, under ``ft.jit``, under ``ft.vmap`` over keys
and on every device. ``key``, ``split``, ``fold_in``, ``bits``, ``uniform`` (and hence
``bernoulli``, ``randint``, ``permutation``, ``choice``) give JAX's bits exactly
(``jax.random`` with its default threefry implementation, ``jax_threefry_partitionable``
on, the default since JAX 0.5); ``uniform`` with another range than [0, 1) agrees to an
ulp (XLA fuses its scale-and-shift into an FMA) and the draws that go through
``erf_inv``/``log`` (``normal``, ``truncated_normal``, ``gumbel``) to the rounding of
those functions. Eager and compiled draws are the same for float32, float16 and bfloat16
``normal``, ``truncated_normal`` and ``gumbel`` (``erf_inv``, ``erf`` and ``log``
compute in float64 and round once, eagerly and compiled: ~15 ms per 2**20 draws under
``jit``); float64 ones agree to ``erf_inv``'s float64 bound (~1e-12 in the tails), and
float64 ``gumbel``'s ``log`` can differ by an ulp between eager numpy and a kernel.

>>> import fntorch as ft
>>> k = ft.random.key(0)
>>> k1, k2 = ft.random.split(k)
>>> ft.random.uniform(k1, (2,)).shape
(2,)

Why threefry is plain code on the uint32 primitives (add, xor, shift_left,
shift_right_logical, or, iota, convert_element_type, ...; see ``ops/_threefry.py``)
rather than a dedicated ``threefry2x32`` primitive as in JAX: every rule table already
has entries for those, so eager evaluation (numpy), ``vmap`` (elementwise batch rules),
``grad`` (integer values carry no tangent) and ``jit`` work with no new rule-table
entries, and each new device gets randomness as soon as it runs elementwise ops. Under
``jit`` the ~120 ops of the 20 rounds fuse into one elementwise kernel together with
what consumes the bits (``jit(lambda k: uniform(k, (n,))).lower(k).plan`` is that kernel
plus a rank-0 one for the key schedule; dropout's mask and scaling join it too), so a
dedicated primitive would save only trace time while adding six rules to keep in sync.
Eagerly a draw is ~120 numpy ops, each vectorized over the whole output.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .fx import dtypes as _dt
from .fx.core import Tensor, Tracer, get_aval
from .ops import _threefry as _tf
from .ops import api as _api
from .ops import lax
from .ops._prims_elementwise import broadcast_shapes as _broadcast_shapes

__all__ = [
    "key",
    "split",
    "fold_in",
    "bits",
    "uniform",
    "normal",
    "truncated_normal",
    "bernoulli",
    "randint",
    "gumbel",
    "categorical",
    "permutation",
    "choice",
    "threefry_2x32",
]

_U32 = np.uint32
_UINT = _tf.UINT


# ---------------------------------------------------------------------------- keys


def threefry_2x32(key, count) -> Tensor:
    """The threefry-2x32 hash of the uint32 ``count`` under ``key``, as ``jax.prng.threefry_2x32``.

    The flattened ``count`` is cut in halves (padded with a zero when odd) that are the
    two words of the blocks. With ``count = [c0, c1]`` this is one block: the published
    Random123 known-answer vectors apply directly.

    >>> import fntorch as ft, numpy as np
    >>> zeros = np.zeros(2, np.uint32)
    >>> [hex(v) for v in ft.random.threefry_2x32(zeros, zeros).tolist()]
    ['0x6b200159', '0x99ba4efe']
    """
    key = _check_key("threefry_2x32", key)
    count = _as_tensor(count)
    if count.dtype != _dt.uint32:
        raise TypeError(f"threefry_2x32: count must be uint32, got {count.dtype}")
    flat = lax.reshape(count, (count.size,))
    odd = count.size % 2
    if odd:
        flat = lax.concatenate([flat, lax.full((1,), 0, _dt.uint32)], 0)
    half = flat.shape[0] // 2
    y0, y1 = _tf.threefry2x32(
        *_tf.key_words(key), lax.slice(flat, (0,), (half,)), lax.slice(flat, (half,), (2 * half,))
    )
    out = lax.concatenate([y0, y1], 0)
    if odd:
        out = lax.slice(out, (0,), (count.size,))
    return lax.reshape(out, count.shape)


# ------------------------------------------------------------------------ argument checks


def _as_tensor(x):
    return x if isinstance(x, Tensor) else _api.asarray(x)


def _check_key(name: str, k) -> Tensor:
    """``k`` as a key tensor, or a TypeError that says what a key is."""
    aval = None
    if isinstance(k, (Tensor, np.ndarray)):
        aval = get_aval(k)
    if aval is None or aval.dtype != _dt.uint32 or aval.shape != (2,):
        got = f"a {aval.str_short()} tensor" if aval is not None else type(k).__name__
        hint = (
            "; map over a key array with ft.vmap, or index it (keys[i])"
            if aval is not None and aval.shape[-1:] == (2,) and aval.dtype == _dt.uint32
            else ""
        )
        raise TypeError(
            f"ft.random.{name}: expected a key (a uint32 tensor of shape (2,) from "
            f"ft.random.key, split or fold_in), got {got}{hint}"
        )
    return k if isinstance(k, Tensor) else _api.asarray(k)


def _check_shape(name: str, shape, *param_shapes) -> tuple:
    """A static shape (an int or a sequence of ints >= 0) that the parameter shapes broadcast to."""
    if isinstance(shape, (Tensor, np.ndarray)):
        shape = shape.tolist()  # a concrete shape array (0-d: one int); a traced one raises
    if not isinstance(shape, Sequence):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"ft.random.{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"ft.random.{name}: shape {shape} has a negative dimension")
    if param_shapes:
        try:
            full = _broadcast_shapes(name, shape, *param_shapes)
        except ValueError:
            full = None
        if full != shape:
            raise ValueError(
                f"ft.random.{name}: the parameter shapes {list(param_shapes)} must broadcast "
                f"to the shape argument {shape}"
            )
    return shape


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


def key(seed) -> Tensor:
    """A key from an integer seed: the seed's 64 bits as two uint32 words (high, low).

    ``seed`` is a Python or numpy int in ``[-2**63, 2**64)`` (negative seeds are taken as
    64-bit two's complement) or an integer 0-d tensor, possibly traced
    (``vmap(key)(seeds)``); a tensor narrower than 64 bits is zero-extended, as in JAX.
    Equal to ``jax.random.PRNGKey(seed)`` (with 64-bit seeds as JAX's x64 mode).

    >>> import fntorch as ft
    >>> ft.random.key(0).tolist(), ft.random.key(2**32 + 7).tolist()
    ([0, 0], [1, 7])
    """
    if isinstance(seed, (bool, np.bool_)) or (
        isinstance(seed, (Tensor, np.ndarray)) and not _dt.is_integer(get_aval(seed).dtype)
    ):
        raise TypeError(f"ft.random.key: seed must be an integer, got {seed!r}")
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise ValueError(f"ft.random.key: seed {seed} does not fit in 64 bits")
        seed &= 2**64 - 1
        return _api.asarray(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))
    if not isinstance(seed, (Tensor, np.ndarray)):
        raise TypeError(f"ft.random.key: seed must be an integer, got {type(seed).__name__}")
    seed = _as_tensor(seed)
    if seed.shape != ():
        raise ValueError(
            f"ft.random.key: seed must be a scalar, got shape {seed.shape}; "
            "make many keys with ft.vmap(ft.random.key)(seeds)"
        )
    if np.dtype(seed.dtype).itemsize == 8:
        hi = lax.shift_right_logical(seed, np.asarray(32, seed.dtype)[()])
        hi = lax.convert_element_type(hi, _dt.uint32)
    else:
        hi = lax.full((), 0, _dt.uint32)  # narrower seeds are zero-extended, as JAX
    lo = lax.convert_element_type(seed, _dt.uint32)  # wraps: the low 32 bits
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def split(key, num=2) -> Tensor:
    """``num`` new independent keys (an int, or a tuple for a shaped key array ``(*num, 2)``).

    >>> import fntorch as ft
    >>> keys = ft.random.split(ft.random.key(0), 3)
    >>> keys.shape, len(keys), keys[1].shape
    ((3, 2), 3, (2,))
    """
    k = _check_key("split", key)
    shape = _check_shape("split", num)
    y0, y1 = _tf.hash_shape(k, shape)
    return lax.concatenate(
        [lax.expand_dims(y0, (len(shape),)), lax.expand_dims(y1, (len(shape),))], len(shape)
    )


def fold_in(key, data) -> Tensor:
    """A new key from ``key`` and the integer ``data`` (taken mod 2**32): e.g. a step number.

    >>> import fntorch as ft
    >>> k = ft.random.key(0)
    >>> ft.random.fold_in(k, 1).tolist() == ft.random.split(k)[1].tolist()
    True
    """
    k = _check_key("fold_in", key)
    if isinstance(data, (int, np.integer)) and not isinstance(data, (bool, np.bool_)):
        if not -(2**31) <= int(data) < 2**32:
            raise ValueError(f"ft.random.fold_in: data {int(data)} does not fit in 32 bits")
        data = _U32(int(data) & 0xFFFFFFFF)
    elif isinstance(data, (Tensor, np.ndarray)) and _dt.is_integer(get_aval(data).dtype):
        if get_aval(data).shape != ():
            raise ValueError(
                f"ft.random.fold_in: data must be a scalar, got shape {get_aval(data).shape}; "
                "fold in many values with ft.vmap"
            )
        data = lax.convert_element_type(_as_tensor(data), _dt.uint32)
    else:
        raise TypeError(f"ft.random.fold_in: data must be an integer, got {data!r}")
    y0, y1 = _tf.threefry2x32(*_tf.key_words(k), _U32(0), data)
    return lax.concatenate([lax.reshape(y0, (1,)), lax.reshape(y1, (1,))], 0)


# ---------------------------------------------------------------------------- samplers


def bits(key, shape=(), dtype=_dt.uint32) -> Tensor:
    """Uniform random bits of an unsigned ``dtype`` (uint8/16/32/64).

    >>> import fntorch as ft
    >>> ft.random.bits(ft.random.key(0), (3,)).tolist()
    [4070199207, 4202968722, 1427181096]
    """
    k = _check_key("bits", key)
    shape = _check_shape("bits", shape)
    dtype = _dt.canonicalize(dtype, where="ft.random.bits")
    if dtype not in _dt.unsigned_dtypes:
        raise TypeError(f"ft.random.bits: dtype must be an unsigned integer dtype, got {dtype}")
    return _tf.random_bits(k, np.dtype(dtype).itemsize * 8, shape)


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
        return _shuffle(k, _api.arange(n), 0)
    x = _as_tensor(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"ft.random.permutation: axis {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    idx = _shuffle(k, _api.arange(x.shape[axis]), 0)
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
