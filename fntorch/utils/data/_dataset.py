"""Datasets: map-style (``__getitem__`` and ``__len__``) and iterable ones.

>>> import fntorch as ft
>>> from fntorch.utils.data import TensorDataset, random_split
>>> a, b = random_split(TensorDataset(ft.arange(10)), [0.7, 0.3], generator=0)
>>> len(a), len(b)
(7, 3)
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np

from ._sampler import _seed_from


class Dataset:
    """Base class of map-style datasets: ``dataset[i]`` is a sample; ``a + b`` concatenates.

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
    ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of datasets read as a stream (``__iter__``), such as a file read line by
    line; a DataLoader batches them in order and takes no sampler.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        raise TypeError("IterableDataset: concatenation (+) is defined for map-style datasets")


class TensorDataset(Dataset):
    """Samples are the ``i``-th rows of each tensor: ``ds[i] == (t0[i], t1[i], ...)``.

    >>> import fntorch as ft
    >>> ds = TensorDataset(ft.arange(3.0), ft.asarray([1, 0, 1]))
    >>> [v.tolist() for v in ds[1]], len(ds)
    ([1.0, 0], 3)
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        sizes = [t.shape[0] if len(t.shape) else None for t in tensors]
        if None in sizes or len(set(sizes)) != 1:
            raise ValueError(
                "TensorDataset: size mismatch between tensors: every tensor needs the same "
                f"first dimension, got shapes {[tuple(t.shape) for t in tensors]}"
            )
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> Subset("abcde", [4, 0])[0], len(Subset("abcde", [4, 0]))
    ('e', 2)
    """

    def __init__(self, dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    >>> ds = ConcatDataset(["ab", "cde"])
    >>> len(ds), ds[2], ds[-1]
    (5, 'c', 'e')
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: does not take an IterableDataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise IndexError(f"ConcatDataset: index {index} out of range for {len(self)}")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which >= len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} out of range for {len(self)}")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Splits ``dataset`` into non-overlapping random subsets of the given ``lengths``
    (integers summing to ``len(dataset)``, or fractions summing to 1, whose remainder goes
    round-robin to the first subsets, as PyTorch's).

    >>> parts = random_split(range(10), [3, 7], generator=0)
    >>> [len(p) for p in parts], sorted(parts[0].indices + parts[1].indices) == list(range(10))
    ([3, 7], True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and math.isclose(sum(lengths), 1):
        if any(x < 0 or x > 1 for x in lengths):
            raise ValueError(f"random_split: fractions must be within [0, 1], got {lengths}")
        sizes = [int(math.floor(n * x)) for x in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(isinstance(x, float) for x in lengths) or sum(lengths) != n:
        raise ValueError(
            "random_split: the sum of the input lengths does not equal the length of the "
            f"input dataset ({n}); got {lengths} (fractions must sum to 1)"
        )
    order = np.random.default_rng(_seed_from(generator)).permutation(n).tolist()
    out, start = [], 0
    for size in lengths:
        out.append(Subset(dataset, order[start : start + size]))
        start += size
    return out
