"""Devices and their eager impls. Importing this registers every CPU impl."""

from . import (  # noqa: E402
    cpu_control,
    cpu_elementwise,
    cpu_indexing,
    cpu_linalg,
    cpu_reduce,
    cpu_structural,
)
from ._device import (
    CPU,
    Device,
    cpu_impls,
    default_device,
    device,
    device_put,
    devices,
    get_default_device,
)
