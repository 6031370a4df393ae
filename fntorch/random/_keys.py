"""``ft.random``'s keys: ``key``, ``split``, ``fold_in``, raw ``bits`` and ``threefry_2x32``.

A key is a ``uint32`` tensor of shape ``(2,)``; each function here hashes it with
threefry-2x32 (``ops/_threefry.py``, plain code on the uint32 primitives). Also the
argument checks the samplers share: ``_check_key`` (what a key is), ``_check_shape`` (a
static shape the parameters broadcast to) and ``_as_tensor``. The package docstring
(``fntorch/random/__init__.py``) says how the draws match JAX's.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from ..fx import dtypes as _dt
from ..fx.core import Tensor, get_aval
from ..ops import _threefry as _tf
from ..ops import api as _api
from ..ops import lax
from ..ops._prims_elementwise import broadcast_shapes as _broadcast_shapes

_U32 = np.uint32


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


# ---------------------------------------------------------------------------- bits


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
