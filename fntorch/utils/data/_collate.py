"""``default_collate``: a list of samples into one batch, by PyTorch's rules.

Tensors are stacked; numpy arrays become tensors and are stacked; numpy scalars and
Python ``int``/``bool`` become a tensor of them, Python ``float`` a float64 tensor;
strings and bytes stay a list; dicts, namedtuples, tuples (as lists) and other sequences
are collated field by field.

>>> import fntorch as ft
>>> batch = default_collate([{"x": ft.ones(2), "y": 0}, {"x": ft.zeros(2), "y": 1}])
>>> batch["x"].shape, batch["y"].tolist()
((2, 2), [0, 1])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...fx.core import Tensor
from ...ops import api


def _is_numeric_array(x) -> bool:
    return x.dtype.kind not in "OSUV"


def default_collate(batch):
    """Collates a list of samples into a batch (see the module docstring for the rules).

    >>> import fntorch as ft
    >>> xs, ys = default_collate([(ft.ones(3), 1.5), (ft.zeros(3), 2.5)])
    >>> xs.shape, ys.dtype
    ((2, 3), dtype('float64'))
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return api.stack(list(batch))
    if isinstance(elem, np.ndarray) and _is_numeric_array(elem):
        return api.stack([api.asarray(b) for b in batch])
    if isinstance(elem, np.generic) and _is_numeric_array(elem):
        return api.asarray(np.array(batch))
    if isinstance(elem, float):
        return api.asarray(batch, dtype=np.float64)
    if isinstance(elem, int):  # bool too: a bool tensor, as PyTorch's
        return api.asarray(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if len({len(b) for b in batch}) != 1:
            raise RuntimeError(
                "default_collate: each element in list of batch should be of equal size"
            )
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch's backwards-compatible choice: a tuple gives a list
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem).__name__}"
    )


def default_convert(data):
    """What a DataLoader without batching (``batch_size=None``) applies to each sample:
    numpy arrays and scalars to tensors, recursing through dicts and sequences.

    >>> import numpy as np
    >>> default_convert({"x": np.ones(2)})["x"].tolist()
    [1.0, 1.0]
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and _is_numeric_array(data):
        return api.asarray(data)
    if isinstance(data, Mapping):
        fields = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(fields)
        except TypeError:
            return fields
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
