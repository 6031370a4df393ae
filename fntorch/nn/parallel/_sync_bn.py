"""``SyncBatchNorm``: BatchNorm whose training statistics are those of the whole batch
spread over a named axis: the processes of the default group (PyTorch's), or a
``vmap``'s axis (``axis_name=``, as Flax's BatchNorm). Each member sums its values and
their squares per channel; one ``psum`` of both gives the mean and the (biased)
variance of the whole batch, which normalize every member's block, and the running
statistics take the unbiased variance over the whole batch, as PyTorch's. The backward
sums the members' cotangents of the statistics (``pvary`` after the ``psum``), so the
gradients are the whole batch's.
"""

from __future__ import annotations

import math

from ... import distributed as dist
from ...fx.axes import axis_size
from ...fx.cell import Cell
from ...ops import _prims_collective as pc
from ...ops import api, lax
from .. import functional as F
from ..layers import _BatchNorm
from ..module import Module


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over ``(N, C, *)`` with statistics synchronised over ``axis_name``
    (default: the default process group; without one, a plain BatchNorm).

    >>> import fntorch as ft
    >>> bn = ft.nn.SyncBatchNorm(1, affine=False, axis_name="i")
    >>> x = ft.asarray([[[1.0]], [[3.0]]])  # two members of one image each
    >>> [round(v, 4) for v in ft.vmap(bn, axis_name="i")(x).flatten().tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None,
                 axis_name: str | None = None):  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.axis_name = axis_name

    def _check(self, input):  # noqa: A002
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _axis(self):
        if self.axis_name is not None:
            return self.axis_name, axis_size(self.axis_name, "SyncBatchNorm")
        if dist.is_initialized() and dist.get_world_size() > 1:
            return dist.WORLD_AXIS, dist.get_world_size()
        return None, 1

    def forward(self, input):  # noqa: A002
        """``input`` normalized with the whole batch's statistics in training mode (the
        running ones in eval mode), then scaled and shifted."""
        self._check(input)
        name, size = self._axis()
        if name is None or not (self.training or not self.track_running_stats):
            return super().forward(input)
        axes = (0,) + tuple(range(2, input.ndim))
        n = math.prod(input.shape[i] for i in axes) * size
        sums = api.stack([api.sum(input, axis=axes), api.sum(input * input, axis=axes)])
        total = pc.psum_p.bind(sums, axis_name=name, size=size)
        if self.training and self.track_running_stats:
            # from the statistics as they are, the same on every member
            self._update_running(*_moments(total, n), n)
        # Every member's loss depends on the shared statistics: pvary (the identity whose
        # transpose is psum) sums those members' cotangents of them, as PyTorch's
        # SyncBatchNorm all-reduces its backward sums (JAX inserts the same pvary).
        mean, var = _moments(pc.pvary_p.bind(total, axis_name=name, size=size), n)
        shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
        y = (input - api.reshape(mean, shape)) * api.rsqrt(api.reshape(var, shape) + self.eps)
        if self.weight is not None:
            y = y * api.reshape(self.weight, shape)
        return y if self.bias is None else y + api.reshape(self.bias, shape)

    def _update_running(self, mean, var, n):
        """Writes the running statistics (and the step count) as PyTorch's BatchNorm."""
        nbt = self.num_batches_tracked
        cells = isinstance(self.running_mean, Cell)
        count = (nbt.data if cells else nbt) + 1
        momentum = self.momentum
        if momentum is None:
            momentum = 1.0 / count.astype(self.running_mean.dtype)
        unbiased = var * (n / max(n - 1, 1))
        new_mean = (1 - momentum) * self.running_mean + momentum * lax.stop_gradient(mean)
        new_var = (1 - momentum) * self.running_var + momentum * lax.stop_gradient(unbiased)
        new_mean = new_mean.astype(self.running_mean.dtype)
        new_var = new_var.astype(self.running_var.dtype)
        if cells:
            nbt.set_(count)
            F._update(self.running_mean, new_mean)
            F._update(self.running_var, new_var)
        else:  # a functional copy (inside ft.grad): its buffers take the new values
            buffers = self.__dict__["_buffers"]
            buffers["running_mean"], buffers["running_var"] = new_mean, new_var
            buffers["num_batches_tracked"] = count

    def extra_repr(self):
        """The channel count and settings, for ``repr``."""
        return super().extra_repr() + (f", axis_name={self.axis_name!r}" if self.axis_name else "")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every BatchNorm replaced by a SyncBatchNorm holding the same
        parameters and buffers (the cells themselves), as PyTorch's.

        >>> import fntorch as ft
        >>> m = ft.nn.Sequential(ft.nn.Conv2d(1, 2, 3), ft.nn.BatchNorm2d(2))
        >>> type(ft.nn.SyncBatchNorm.convert_sync_batchnorm(m)[1]).__name__
        'SyncBatchNorm'
        """
        if isinstance(module, _BatchNorm) and not isinstance(module, cls):
            sync = cls(module.num_features, module.eps, module.momentum, module.affine,
                       module.track_running_stats)  # fmt: skip
            for table in ("_parameters", "_buffers"):
                sync.__dict__[table].update(module.__dict__[table])
            sync.train(module.training)
            return sync
        for name, child in list(module.named_children()):
            new = cls.convert_sync_batchnorm(child, process_group)
            if new is not child:
                setattr(module, name, new)
        return module


def _moments(total, n):
    """Mean and biased variance from the stacked sums of values and of their squares."""
    mean = total[0] / n
    return mean, api.maximum(total[1] / n - mean * mean, 0.0)
