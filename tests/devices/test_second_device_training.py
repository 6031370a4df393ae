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


@pytest.mark.parametrize("compiled", [False, True], ids=["tape", "ft.compile"])
def test_adam_steps_on_a_second_device_equal_the_cpu(fake, compiled):
    # Adam's state holds a step count besides the moments: it must live with the
    # parameters, or the group's fused update sees operands on two devices.
    import numpy as np

    import fntorch as ft
    from tests.devices.training import TinyGPT, lm_loss, token_batches, train

    opts = []

    def adam(params):
        opts.append(ft.optim.Adam(params, lr=1e-3))
        return opts[-1]

    runs = [train(TinyGPT, token_batches(), d, compiled, adam, lm_loss) for d in ("cpu", fake)]
    (cpu_losses, cpu_state), (losses, state) = runs
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-5, atol=1e-6)
    # A parameter whose gradient is rounding noise (the attention's key bias: softmax
    # ignores it) follows that noise's sign at Adam's first step, and the tape's rounding
    # differs by device (fused programs on the CPU, primitives on the fake one): its
    # values agree to a few steps of lr, every other one to rounding.
    for k in cpu_state:
        atol = 4e-3 if k.endswith("bias") else 1e-5
        np.testing.assert_allclose(state[k], cpu_state[k], rtol=1e-5, atol=atol, err_msg=k)
    for moments in opts[1].state.values():
        assert {v.device for v in moments.values()} == {fake}
        assert float(moments["step"]) == 3.0
