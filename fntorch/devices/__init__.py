"""Device kinds and their eager impls. Importing this registers the CPU device (numpy)
with the registry in ``fntorch.fx.device`` and every CPU impl, and the CUDA provider
(``cuda_device``), which registers GPUs when one is first asked for."""

from ..fx.device import Device, default_device, device, devices, get_default_device
from . import (  # noqa: E402
    collectives,  # universal impls: the communicators of process axes
    cpu_control,
    cpu_decomp,
    cpu_dispatch,
    cpu_elementwise,
    cpu_fft,
    cpu_indexing,
    cpu_linalg,
    cpu_reduce,
    cpu_structural,
    cuda_device,  # registers the cuda provider only: CuPy is imported on first ask
)
from ._device import CPU, cpu_impls
