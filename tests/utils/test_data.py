"""ft.utils.data against torch.utils.data: batches, orders, collate structure, lengths."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import fntorch as ft
from fntorch.utils import data as D

torch = pytest.importorskip("torch")
tdata = torch.utils.data


def same(a, b):
    """Structural equality of an fntorch batch and a torch batch."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ft.Tensor), type(a)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert str(a.dtype) == str(b.dtype).removeprefix("torch."), (a.dtype, b.dtype)
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


class Samples(D.Dataset):
    """Samples with every collate case: tensors, numpy, numbers, str, dict, namedtuple."""

    Point = namedtuple("Point", "x y")

    def __init__(self, lib):
        self.lib = lib

    def __getitem__(self, i):
        t = (ft if self.lib == "ft" else torch).arange(3) * i
        return {
            "t": t,
            "np": np.full(2, i, np.float32),
            "npscalar": np.int32(i),
            "f": i / 2,
            "i": i,
            "b": i % 2 == 0,
            "s": f"s{i}",
            "pair": (i, [i + 1.0, t]),
            "pt": self.Point(i, t),
        }

    def __len__(self):
        return 7


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (7, True)])
def test_sequential_batches_equal_pytorch(batch_size, drop_last):
    ours = D.DataLoader(Samples("ft"), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(Samples("torch"), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        same(a, b)


def test_tensor_dataset_and_workers_keep_the_order():
    x = np.arange(20.0).reshape(10, 2)
    y = np.arange(10)
    ours = D.DataLoader(D.TensorDataset(ft.asarray(x), ft.asarray(y)), batch_size=4, num_workers=3)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4)
    for a, b in zip(ours, theirs, strict=True):
        same(a, b)
    seen = []
    dl = D.DataLoader(
        D.TensorDataset(ft.asarray(y)),
        batch_size=1,
        num_workers=2,
        worker_init_fn=seen.append,
        prefetch_factor=1,
    )
    assert [b[0].item() for b in dl] == list(range(10))
    assert sorted(seen) == [0, 1]


def test_batch_sampler_and_no_batching():
    bs = [[3, 1], [0], [2, 4, 5]]
    ours = D.DataLoader(Samples("ft"), batch_sampler=bs)
    theirs = tdata.DataLoader(Samples("torch"), batch_sampler=bs)
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs, strict=True):
        same(a, b)
    plain = list(D.DataLoader(Samples("ft"), batch_size=None))
    want = list(tdata.DataLoader(Samples("torch"), batch_size=None))
    for a, b in zip(plain, want, strict=True):
        same(a, b)
    with pytest.raises(ValueError, match="mutually exclusive"):
        D.DataLoader(Samples("ft"), batch_sampler=bs, batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive"):
        D.DataLoader(Samples("ft"), sampler=[0], shuffle=True)


def test_shuffle_draws_from_the_generator():
    ds = D.TensorDataset(ft.arange(50))

    def order(gen):
        return [
            v
            for b in D.DataLoader(ds, batch_size=8, shuffle=True, generator=gen)
            for v in b[0].tolist()
        ]

    a = order(torch.Generator().manual_seed(3))
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert a == order(torch.Generator().manual_seed(3))
    assert a != order(torch.Generator().manual_seed(4))
    assert order(np.random.default_rng(1)) == order(np.random.default_rng(1))
    # One loader, two epochs: a new order each epoch, reproducible from the seed.
    dl = D.DataLoader(ds, batch_size=50, shuffle=True, generator=7)
    e1, e2 = (next(iter(dl))[0].tolist() for _ in range(2))
    assert e1 != e2
    dl2 = D.DataLoader(ds, batch_size=50, shuffle=True, generator=7)
    assert [next(iter(dl2))[0].tolist() for _ in range(2)] == [e1, e2]


def test_random_sampler_replacement_and_subset_sampler():
    s = D.RandomSampler(range(5), replacement=True, num_samples=12, generator=0)
    draws = list(s)
    assert len(s) == len(draws) == 12 and set(draws) <= set(range(5))
    s = D.RandomSampler(range(5), num_samples=12, generator=0)
    draws = list(s)
    assert sorted(draws[:10]) == sorted(list(range(5)) * 2) and len(draws) == 12
    assert sorted(D.SubsetRandomSampler([9, 4, 2], generator=1)) == [2, 4, 9]
    with pytest.raises(ValueError, match="num_samples"):
        D.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="generator"):
        list(D.RandomSampler(range(3), generator="seed"))


def test_batch_sampler_lengths_equal_pytorch():
    for n, size, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (0, 2, False)]:
        ours = D.BatchSampler(range(n), size, drop)
        theirs = tdata.BatchSampler(range(n), size, drop)
        assert len(ours) == len(theirs) and list(ours) == list(theirs)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.33, 0.33, 0.34]])
def test_random_split_sizes_equal_pytorch(lengths):
    ours = D.random_split(range(10), lengths, generator=0)
    theirs = tdata.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in theirs]
    assert sorted(i for p in ours for i in p) == list(range(10))
    with pytest.raises(ValueError, match="sum of the input lengths"):
        D.random_split(range(10), [3, 3])


def test_subset_concat_and_iterable_datasets():
    assert [D.Subset("abcdef", [5, 1])[i] for i in range(2)] == ["f", "b"]
    cat = D.ConcatDataset(["ab", "cde"])
    assert [cat[i] for i in range(len(cat))] == list("abcde") and cat[-2] == "d"

    class Stream(D.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for drop in (False, True):
        ours = D.DataLoader(Stream(), batch_size=3, drop_last=drop)
        theirs = tdata.DataLoader(
            tdata.IterableDataset.__new__(
                type(
                    "S",
                    (tdata.IterableDataset,),
                    {"__iter__": lambda s: iter(range(7)), "__len__": lambda s: 7},
                )
            ),
            batch_size=3,
            drop_last=drop,
        )
        assert len(ours) == len(theirs)
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
    with pytest.raises(ValueError, match="shuffle"):
        D.DataLoader(Stream(), shuffle=True)


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        D.default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate"):
        D.default_collate([object(), object()])
    with pytest.raises(ValueError, match="size mismatch"):
        D.TensorDataset(ft.ones(3), ft.ones(4))
