"""Cases of the ``fft`` primitive, one per ``fft_type`` (see tests/cases/__init__.py).

Shapes: up to two batch dims and one or two transformed dims of 1 to 6 points (odd and
even lengths, so ``irfft``'s Nyquist bin is both there and absent). References are
numpy's ``fft`` module in the operand's precision.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_fft as pf

from . import Case, array

COMPLEX = (dt.complex64, dt.complex128)
REAL = (dt.float32, dt.float64)


def _draw(fft_type):
    def draw(data, dtype):
        lead = data.draw(st.lists(st.integers(1, 3), max_size=2), label="batch")
        lengths = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=2), label="n"))
        tail = lengths
        if fft_type == "irfft":
            tail = (*lengths[:-1], lengths[-1] // 2 + 1)
        x = array(data, (*lead, *tail), dtype)
        return [x], dict(fft_type=fft_type, fft_lengths=lengths)

    return draw


def _reference(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "irfft":
        return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(dt.real_dtype(x.dtype))
    fn = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn}[fft_type]
    return fn(x, axes=axes).astype(dt.complex_dtype(x.dtype))


CASES = [
    Case(
        pf.fft_p,
        _draw(t),
        _reference,
        name=f"fft_{t}",
        dtypes=d,
        diff_args=(0,),
        linear_args=(0,),
        rtol=1e-4,
        atol=1e-5,
    )  # fmt: skip
    for t, d in (("fft", COMPLEX), ("ifft", COMPLEX), ("rfft", REAL), ("irfft", COMPLEX))
]
