"""``ft.nn.functional``: PyTorch's functional names on fntorch tensors (a first few).

Randomness is explicit: functions that draw take a ``key`` from ``ft.random``.
"""

from __future__ import annotations

from .. import random as _random
from ..fx.core import Tensor
from ..ops import api as _api

__all__ = ["dropout"]


def dropout(x, p: float = 0.5, key=None, training: bool = True) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``.

    The identity when ``training`` is False or ``p == 0``. Unlike PyTorch's ``F.dropout``
    the mask comes from an explicit ``key``, so the same key drops the same elements
    eagerly, under ``ft.jit`` and under ``ft.vmap``.

    >>> import fntorch as ft
    >>> x = ft.ones(8)
    >>> y = ft.nn.functional.dropout(x, 0.5, ft.random.key(0))
    >>> sorted(set(y.tolist())) in ([0.0, 2.0], [0.0], [2.0])
    True
    >>> ft.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    if isinstance(p, Tensor) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"dropout: p must be a number between 0 and 1, got {p!r}")
    p = float(p)
    if not training or p == 0.0:
        return x
    if key is None:
        raise ValueError(
            "dropout: training=True with p > 0 needs a key: "
            "dropout(x, p, key=ft.random.key(seed)) (split a fresh key for each call)"
        )
    x = x if isinstance(x, Tensor) else _api.asarray(x)
    if p == 1.0:
        return _api.zeros_like(x)
    keep = _random.bernoulli(key, 1.0 - p, x.shape)
    return _api.where(keep, x / (1.0 - p), _api.zeros_like(x))
