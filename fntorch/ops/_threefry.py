"""The threefry-2x32 hash and random bits, written on the uint32 primitives.

``fntorch.random`` builds keys and samplers on these; ``fntorch/random/__init__.py`` says
why this is plain code on the existing primitives rather than a dedicated primitive.
"""

from __future__ import annotations

import math

import numpy as np

from ..fx import dtypes as _dt
from ..fx.core import EVAL_TRACE, Tensor, _new_tensor, current_trace
from . import lax

_U32 = np.uint32
UINT = {8: _dt.uint8, 16: _dt.uint16, 32: _dt.uint32, 64: _dt.uint64}

# Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as
# 1, 2, 3", SC'11), in JAX's formulation: rotation constants, the key-schedule parity
# constant and a key injection (with the injection counter) after every 4 rounds.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = _U32(0x1BD11BDA)


def _rotate_left(x, r: int):
    return lax.bitwise_or(lax.shift_left(x, _U32(r)), lax.shift_right_logical(x, _U32(32 - r)))


def threefry2x32(k0, k1, x0, x1):
    """The threefry-2x32 block function on uint32 words; the operands broadcast."""
    eager = _eager_words((k0, k1, x0, x1))
    if eager is not None:
        xp, words = eager
        with np.errstate(over="ignore"):  # 0-d operands compute as numpy scalars
            return tuple(_new_tensor(w) for w in _threefry_words(xp, *words))
    ks = (k0, k1, lax.bitwise_xor(lax.bitwise_xor(k0, k1), _PARITY))
    x0, x1 = lax.add(x0, ks[0]), lax.add(x1, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(x0, _rotate_left(x1, r))
        x0 = lax.add(x0, ks[(i + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 2) % 3]), _U32(i + 1))
    return x0, x1


# Eagerly, the ~120 operations of the 20 rounds would each pay a primitive dispatch (about
# 1 ms per draw); on concrete buffers they run straight in the buffers' array module,
# with the same uint32 wraparound arithmetic the primitives' impls use, so the bits are
# identical. Traced operands (jit, vmap, the tape) take the primitives.

# Buffer types whose words the eager path computes in their own module (exact types: a
# subclass of ndarray is another device's buffer, whose draws stay there). A device
# adds its own: the CUDA device registers ``cupy.ndarray: cupy``.
word_modules: dict[type, object] = {np.ndarray: np}


def _eager_words(operands):
    """``(xp, words)`` when every operand is a concrete uint32 buffer of one module
    ``xp`` (or a uint32 scalar), else None."""
    if current_trace() is not EVAL_TRACE:
        return None
    xp, words = None, []
    for a in operands:
        if type(a) is Tensor:
            a = a._value
        if type(a) is not _U32:
            module = word_modules.get(type(a))
            if module is None or a.dtype != _U32 or (xp is not None and module is not xp):
                return None
            xp = module
        words.append(a)
    if xp is None or xp is np:
        return np, words
    # numpy scalars made the module's 0-d arrays (a fill, not a host copy)
    return xp, [xp.full((), w, _U32) if type(w) is _U32 else w for w in words]


def _threefry_words(xp, k0, k1, x0, x1):
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    x0, x1 = xp.broadcast_arrays(x0, x1)
    x0, x1 = x0.copy(), x1.copy()  # owned: updated in place below
    tmp = xp.empty_like(x1)
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 += x1
            xp.left_shift(x1, _U32(r), out=tmp)
            x1 >>= _U32(32 - r)
            x1 |= tmp
            x1 ^= x0
        x0 += ks[(i + 1) % 3]
        x1 += ks[(i + 2) % 3]
        x1 += _U32(i + 1)
    return x0, x1


def key_words(k):
    """The two uint32 words of a key, as 0-d tensors (which broadcast against counters)."""
    return lax.reshape(lax.slice(k, (0,), (1,)), ()), lax.reshape(lax.slice(k, (1,), (2,)), ())


def counters(shape: tuple, like=None):
    """The row-major index of every element as (high, low) uint32 words (JAX's
    iota_2x32_shape), on the device of the key ``like`` (see ``lax.on_device_of``)."""
    n = math.prod(shape)
    if n <= 2**32:
        lo = lax.reshape(lax.on_device_of(like, lax.iota(_dt.uint32, (n,))), shape)
        return _U32(0), lo  # the high word is zero; a scalar broadcasts
    idx = lax.reshape(lax.on_device_of(like, lax.iota(_dt.uint64, (n,))), shape)
    hi = lax.convert_element_type(lax.shift_right_logical(idx, np.uint64(32)), _dt.uint32)
    return hi, lax.convert_element_type(idx, _dt.uint32)


def hash_shape(k, shape: tuple):
    """Both threefry output words over the counters 0..prod(shape)-1 (JAX's partitionable form)."""
    hi, lo = counters(shape, k)
    return threefry2x32(*key_words(k), hi, lo)


def random_bits(k, nbits: int, shape: tuple):
    """Unsigned ``nbits``-wide random bits of ``shape`` from key ``k``, as JAX's threefry bits:
    64 bits are the two words; narrower ones the xor of the two words, truncated."""
    y0, y1 = hash_shape(k, shape)
    if nbits == 64:
        hi = lax.convert_element_type(y0, _dt.uint64)
        return lax.bitwise_or(
            lax.shift_left(hi, np.uint64(32)), lax.convert_element_type(y1, _dt.uint64)
        )
    return lax.convert_element_type(lax.bitwise_xor(y0, y1), UINT[nbits])
