"""Devices: naming, the default device, device_put, and mixed-device errors."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import Device, cpu_impls
from fntorch.fx import core


def test_device_names_and_default():
    cpu = ft.device("cpu")
    assert cpu is ft.devices()[0] and str(cpu) == "cpu" and cpu.type == "cpu"
    assert ft.zeros(2).device is cpu
    with ft.default_device("cpu"):
        assert ft.ones(3).device is cpu


def test_unknown_and_unavailable_devices():
    with pytest.raises(ValueError, match="tpu"):
        ft.device("tpu")
    if not ft.cuda.is_available():  # on a GPU machine cuda:0 exists
        with pytest.raises(RuntimeError, match="cuda"):
            ft.device("cuda:0")
    with pytest.raises(RuntimeError, match="'cuda:4096' is not available"):
        ft.device("cuda:4096")  # no machine has that many GPUs
    with pytest.raises(TypeError, match="device"):
        ft.device(3)


def test_device_put_and_to():
    tree = ft.device_put({"w": np.ones(2), "b": (1.0,)}, "cpu")
    assert isinstance(tree["w"], ft.Tensor) and tree["w"].device is ft.device("cpu")
    x = ft.ones(2)
    assert x.to("cpu").device is ft.device("cpu")


class _OtherBuffer(np.ndarray):
    """A numpy array that a second, fake device claims, to test mixing devices."""


def test_mixed_devices_raise_naming_both():
    other = Device("fake", 0, cpu_impls, lambda a: np.asarray(a).view(_OtherBuffer), np.asarray)
    core.buffer_devices[_OtherBuffer] = other
    try:
        a = ft.ones(3)
        b = core.Tensor(np.ones(3, np.float32).view(_OtherBuffer))
        assert b.device is other
        with pytest.raises(ValueError, match=r"different devices \(cpu and fake:0\)"):
            ft.add(a, b)
    finally:
        del core.buffer_devices[_OtherBuffer]
