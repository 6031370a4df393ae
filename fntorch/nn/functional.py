"""``ft.nn.functional``: PyTorch's functional names and signatures on fntorch tensors.

Every function is built from fntorch's primitives, so each is differentiable by ``grad``,
batched by ``vmap``, compiled by ``jit`` and recorded by the tape. Functions that draw
(``dropout``) take PyTorch's arguments and draw from the global key (``ft.manual_seed``);
``key=`` gives an explicit one, as the pure API does.

>>> import fntorch as ft
>>> F = ft.nn.functional
>>> F.relu(ft.asarray([-1.0, 2.0])).tolist(), F.softmax(ft.zeros(2), dim=-1).tolist()
([0.0, 2.0], [0.5, 0.5])
"""

from __future__ import annotations

import math

from .. import random as _random
from ..fx import dtypes as _dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from ..ops import api as _api
from ..ops import lax as _lax
from ..ops._api_linalg_norms import vector_norm as _vector_norm
from ._fused import fused as _fused
from .functional_pool import _tuple

__all__ = [
    "linear", "relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus",
    "sigmoid", "tanh", "hardtanh", "softmax", "log_softmax", "dropout", "embedding",
    "one_hot", "layer_norm", "rms_norm", "group_norm", "batch_norm", "conv1d", "conv2d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "pad", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "scaled_dot_product_attention",
    "normalize", "selu", "celu", "softsign", "hardswish", "hardsigmoid", "logsigmoid",
    "softmin", "glu", "prelu", "dropout1d", "dropout2d", "interpolate", "pixel_shuffle",
    "cosine_similarity", "pairwise_distance",
    "conv_transpose1d", "conv_transpose2d", "bilinear", "multi_head_attention_forward",
]  # fmt: skip


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _api.asarray(x)


# ---------------------------------------------------------------------- activations


@_autocast_op("linear")
def linear(input, weight, bias=None):  # noqa: A002 - PyTorch's names
    """``input @ weight.T + bias`` (PyTorch's ``F.linear``).

    >>> import fntorch as ft
    >>> ft.nn.functional.linear(ft.ones((1, 2)), ft.ones((3, 2))).tolist()
    [[2.0, 2.0, 2.0]]
    """
    return _linear(input, weight, bias)


@_fused
def _linear(input, weight, bias):  # noqa: A002
    y = _api.matmul(input, _api.matrix_transpose(weight))
    return y if bias is None else y + bias


