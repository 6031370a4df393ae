"""Transposed convolutions and the bilinear map: PyTorch's ``F.conv_transpose1d``,
``F.conv_transpose2d`` and ``F.bilinear`` on fntorch tensors.

A transposed convolution is the gradient of a convolution with respect to its input, so
it is written as one: a convolution of the input dilated by ``stride``
(``lhs_dilation``), with the kernel flipped and its in/out channels swapped per group,
padded by ``dilation * (k - 1) - padding`` (plus ``output_padding`` at the end).

>>> import fntorch as ft
>>> F = ft.nn.functional
>>> F.conv_transpose1d(ft.ones((1, 1, 3)), ft.ones((1, 1, 2)), stride=2).tolist()
[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
"""

from __future__ import annotations

from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from ..ops import api as _api
from ..ops import lax as _lax

__all__ = ["conv_transpose1d", "conv_transpose2d", "bilinear"]


def _tuple(v, n: int, where: str, arg: str) -> tuple:
    out = tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
    if len(out) != n or not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise ValueError(f"{where}: {arg} must be an int or {n} ints, got {v!r}")
    return out


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,  # noqa: A002
                    dilation, nsp, where):  # fmt: skip
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(
            f"{where}: input and weight must be tensors, got {type(input).__name__} and "
            f"{type(weight).__name__}"
        )
    if input.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(
            f"{where}: input must be {nsp + 1}-d (unbatched) or {nsp + 2}-d (batched), "
            f"got shape {input.shape}"
        )
    if weight.ndim != nsp + 2:
        raise ValueError(
            f"{where}: weight must be {nsp + 2}-d (in_channels, out_channels/groups, "
            f"*kernel), got shape {weight.shape}"
        )
    stride = _tuple(stride, nsp, where, "stride")
    padding = _tuple(padding, nsp, where, "padding")
    output_padding = _tuple(output_padding, nsp, where, "output_padding")
    dilation = _tuple(dilation, nsp, where, "dilation")
    for op, s, d in zip(output_padding, stride, dilation):
        if not (0 <= op < max(s, d)):
            raise ValueError(
                f"{where}: output_padding must be smaller than stride or dilation, got "
                f"output_padding={output_padding}, stride={stride}, dilation={dilation}"
            )
    unbatched = input.ndim == nsp + 1
    x = input[None] if unbatched else input
    c_in, c_out_g = weight.shape[:2]
    if x.shape[1] != c_in or c_in % groups:
        raise ValueError(
            f"{where}: input has {x.shape[1]} channels; weight {weight.shape} expects "
            f"{c_in}, divisible by groups={groups}"
        )
    kernel = weight.shape[2:]
    # (C_in, C_out/g, *k) -> (C_out, C_in/g, *k), each group's block transposed, flipped
    w = _api.reshape(weight, (groups, c_in // groups, c_out_g) + kernel)
    w = _api.permute_dims(w, (0, 2, 1) + tuple(range(3, nsp + 3)))
    w = _api.reshape(w, (groups * c_out_g, c_in // groups) + kernel)
    w = _api.flip(w, axis=tuple(range(2, nsp + 2)))
    pads = []
    for k, p, op, d in zip(kernel, padding, output_padding, dilation):
        edge = d * (k - 1) - p
        pads.append((edge, edge + op))
    # a negative edge (padding beyond the kernel's reach) crops: slice it off afterwards
    crop = [(max(-lo, 0), max(-hi, 0)) for lo, hi in pads]
    pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    y = _lax.conv_general_dilated(
        x, w, (1,) * nsp, pads, lhs_dilation=stride, rhs_dilation=dilation,
        feature_group_count=groups,
    )  # fmt: skip
    if any(lo or hi for lo, hi in crop):
        idx = (slice(None), slice(None)) + tuple(
            slice(lo, size - hi) for (lo, hi), size in zip(crop, y.shape[2:])
        )
        y = y[idx]
    if bias is not None:
        y = y + _api.reshape(bias, (1, -1) + (1,) * nsp)
    return y[0] if unbatched else y


@_autocast_op("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):  # fmt: skip
    """1-d transposed convolution over ``(N, C_in, L)`` with ``weight`` of shape
    ``(C_in, C_out/groups, k)`` (PyTorch's layouts and argument order).

    >>> import fntorch as ft
    >>> x, w = ft.ones((1, 2, 4)), ft.ones((2, 3, 3))
    >>> ft.nn.functional.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1).shape
    (1, 3, 8)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")  # fmt: skip


@_autocast_op("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):  # fmt: skip
    """2-d transposed convolution over ``(N, C_in, H, W)`` with ``weight`` of shape
    ``(C_in, C_out/groups, kh, kw)`` (PyTorch's layouts and argument order).

    >>> import fntorch as ft
    >>> x, w = ft.ones((1, 4, 3, 3)), ft.ones((4, 1, 2, 2))
    >>> ft.nn.functional.conv_transpose2d(x, w, stride=2, groups=2).shape
    (1, 2, 6, 6)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")  # fmt: skip


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]`` (PyTorch's
    ``F.bilinear``; ``weight`` is ``(out, in1, in2)``).

    >>> import fntorch as ft
    >>> ft.nn.functional.bilinear(ft.ones((2, 3)), ft.ones((2, 4)), ft.ones((5, 3, 4))).shape
    (2, 5)
    """
    if weight.ndim != 3:
        raise ValueError(f"bilinear: weight must be 3-d (out, in1, in2), got shape {weight.shape}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise ValueError(
            f"bilinear: input1's last dim ({input1.shape[-1]}) and input2's "
            f"({input2.shape[-1]}) must match weight's {tuple(weight.shape[1:])}"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(
            f"bilinear: input1 {input1.shape} and input2 {input2.shape} must agree on all "
            "but the last dim"
        )
    # x1 W first: (..., in1) @ (in1, out*in2) keeps it one matmul, then a batched dot
    out, in1, in2 = weight.shape
    w = _api.reshape(_api.permute_dims(weight, (1, 0, 2)), (in1, out * in2))
    t = _api.reshape(_api.matmul(input1, w), input1.shape[:-1] + (out, in2))
    y = _api.sum(t * input2[..., None, :], axis=-1)
    return y if bias is None else y + bias
