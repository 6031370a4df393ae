"""``ft.utils.data``: datasets, samplers, ``default_collate`` and ``DataLoader``, as PyTorch's.

Samples are fntorch tensors (or anything ``collate_fn`` turns into a batch). Shuffling
draws from a ``generator=``: any object with ``initial_seed()`` (``torch.Generator``, and
``ft.Generator`` when it lands), a numpy ``Generator``, an ``int`` seed, or ``None`` (fresh
entropy); ``_sampler._seed_from`` is the one place that reads it. ``num_workers > 0``
fetches batches in a thread pool that keeps the order (see ``DataLoader``).

>>> import fntorch as ft
>>> ds = ft.utils.data.TensorDataset(ft.arange(6.0), ft.arange(6))
>>> [x.tolist() for x, _ in ft.utils.data.DataLoader(ds, batch_size=4)]
[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
"""

from . import distributed
from ._collate import default_collate, default_convert
from ._dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ._loader import DataLoader
from ._sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]
