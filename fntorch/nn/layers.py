"""Layers with PyTorch's constructor signatures, parameter names, default initialisation
(the same distributions, drawn from the global key) and numerics (``functional``).

>>> import fntorch as ft
>>> lin = ft.nn.Linear(3, 2)
>>> [n for n, _ in lin.named_parameters()], lin(ft.ones((4, 3))).shape
(['weight', 'bias'], (4, 2))
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..ops import api as _api
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = [
    "Identity",
    "Linear",
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Mish",
    "Softplus",
    "Tanh",
    "Sigmoid",
    "Hardtanh",
    "Softmax",
    "LogSoftmax",
    "Flatten",
    "Unflatten",
    "Dropout",
    "Embedding",
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
]  # fmt: skip  (and layers_conv's and layers_extra's, appended at the end)


def _empty(*shape, dtype=None):
    return Parameter(_api.zeros(shape, dtype=dtype or _dt.float32))


class Identity(Module):
    """Returns its input (any constructor arguments ignored, as PyTorch).

    >>> import fntorch as ft
    >>> ft.nn.Identity(54)(ft.asarray([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        """``input``, unchanged."""
        return input


class Linear(Module):
    """``y = x W^T + b``; W and b drawn from U(-1/sqrt(in), 1/sqrt(in)) as PyTorch.

    >>> import fntorch as ft
    >>> m = ft.nn.Linear(3, 2)
    >>> m.weight.shape, m(ft.ones((4, 3))).shape
    ((2, 3), (4, 2))
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty(out_features, in_features, dtype=dtype)
        self.bias = _empty(out_features, dtype=dtype) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws ``weight`` (Kaiming-uniform, a=sqrt(5)) and ``bias``, as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        """``input @ weight.T + bias``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        """The feature sizes and whether there is a bias, for ``repr``."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


def _activation(name, fn, fields=(), defaults=(), example=()):
    """A module class calling ``fn(input, **fields)`` (``inplace`` accepted, unused);
    ``example`` is (a constructor call, its output on ``[-1, 0, 2]`` to 4 places)."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(zip(fields, defaults))
        values.update(zip(fields, args))
        values.update(kwargs)
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def forward(self, input):  # noqa: A002
        return fn(input, **{k: getattr(self, k) for k in fields if k != "inplace"})

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in fields if k != "inplace")

    forward.__doc__ = f"``functional.{fn.__name__}`` of ``input`` with this module's settings."
    extra_repr.__doc__ = "This module's settings (but ``inplace``), for ``repr``."
    call, out = example
    doc = (f"PyTorch's ``nn.{name}`` (``functional.{fn.__name__}``).\n\n"
           f">>> import fntorch as ft\n>>> x = ft.asarray([-1.0, 0.0, 2.0])\n"
           f">>> [round(v, 4) for v in ft.nn.{call}(x).tolist()]\n{out}\n")  # fmt: skip
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc})  # fmt: skip


ReLU = _activation("ReLU", F.relu, ("inplace",), (False,), example=("ReLU()", "[0.0, 0.0, 2.0]"))
ReLU6 = _activation(
    "ReLU6", F.relu6, ("inplace",), (False,), example=("ReLU6()", "[0.0, 0.0, 2.0]")
)
LeakyReLU = _activation(
    "LeakyReLU",
    F.leaky_relu,
    ("negative_slope", "inplace"),
    (0.01, False),
    example=("LeakyReLU(0.1)", "[-0.1, 0.0, 2.0]"),
)
ELU = _activation(
    "ELU", F.elu, ("alpha", "inplace"), (1.0, False), example=("ELU()", "[-0.6321, 0.0, 2.0]")
)
GELU = _activation(
    "GELU", F.gelu, ("approximate",), ("none",), example=("GELU()", "[-0.1587, 0.0, 1.9545]")
)
SiLU = _activation(
    "SiLU", F.silu, ("inplace",), (False,), example=("SiLU()", "[-0.2689, 0.0, 1.7616]")
)
Mish = _activation(
    "Mish", F.mish, ("inplace",), (False,), example=("Mish()", "[-0.3034, 0.0, 1.944]")
)
Softplus = _activation(
    "Softplus",
    F.softplus,
    ("beta", "threshold"),
    (1.0, 20.0),
    example=("Softplus()", "[0.3133, 0.6931, 2.1269]"),
)
Tanh = _activation("Tanh", F.tanh, example=("Tanh()", "[-0.7616, 0.0, 0.964]"))
Sigmoid = _activation("Sigmoid", F.sigmoid, example=("Sigmoid()", "[0.2689, 0.5, 0.8808]"))
Hardtanh = _activation("Hardtanh", F.hardtanh, ("min_val", "max_val", "inplace"),
                       (-1.0, 1.0, False), ("Hardtanh()", "[-1.0, 0.0, 1.0]"))  # fmt: skip
