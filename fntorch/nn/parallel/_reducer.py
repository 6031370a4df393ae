"""DDP's gradient reducer: buckets of gradients all-reduced while the backward runs.

As PyTorch's reducer: the parameters are grouped into buckets (last parameters first,
``bucket_cap_mb`` each); a post-accumulate-grad hook on each parameter marks it ready
when the tape has made its gradient final; once every parameter of a bucket is ready
the bucket's gradients are flattened into one buffer and its all-reduce is *started*
(``iallreduce``: MPI's ``Iallreduce``, NCCL on its own stream), and the backward goes
on computing the earlier layers' gradients meanwhile. When the backward ends,
``finish`` starts the buckets still waiting (parameters that got no gradient in this
backward), waits for every all-reduce and writes the averages back into ``.grad``.

Buckets are started strictly in order, a bucket only after the ones before it, so
every rank starts the same all-reduces in the same order even where the ranks'
parameters become ready in different orders (MPI requires that order). The reductions
run on a communicator of their own (``dup``), so they never match another collective
the backward runs meanwhile (SyncBatchNorm's ``psum``).

Each bucket carries one more number per parameter: 1 where this rank has a gradient
for it. Their sum says which parameters no rank used: those keep ``.grad`` None, as
with PyTorch's ``find_unused_parameters=True``; a parameter used on some ranks only
gets the average over all ranks (zeros from the others).

>>> from fntorch.distributed import LocalCommunicator
>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.ones(2)); r = Reducer([[p]], LocalCommunicator(), 1)
>>> p.grad = ft.asarray([2.0, 4.0]); r.mark_ready(p); r.finish(); p.grad.tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from ...fx.core import _new_tensor
from ...ops import api


class Reducer:
    """The buckets of one DDP model and the state of the backward running now.

    ``comm``: the communicator the buckets are reduced over; ``world_size``: its size.
    ``launched`` lists ``(bucket index, Work)`` of the all-reduces started in this
    backward (tests read it to see what overlapped).

    >>> from fntorch.distributed import LocalCommunicator
    >>> Reducer([], LocalCommunicator(), 1).launched
    []
    """

    def __init__(self, buckets: list, comm, world_size: int):
        self.buckets = buckets
        self.comm = comm
        self.world_size = world_size
        self._bucket_of = {id(p): i for i, b in enumerate(buckets) for p in b}
        self.reset()

    def reset(self) -> None:
        """Forgets the backward's state (after ``finish``)."""
        self._pending = [len(b) for b in self.buckets]
        self._ready: set = set()
        self._next = 0  # the next bucket to start: in order, the same on every rank
        self.launched: list = []

    @property
    def busy(self) -> bool:
        """Whether a backward has marked parameters ready without ``finish``."""
        return bool(self._ready)

    def mark_ready(self, p) -> None:
        """``p``'s gradient is final for this backward: start every bucket, in order,
        whose parameters are all ready."""
        i = self._bucket_of.get(id(p))
        if i is None or id(p) in self._ready:
            return
        self._ready.add(id(p))
        self._pending[i] -= 1
        if self.launched:
            self.launched[-1][1].test()  # MPI progresses a started reduction only inside calls
        while self._next < len(self.buckets) and self._pending[self._next] == 0:
            self._launch(self._next)

    def _launch(self, i: int) -> None:
        bucket = self.buckets[i]
        grads = [p.grad if p.grad is not None else api.zeros_like(p._read()) for p in bucket]
        used = np.asarray([p.grad is not None for p in bucket], np.float32)
        marks = api.astype(api.asarray(used, device=grads[0].device), grads[0].dtype)
        flat = api.concat([api.reshape(g, (-1,)) for g in grads] + [marks])
        self.launched.append((i, self.comm.iallreduce(flat._value, "sum")))
        self._next = i + 1

    def finish(self) -> None:
        """At the end of the backward: starts the buckets not yet started, waits for
        all, and writes each parameter's average gradient into ``.grad``."""
        while self._next < len(self.buckets):
            self._launch(self._next)
        try:
            for i, work in self.launched:
                self._write_back(self.buckets[i], _new_tensor(work.wait()))
        finally:
            self.reset()

    def abandon(self) -> None:
        """Waits for the reductions a failed backward started (MPI needs them completed)
        and forgets them, leaving ``.grad`` as it is."""
        try:
            for _, work in self.launched:
                work.wait()
        finally:
            self.reset()

    def _write_back(self, bucket: list, total) -> None:
        mean = total / self.world_size
        start = 0
        users = total[total.shape[0] - len(bucket) :].tolist()
        for p, used in zip(bucket, users):
            n = p.size
            if used > 0:
                p.grad = api.reshape(mean[start : start + n], p.shape)
            start += n
