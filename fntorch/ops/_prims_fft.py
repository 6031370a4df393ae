"""The ``fft`` primitive and its abstract-eval rule (see docs/primitives.md).

One primitive, as JAX's ``lax.fft``: ``fft(x, *, fft_type, fft_lengths)`` transforms the
last ``len(fft_lengths)`` dims of ``x``; leading dims are a batch. ``fft_type`` is

- ``"fft"``: complex to complex, unscaled;
- ``"ifft"``: complex to complex, the inverse, scaled by ``1 / prod(fft_lengths)``;
- ``"rfft"``: real to complex, the last dim ``n`` becoming ``n // 2 + 1``, unscaled;
- ``"irfft"``: complex to real, the inverse of ``rfft``: the last dim ``n // 2 + 1``
  becoming ``n = fft_lengths[-1]``, scaled by ``1 / prod(fft_lengths)``.

``fft_lengths`` are the sizes of the transformed dims of the real (or complex) signal;
``ft.fft`` (``ops/fft.py``) pads or crops for ``n=``/``s=``, moves ``axes`` last and
applies ``norm=`` around this primitive. All four are linear (real-linear for ``rfft``
and ``irfft``), and each one's transpose is an fft again.
"""

from __future__ import annotations

import math

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules

__all__ = ["fft_p", "fft", "FFT_TYPES"]

FFT_TYPES = ("fft", "ifft", "rfft", "irfft")

fft_p = Primitive("fft")


def _fft_abstract(x, *, fft_type, fft_lengths):
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    lengths = tuple(fft_lengths)
    k = len(lengths)
    shape = tuple(x.shape)
    if not 1 <= k <= len(shape):
        raise ValueError(
            f"fft: fft_lengths {lengths} must name 1 to {len(shape)} trailing dims of x's "
            f"shape {shape}"
        )
    if any(not isinstance(n, int) or n < 1 for n in lengths):
        raise ValueError(f"fft: fft_lengths must be positive ints, got {lengths}")
    lead, tail = shape[:-k], shape[-k:]
    if fft_type == "rfft":
        if not dt.is_float(x.dtype) or x.dtype not in (dt.float32, dt.float64):
            raise TypeError(f"fft: rfft needs a float32 or float64 x, got {x.dtype}")
        if tail != lengths:
            raise ValueError(f"fft: rfft of x's trailing dims {tail} with fft_lengths {lengths}")
        out = (*lead, *lengths[:-1], lengths[-1] // 2 + 1)
        return ShapedArray(out, dt.complex_dtype(x.dtype))
    if not dt.is_complex(x.dtype):
        raise TypeError(f"fft: {fft_type} needs a complex64 or complex128 x, got {x.dtype}")
    if fft_type == "irfft":
        want = (*lengths[:-1], lengths[-1] // 2 + 1)
        if tail != want:
            raise ValueError(
                f"fft: irfft with fft_lengths {lengths} needs trailing dims {want}, got {tail}"
            )
        return ShapedArray((*lead, *lengths), dt.real_dtype(x.dtype))
    if tail != lengths:
        raise ValueError(f"fft: {fft_type} of x's trailing dims {tail} with fft_lengths {lengths}")
    return ShapedArray(shape, x.dtype)


abstract_eval_rules[fft_p] = _fft_abstract


def fft(x, fft_type: str, fft_lengths):
    """The ``fft`` primitive over the last ``len(fft_lengths)`` dims.

    >>> import numpy as np
    >>> fft(np.ones(4, np.complex64), "fft", (4,)).tolist()
    [(4+0j), 0j, 0j, 0j]
    """
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths))


def fft_scale(fft_lengths) -> int:
    """The number of points the inverse transforms divide by."""
    return math.prod(fft_lengths)
