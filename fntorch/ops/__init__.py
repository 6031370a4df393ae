"""The primitive set and the Array API / PyTorch-named functions built on it."""

from . import (
    _prims_collective,
    _prims_control,
    _prims_debug,
    _prims_decomp,
    _prims_elementwise,
    _prims_fft,
    _prims_indexing,
    _prims_linalg,
    _prims_reduce,
    _prims_structural,
    _tensor,  # attaches operators and methods to Tensor
    api,
    collectives,
    control_flow,
    fft,  # ft.fft, the Array API fft extension
    lax,
    linalg,  # ft.linalg, the Array API linalg extension
)
