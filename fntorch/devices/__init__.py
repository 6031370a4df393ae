"""Devices and their eager impls. Importing this registers every CPU impl."""

from ._device import CPU, Device, cpu_impls, default_device, device, devices, get_default_device
from . import cpu_elementwise, cpu_structural, cpu_indexing, cpu_reduce, cpu_linalg  # noqa: E402
