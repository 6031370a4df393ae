"""jvp, transpose and batching rules of the ``fft`` primitive (JAX's).

``fft`` is linear, so its jvp is itself on the tangent, and every transpose is an fft:
the DFT matrix is symmetric, so ``fft`` and ``ifft`` are their own transposes. ``rfft``
and ``irfft`` are real-linear; under the pairing ``Re(sum(a * b))`` (JAX's convention
for complex cotangents, see ``jvp_elementwise``) ``rfft``'s transpose is the real part
of the full ``fft`` of the cotangent zero-padded to ``n``, and ``irfft``'s is the
conjugated ``rfft`` of the cotangent with the bins that stand for two conjugate bins
doubled, over ``prod(fft_lengths)``.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_fft as pf
from ..ops import lax
from .ad import deflinear
from .batching import batch_rules, moveaxis


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type in ("fft", "ifft"):
        return [lax.fft(ct, fft_type, fft_lengths)]
    if fft_type == "rfft":
        n, m = fft_lengths[-1], ct.shape[-1]
        nd = len(ct.shape)
        zero = np.zeros((), ct.dtype)
        padded = lax.pad(ct, zero, [(0, 0, 0)] * (nd - 1) + [(0, n - m, 0)])
        return [lax.real(lax.fft(padded, "fft", fft_lengths))]
    return [_irfft_transpose(ct, fft_lengths)]


def _irfft_transpose(ct, fft_lengths):
    x = lax.fft(ct, "rfft", fft_lengths)
    m, n = x.shape[-1], fft_lengths[-1]
    # Bin 0 (and bin n/2 for even n) stands for itself; every other bin for itself and
    # its conjugate mirror, which irfft reads but rfft does not return.
    mask = np.full(m, 2.0, dt.real_dtype(x.dtype))
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    scale = (mask / pf.fft_scale(fft_lengths)).astype(x.dtype)
    return lax.conj(lax.mul(x, scale))


deflinear(pf.fft_p, _fft_transpose)


def _fft_batch(axis_size, args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d >= len(x.shape) - len(fft_lengths):  # a transformed dim: the batch goes first
        x, d = moveaxis(x, d, 0), 0
    return lax.fft(x, fft_type, fft_lengths), d


batch_rules[pf.fft_p] = partial(_fft_batch)
