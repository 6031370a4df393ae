"""Regressions: device names, the default device's context manager, copying devices."""

import copy
import importlib.util
import pickle
import threading

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import Device, cpu_impls


@pytest.mark.parametrize("spec", ["cpu:", "cpu:x", "cpu:-1", "cpu:0:1", "cuda:", "cuda:x"])
def test_malformed_device_index_raises_value_error_naming_device(spec):
    with pytest.raises(ValueError, match=r"device: bad device index .* expected a non-negative"):
        ft.device(spec)


# What a machine without CuPy says; where CuPy is installed (a GPU machine) cuda:0 exists.
# find_spec looks for CuPy without importing it.
_WITHOUT_CUPY = pytest.mark.skipif(
    importlib.util.find_spec("cupy") is not None, reason="CuPy is installed"
)


def test_cpu_index_that_does_not_exist_is_not_silently_cpu0():
    assert ft.device("cpu:0") is ft.device("cpu")
    with pytest.raises(RuntimeError, match="'cpu:1' is not available"):
        ft.device("cpu:1")


def test_torch_device_is_accepted():
    torch = pytest.importorskip("torch")
    assert ft.device(torch.device("cpu")) is ft.device("cpu")
    with pytest.raises(RuntimeError, match=r"'cuda:\d+' is not available"):
        ft.device(torch.device("cuda", 99))  # a CPU build of torch spells it cuda:0


def test_default_device_instance_can_be_reentered():
    cpu = ft.device("cpu")
    other = Device("fake", 0, cpu_impls, np.array, np.asarray)
    ctx = ft.default_device(other)
    with ctx:
        with ctx:
            assert ft.__array_namespace_info__().default_device() is other
        assert ft.__array_namespace_info__().default_device() is other
    assert ft.__array_namespace_info__().default_device() is cpu


def test_default_device_is_restored_after_exception_and_is_per_thread():
    cpu = ft.device("cpu")
    other = Device("fake", 0, cpu_impls, np.array, np.asarray)
    info = ft.__array_namespace_info__()
    seen = []
    with pytest.raises(KeyError):
        with ft.default_device(other):
            thread = threading.Thread(target=lambda: seen.append(info.default_device()))
            thread.start()
            thread.join()
            assert info.default_device() is other
            raise KeyError
    assert seen == [cpu] and info.default_device() is cpu


def test_copied_and_unpickled_devices_are_the_same_device():
    cpu = ft.device("cpu")
    assert copy.deepcopy(cpu) is cpu and copy.copy(cpu) is cpu
    assert pickle.loads(pickle.dumps(cpu)) is cpu
    assert copy.deepcopy({"dev": cpu})["dev"] is cpu


@_WITHOUT_CUPY
def test_cuda_absent_errors_never_import_cupy():
    import sys

    for spec in ("cuda", "cuda:1"):
        with pytest.raises(RuntimeError, match="no CUDA device"):
            ft.device(spec)
    with pytest.raises(RuntimeError, match="no CUDA device"):
        ft.ones(2).cuda()
    assert "cupy" not in sys.modules


@_WITHOUT_CUPY
def test_tensor_to_and_cuda_take_pytorch_device_spellings():
    # x.to(torch.device("cpu")) was read as a dtype; x.cuda("cuda:0") asked for "cuda:cuda:0".
    torch = pytest.importorskip("torch")
    x = ft.ones(2)
    assert x.to(torch.device("cpu")).device == ft.device("cpu")
    assert x.to(torch.device("cpu"), ft.float64).dtype == ft.float64
    for spec in ("cuda:0", 0):
        with pytest.raises(RuntimeError, match="'cuda:0' is not available"):
            x.cuda(spec)
