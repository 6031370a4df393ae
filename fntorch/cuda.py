"""``ft.cuda``: PyTorch's ``torch.cuda`` queries, answered from fntorch's device registry.

Nothing here imports CuPy: a CUDA device kind registers itself (``fntorch.fx.device``)
only when one is asked for, and these functions only read the registry or ask the
device's target (``devices/cuda_target.py``), which imports CuPy. Without a CUDA device
``is_available()`` is False, ``device_count()`` is 0, and the functions that need a GPU
raise RuntimeError naming what is missing (as ``ft.device("cuda")`` does).

>>> import fntorch as ft
>>> ft.cuda.is_available() in (True, False)
True
"""

from __future__ import annotations

from .amp import _cuda_amp as amp  # noqa: F401 - ft.cuda.amp, PyTorch's older spellings
from .fx import device as _device

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "get_device_name",
    "get_device_capability",
    "memory_allocated",
    "empty_cache",
    "manual_seed",
    "manual_seed_all",
]


def _cuda_devices() -> list:
    return [d for d in _device.devices() if d.type == "cuda"]


def is_available() -> bool:
    """Whether a CUDA device is registered (False on a CPU-only install).

    >>> import fntorch as ft
    >>> ft.cuda.is_available() == (ft.cuda.device_count() > 0)
    True
    """
    return bool(_cuda_devices())


def device_count() -> int:
    """The number of registered CUDA devices (0 without CUDA).

    >>> import fntorch as ft
    >>> ft.cuda.device_count() >= 0
    True
    """
    return len(_cuda_devices())


def manual_seed(seed: int) -> None:
    """PyTorch's ``torch.cuda.manual_seed``: fntorch has one global key for every device,
    so this is ``ft.manual_seed(seed)``.

    >>> import fntorch as ft
    >>> ft.cuda.manual_seed(0); ft.initial_seed()
    0
    """
    from .random import _torch_style

    _torch_style.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """PyTorch's ``torch.cuda.manual_seed_all``: ``ft.manual_seed(seed)`` (one global key).

    >>> import fntorch as ft
    >>> ft.cuda.manual_seed_all(1); ft.initial_seed()
    1
    """
    manual_seed(seed)


# The index that a bare "cuda" means for these functions (PyTorch's current device). fntorch
# names devices explicitly everywhere else ("cuda" is cuda:0 in ft.device), so this only
# decides which GPU the queries below and ``synchronize()`` address by default.
_current = {"index": 0}


# (device argument, current index) -> Device, for the arguments that are names: a timing
# loop calls ``synchronize()`` once a step, and a GPU benchmark's every call; the name
# is parsed and looked up once.
_named: dict = {}


def _gpu(device, fn: str):
    """The CUDA Device that ``device`` (None, an index, a name or a Device) names."""
    key = (device, _current["index"]) if device is None or type(device) in (int, str) else None
    dev = _named.get(key) if key is not None else None
    if dev is None:
        dev = _resolve(device, fn)
        if key is not None:
            _named[key] = dev
    return dev


def _resolve(device, fn: str):
    if device is None:
        device = _current["index"]
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    try:
        dev = _device.device(device)
    except (RuntimeError, ValueError, TypeError) as e:
        raise type(e)(f"ft.cuda.{fn}: {e}") from None
    if dev.type != "cuda":
        raise ValueError(f"ft.cuda.{fn}: expected a CUDA device, got {dev}")
    return dev


def current_device() -> int:
    """The index of the GPU that ``ft.cuda``'s functions address by default (0 unless
    ``set_device`` changed it).

    >>> import fntorch as ft
    >>> ft.cuda.current_device()
    0
    """
    return _current["index"]


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a Device) the default of ``ft.cuda``'s
    functions; RuntimeError if this machine has no such GPU.

    >>> import fntorch as ft, pytest
    >>> if not ft.cuda.is_available():
    ...     with pytest.raises(RuntimeError, match="set_device"):
    ...         ft.cuda.set_device(0)
    """
    _current["index"] = _gpu(device, "set_device").index


def synchronize(device=None) -> None:
    """Wait until every kernel and copy queued on the GPU has finished (PyTorch's
    ``torch.cuda.synchronize``); time GPU work only after it.

    >>> import fntorch as ft, pytest
    >>> if not ft.cuda.is_available():
    ...     with pytest.raises(RuntimeError, match="synchronize"):
    ...         ft.cuda.synchronize()
    """
    _gpu(device, "synchronize").target.synchronize()


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H200'``.

    >>> import fntorch as ft
    >>> ft.cuda.get_device_name() if ft.cuda.is_available() else "no GPU"  # doctest: +ELLIPSIS
    '...'
    """
    name = _gpu(device, "get_device_name").target.properties()["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability as ``(major, minor)``: ``(9, 0)`` on an H100/H200.

    >>> import fntorch as ft
    >>> ft.cuda.get_device_capability() if ft.cuda.is_available() else (0, 0)  # doctest: +SKIP
    (9, 0)
    """
    props = _gpu(device, "get_device_capability").target.properties()
    return int(props["major"]), int(props["minor"])


def memory_allocated(device=None) -> int:
    """Bytes held by live fntorch (CuPy) buffers on the GPU.

    >>> import fntorch as ft
    >>> ft.cuda.memory_allocated() >= 0 if ft.cuda.is_available() else True
    True
    """
    return _gpu(device, "memory_allocated").target.memory_allocated()


def empty_cache() -> None:
    """Hand the memory pool's unused blocks back to the driver (other processes can then
    use them); live tensors are untouched. Does nothing without a GPU, as PyTorch.

    >>> import fntorch as ft
    >>> ft.cuda.empty_cache()
    """
    if is_available():
        for dev in _cuda_devices():
            dev.target.empty_cache()
