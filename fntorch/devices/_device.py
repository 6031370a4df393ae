"""The CPU device: numpy buffers, registered with ``fntorch.fx.device``'s registry."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np

from ..fx.device import Device, ImplTable, register_device
from .cpu_target import CpuTarget

# Like PyTorch and JAX, eager math on the CPU yields NaN/inf silently rather than
# numpy's RuntimeWarnings; the filter matches only warnings raised from fntorch's own
# frames, and costs nothing unless a warning is raised (np.errstate costs ~3 us per op).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"fntorch(\.|$)")


def _cpu_put(a):
    return np.array(a, copy=True)


# The impl table of the CPU: primitive -> function of numpy buffers. Filled by
# `fntorch.devices.cpu_*` modules at import.
cpu_impls: dict = ImplTable()
CPU = register_device(
    Device("cpu", 0, cpu_impls, _cpu_put, lambda b: b, CpuTarget(cpu_impls)),
    buffer_types=(np.ndarray,),
    # numpy scalars are host values on a tensor, but belong to no device as operands
    neutral_types=(*set(np.sctypeDict.values()), ml_dtypes.bfloat16),
)
