"""``ft.cuda``: PyTorch's ``torch.cuda`` queries, answered from fntorch's device registry.

Nothing here imports CuPy: a CUDA device kind registers itself (``fntorch.fx.device``)
only when one is asked for, and these functions only read the registry. Without a CUDA
device ``is_available()`` is False and ``device_count()`` is 0.

>>> import fntorch as ft
>>> ft.cuda.is_available() in (True, False)
True
"""

from __future__ import annotations

from .amp import _cuda_amp as amp  # noqa: F401 - ft.cuda.amp, PyTorch's older spellings
from .fx import device as _device

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


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
