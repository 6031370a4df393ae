"""PyTorch-style training on the GPU gives the CPU's numbers (``tests/devices/training.py``:
the digits CNN and a small GPT-shaped step, on the tape and under ``ft.compile``); plus
``ft.cuda``'s queries. Needs a GPU and CuPy: skips without.
"""

import pytest

pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
from tests.devices.training import assert_same, train_digits, train_gpt  # noqa: E402

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("compiled", [False, True], ids=["tape", "ft.compile"])
@pytest.mark.parametrize("train", [train_digits, train_gpt], ids=["digits_cnn", "gpt"])
def test_training_steps_on_the_gpu_equal_the_cpu(gpu, train, compiled):
    # float32 on both; cuBLAS and OpenBLAS sum in different orders
    assert_same(train("cpu", compiled), train(gpu, compiled), rtol=2e-4, atol=2e-5)


def test_cuda_queries(gpu):
    assert ft.cuda.is_available() and ft.cuda.device_count() >= 1
    assert ft.cuda.current_device() == 0
    name = ft.cuda.get_device_name()
    assert isinstance(name, str) and name.strip(), name
    major, minor = ft.cuda.get_device_capability()
    assert major >= 5 and minor >= 0
    before = ft.cuda.memory_allocated()
    x = ft.ones((1024, 1024)).cuda()
    ft.cuda.synchronize()
    assert ft.cuda.memory_allocated() >= before + x.nbytes
    del x
    ft.cuda.empty_cache()
    ft.cuda.set_device(0)
    with pytest.raises(RuntimeError, match="set_device"):
        ft.cuda.set_device(ft.cuda.device_count())
    with pytest.raises(ValueError, match="expected a CUDA device"):
        ft.cuda.synchronize("cpu")
