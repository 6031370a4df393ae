"""``ft.cuda.amp``: PyTorch's older spellings, ``torch.cuda.amp.autocast(...)`` being
``autocast("cuda", ...)`` and ``torch.cuda.amp.GradScaler(...)`` being
``GradScaler("cuda", ...)``.

>>> import fntorch as ft
>>> ft.cuda.amp.GradScaler(enabled=False).is_enabled()
False
"""

from __future__ import annotations

from . import _autocast, _grad_scaler

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast.autocast):
    """``ft.autocast("cuda", ...)`` (PyTorch's ``torch.cuda.amp.autocast``); without a
    CUDA device it warns and does nothing, as PyTorch's does.

    >>> import fntorch as ft, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ac = ft.cuda.amp.autocast(enabled=False)
    >>> ac.device_type
    'cuda'
    """

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled=None):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """``ft.amp.GradScaler("cuda", ...)`` (PyTorch's ``torch.cuda.amp.GradScaler``).

    >>> import fntorch as ft
    >>> ft.cuda.amp.GradScaler(enabled=False).get_scale()
    1.0
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):  # fmt: skip
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
