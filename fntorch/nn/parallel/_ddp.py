"""``DistributedDataParallel``: PyTorch's data-parallel wrapper on fntorch's tape.

At wrap, every parameter and buffer takes rank 0's value. The gradients are averaged
over the processes in buckets (``_reducer.py``): eagerly, each bucket's all-reduce
starts during the backward, as soon as the tape has made all its parameters'
gradients final (a post-accumulate-grad hook on each parameter), and the backward
waits for them all before it returns (``autograd.post_backward_hooks``). Under
``ft.jit``/``ft.compile`` the whole step is one program: there the buckets are reduced
at the end of the backward, each with one ``psum`` over the default group (a library
step that calls MPI or NCCL), and a parameter without a gradient contributes zeros.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ... import distributed as dist
from ...distributed._group import broadcast_value
from ...fx.axes import process_axes
from ...fx.cell import scopes as _cell_scopes
from ...ops import _prims_collective as pc
from ...ops import api
from .. import autograd
from ..module import Module
from ._reducer import Reducer

_WIDE = np.dtype(np.float64)
# PyTorch's default bucket_cap_mb, and the smaller first bucket it uses with it (the
# last layers' gradients, ready first, start reducing sooner)
_DEFAULT_CAP_MB, _FIRST_BUCKET_BYTES = 25, 2**20


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training over the default process group.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group()
    >>> model = ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(3, 1))
    >>> model(ft.ones(2, 3)).sum().backward(); model.module.weight.grad.shape
    (1, 3)
    >>> ft.distributed.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False):  # fmt: skip
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                "DistributedDataParallel: module must be an ft.nn.Module, got "
                f"{type(module).__name__}"
            )
        if not dist.is_initialized():
            raise dist.DistributedError(
                "DistributedDataParallel: the default process group is not initialized; call "
                "ft.distributed.init_process_group() first"
            )
        if not bucket_cap_mb or bucket_cap_mb <= 0:
            raise ValueError(
                f"DistributedDataParallel: bucket_cap_mb must be positive, got {bucket_cap_mb!r}"
            )
        self.module = module
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        self.world_size = dist.get_world_size()
        self._sync_state(module.parameters())
        self._sync_state(module.buffers())
        self.bucket_cap_mb = bucket_cap_mb
        cap = bucket_cap_mb * 2**20
        first = min(cap, _FIRST_BUCKET_BYTES) if bucket_cap_mb == _DEFAULT_CAP_MB else cap
        self._buckets = _buckets([p for p in module.parameters() if p.requires_grad], cap, first)
        self._params = {id(p) for b in self._buckets for p in b}
        self._reducer = None
        if self.world_size > 1:
            self._reducer = Reducer(
                self._buckets, process_axes[dist.WORLD_AXIS].dup(), self.world_size
            )
        ref = weakref.ref(self)

        def hook(cells, ref=ref):
            ddp = ref()
            if ddp is None:
                autograd.post_backward_hooks.remove(hook)
            else:
                ddp._after_backward(cells)

        def ready(p, ref=ref):
            ddp = ref()
            if ddp is not None:
                ddp._ready(p)

        self._hook = hook
        autograd.post_backward_hooks.append(hook)
        self._grad_hooks = [
            p.register_post_accumulate_grad_hook(ready) for b in self._buckets for p in b
        ]
        weakref.finalize(self, _remove, self._grad_hooks)

    def _sync_state(self, cells):
        """Rank 0's values of ``cells``, in one broadcast: flattened together as float64,
        which holds every float32/16 value and every integer below 2**53 (BatchNorm's
        step counts) exactly, so a step pays one collective for all its buffers."""
        cells = list(cells)
        if self.world_size == 1 or not cells:
            return
        with autograd.no_grad():
            values = [c._read() for c in cells]
            wide = [api.astype(api.reshape(v, (-1,)), _WIDE) for v in values]
            flat = broadcast_value(api.concat(wide), 0, self.world_size)
            start = 0
            for c, v in zip(cells, values):
                part = api.reshape(flat[start : start + v.size], v.shape)
                c.set_(api.astype(part, v.dtype))
                start += v.size

    def forward(self, *args, **kwargs):
        """The wrapped module's forward (buffers first take rank 0's values, as PyTorch's
        ``broadcast_buffers``)."""
        if self._reducer is not None and self._reducer.busy and not _cell_scopes:
            self._reducer.abandon()  # a backward that raised left its state (and reductions)
        if self.broadcast_buffers and self.world_size > 1:
            self._sync_state(self.module.buffers())
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first ``backward`` after it reduces
        the accumulated gradients, as PyTorch's.

        >>> import fntorch as ft
        >>> ft.distributed.init_process_group()
        >>> model = ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model.require_backward_grad_sync
        False
        >>> ft.distributed.destroy_process_group()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _ready(self, p):
        """A parameter's gradient is final in an eager backward: its bucket may start."""
        if self._reducer is not None and self.require_backward_grad_sync and not _cell_scopes:
            self._reducer.mark_ready(p)

    def _after_backward(self, cells):
        if not self.require_backward_grad_sync or self.world_size == 1:
            return
        if _cell_scopes:  # staged under ft.jit: one psum per bucket inside the program
            if any(id(c) in self._params for c in cells):
                for bucket in self._buckets:
                    self._reduce_bucket(bucket)
            return
        if self._reducer.launched or any(id(c) in self._params for c in cells):
            self._reducer.finish()

    def _reduce_bucket(self, bucket):
        grads = [p.grad if p.grad is not None else api.zeros_like(p._read()) for p in bucket]
        flat = api.concat([api.reshape(g, (-1,)) for g in grads])
        total = pc.psum_p.bind(flat, axis_name=dist.WORLD_AXIS, size=self.world_size)
        mean = total / self.world_size
        start = 0
        for p, g in zip(bucket, grads):
            n = g.size
            p.grad = api.reshape(mean[start : start + n], g.shape)
            start += n


def _remove(handles) -> None:
    """Takes a collected DDP's hooks off its parameters (they may outlive it)."""
    for h in handles:
        h.remove()


def _buckets(params: list, cap_bytes: float, first_cap_bytes: float | None = None) -> list:
    """Parameters grouped into buckets of one dtype and at most ``cap_bytes`` (the first
    at most ``first_cap_bytes``; a larger parameter alone), last parameters first, as
    PyTorch's reducer orders them.

    >>> import fntorch as ft
    >>> ps = [ft.nn.Parameter(ft.zeros(256)) for _ in range(3)]  # 1 KiB each
    >>> [len(b) for b in _buckets(ps, 2048, 1024)]
    [1, 2]
    """
    buckets, current, size, dtype = [], [], 0, None
    cap = first_cap_bytes or cap_bytes
    for p in reversed(params):
        nbytes = p.size * p.dtype.itemsize
        if current and (p.dtype != dtype or size + nbytes > cap):
            buckets.append(current)
            current, size, cap = [], 0, cap_bytes
        current.append(p)
        size += nbytes
        dtype = p.dtype
    if current:
        buckets.append(current)
    return buckets
