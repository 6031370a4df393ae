"""More layers with PyTorch's constructor signatures (re-exported by ``layers``): the
less common activations, channel dropout, ``PReLU``, ``Upsample``, ``PixelShuffle``,
the padding layers and the distance modules.

>>> import fntorch as ft
>>> ft.nn.Upsample(scale_factor=2)(ft.zeros((1, 1, 2, 2))).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

from ..fx import dtypes as _dt
from ..ops import api as _api
from . import functional as F
from .module import Module
from .parameter import Parameter

__all__ = [
    "SELU", "CELU", "Softsign", "Hardswish", "Hardsigmoid", "LogSigmoid", "Softmin", "GLU",
    "PReLU", "Dropout1d", "Dropout2d", "Upsample", "PixelShuffle", "CosineSimilarity",
    "PairwiseDistance", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d",
]  # fmt: skip


def _module(name, fn, fields=(), defaults=()):
    """A module class calling ``fn(input, **fields)`` (``inplace`` accepted, unused)."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(zip(fields, defaults))
        values.update(zip(fields, args))
        values.update(kwargs)
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def forward(self, input):  # noqa: A002
        return fn(input, **{k: getattr(self, k) for k in fields if k != "inplace"})

    doc = f"PyTorch's ``nn.{name}`` (``functional.{fn.__name__}``)."
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": doc,
                                  "__module__": __name__})  # fmt: skip


SELU = _module("SELU", F.selu, ("inplace",), (False,))
CELU = _module("CELU", F.celu, ("alpha", "inplace"), (1.0, False))
Softsign = _module("Softsign", F.softsign)
Hardswish = _module("Hardswish", F.hardswish, ("inplace",), (False,))
Hardsigmoid = _module("Hardsigmoid", F.hardsigmoid, ("inplace",), (False,))
LogSigmoid = _module("LogSigmoid", F.logsigmoid)
Softmin = _module("Softmin", F.softmin, ("dim",), (None,))
GLU = _module("GLU", F.glu, ("dim",), (-1,))
PixelShuffle = _module("PixelShuffle", F.pixel_shuffle, ("upscale_factor",), (None,))


class PairwiseDistance(Module):
    """``functional.pairwise_distance`` of its two inputs."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``functional.cosine_similarity`` of its two inputs along ``dim``."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PReLU(Module):
    """``x`` where positive, else ``weight * x``; ``num_parameters`` slopes, each ``init``.

    >>> import fntorch as ft
    >>> ft.nn.PReLU()(ft.asarray([-4.0, 1.0])).tolist()
    [-1.0, 1.0]
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(_api.full((num_parameters,), init, dtype=dtype or _dt.float32))

    def forward(self, input):  # noqa: A002
        return F.prelu(input, self.weight)


class _ChannelDropout(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return type(self)._fn(input, self.p, self.training)


class Dropout1d(_ChannelDropout):
    """Drops whole channels of ``(N, C, L)`` in training mode (the global key)."""

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    """Drops whole channels of ``(N, C, H, W)`` in training mode (the global key)."""

    _fn = staticmethod(F.dropout2d)


class Upsample(Module):
    """``functional.interpolate`` with fixed ``size`` or ``scale_factor`` and ``mode``."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners, self.recompute_scale_factor)  # fmt: skip


class _Pad2d(Module):
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * 4
        self.value = value

    def forward(self, input):  # noqa: A002
        value = self.value if self._mode == "constant" else None
        return F.pad(input, self.padding, self._mode, value)


class ZeroPad2d(_Pad2d):
    """Pads the last two dims with zeros: ``padding`` is (left, right, top, bottom)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ConstantPad2d(_Pad2d):
    """Pads the last two dims with ``value``."""


class ReflectionPad2d(_Pad2d):
    """Pads the last two dims by reflection."""

    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad2d(_Pad2d):
    """Pads the last two dims by repeating the edge."""

    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding)
