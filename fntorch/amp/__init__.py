"""``ft.amp``: automatic mixed precision, PyTorch's ``torch.amp``.

``autocast`` runs matmuls and convolutions in a low dtype and the operations PyTorch
lists as float32 ones in float32 (``_lists.py``), through the policy hooks of
``fx/autocast.py``; ``GradScaler`` scales the loss so that float16 gradients do not
underflow, and skips the steps whose gradients overflowed.

>>> import fntorch as ft
>>> with ft.amp.autocast("cpu"):
...     (ft.ones((2, 2)) @ ft.ones((2, 2))).dtype
dtype(bfloat16)
"""

from ._autocast import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from ._grad_scaler import GradScaler

__all__ = [
    "autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled",
    "get_autocast_dtype",
]  # fmt: skip
