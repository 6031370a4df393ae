"""``ConvTranspose1d``, ``ConvTranspose2d`` and ``Bilinear``, with PyTorch's constructor
signatures, parameter names and shapes, default initialisation (the same distributions,
drawn from the global key) and numerics (``functional_conv``).

>>> import fntorch as ft
>>> up = ft.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
>>> up.weight.shape, up(ft.ones((1, 4, 5, 5))).shape
((4, 2, 3, 3), (1, 2, 10, 10))
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..ops import api as _api
from . import functional_conv as FC
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "Bilinear"]


def _empty(*shape, dtype=None):
    return Parameter(_api.zeros(shape, dtype=dtype or _dt.float32))


class _ConvTransposeNd(Module):
    _nsp = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        name = type(self).__name__
        n = self._nsp
        tup = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n  # noqa: E731
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                f"must be divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            raise ValueError(
                f"{name}: only padding_mode='zeros' is supported for transposed "
                f"convolutions (as PyTorch), got {padding_mode!r}"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = tup(kernel_size), tup(stride), tup(padding)
        self.dilation, self.output_padding = tup(dilation), tup(output_padding)
        self.groups, self.padding_mode, self.transposed = groups, padding_mode, True
        self.weight = _empty(in_channels, out_channels // groups, *self.kernel_size, dtype=dtype)
        self.bias = _empty(out_channels, dtype=dtype) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input, output_size):  # noqa: A002
        """The ``output_padding`` that makes the output ``output_size`` (PyTorch's)."""
        if output_size is None:
            return self.output_padding
        n, name = self._nsp, type(self).__name__
        size = tuple(int(s) for s in output_size)
        if len(size) == n + 2 or (len(size) == n + 1 and input.ndim == n + 1):
            size = size[-n:]
        if len(size) != n:
            raise ValueError(
                f"{name}.forward: output_size must have {n} or {n + 2} elements, got "
                f"{tuple(output_size)}"
            )
        out = []
        for i, want in enumerate(size):
            lo = ((input.shape[-n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                  + self.dilation[i] * (self.kernel_size[i] - 1) + 1)  # fmt: skip
            hi = lo + self.stride[i] - 1
            if not lo <= want <= hi:
                raise ValueError(
                    f"{name}.forward: requested an output size of {size}, but valid sizes "
                    f"of dim {i} range from {lo} to {hi} (for an input of {input.shape})"
                )
            out.append(want - lo)
        return tuple(out)

    def forward(self, input, output_size=None):  # noqa: A002
        fn = FC.conv_transpose2d if self._nsp == 2 else FC.conv_transpose1d
        op = self._output_padding(input, output_size)
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)  # fmt: skip

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        if self.padding != (0,) * self._nsp:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nsp:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nsp:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s if self.bias is not None else s + ", bias=False"


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over ``(N, C, L)``; ``weight`` is
    ``(in_channels, out_channels/groups, k)``.

    >>> import fntorch as ft
    >>> ft.nn.ConvTranspose1d(2, 3, 4, stride=2)(ft.ones((1, 2, 5))).shape
    (1, 3, 12)
    """

    _nsp = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over ``(N, C, H, W)``; ``weight`` is
    ``(in_channels, out_channels/groups, kh, kw)``.

    >>> import fntorch as ft
    >>> ft.nn.ConvTranspose2d(2, 3, 2, stride=2)(ft.ones((1, 2, 3, 3))).shape
    (1, 3, 6, 6)
    """

    _nsp = 2


class Bilinear(Module):
    """``y = x1^T A x2 + b``; ``weight`` ``(out, in1, in2)`` and ``bias`` drawn from
    U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch.

    >>> import fntorch as ft
    >>> m = ft.nn.Bilinear(3, 4, 5)
    >>> m.weight.shape, m(ft.ones((2, 3)), ft.ones((2, 4))).shape
    ((5, 3, 4), (2, 5))
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = _empty(out_features, in1_features, in2_features, dtype=dtype)
        self.bias = _empty(out_features, dtype=dtype) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws ``weight`` and ``bias`` from U(-1/sqrt(in1), 1/sqrt(in1)), as PyTorch."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        """``input1 @ weight[k] @ input2 + bias[k]`` for each output feature ``k``."""
        return FC.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        """The feature sizes and whether there is a bias, for ``repr``."""
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
