"""``DistributedSampler``: each process' share of a dataset, as PyTorch's.

The shuffle is PyTorch's own: ``torch.randperm`` of the dataset length with a CPU
generator seeded ``seed + epoch`` (MT19937 with PyTorch's seeding, its 32-bit draws and
its swap loop), so every process, and a PyTorch job with the same seed, visits the same
indices.

>>> s = DistributedSampler(range(10), num_replicas=2, rank=1, shuffle=False)
>>> list(s)
[1, 3, 5, 7, 9]
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ._sampler import Sampler

__all__ = ["DistributedSampler", "torch_randperm"]


def torch_randperm(n: int, seed: int) -> list:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``,
    without torch: numpy's legacy MT19937 seeding is PyTorch's CPU generator's.

    >>> torch_randperm(5, 0)
    [4, 0, 1, 3, 2]
    """
    if not 0 <= seed < 2**32:
        # PyTorch seeds its MT19937 with the low 32 bits.
        seed &= 0xFFFFFFFF
    raw = np.random.RandomState(seed)._bit_generator.random_raw(max(n - 1, 0))
    out = list(range(n))
    for i in range(n - 1):
        z = i + int(raw[i]) % (n - i)
        out[i], out[z] = out[z], out[i]
    return out


class DistributedSampler(Sampler):
    """The indices process ``rank`` of ``num_replicas`` visits: the (shuffled) indices,
    padded with their own first ones to a multiple of ``num_replicas`` (or cut, with
    ``drop_last``), every ``num_replicas``-th from ``rank``. ``set_epoch(e)`` reshuffles.
    ``num_replicas`` and ``rank`` default to the default process group's.

    >>> s = DistributedSampler(range(5), num_replicas=2, rank=0, shuffle=False)
    >>> list(s), len(s)
    ([0, 2, 4], 3)
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):  # fmt: skip
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(
                f"DistributedSampler: num_replicas must be a positive int, got {num_replicas!r}"
            )
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(
                f"DistributedSampler: invalid rank {rank!r}, rank should be in the interval "
                f"[0, {num_replicas - 1}]"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, int(seed), drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            elif indices:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle the next iteration uses (call it before each epoch).

        >>> s = DistributedSampler(range(4), num_replicas=1, rank=0)
        >>> a = list(s); s.set_epoch(1); sorted(list(s)) == sorted(a)
        True
        """
        self.epoch = int(epoch)
