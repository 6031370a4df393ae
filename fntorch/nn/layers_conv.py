"""The convolution and pooling layers with PyTorch's constructor signatures (re-exported
by ``layers``): ``Conv1d``/``Conv2d`` drawn as PyTorch draws them (the global key), the
max, average and adaptive-average pools over the last one or two dims.

>>> import fntorch as ft
>>> ft.nn.MaxPool2d(2)(ft.nn.Conv2d(3, 4, 3)(ft.ones((1, 3, 6, 6)))).shape
(1, 4, 2, 2)
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
    "Conv1d",
    "Conv2d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
]  # fmt: skip


_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _empty(*shape, dtype=None):
    return Parameter(_api.zeros(shape, dtype=dtype or _dt.float32))


class _ConvNd(Module):
    _nsp = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        n = self._nsp
        tup = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n  # noqa: E731
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {sorted(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        self.padding = padding if isinstance(padding, str) else tup(padding)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype)
        self.bias = _empty(out_channels, dtype=dtype) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws ``weight`` (Kaiming-uniform, a=sqrt(5)) and ``bias``, as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        """The convolution of ``input`` with ``weight``, plus ``bias``; a ``padding_mode``
        other than zeros pads with ``F.pad`` first, as PyTorch does."""
        fn = F.conv2d if self._nsp == 2 else F.conv1d
        padding = self.padding
        if self.padding_mode != "zeros":
            input = F.pad(input, self._pad_widths(), mode=self.padding_mode)  # noqa: A001
            padding = 0
        return fn(input, self.weight, self.bias, self.stride, padding, self.dilation,
                  self.groups)  # fmt: skip

    def _pad_widths(self) -> tuple:
        """``F.pad``'s widths (last dim first, (left, right) each) for ``self.padding``."""
        widths = []
        for i in reversed(range(self._nsp)):
            if self.padding == "valid":
                left = right = 0
            elif self.padding == "same":  # as PyTorch: the odd one goes on the right
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                left, right = total // 2, total - total // 2
            else:
                left = right = self.padding[i]
            widths += [left, right]
        return tuple(widths)

    def extra_repr(self):
        """The channel counts and the settings that differ from the defaults, for ``repr``."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        if self.padding not in ((0,) * self._nsp, "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nsp:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s if self.padding_mode == "zeros" else s + f", padding_mode={self.padding_mode}"


class Conv1d(_ConvNd):
    """1-d convolution over ``(N, C, L)``.

    >>> import fntorch as ft
    >>> ft.nn.Conv1d(2, 4, 3)(ft.ones((1, 2, 8))).shape
    (1, 4, 6)
    """

    _nsp = 1


class Conv2d(_ConvNd):
    """2-d convolution over ``(N, C, H, W)``.

    >>> import fntorch as ft
    >>> m = ft.nn.Conv2d(3, 8, 3, padding=1)
    >>> m.weight.shape, m(ft.ones((1, 3, 5, 5))).shape
    ((8, 3, 3, 3), (1, 8, 5, 5))
    """

    _nsp = 2


class _Pool(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, count_include_pad=True, divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode
        self.return_indices, self.count_include_pad = return_indices, count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        """``kernel_size``, ``stride`` and ``padding``, for ``repr``."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_Pool):
    """Max over windows of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.MaxPool1d(2)(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[3.0, 2.0]]]
    """

    def forward(self, input):  # noqa: A002
        """The max of each window of ``input``'s last dim."""
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class MaxPool2d(_Pool):
    """Max over windows of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.MaxPool2d(2)(ft.zeros((1, 1, 4, 6))).shape
    (1, 1, 2, 3)
    """

    def forward(self, input):  # noqa: A002
        """The max of each window of ``input``'s last two dims."""
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class MaxPool3d(_Pool):
    """Max over windows of the last three dims.

    >>> import fntorch as ft
    >>> ft.nn.MaxPool3d(2)(ft.zeros((1, 1, 4, 4, 6))).shape
    (1, 1, 2, 2, 3)
    """

    def forward(self, input):  # noqa: A002
        """The max of each window of ``input``'s last three dims."""
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)  # fmt: skip


class AvgPool1d(_Pool):
    """Mean over windows of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.AvgPool1d(2)(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):  # fmt: skip
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad)  # fmt: skip

    def forward(self, input):  # noqa: A002
        """The mean of each window of ``input``'s last dim."""
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)  # fmt: skip


class AvgPool2d(_Pool):
    """Mean over windows of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.AvgPool2d(2)(ft.zeros((1, 1, 4, 6))).shape
    (1, 1, 2, 3)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):  # fmt: skip
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad,
                         divisor_override=divisor_override)  # fmt: skip

    def forward(self, input):  # noqa: A002
        """The mean of each window of ``input``'s last two dims."""
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class AdaptiveAvgPool1d(Module):
    """Mean over ``output_size`` bins of the last dim.

    >>> import fntorch as ft
    >>> ft.nn.AdaptiveAvgPool1d(2)(ft.asarray([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        """The mean of each of ``output_size`` bins of ``input``'s last dim."""
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Mean over ``output_size`` bins of the last two dims.

    >>> import fntorch as ft
    >>> ft.nn.AdaptiveAvgPool2d((1, 1))(ft.zeros((2, 3, 4, 6))).shape
    (2, 3, 1, 1)
    """

    def forward(self, input):  # noqa: A002
        """The mean of each of ``output_size`` bins of ``input``'s last two dims."""
        return F.adaptive_avg_pool2d(input, self.output_size)
