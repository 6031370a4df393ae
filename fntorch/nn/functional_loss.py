"""``ft.nn.functional``'s losses and attention (re-exported there), PyTorch's signatures.

>>> import fntorch as ft
>>> F = ft.nn.functional
>>> round(float(F.cross_entropy(ft.zeros((2, 4)), ft.asarray([0, 3]))), 4)
1.3863
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from ..ops import api as _api
from ._fused import fused as _fused

__all__ = [
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "scaled_dot_product_attention",
]  # fmt: skip


def _reduce(loss, reduction: str, where: str):
    if reduction == "mean":
        return _api.mean(loss)
    if reduction == "sum":
        return _api.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{where}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _t(x):
    return x if isinstance(x, Tensor) else _api.asarray(x)


@_autocast_op("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
             reduce=None, reduction="mean"):  # fmt: skip
    """Negative log-likelihood of class indices ``target`` under log-probabilities
    ``input`` (``(N, C)`` or ``(N, C, *)``); ``weight`` per class; ``ignore_index``
    targets count for nothing (the mean divides by the summed weights, as PyTorch).

    >>> import fntorch as ft
    >>> ft.nn.functional.nll_loss(ft.asarray([[-1.0, -2.0]]), ft.asarray([1])).item()
    2.0
    """
    target = _t(target)
    c_axis = 1 if input.ndim > 1 else 0
    safe = _api.where(target == ignore_index, 0, target)
    picked = _api.squeeze(
        _api.take_along_axis(input, _api.expand_dims(safe, axis=c_axis), axis=c_axis),
        axis=c_axis,
    )
    w = (
        _api.ones(target.shape, dtype=input.dtype, device=input.device)
        if weight is None
        else _api.take(weight, safe)
    )
    w = _api.where(target == ignore_index, 0.0, w).astype(input.dtype)
    loss = -picked * w
    if reduction == "mean":
        return _api.sum(loss) / _api.sum(w)
    return _reduce(loss, reduction, "nll_loss")


@_autocast_op("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):  # fmt: skip
    """Cross-entropy of logits ``input`` (class dim 1) against class indices or class
    probabilities ``target``, with ``weight``, ``ignore_index`` and
    ``label_smoothing`` as PyTorch.

    >>> import fntorch as ft
    >>> F = ft.nn.functional
    >>> float(F.cross_entropy(ft.asarray([[0.0, 100.0]]), ft.asarray([1])))
    0.0
    """
    return _cross_entropy(
        input, _t(target), weight,
        ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing,
    )  # fmt: skip


@_fused
def _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):  # noqa: A002
    c_axis = 1 if input.ndim > 1 else 0
    logp = _api.log_softmax(input, axis=c_axis)
    n_classes = input.shape[c_axis]
    shape = [1] * input.ndim
    shape[c_axis] = n_classes
    if _api.isdtype(target.dtype, "real floating"):  # class probabilities
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        w = 1.0 if weight is None else _api.reshape(weight, shape)
        loss = -_api.sum(logp * target * w, axis=c_axis)
        return _reduce(loss, reduction, "cross_entropy")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    keep = (target != ignore_index).astype(input.dtype)
    w = 1.0 if weight is None else _api.reshape(weight, shape)
    smooth = -_api.sum(logp * w, axis=c_axis) * keep
    if reduction == "mean":
        if weight is None:
            smooth = _api.sum(smooth) / _api.sum(keep)
        else:
            safe = _api.where(target == ignore_index, 0, target)
            smooth = _api.sum(smooth) / _api.sum(_api.take(weight, safe) * keep)
    else:
        smooth = _reduce(smooth, reduction, "cross_entropy")
    return (1 - label_smoothing) * nll + label_smoothing / n_classes * smooth


@_autocast_op("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):  # noqa: A002
    """Mean squared error.

    >>> import fntorch as ft
    >>> ft.nn.functional.mse_loss(ft.asarray([0.0, 2.0]), ft.asarray([1.0, 0.0])).item()
    2.5
    """
    return _reduce((input - target) ** 2, reduction, "mse_loss")


@_autocast_op("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """Mean absolute error.

    >>> import fntorch as ft
    >>> ft.nn.functional.l1_loss(ft.asarray([0.0, 2.0]), ft.asarray([1.0, 0.0])).item()
    1.5
    """
    return _reduce(_api.abs(input - target), reduction, "l1_loss")


@_autocast_op("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
                   beta=1.0):  # fmt: skip
    """Quadratic below ``beta``, linear above (divided by ``beta``, as PyTorch).

    >>> import fntorch as ft
    >>> ft.nn.functional.smooth_l1_loss(ft.asarray([0.0, 2.0]), ft.asarray([0.5, 0.0])).item()
    0.8125
    """
    d = _api.abs(input - target)
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    loss = _api.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


@_autocast_op("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    """Quadratic below ``delta``, ``delta * (|d| - delta / 2)`` above.

    >>> import fntorch as ft
    >>> F = ft.nn.functional
    >>> F.huber_loss(ft.asarray([0.0, 2.0]), ft.asarray([0.5, 0.0]), delta=1.0).item()
    0.8125
    """
    d = _api.abs(input - target)
    loss = _api.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction, "huber_loss")


@_autocast_op("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):  # fmt: skip
    """BCE of probabilities ``input``; logs clamped at -100, as PyTorch.

    >>> import fntorch as ft
    >>> round(ft.nn.functional.binary_cross_entropy(ft.asarray([0.5]), ft.asarray([1.0])).item(), 4)
    0.6931
    """
    loss = -(
        target * _api.maximum(_api.log(input), -100.0)
        + (1 - target) * _api.maximum(_api.log1p(-input), -100.0)
    )
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


@_autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):  # fmt: skip
    """BCE of logits, computed stably (``log(1 + exp(-|x|))``).

    >>> import fntorch as ft
    >>> F = ft.nn.functional
    >>> round(F.binary_cross_entropy_with_logits(ft.asarray([0.0]), ft.asarray([1.0])).item(), 4)
    0.6931
    """
    log_sig = -_api.logaddexp(-input, 0.0)  # log sigmoid(x)
    log_not = -_api.logaddexp(input, 0.0)  # log (1 - sigmoid(x))
    pos = target * log_sig if pos_weight is None else pos_weight * target * log_sig
    loss = -(pos + (1 - target) * log_not)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


@_autocast_op("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
           log_target=False):  # fmt: skip
    """KL divergence of ``target`` from log-probabilities ``input``.

    >>> import fntorch as ft
    >>> p = ft.asarray([0.5, 0.5])
    >>> ft.nn.functional.kl_div(ft.log(p), p, reduction="sum").item()
    0.0
    """
    if log_target:
        loss = _api.exp(target) * (target - input)
    else:
        safe = _api.where(target > 0, target, 1.0)
        loss = _api.where(target > 0, target * (_api.log(safe) - input), 0.0)
    if reduction == "batchmean":
        return _api.sum(loss) / input.shape[0]
    return _reduce(loss, reduction, "kl_div")


@_autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):  # fmt: skip
    """``softmax(q k^T * scale + mask) v`` over ``(..., L, E)`` queries and ``(..., S, E)``
    keys, as PyTorch's: a bool ``attn_mask`` keeps where True, a float one is added;
    ``is_causal`` masks the future; ``dropout_p`` drops weights from the global key.

    >>> import fntorch as ft
    >>> q = ft.ones((1, 2, 4))
    >>> ft.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    (1, 2, 4)
    """
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if dropout_p > 0.0:
        return _attention(query, key, value, attn_mask, dropout_p=dropout_p,
                          is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)  # fmt: skip
    return _fused_attention(query, key, value, attn_mask, dropout_p=0.0, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa)  # fmt: skip


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    L, S = query.shape[-2], key.shape[-2]
    if enable_gqa and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _api.repeat(key, rep, axis=-3)
        value = _api.repeat(value, rep, axis=-3)
    scores = _api.matmul(query, _api.matrix_transpose(key)) * scale
    if is_causal:
        causal = _api.tril(_api.ones((L, S), dtype=_dt.bool_, device=scores.device))
        scores = _api.where(causal, scores, -_api.inf)
    if attn_mask is not None:
        if attn_mask.dtype == _dt.bool_:
            scores = _api.where(attn_mask, scores, -_api.inf)
        else:
            scores = scores + attn_mask
    weights = _api.softmax(scores, axis=-1)
    if dropout_p > 0.0:
        from .functional import dropout

        weights = dropout(weights, dropout_p, True)
    return _api.matmul(weights, value)


_fused_attention = _fused(_attention)
