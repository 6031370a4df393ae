"""Indexing: ``t[idx]`` and the functional updates ``t.at[idx].set(v)`` (and add, ...).

The names other modules use, from the three modules that implement indexing:

- `_index_parse`: an index expression parsed into entries (``parse_index``, with
  ``wrap_negative``), the steps reads and updates share, and the index as numpy's own
  for the eager fast paths;
- `_index_read`: ``getitem``, i.e. ``x[idx]``, and ``Tensor.__getitem__``;
- `_index_update`: ``update`` / ``update_general`` and ``Tensor.at``.

Importing this module attaches ``Tensor.__getitem__`` and ``Tensor.at``.
"""

from __future__ import annotations

from ._index_parse import parse_index, wrap_negative
from ._index_read import getitem
from ._index_update import update, update_general

__all__ = ["getitem", "parse_index", "update", "update_general", "wrap_negative"]