Softmax = _activation(
    "Softmax", F.softmax, ("dim",), (None,), example=("Softmax(dim=0)", "[0.042, 0.1142, 0.8438]")
)
LogSoftmax = _activation(
    "LogSoftmax",
    F.log_softmax,
    ("dim",),
    (None,),
    example=("LogSoftmax(dim=0)", "[-3.1698, -2.1698, -0.1698]"),
)
for _cls in (ReLU, ReLU6, LeakyReLU, ELU, GELU, SiLU, Mish, Softplus, Tanh, Sigmoid, Hardtanh,
             Softmax, LogSoftmax):  # fmt: skip
    _cls.__module__ = __name__


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim``.

    >>> import fntorch as ft
    >>> ft.nn.Flatten()(ft.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        """``input`` with dims ``start_dim..end_dim`` merged into one."""
        return input.flatten(self.start_dim, self.end_dim)


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``.

    >>> import fntorch as ft
    >>> ft.nn.Unflatten(1, (2, 3))(ft.zeros((4, 6))).shape
    (4, 2, 3)
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):  # noqa: A002
        """``input`` with dim ``dim`` split into ``unflattened_size``."""
        d = self.dim % input.ndim
        shape = input.shape[:d] + self.unflattened_size + input.shape[d + 1 :]
        return _api.reshape(input, shape)


class Dropout(Module):
    """Drops with probability ``p`` in training mode (the global key), scaling the kept
    elements by ``1 / (1 - p)``; the identity in eval mode.

    >>> import fntorch as ft
    >>> ft.nn.Dropout(0.5)(ft.ones(4)).shape
    (4,)
    >>> ft.nn.Dropout(0.5).eval()(ft.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        """``input`` with elements dropped (training mode) or unchanged (eval mode)."""
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        """``p`` and ``inplace``, for ``repr``."""
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows, drawn from N(0, 1) (the ``padding_idx``
    row zero).

    >>> import fntorch as ft
    >>> emb = ft.nn.Embedding(10, 3, padding_idx=0)
    >>> emb(ft.asarray([[0, 4]])).shape, emb(ft.asarray([0])).tolist()
    ((1, 2, 3), [[0.0, 0.0, 0.0]])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        if _weight is None:
            self.weight = _empty(num_embeddings, embedding_dim, dtype=dtype)
            init.normal_(self.weight)
            if padding_idx is not None:
                self.weight.data = self.weight.data.at[padding_idx].set(0.0)
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def forward(self, input):  # noqa: A002
        """The rows of ``weight`` at the indices ``input`` (renormed to ``max_norm`` if set)."""
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def extra_repr(self):
        """The table's size and ``padding_idx``, for ``repr``."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s if self.padding_idx is None else s + f", padding_idx={self.padding_idx}"