def relu(input, inplace: bool = False):  # noqa: A002
    """max(x, 0). ``inplace`` is accepted (tensors are values: a new one is returned).

    >>> import fntorch as ft
    >>> ft.nn.functional.relu(ft.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _relu(input)


_relu = _fused(_api.relu)


def relu6(input, inplace: bool = False):  # noqa: A002
    """min(max(x, 0), 6).

    >>> import fntorch as ft
    >>> ft.nn.functional.relu6(ft.asarray([-1.0, 2.0, 8.0])).tolist()
    [0.0, 2.0, 6.0]
    """
    return _api.clip(input, 0.0, 6.0)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):  # noqa: A002
    """x where x > 0, else ``negative_slope * x``.

    >>> import fntorch as ft
    >>> ft.nn.functional.leaky_relu(ft.asarray([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return _api.where(input > 0, input, input * negative_slope)


def elu(input, alpha: float = 1.0, inplace: bool = False):  # noqa: A002
    """x where x > 0, else ``alpha * (exp(x) - 1)``.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.elu(ft.asarray([-1.0, 2.0])).tolist()]
    [-0.6321, 2.0]
    """
    return _api.where(input > 0, input, alpha * _api.expm1(_api.minimum(input, 0.0)))


def gelu(input, approximate: str = "none"):  # noqa: A002
    """GELU, exact (erf) or ``approximate="tanh"``, as PyTorch.

    >>> import fntorch as ft
    >>> F = ft.nn.functional
    >>> [round(v, 4) for v in F.gelu(ft.asarray([-1.0, 2.0]), approximate="tanh").tolist()]
    [-0.1588, 1.9546]
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _gelu(input, approximate=approximate == "tanh")


@_fused
def _gelu(input, approximate):  # noqa: A002
    return _api.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):  # noqa: A002
    """x * sigmoid(x).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.silu(ft.asarray([-1.0, 2.0])).tolist()]
    [-0.2689, 1.7616]
    """
    return input * _api.sigmoid(input)


@_autocast_op("softplus")
def softplus(input, beta: float = 1.0, threshold: float = 20.0):  # noqa: A002
    """log(1 + exp(beta x)) / beta, linear above ``threshold`` (PyTorch's).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.softplus(ft.asarray([0.0, 30.0])).tolist()]
    [0.6931, 30.0]
    """
    bx = input * beta
    return _api.where(bx > threshold, input, _api.logaddexp(bx, 0.0) / beta)


def mish(input, inplace: bool = False):  # noqa: A002
    """x * tanh(softplus(x)).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.mish(ft.asarray([-1.0, 2.0])).tolist()]
    [-0.3034, 1.944]
    """
    return input * _api.tanh(softplus(input))


def sigmoid(input):  # noqa: A002
    """1 / (1 + exp(-x)).

    >>> import fntorch as ft
    >>> ft.nn.functional.sigmoid(ft.asarray([0.0])).tolist()
    [0.5]
    """
    return _api.sigmoid(input)


def tanh(input):  # noqa: A002
    """tanh(x).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.tanh(ft.asarray([0.0, 1.0])).tolist()]
    [0.0, 0.7616]
    """
    return _api.tanh(input)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):  # noqa: A002
    """x clipped to [min_val, max_val].

    >>> import fntorch as ft
    >>> ft.nn.functional.hardtanh(ft.asarray([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    return _api.clip(input, min_val, max_val)


@_autocast_op("softmax")
def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """Softmax over ``dim``.

    >>> import fntorch as ft
    >>> ft.nn.functional.softmax(ft.asarray([[0.0, 0.0]]), dim=1).tolist()
    [[0.5, 0.5]]
    """
    x = input if dtype is None else input.astype(dtype)
    return _api.softmax(x, axis=-1 if dim is None else dim)


@_autocast_op("log_softmax")
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """Log of the softmax over ``dim``.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.log_softmax(ft.asarray([0.0, 0.0]), dim=0).tolist()]
    [-0.6931, -0.6931]
    """
    x = input if dtype is None else input.astype(dtype)
    return _api.log_softmax(x, axis=-1 if dim is None else dim)


@_autocast_op("normalize")
def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12):  # noqa: A002
    """``x / max(||x||_p, eps)`` along ``dim``.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.normalize(ft.asarray([[3.0, 4.0]]))[0].tolist()]
    [0.6, 0.8]
    """
    n = _api.sum(_api.abs(input) ** p, axis=dim, keepdims=True) ** (1.0 / p)
    return input / _api.maximum(n, eps)


# ------------------------------------------------------------------- dropout, embedding


def dropout(input, p: float = 0.5, *args, key=None, training=None, inplace=False):  # noqa: A002
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)``;
    the identity unless ``training``. PyTorch's signature; the mask is drawn from the
    global key (``ft.manual_seed``) unless ``key=`` is given.

    >>> import fntorch as ft
    >>> x = ft.ones(8)
    >>> y = ft.nn.functional.dropout(x, 0.5, key=ft.random.key(0))
    >>> sorted(set(y.tolist())) in ([0.0, 2.0], [0.0], [2.0])
    True
    >>> ft.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    # PyTorch's (input, p, training, inplace), or fntorch's (input, p, key)
    if args and isinstance(args[0], Tensor):
        key, args = args[0], args[1:]
    if args:
        training = args[0] if training is None else training
    training = True if training is None else training
    if isinstance(p, Tensor) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"dropout: p must be a number between 0 and 1, got {p!r}")
    p = float(p)
    if not training or p == 0.0:
        return input
    x = _t(input)
    if p == 1.0:
        return _api.zeros_like(x)
    if key is None:
        from ..random._torch_style import draw_key

        key = draw_key(device=x.device)
    return _dropout(x, key, p=p)


@_fused
def _dropout(x, key, p):
    keep = _random.bernoulli(key, 1.0 - p, x.shape)
    return _api.where(keep, x / (1.0 - p), _api.zeros_like(x))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):  # fmt: skip
    """Rows of ``weight`` at the indices ``input`` (``padding_idx``'s row gets no
    gradient, as PyTorch). With ``max_norm``, the rows that ``input`` reads whose
    ``norm_type``-norm exceeds it are first scaled down to it, as PyTorch: in place when
    ``weight`` is a cell (a Parameter), otherwise in the value that is read (tensors are
    immutable); the scaling itself gets no gradient.

    >>> import fntorch as ft
    >>> ft.nn.functional.embedding(ft.asarray([1]), ft.eye(3)).tolist()
    [[0.0, 1.0, 0.0]]
    >>> w = ft.nn.Parameter(ft.asarray([[3.0, 4.0], [0.3, 0.4]]))
    >>> row = ft.nn.functional.embedding(ft.asarray([0]), w, max_norm=1.0)
    >>> (row * 10).round().tolist(), (w * 10).round().tolist()
    ([[6.0, 8.0]], [[6.0, 8.0], [3.0, 4.0]])
    """
    idx = _t(input)
    if max_norm is not None:
        weight = _embedding_renorm(weight, idx, float(max_norm), float(norm_type))
    if padding_idx is not None:
        pad = padding_idx % weight.shape[0]
        mask = (_api.arange(weight.shape[0], device=weight.device) == pad)[:, None]
        weight = _api.where(mask, _lax.stop_gradient(weight), weight)
    return _api.take(weight, idx, axis=0)


