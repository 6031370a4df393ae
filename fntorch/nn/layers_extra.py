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
from ._factory import functional_class, store_settings
from .module import Module
from .parameter import Parameter

__all__ = [
    "SELU", "CELU", "Softsign", "Hardswish", "Hardsigmoid", "LogSigmoid", "Softmin", "GLU",
    "PReLU", "Dropout1d", "Dropout2d", "Upsample", "PixelShuffle", "CosineSimilarity",
    "PairwiseDistance", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d",
]  # fmt: skip


def _module(name, fn, fields=(), defaults=(), example=""):
    """A module class calling ``fn(input, **fields)`` (``inplace`` accepted, unused);
    ``example`` is the doctest its docstring carries."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        store_settings(self, fields, defaults, args, kwargs)

    def forward(self, input):  # noqa: A002
        return fn(input, **{k: getattr(self, k) for k in fields if k != "inplace"})

    doc = f"PyTorch's ``nn.{name}`` (``functional.{fn.__name__}``).\n{example}"
    return functional_class(name, Module, fn, forward, __name__, doc, __init__=__init__)


def _example(call, out):
    """The doctest of ``ft.nn.<call>`` on ``[-1, 0, 2]``, rounded to 4 places, giving ``out``."""
    return f"""
>>> import fntorch as ft
>>> [round(v, 4) for v in ft.nn.{call}(ft.asarray([-1.0, 0.0, 2.0])).tolist()]
{out}
"""


SELU = _module("SELU", F.selu, ("inplace",), (False,), _example("SELU()", "[-1.1113, 0.0, 2.1014]"))
CELU = _module("CELU", F.celu, ("alpha", "inplace"), (1.0, False),
               _example("CELU(alpha=1.0)", "[-0.6321, 0.0, 2.0]"))  # fmt: skip
Softsign = _module("Softsign", F.softsign, example=_example("Softsign()", "[-0.5, 0.0, 0.6667]"))
Hardswish = _module("Hardswish", F.hardswish, ("inplace",), (False,),
                    _example("Hardswish()", "[-0.3333, 0.0, 1.6667]"))  # fmt: skip
Hardsigmoid = _module("Hardsigmoid", F.hardsigmoid, ("inplace",), (False,),
                      _example("Hardsigmoid()", "[0.3333, 0.5, 0.8333]"))  # fmt: skip
LogSigmoid = _module("LogSigmoid", F.logsigmoid,
                     example=_example("LogSigmoid()", "[-1.3133, -0.6931, -0.1269]"))  # fmt: skip
Softmin = _module("Softmin", F.softmin, ("dim",), (None,),
                  _example("Softmin(dim=0)", "[0.7054, 0.2595, 0.0351]"))  # fmt: skip
GLU = _module(
    "GLU",
    F.glu,
    ("dim",),
    (-1,),
    example="""
The first half of ``dim`` gated by the sigmoid of the second half.

>>> import fntorch as ft
>>> ft.nn.GLU()(ft.asarray([1.0, 2.0, 0.0, 0.0])).tolist()
[0.5, 1.0]
""",
)
PixelShuffle = _module(
    "PixelShuffle",
    F.pixel_shuffle,
    ("upscale_factor",),
    (None,),
    example="""
``(N, C*r*r, H, W)`` to ``(N, C, H*r, W*r)`` for ``upscale_factor`` r.

>>> import fntorch as ft
>>> ft.nn.PixelShuffle(2)(ft.zeros((1, 8, 3, 3))).shape
(1, 2, 6, 6)
""",
)


class PairwiseDistance(Module):
    """``functional.pairwise_distance`` of its two inputs: the ``p``-norm of ``x1 - x2 + eps``
    over the last dim.

    >>> import fntorch as ft
    >>> d = ft.nn.PairwiseDistance()(ft.asarray([[0.0, 0.0]]), ft.asarray([[3.0, 4.0]]))
    >>> [round(v, 4) for v in d.tolist()]
    [5.0]
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        """The ``p``-norm distance between the rows of ``x1`` and ``x2``."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """``functional.cosine_similarity`` of its two inputs along ``dim``.

    >>> import fntorch as ft
    >>> s = ft.nn.CosineSimilarity(dim=0)(ft.asarray([1.0, 0.0]), ft.asarray([1.0, 1.0]))
    >>> round(s.item(), 4)
    0.7071
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        """The cosine of the angle between ``x1`` and ``x2`` along ``dim``."""
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
        """``input`` where positive, else ``weight * input`` (one slope per channel)."""
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
    """Drops whole channels of ``(N, C, L)`` in training mode (the global key), scaling
    the kept ones by ``1 / (1 - p)``; the identity in eval mode.

    >>> import fntorch as ft
    >>> ft.nn.Dropout1d(0.5)(ft.ones((2, 3, 4))).shape
    (2, 3, 4)
    >>> ft.nn.Dropout1d(0.5).eval()(ft.ones((1, 2, 2))).tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    """Drops whole channels of ``(N, C, H, W)`` in training mode (the global key), scaling
    the kept ones by ``1 / (1 - p)``; the identity in eval mode.

    >>> import fntorch as ft
    >>> ft.nn.Dropout2d(0.5)(ft.ones((2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    >>> ft.nn.Dropout2d(0.5).eval()(ft.ones((1, 2, 2, 2))).sum().item()
    8.0
    """

    _fn = staticmethod(F.dropout2d)


class Upsample(Module):
    """``functional.interpolate`` with fixed ``size`` or ``scale_factor`` and ``mode``.

    >>> import fntorch as ft
    >>> ft.nn.Upsample(scale_factor=2)(ft.zeros((1, 1, 2, 3))).shape
    (1, 1, 4, 6)
    >>> ft.nn.Upsample(size=(3, 3), mode="bilinear")(ft.zeros((1, 1, 2, 2))).shape
    (1, 1, 3, 3)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):  # fmt: skip
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):  # noqa: A002
        """``input`` resized by ``functional.interpolate`` with this module's settings."""
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
    """Pads the last two dims with zeros: ``padding`` is (left, right, top, bottom), or
    one int for all four.

    >>> import fntorch as ft
    >>> ft.nn.ZeroPad2d(1)(ft.ones((1, 1, 2, 2))).shape
    (1, 1, 4, 4)
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ConstantPad2d(_Pad2d):
    """Pads the last two dims with ``value``: ``padding`` is (left, right, top, bottom).

    >>> import fntorch as ft
    >>> ft.nn.ConstantPad2d((1, 0, 0, 0), 3.0)(ft.ones((1, 1, 1, 2))).tolist()
    [[[[3.0, 1.0, 1.0]]]]
    """


class ReflectionPad2d(_Pad2d):
    """Pads the last two dims by reflection (the edge itself not repeated).

    >>> import fntorch as ft
    >>> ft.nn.ReflectionPad2d((1, 1, 0, 0))(ft.asarray([[[[1.0, 2.0]]]])).tolist()
    [[[[2.0, 1.0, 2.0, 1.0]]]]
    """

    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad2d(_Pad2d):
    """Pads the last two dims by repeating the edge.

    >>> import fntorch as ft
    >>> ft.nn.ReplicationPad2d((1, 1, 0, 0))(ft.asarray([[[[1.0, 2.0]]]])).tolist()
    [[[[1.0, 1.0, 2.0, 2.0]]]]
    """

    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding)
