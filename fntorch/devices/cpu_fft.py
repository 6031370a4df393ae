"""CPU impl of the ``fft`` primitive: numpy's pocketfft (``numpy.fft``), which keeps
single precision in numpy 2 (float32 -> complex64). Under ``jit`` it is a library step
that calls this impl (``lowering/table.py``: kind "library").

``fft_impl(xp)`` is written over an array module: the CUDA device builds it from CuPy,
whose ``cupy.fft`` has numpy's signatures and calls cuFFT.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_fft as pf
from ._device import cpu_impls


def fft_impl(xp):
    """The ``fft`` impl over array module ``xp`` (``xp.fft`` as numpy's).

    >>> fft_impl(np)(np.ones(4, np.float32), fft_type="rfft", fft_lengths=(4,))
    array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    by_type = {"fft": xp.fft.fftn, "ifft": xp.fft.ifftn, "rfft": xp.fft.rfftn}

    def fft(x, *, fft_type, fft_lengths):
        x = xp.asarray(x)
        k = len(fft_lengths)
        axes = tuple(range(x.ndim - k, x.ndim))
        if fft_type == "irfft":
            out = xp.fft.irfftn(x, s=fft_lengths, axes=axes)
            return out.astype(dt.real_dtype(x.dtype), copy=False)
        out = by_type[fft_type](x, axes=axes)
        return out.astype(dt.complex_dtype(x.dtype), copy=False)

    return fft


cpu_impls[pf.fft_p] = fft_impl(np)
