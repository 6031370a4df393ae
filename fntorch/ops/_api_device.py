"""Placing values on devices: ``device_put``, and the device names of the public API."""

from __future__ import annotations

from .. import tree as tree_util
from ..fx.device import default_device, device, devices, get_default_device
from ._api_creation import asarray

__all__ = ["device_put", "device", "devices", "default_device"]


def device_put(tree, device=None):
    """Every tensor (or array, or number) in ``tree`` as a tensor on ``device`` (the
    default device when None).

    >>> import fntorch as ft
    >>> ft.device_put({"w": ft.ones(2)}, "cpu")["w"].device
    device(type='cpu')
    """
    target = get_default_device() if device is None else _device(device)
    return tree_util.map(lambda leaf: asarray(leaf, device=target), tree)


_device = device  # device_put's argument is named device, as in API.md and JAX
