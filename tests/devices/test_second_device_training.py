"""A PyTorch-style training step runs on a second device with the CPU's numbers, eagerly
on the tape and under ``ft.compile``: every constant the shim makes along the way (a
dropout mask's key, a loss's weights, the backward's seed and the zeros of transpose
rules) is made on the device of the values it meets. The fake device stands in for a GPU.
"""

import pytest

from tests.devices.fake import fake_device
from tests.devices.training import assert_same, train_digits, train_gpt


@pytest.fixture(scope="module")
def fake():
    yield from fake_device()


@pytest.mark.parametrize("compiled", [False, True], ids=["tape", "ft.compile"])
@pytest.mark.parametrize("train", [train_digits, train_gpt], ids=["digits_cnn", "gpt"])
def test_training_steps_on_a_second_device_equal_the_cpu(fake, train, compiled):
    cpu, other = train("cpu", compiled), train(fake, compiled)
    assert_same(cpu, other, rtol=1e-5, atol=1e-6)
