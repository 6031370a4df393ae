"""Samplers: the order in which a map-style dataset's indices are visited.

>>> from fntorch.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Sequence

import numpy as np


def _seed_from(generator) -> int:
    """The seed a shuffle draws from ``generator``: the one seam where randomness enters.

    ``None``: fresh entropy (until ``ft.manual_seed`` lands; then the global key). An
    ``int``: itself. A numpy ``Generator``: a draw from it (it advances). Anything with
    ``initial_seed()`` (``torch.Generator``, ``ft.Generator``): that seed.

    >>> _seed_from(7), _seed_from(__import__("numpy").random.default_rng(0)) >= 0
    (7, True)
    """
    if generator is None:
        return secrets.randbits(63)
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return int(generator)
    if isinstance(generator, np.random.Generator):
        return int(generator.integers(2**63))
    if callable(getattr(generator, "initial_seed", None)):
        return int(generator.initial_seed())
    raise TypeError(
        "generator must be None, an int seed, a numpy Generator or an object with "
        f"initial_seed() (ft.Generator, torch.Generator), got {type(generator).__name__}"
    )


class _Draws:
    """A sampler's numpy stream: continues across epochs while ``_seed_from`` gives the
    same seed (a seeded generator yields a new, reproducible order each epoch), restarts
    when it changes (the generator was re-seeded)."""

    __slots__ = ("seed", "rng")

    def __init__(self):
        self.seed, self.rng = None, None

    def next_rng(self, generator) -> np.random.Generator:
        seed = _seed_from(generator)
        if seed != self.seed or self.rng is None:
            self.seed, self.rng = seed, np.random.default_rng(seed)
        return self.rng


class Sampler:
    """Base class of samplers: an iterable of indices (or of index lists), with a length.

    >>> class Evens(Sampler):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(0, self.n, 2))
    ...     def __len__(self): return (self.n + 1) // 2
    >>> list(Evens(5))
    [0, 2, 4]
    """

    def __init__(self, data_source=None):
        del data_source

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in a random order: a permutation per ``len(data_source)`` indices, or
    ``num_samples`` draws with ``replacement``. Randomness comes from ``generator``.

    >>> sorted(RandomSampler(range(4), generator=0))
    [0, 1, 2, 3]
    >>> len(RandomSampler(range(4), replacement=True, num_samples=10))
    10
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        self._draws = _Draws()
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"RandomSampler: num_samples must be a positive integer, got {n!r}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (default: the dataset's length).

        >>> RandomSampler(range(3)).num_samples
        3
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, count = len(self.data_source), self.num_samples
        rng = self._draws.next_rng(self.generator)
        if self.replacement:
            yield from rng.integers(0, n, size=count).tolist()
            return
        for _ in range(count // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[: count % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (without replacement).

    >>> sorted(SubsetRandomSampler([5, 7, 9], generator=1))
    [5, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator=None):
        self.indices, self.generator = indices, generator
        self._draws = _Draws()

    def __iter__(self) -> Iterator[int]:
        rng = self._draws.next_rng(self.generator)
        for i in rng.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``).

    >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"BatchSampler: batch_size must be a positive integer, got {batch_size!r}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