class LayerNorm(Module):
    """Normalizes over the last dims, with ``weight`` (ones) and ``bias`` (zeros).

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.LayerNorm(2)(ft.asarray([1.0, 3.0])).tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape, self.eps = tuple(shape), eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_api.ones(self.normalized_shape, dtype=dtype or _dt.float32))
            self.bias = (
                Parameter(_api.zeros(self.normalized_shape, dtype=dtype or _dt.float32))
                if bias else None
            )  # fmt: skip
            if not bias:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        """``input`` normalized over ``normalized_shape``, then scaled and shifted."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        """``normalized_shape``, ``eps`` and ``elementwise_affine``, for ``repr``."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(Module):
    """``x / rms(x) * weight`` over the last dims.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.nn.RMSNorm(2)(ft.asarray([3.0, 4.0])).tolist()]
    [0.8485, 1.1314]
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape, self.eps = tuple(shape), eps
        if elementwise_affine:
            self.weight = Parameter(_api.ones(self.normalized_shape, dtype=dtype or _dt.float32))
        else:
            self.register_parameter("weight", None)

    def forward(self, input):  # noqa: A002
        """``input`` divided by its root mean square over ``normalized_shape``, scaled."""
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)


class GroupNorm(Module):
    """Normalizes each of ``num_groups`` groups of channels.

    >>> import fntorch as ft
    >>> ft.nn.GroupNorm(2, 4)(ft.ones((2, 4, 3))).shape
    (2, 4, 3)
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups, num_channels, eps, affine)  # fmt: skip
        if affine:
            self.weight = Parameter(_api.ones(num_channels, dtype=dtype or _dt.float32))
            self.bias = Parameter(_api.zeros(num_channels, dtype=dtype or _dt.float32))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        """``input`` normalized per group of channels, then scaled and shifted per channel."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = dtype or _dt.float32
        if affine:
            self.weight = Parameter(_api.ones(num_features, dtype=dt))
            self.bias = Parameter(_api.zeros(num_features, dtype=dt))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _api.zeros(num_features, dtype=dt))
            self.register_buffer("running_var", _api.ones(num_features, dtype=dt))
            self.register_buffer("num_batches_tracked", _api.asarray(0, dtype=_dt.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def _check(self, input):
        pass

    def forward(self, input):  # noqa: A002
        """``input`` normalized per channel (batch statistics in training mode, updating
        the running ones; the running ones in eval mode), then scaled and shifted.
        """
        self._check(input)
        use_batch = self.training or not self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            from ..fx.cell import Cell

            functional = not isinstance(self.running_mean, Cell)
            nbt = self.num_batches_tracked
            count = None if nbt is None else (nbt if functional else nbt.data) + 1
            if isinstance(nbt, Cell):
                nbt.set_(count)
            if self.momentum is None:  # a cumulative moving average, traceable
                momentum = 1.0 / count.astype(self.running_mean.dtype)
            if functional:
                # A functional copy (a module unflattened from values, as inside
                # ``ft.grad``) has no cells to write: the new statistics replace its
                # own buffers, so a pure step can return the copy (``has_aux``) and
                # keep them, as flax returns its ``batch_stats``.
                buffers = self.__dict__["_buffers"]
                buffers["running_mean"], buffers["running_var"] = F._batch_norm_running_stats(
                    input, self.running_mean, self.running_var, momentum
                )
                if count is not None:
                    buffers["num_batches_tracked"] = count
        return F.batch_norm(
            input,
            self.running_mean if (self.training and self.track_running_stats)
            or not use_batch else None,
            self.running_var if (self.training and self.track_running_stats)
            or not use_batch else None,
            self.weight, self.bias, use_batch, momentum, self.eps,
        )  # fmt: skip

    def extra_repr(self):
        """The channel count and settings, for ``repr``."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)``.

    >>> import fntorch as ft
    >>> ft.nn.BatchNorm1d(3)(ft.ones((4, 3))).shape
    (4, 3)
    """

    def _check(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)``.

    >>> import fntorch as ft
    >>> ft.nn.BatchNorm2d(3)(ft.ones((2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    """

    def _check(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)``: batch statistics per channel in
    training mode (updating the running ones), the running ones in eval mode.

    >>> import fntorch as ft
    >>> ft.nn.BatchNorm3d(2)(ft.ones((2, 2, 1, 3, 3))).shape
    (2, 2, 1, 3, 3)
    """

    def _check(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


from . import layers_conv as _conv  # noqa: E402 - convolution and pooling, re-exported
from . import layers_extra as _extra  # noqa: E402 - the less common layers, re-exported
from .layers_conv import *  # noqa: E402, F403
from .layers_extra import *  # noqa: E402, F403

__all__ += _conv.__all__ + _extra.__all__
