"""Devices and their registry: what every room may ask about where buffers live.

A ``Device`` is one place that holds buffers and runs primitives (its eager impl table,
``put`` and ``to_host``). The device *kinds* live in ``fntorch.devices`` (the CPU, numpy)
and register themselves here; ``ops`` (``asarray(device=...)``, ``Tensor.to``) and
``devices`` both import this module and never each other.

Buffer types map to devices in two tables: ``buffer_devices`` answers ``Tensor.device``
(a numpy scalar held by a tensor is a host value), ``operand_devices`` answers eager
dispatch, where Python and numpy scalars belong to no device: a weak constant takes the
device of the tensors it meets (``x * 2.0`` on any device).

>>> import fntorch as ft
>>> device("cpu") is ft.devices()[0]
True
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

# Impls that hold for every device (a primitive whose impl only calls other primitives,
# such as ``custom_lin``): every device's ImplTable falls back to this table.
universal_impls: dict = {}


class ImplTable(dict):
    """A device's impl table: primitive -> impl, falling back to ``universal_impls`` on a
    look-up by ``table[prim]`` (compiled programs' library steps look impls up so).

    >>> t = ImplTable(); universal_impls["doc_p"] = len
    >>> t["doc_p"] is len, "doc_p" in t
    (True, False)
    >>> del universal_impls["doc_p"]
    """

    __slots__ = ()

    def __missing__(self, prim):
        return universal_impls[prim]


class Device:
    """A place that holds buffers and runs primitives: ``cpu`` (numpy) or ``cuda:N``.
    ``impls`` is its eager impl table, an ``ImplTable`` (so ``universal_impls`` stands
    behind it); ``to_buffer`` / ``to_host`` copy a host array in and a buffer out;
    ``target`` is what ``jit`` compiles for it with (``lowering.target.Target``), or
    None for a device that runs eagerly only.

    >>> import fntorch as ft
    >>> ft.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("platform", "index", "impls", "_to_buffer", "_to_host", "target", "__weakref__")

    def __init__(
        self,
        platform: str,
        index: int,
        impls: dict,
        to_buffer: Callable,
        to_host: Callable,
        target=None,
    ):
        self.platform = platform
        self.index = index
        self.impls = impls
        self._to_buffer = to_buffer
        self._to_host = to_host
        self.target = target

    @property
    def type(self) -> str:
        """The kind of device, ``"cpu"`` or ``"cuda"`` (PyTorch's ``device.type``).

        >>> import fntorch as ft
        >>> ft.device("cpu").type
        'cpu'
        """
        return self.platform

    def put(self, host_array):
        """A new buffer on this device holding a copy of ``host_array``.

        >>> import fntorch as ft
        >>> import numpy as np
        >>> a = np.arange(3)
        >>> b = ft.device("cpu").put(a)
        >>> b.tolist(), b is a
        ([0, 1, 2], False)
        """
        return self._to_buffer(host_array)

    def to_host(self, buffer):
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


# ---------------------------------------------------------------------- the registry

# platform -> {index: Device}, in registration order. The host (the CPU) comes first.
_registry: dict[str, dict[int, Device]] = {}
# Buffer type -> Device (Tensor.device); buffer type -> Device or None (eager dispatch).
buffer_devices: dict[type, Any] = {}
operand_devices: dict[type, Any] = {bool: None, int: None, float: None}
# Platforms that a device name may use although none is registered (their devices are
# made on demand, or the process lacks them): name -> the error's advice.
KNOWN_PLATFORMS = {
    "cpu": "the only CPU device is 'cpu'",
    "cuda": "this fntorch has no CUDA device (CUDA support needs a GPU and the `cuda` "
    "extra: pip install 'fntorch[cuda]')",
}


# Platforms whose devices register on first ask: platform -> ``provide(explicit)``,
# which registers what this machine has (CUDA: imports CuPy, counts GPUs) and returns
# None, or why there is none (the error's advice when a device of it was named).
# Nothing calls a provider at import, so ``import fntorch`` never imports CuPy.
_providers: dict[str, Callable] = {}


def register_provider(platform: str, provide: Callable) -> None:
    """Registers ``provide(explicit: bool) -> str | None``, called when a ``platform``
    device is first named (``explicit=True``) or ``devices()`` lists them
    (``explicit=False``); it returns why the machine has none, or None.

    >>> register_provider("doc", lambda explicit: None); _providers.pop("doc") is not None
    True
    """
    _providers[platform] = provide


def register_device(dev: Device, buffer_types=(), neutral_types=()) -> Device:
    """Adds ``dev`` to the registry; ``buffer_types`` are the types of its buffers,
    ``neutral_types`` those of host scalars that a tensor on it may hold but that belong
    to no device when they meet another device's tensors (numpy scalars).

    >>> import fntorch as ft
    >>> register_device(ft.device("cpu")) is ft.device("cpu")
    True
    """
    _registry.setdefault(dev.platform, {})[dev.index] = dev
    for t in buffer_types:
        buffer_devices[t] = operand_devices[t] = dev
    for t in neutral_types:
        buffer_devices[t] = dev
        operand_devices[t] = None
    return dev


def unregister_device(dev: Device) -> None:
    """Removes ``dev`` and its buffer types from the registry (tests' fake devices).

    >>> d = register_device(Device("fake", 7, {}, list, list))
    >>> unregister_device(d); "fake" in _registry
    False
    """
    kind = _registry.get(dev.platform, {})
    kind.pop(dev.index, None)
    if not kind:
        _registry.pop(dev.platform, None)
    for table in (buffer_devices, operand_devices):
        for t in [t for t, d in table.items() if d is dev]:
            del table[t]


def devices() -> list[Device]:
    """The devices this process can use, the host first.

    >>> import fntorch as ft
    >>> ft.devices()[0]
    device(type='cpu')
    """
    for provide in list(_providers.values()):
        provide(False)
    return [d for kind in _registry.values() for d in kind.values()]


def host_device() -> Device:
    """The device whose buffers are numpy arrays in this process's memory (the CPU): graph
    constants live there.

    >>> host_device().type
    'cpu'
    """
    return next(iter(_registry["cpu"].values()))


def device_of_buffer(v) -> Device:
    """The device holding buffer ``v``.

    >>> import numpy as np
    >>> device_of_buffer(np.zeros(2)).type
    'cpu'
    """
    try:
        return buffer_devices[type(v)]
    except KeyError:
        for t, d in list(buffer_devices.items()):
            if isinstance(v, t):
                buffer_devices[type(v)] = d
                operand_devices.setdefault(type(v), operand_devices.get(t, d))
                return d
        raise TypeError(f"no fntorch device holds buffers of type {type(v).__name__}") from None


def device_of_operand(v) -> Device | None:
    """The device an eager operand pins the operation to: None for Python and numpy
    scalars, which take the device of the tensors they meet.

    >>> import numpy as np
    >>> device_of_operand(np.float32(2.0)) is None, device_of_operand(np.zeros(2)).type
    (True, 'cpu')
    """
    try:
        return operand_devices[type(v)]
    except KeyError:
        d = device_of_buffer(v)
        return operand_devices.get(type(v), d)


def device(spec) -> Device:
    """The device named by ``spec``: ``"cpu"``, ``"cpu:0"``, ``"cuda"`` (``"cuda:0"``),
    ``"cuda:1"``, a Device, or a ``torch.device``. A name of no device kind raises
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
    kind = _registry.get(platform)
    if kind is None and platform not in KNOWN_PLATFORMS:
        known = sorted(set(KNOWN_PLATFORMS) | set(_registry))
        raise ValueError(
            f"device: unknown device type {platform!r} in {spec!r}; expected one of "
            + ", ".join(repr(k) for k in known)
        )
    # str.isdigit alone would admit other scripts' digits; int() would admit "+1", " 1".
    if colon and not (idx.isascii() and idx.isdigit()):
        raise ValueError(
            f"device: bad device index {idx!r} in {spec!r}; expected a non-negative integer "
            f"as in '{platform}:0'"
        )
    found = kind.get(int(idx) if idx else 0) if kind else None
    why = None
    if found is None and platform in _providers:
        why = _providers[platform](True)  # registers what there is; says why none, or None
        kind = _registry.get(platform)
        found = kind.get(int(idx) if idx else 0) if kind else None
    if found is not None:
        return found
    advice = why or (
        f"no {platform} device has that index" if kind
        else KNOWN_PLATFORMS.get(platform, f"no {platform} device has that index")
    )  # fmt: skip
    raise RuntimeError(f"device: {spec!r} is not available: {advice}")


# ------------------------------------------------------------------ the default device

_default_device: contextvars.ContextVar[Device | None] = contextvars.ContextVar(
    "fntorch_default_device", default=None
)


def get_default_device() -> Device:
    """The device that tensors made from nothing go to (``ft.default_device`` sets it).

    >>> import fntorch as ft
    >>> with ft.default_device("cpu"):
    ...     get_default_device()
    device(type='cpu')
    """
    return _default_device.get() or host_device()


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
