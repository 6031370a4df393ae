"""Devices: where buffers live and how primitives run eagerly on them."""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Callable

import numpy as np

from ..fx import core

# Like PyTorch and JAX, eager math on the CPU yields NaN/inf silently rather than
# numpy's RuntimeWarnings; the filter matches only warnings raised from fntorch's own
# frames, and costs nothing unless a warning is raised (np.errstate costs ~3 us per op).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"fntorch(\.|$)")


class Device:
    """A place that holds buffers and runs primitives: ``cpu`` (numpy) or ``cuda:N`` (CuPy).

    >>> import fntorch as ft
    >>> ft.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("platform", "index", "impls", "_to_buffer", "_to_host", "__weakref__")

    def __init__(
        self, platform: str, index: int, impls: dict, to_buffer: Callable, to_host: Callable
    ):
        self.platform = platform
        self.index = index
        self.impls = impls
        self._to_buffer = to_buffer
        self._to_host = to_host

    @property
    def type(self) -> str:
        """The kind of device, ``"cpu"`` or ``"cuda"`` (PyTorch's ``device.type``).

        >>> import fntorch as ft
        >>> ft.device("cpu").type
        'cpu'
        """
        return self.platform

    def put(self, host_array: np.ndarray):
        """A new buffer on this device holding a copy of ``host_array``.

        >>> import fntorch as ft
        >>> import numpy as np
        >>> a = np.arange(3)
        >>> b = ft.device("cpu").put(a)
        >>> b.tolist(), b is a
        ([0, 1, 2], False)
        """
        return self._to_buffer(host_array)

    def to_host(self, buffer) -> np.ndarray:
        """``buffer`` (one of this device's buffers, as ``put`` makes) as a host numpy
        array; on the CPU, the buffer itself.

        >>> import fntorch as ft
        >>> import numpy as np
        >>> cpu = ft.device("cpu")
        >>> cpu.to_host(cpu.put(np.arange(3))).tolist()
        [0, 1, 2]
        """
        return self._to_host(buffer)

    def __repr__(self):
        if self.platform == "cpu":
            return "device(type='cpu')"
        return f"device(type='{self.platform}', index={self.index})"

    def __str__(self):
        return self.platform if self.platform == "cpu" else f"{self.platform}:{self.index}"

    def __reduce__(self):
        # Devices are compared by identity, so a copy or an unpickled device must be the
        # process's own device of that name (its impl table holds closures besides).
        return (device, (str(self),))


def _cpu_put(a):
    return np.array(a, copy=True)


# The impl table of the CPU: primitive -> function of numpy buffers. Filled by
# `fntorch.devices.cpu_*` modules at import.
cpu_impls: dict = {}
CPU = Device("cpu", 0, cpu_impls, _cpu_put, lambda b: b)

core.buffer_devices[np.ndarray] = CPU
for _t in set(np.sctypeDict.values()):
    core.buffer_devices[_t] = CPU
import ml_dtypes as _mld  # noqa: E402

core.buffer_devices[_mld.bfloat16] = CPU

_default_device: contextvars.ContextVar[Device] = contextvars.ContextVar(
    "fntorch_default_device", default=CPU
)
core.default_device_getter = _default_device.get


def devices() -> list[Device]:
    """The devices this process can use.

    >>> import fntorch as ft
    >>> ft.devices()[0]
    device(type='cpu')
    """
    out = [CPU]
    out.extend(_cuda_devices())
    return out


def _cuda_devices() -> list[Device]:
    # CUDA arrives with its own issue; until then no CUDA device exists. CuPy is never
    # imported by the CPU install.
    return []


def device(spec) -> Device:
    """The device named by ``spec``: ``"cpu"``, ``"cpu:0"``, ``"cuda"`` (``"cuda:0"``),
    ``"cuda:1"``, a Device, or a ``torch.device``. A name of no device here raises
    ValueError; a device this process lacks (any CUDA one on a CPU-only install, or
    ``"cpu:1"``) raises RuntimeError.

    >>> import fntorch as ft
    >>> ft.device("cpu").type
    'cpu'
    >>> ft.device("cpu:0") is ft.device("cpu")
    True
    """
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str) and isinstance(getattr(spec, "type", None), str):
        spec = str(spec)  # a torch.device: its str is the same "type[:index]" spelling
    if not isinstance(spec, str):
        raise TypeError(f"device: expected a string such as 'cpu' or 'cuda:0', got {spec!r}")
    platform, colon, idx = spec.partition(":")
    if platform not in ("cpu", "cuda"):
        raise ValueError(
            f"device: unknown device type {platform!r} in {spec!r}; expected 'cpu' or 'cuda'"
        )
    # str.isdigit alone would admit other scripts' digits; int() would admit "+1", " 1".
    if colon and not (idx.isascii() and idx.isdigit()):
        raise ValueError(
            f"device: bad device index {idx!r} in {spec!r}; expected a non-negative integer "
            f"as in '{platform}:0'"
        )
    index = int(idx) if idx else 0
    if platform == "cpu" and index == 0:
        return CPU  # the common case: every asarray(device="cpu") and x.to("cpu")
    found = [d for d in devices() if d.platform == platform and d.index == index]
    if found:
        return found[0]
    if platform == "cpu":
        raise RuntimeError(f"device: {spec!r} is not available: the only CPU device is 'cpu'")
    raise RuntimeError(
        f"device: {spec!r} is not available: this fntorch has no CUDA device "
        "(CUDA support needs a GPU and the `cuda` extra: pip install 'fntorch[cuda]')"
    )


def get_default_device() -> Device:
    """The device that tensors made from nothing go to (``ft.default_device`` sets it).

    >>> import fntorch as ft
    >>> from fntorch.devices import get_default_device
    >>> with ft.default_device("cpu"):
    ...     get_default_device()
    device(type='cpu')
    """
    return _default_device.get()


class default_device:
    """Context manager: tensors made from nothing inside it go to ``dev``.

    The default lives in a context variable, so, as with JAX's ``jax.default_device`` and
    PyTorch's ``with torch.device(...)``, it holds for the thread (or asyncio task) that
    entered it; other threads keep their own default (``cpu`` unless they set one). It
    nests, and one instance can be re-entered.

    >>> import fntorch as ft
    >>> with ft.default_device("cpu"):
    ...     ft.zeros(2).device
    device(type='cpu')
    """

    def __init__(self, dev):
        self.device = device(dev)
        self._tokens = []  # a stack, so that re-entering one instance nests correctly

    def __enter__(self):
        self._tokens.append(_default_device.set(self.device))
        return self.device

    def __exit__(self, *exc):
        _default_device.reset(self._tokens.pop())


def device_put(tree, device=None):
    """Every tensor (or array, or number) in ``tree`` as a tensor on ``device`` (the
    default device when None).

    >>> import fntorch as ft
    >>> ft.device_put({"w": ft.ones(2)}, "cpu")["w"].device
    device(type='cpu')
    """
    from .. import tree as tree_util
    from ..ops.api import asarray

    target = get_default_device() if device is None else _device(device)
    return tree_util.map(lambda leaf: asarray(leaf, device=target), tree)


_device = device  # device_put's argument is named device, as in API.md and JAX
