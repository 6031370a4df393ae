"""Device kinds and their eager impls. Importing this registers the CPU device (numpy)
with the registry in ``fntorch.fx.device`` and every CPU impl."""

from ..fx.device import Device, default_device, device, devices, get_default_device
from . import (  # noqa: E402
    cpu_control,
    cpu_decomp,
    cpu_dispatch,
    cpu_elementwise,
    cpu_indexing,
    cpu_linalg,
    cpu_reduce,
    cpu_structural,
)
from ._device import CPU, cpu_impls
