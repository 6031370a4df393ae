"""Gradient clipping, as ``torch.nn.utils.clip_grad``: the ``.grad`` of each parameter
(a cell) is rebound to a clipped value; gradients are values, so nothing is written in
place but the attribute.

``clip_grad_norm_`` is PyTorch's: the total norm is the ``norm_type``-norm of the
per-gradient norms, every gradient is multiplied by ``min(1, max_norm / (total + 1e-6))``
(also when that is 1, as PyTorch), and the total norm is returned as a 0-d tensor.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.zeros(3)); p.grad = ft.asarray([-2.0, 0.5, 3.0])
>>> ft.nn.utils.clip_grad_value_(p, 1.0); p.grad.tolist()
[-1.0, 0.5, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...fx import dtypes
from ...fx.core import Tensor
from ...ops import api
from ..autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors, where: str, what: str) -> list:
    """A single tensor or an iterable of them, as a list (PyTorch accepts both)."""
    if isinstance(tensors, Tensor):
        return [tensors]
    if not isinstance(tensors, Iterable):
        raise TypeError(
            f"{where}: {what} must be a tensor or an iterable of tensors, got "
            f"{type(tensors).__name__}"
        )
    return list(tensors)


def _with_grad(parameters, where: str) -> list:
    params = _as_list(parameters, where, "parameters")
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{where}: parameters[{i}] must be a tensor, got {type(p).__name__}")
    return [p for p in params if p.grad is not None]


def _norm_type(norm_type, where: str) -> float:
    try:
        return float(norm_type)
    except (TypeError, ValueError):
        raise TypeError(
            f"{where}: norm_type must be a number (or 'inf'), got {norm_type!r}"
        ) from None


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:  # fmt: skip
    """The ``norm_type``-norm of the norms of ``tensors`` (as if they were concatenated),
    as ``torch.nn.utils.get_total_norm``; 0.0 when there are none. ``foreach`` is
    accepted and ignored.

    >>> import fntorch as ft
    >>> ft.nn.utils.get_total_norm([ft.asarray([3.0]), ft.asarray([4.0])]).item()
    5.0
    """
    where = "get_total_norm"
    tensors = _as_list(tensors, where, "tensors")
    p = _norm_type(norm_type, where)
    if not tensors:
        return api.asarray(0.0)
    with no_grad():
        dtype = dtypes.result_type(*(t.dtype for t in tensors))
        norms = [api.astype(t.norm(p), dtype) for t in tensors]
        total = api.stack(norms).norm(p)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(
            f"{where}: the total norm of order {p} of the gradients is non-finite "
            f"({float(total)}), so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set error_if_nonfinite=False"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scales the ``.grad`` of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``,
    as ``torch.nn.utils.clip_grads_with_norm_`` (``total_norm`` from ``get_total_norm``).

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); p.grad = ft.asarray([2.0])
    >>> ft.nn.utils.clip_grads_with_norm_([p], 1.0, ft.asarray(4.0))
    >>> round(p.grad.item(), 4)
    0.5
    """
    params = _with_grad(parameters, "clip_grads_with_norm_")
    if not params:
        return
    with no_grad():
        total = total_norm if isinstance(total_norm, Tensor) else api.asarray(total_norm)
        coef = api.clip(float(max_norm) / (total + 1e-6), None, 1.0)
        # all new values first, then the writes: a failure leaves every .grad as it was
        new = [api.astype(p.grad * coef, p.grad.dtype) for p in params]
    for p, g in zip(params, new):
        p.grad = g


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:  # fmt: skip
    """Clips the gradients of ``parameters`` (a parameter or an iterable of them) to a
    total ``norm_type``-norm of at most ``max_norm``, as
    ``torch.nn.utils.clip_grad_norm_``; returns the total norm before clipping. A
    non-finite norm raises ``RuntimeError`` when ``error_if_nonfinite``, and then no
    gradient changes.

    >>> import fntorch as ft
    >>> m = ft.nn.Linear(2, 1); (m(ft.ones((1, 2))) * 10).sum().backward()
    >>> total = ft.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    >>> round(total.item(), 3), round(ft.nn.utils.get_total_norm(
    ...     [p.grad for p in m.parameters()]).item(), 3)
    (17.321, 1.0)
    """
    params = _with_grad(parameters, "clip_grad_norm_")
    total = get_total_norm([p.grad for p in params], norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient of ``parameters`` to ``[-clip_value, clip_value]``, as
    ``torch.nn.utils.clip_grad_value_``.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(2)); p.grad = ft.asarray([5.0, -0.1])
    >>> ft.nn.utils.clip_grad_value_([p], 0.5); p.grad.tolist()
    [0.5, -0.10000000149011612]
    """
    params = _with_grad(parameters, "clip_grad_value_")
    try:
        c = float(clip_value)
    except (TypeError, ValueError):
        raise TypeError(
            f"clip_grad_value_: clip_value must be a number, got {type(clip_value).__name__}"
        ) from None
    with no_grad():
        new = [api.astype(api.clip(p.grad, -c, c), p.grad.dtype) for p in params]
    for p, g in zip(params, new):
        p.grad = g
