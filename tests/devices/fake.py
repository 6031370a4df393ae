"""The fake second device both device test files register: its buffers are a numpy
subclass, its impls the CPU's on plain views, its target a ``CpuTarget`` of its own
(the CPU compiler, its own impls, outputs adopted as its buffers)."""

import numpy as np

from fntorch.devices import cpu_impls
from fntorch.devices.cpu_target import CpuTarget
from fntorch.fx.device import Device, ImplTable, register_device, unregister_device


class FakeBuffer(np.ndarray):
    """A buffer of the fake device: a numpy array of another type."""


def to_fake(out):
    if isinstance(out, (list, tuple)):
        return [to_fake(o) for o in out]
    if isinstance(out, (np.ndarray, np.generic)):
        return np.asarray(out).view(FakeBuffer)
    return out


def to_plain(x):
    return x.view(np.ndarray) if isinstance(x, FakeBuffer) else x


def _on_fake(impl):
    def run(*args, **params):
        return to_fake(impl(*[to_plain(a) for a in args], **params))

    return run


def fake_device():
    """Registers the fake device and yields it (a fixture's body)."""
    impls = ImplTable({p: _on_fake(f) for p, f in cpu_impls.items()})
    target = CpuTarget(impls, adopt=to_fake, name="fake")
    dev = register_device(
        Device("fake", 0, impls, lambda a: to_fake(np.array(a, copy=True)), to_plain, target),
        buffer_types=(FakeBuffer,),
    )
    yield dev
    unregister_device(dev)
