"""CPU impl of the ``fft`` primitive: numpy's pocketfft (``numpy.fft``), which keeps
single precision in numpy 2 (float32 -> complex64). Under ``jit`` it is a library step
that calls this impl (``lowering/table.py``: kind "library")."""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..ops import _prims_fft as pf
from ._device import cpu_impls

_NUMPY = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn}


def _fft(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    k = len(fft_lengths)
    axes = tuple(range(x.ndim - k, x.ndim))
    if fft_type == "irfft":
        out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
        return out.astype(dt.real_dtype(x.dtype), copy=False)
    out = _NUMPY[fft_type](x, axes=axes)
    return out.astype(dt.complex_dtype(x.dtype), copy=False)


cpu_impls[pf.fft_p] = _fft
