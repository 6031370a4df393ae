"""``DataLoader``: batches of a dataset, in the order of a sampler, collated.

>>> import fntorch as ft
>>> from fntorch.utils.data import DataLoader, TensorDataset
>>> dl = DataLoader(TensorDataset(ft.arange(5)), batch_size=2, drop_last=True)
>>> len(dl), [b[0].tolist() for b in dl]
(2, [[0, 1], [2, 3]])
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from ._collate import default_collate, default_convert
from ._dataset import IterableDataset
from ._sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Iterates over ``dataset`` in batches, as PyTorch's ``DataLoader``.

    A map-style dataset is read in the order of ``sampler`` (default: sequential, or a
    ``RandomSampler(generator=generator)`` with ``shuffle=True``), grouped by
    ``batch_sampler`` (default: ``BatchSampler(sampler, batch_size, drop_last)``) and
    collated by ``collate_fn`` (default ``default_collate``; with ``batch_size=None``,
    samples are not batched and ``default_convert`` applies). An ``IterableDataset`` is
    read in its own order and cut into batches of ``batch_size``.

    ``num_workers > 0`` fetches and collates up to ``num_workers * prefetch_factor``
    batches ahead in a pool of ``num_workers`` threads, yielding them in the sampler's
    order. Threads, not processes: tensors are numpy buffers whose copies and most
    file reads release the GIL, threads need no pickling of the dataset or the batches,
    and forking a process that holds LLVM's JIT and its thread pool is unsafe. An
    iterable dataset is read in the calling thread (one stream cannot be split without
    the dataset's help). ``worker_init_fn(worker_id)`` runs once in each thread.
    ``pin_memory`` is accepted and does nothing (host memory is what the CPU device
    uses); ``timeout`` bounds the wait for one batch from the pool.

    >>> import fntorch as ft
    >>> from fntorch.utils.data import TensorDataset
    >>> ds = TensorDataset(ft.arange(6.0))
    >>> [b[0].tolist() for b in DataLoader(ds, batch_size=3, num_workers=2)]
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        del multiprocessing_context, persistent_workers, pin_memory_device
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                f"DataLoader: num_workers must be a non-negative int, got {num_workers!r}"
            )
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout must be non-negative, got {timeout!r}")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError("DataLoader: prefetch_factor needs num_workers > 0 (multiprocessing)")
        self.dataset, self.num_workers, self.pin_memory = dataset, num_workers, pin_memory
        self.timeout, self.worker_init_fn, self.generator = timeout, worker_init_fn, generator
        self.prefetch_factor = 2 if prefetch_factor is None else prefetch_factor
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None or batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler and "
                    "batch_sampler options"
                )
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (
            self._iterable and batch_size is not None
        )
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError for a stream without a length, as PyTorch's
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self._auto_collation else self.sampler)

    def _fetch(self, index):
        if self._auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            samples = getitems(index) if getitems else [self.dataset[i] for i in index]
            return self.collate_fn(samples)
        return self.collate_fn(self.dataset[index])

    def _iter_stream(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn(batch)

    def __iter__(self):
        if self._iterable:
            return self._iter_stream()
        indices = self.batch_sampler if self._auto_collation else self.sampler
        if self.num_workers == 0:
            return (self._fetch(index) for index in indices)
        return self._iter_pool(iter(indices))

    def _iter_pool(self, indices):
        ids, lock = itertools.count(), threading.Lock()

        def init():
            with lock:
                worker_id = next(ids)
            if self.worker_init_fn is not None:
                self.worker_init_fn(worker_id)

        ahead = self.num_workers * self.prefetch_factor
        with ThreadPoolExecutor(self.num_workers, "fntorch-DataLoader", initializer=init) as pool:
            pending = deque(pool.submit(self._fetch, i) for i in itertools.islice(indices, ahead))
            try:
                while pending:
                    batch = pending.popleft().result(timeout=self.timeout or None)
                    for i in itertools.islice(indices, 1):
                        pending.append(pool.submit(self._fetch, i))
                    yield batch
            finally:
                for f in pending:
                    f.cancel()