def _embedding_renorm(weight, idx, max_norm, norm_type):
    """``weight`` with the rows ``idx`` reads scaled to norm at most ``max_norm``
    (PyTorch's ``embedding_renorm_``, the same ``1e-7`` guard); a cell is updated."""
    from ..fx.cell import Cell

    w = _lax.stop_gradient(weight)
    norms = _vector_norm(w, axis=1, ord=norm_type)
    read = _api.zeros((w.shape[0],), dtype=_dt.bool_, device=w.device)
    read = read.at[_api.reshape(idx, (-1,))].set(True)
    scale = _api.where(read & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
    renormed = w * _api.astype(scale, w.dtype)[:, None]
    if isinstance(weight, Cell):
        weight.set_(renormed)
        return weight
    return weight + _lax.stop_gradient(renormed - weight)  # the value renormed, grads as is


def one_hot(tensor, num_classes: int = -1):
    """int64 one-hot rows of ``tensor``'s class indices.

    >>> import fntorch as ft
    >>> ft.nn.functional.one_hot(ft.asarray([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    t = _t(tensor)
    n = int(_api.max(t)) + 1 if num_classes < 0 else num_classes
    return (t[..., None] == _api.arange(n, device=t.device)).astype(_dt.int64)


# -------------------------------------------------------------------------- norms


@_autocast_op("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):  # noqa: A002
    """Normalizes over the last ``len(normalized_shape)`` dims (biased variance).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.layer_norm(ft.asarray([1.0, 3.0]), (2,)).tolist()]
    [-1.0, 1.0]
    """
    k = len(_tuple(normalized_shape, 1))
    return _layer_norm(input, weight, bias, k=k, eps=eps)


@_fused
def _layer_norm(input, weight, bias, k, eps):  # noqa: A002
    axes = tuple(range(-k, 0))
    mean = _api.mean(input, axis=axes, keepdims=True)
    var = _api.var(input, axis=axes, keepdims=True)
    y = (input - mean) * _api.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dims.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.functional.rms_norm(ft.asarray([3.0, 4.0]), (2,)).tolist()]
    [0.8485, 1.1314]
    """
    k = len(_tuple(normalized_shape, 1))
    eps = float(_dt.finfo(input.dtype).eps) if eps is None else eps
    ms = _api.mean(input * input, axis=tuple(range(-k, 0)), keepdims=True)
    y = input * _api.rsqrt(ms + eps)
    return y if weight is None else y * weight


@_autocast_op("group_norm")
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):  # noqa: A002
    """Normalizes each of ``num_groups`` channel groups of ``(N, C, *)``.

    >>> import fntorch as ft
    >>> ft.nn.functional.group_norm(ft.ones((2, 4, 3)), 2).shape
    (2, 4, 3)
    """
    n, c = input.shape[:2]
    g = _api.reshape(input, (n, num_groups, -1))
    mean = _api.mean(g, axis=-1, keepdims=True)
    var = _api.var(g, axis=-1, keepdims=True)
    y = _api.reshape((g - mean) * _api.rsqrt(var + eps), input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * _api.reshape(weight, shape)
    return y if bias is None else y + _api.reshape(bias, shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-5):  # fmt: skip
    """Batch normalization over ``(N, C, *)``'s all dims but C. In training, batch
    statistics normalize and the running statistics (cells) are updated as PyTorch's
    (unbiased variance into ``running_var``).

    >>> import fntorch as ft
    >>> F = ft.nn.functional
    >>> x = ft.asarray([[1.0], [3.0]])
    >>> [round(v, 4) for v in F.batch_norm(x, None, None, training=True).flatten().tolist()]
    [-1.0, 1.0]
    """
    if not training:
        return _batch_norm_eval(input, running_mean, running_var, weight, bias, eps=eps)
    if running_mean is None:
        return _batch_norm_train(input, weight, bias, eps=eps)[0]
    if not isinstance(momentum, Tensor):  # an operand, not a setting: it may vary per call
        momentum = _api.asarray(momentum, dtype=running_mean.dtype, device=running_mean.device)
    y, new_mean, new_var = _batch_norm_train_running(
        input, weight, bias, running_mean, running_var, momentum, eps=eps
    )
    _update(running_mean, new_mean)
    _update(running_var, new_var)
    return y


def _normalize(input, mean, var, weight, bias, eps):  # noqa: A002
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    y = (input - _api.reshape(mean, shape)) * _api.rsqrt(_api.reshape(var, shape) + eps)
    if weight is not None:
        y = y * _api.reshape(weight, shape)
    return y if bias is None else y + _api.reshape(bias, shape)


@_fused
def _batch_norm_train(input, weight, bias, eps):  # noqa: A002
    """The normalized batch, and the batch's mean and (biased) variance per channel."""
    axes = (0,) + tuple(range(2, input.ndim))
    mean = _api.mean(input, axis=axes)
    var = _api.var(input, axis=axes)
    return _normalize(input, mean, var, weight, bias, eps), mean, var


@_fused
def _batch_norm_train_running(input, weight, bias, running_mean, running_var, momentum, eps):  # noqa: A002
    """The normalized batch and the new running statistics."""
    y, mean, var = _batch_norm_train.fun(input, weight, bias, eps)
    return y, *_running(input, mean, var, running_mean, running_var, momentum)


_batch_norm_eval = _fused(_normalize)


def _batch_norm_running_stats(input, running_mean, running_var, momentum):  # noqa: A002
    # What one training step of ``batch_norm`` writes into its cells, as values: for a
    # functional copy of a module, whose buffers are not cells.
    axes = (0,) + tuple(range(2, input.ndim))
    mean, var = _api.mean(input, axis=axes), _api.var(input, axis=axes)
    return _running(input, mean, var, running_mean, running_var, momentum)


def _running(input, mean, var, running_mean, running_var, momentum):  # noqa: A002
    axes = (0,) + tuple(range(2, input.ndim))
    n = math.prod(input.shape[i] for i in axes)
    unbiased = var * (n / max(n - 1, 1))
    new_mean = (1 - momentum) * running_mean + momentum * _lax.stop_gradient(mean)
    new_var = (1 - momentum) * running_var + momentum * _lax.stop_gradient(unbiased)
    return new_mean.astype(running_mean.dtype), new_var.astype(running_var.dtype)


def _update(cell, value) -> None:
    from ..fx.cell import Cell

    if isinstance(cell, Cell):
        cell.set_(_lax.stop_gradient(value).astype(cell.dtype))


# ------------------------------------------------------------------------ convolutions


def _conv(input, weight, bias, stride, padding, dilation, groups, nsp):  # noqa: A002
    stride, dilation = _tuple(stride, nsp), _tuple(dilation, nsp)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nsp
        elif padding == "same":
            pads = []
            for k, d in zip(weight.shape[2:], dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            pads = tuple(pads)
        else:
            raise ValueError(f"conv: padding must be 'valid', 'same' or ints, got {padding!r}")
    else:
        pads = tuple((p, p) for p in _tuple(padding, nsp))
    return _conv_bias(input, weight, bias, stride=stride, pads=pads, dilation=dilation,
                      groups=groups)  # fmt: skip


@_fused
def _conv_bias(input, weight, bias, stride, pads, dilation, groups):  # noqa: A002
    y = _lax.conv_general_dilated(
        input, weight, stride, pads, rhs_dilation=dilation, feature_group_count=groups
    )
    if bias is not None:
        y = y + _api.reshape(bias, (1, -1) + (1,) * (input.ndim - 2))
    return y


@_autocast_op("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """1-d cross-correlation over ``(N, C, L)`` (PyTorch's layouts).

    >>> import fntorch as ft
    >>> ft.nn.functional.conv1d(ft.ones((1, 1, 4)), ft.ones((2, 1, 3))).tolist()
    [[[3.0, 3.0], [3.0, 3.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@_autocast_op("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-d cross-correlation over ``(N, C, H, W)`` (PyTorch's layouts).

    >>> import fntorch as ft
    >>> ft.nn.functional.conv2d(ft.ones((1, 1, 3, 3)), ft.ones((2, 1, 2, 2))).shape
    (1, 2, 2, 2)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def pad(input, pad, mode: str = "constant", value=None):  # noqa: A002
    """PyTorch's pad: ``pad`` lists (left, right) pairs from the LAST dim backwards.

    >>> import fntorch as ft
    >>> ft.nn.functional.pad(ft.ones((1, 2)), (1, 0)).tolist()
    [[0.0, 1.0, 1.0]]
    """
    if len(pad) % 2:
        raise ValueError(f"pad: expected an even number of padding values, got {len(pad)}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}  # fmt: skip
    if mode not in modes:
        raise ValueError(f"pad: unknown mode {mode!r}; expected one of {sorted(modes)}")
    if mode == "constant":
        return _api.pad(input, widths, constant_values=0 if value is None else value)
    return _api.pad(input, widths, mode=modes[mode])


from .functional_attention import multi_head_attention_forward  # noqa: E402
from .functional_conv import bilinear, conv_transpose1d, conv_transpose2d  # noqa: E402
from .functional_extra import (  # noqa: E402 - the less common ones, re-exported
    celu,
    cosine_similarity,
    dropout1d,
    dropout2d,
    glu,
    hardsigmoid,
    hardswish,
    interpolate,
    logsigmoid,
    pairwise_distance,
    pixel_shuffle,
    prelu,
    selu,
    softmin,
    softsign,
)
from .functional_loss import (  # noqa: E402 - the losses and attention, re-exported
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    scaled_dot_product_attention,
    smooth_l1_loss,
)
from .functional_pool import (  # noqa: E402 - the pools, re-exported
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
