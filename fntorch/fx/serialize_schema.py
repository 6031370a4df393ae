"""The export format's shared schema: its name and version, the bound on what reading
accepts, the dtype names, the ``LEAF`` placeholder of tree skeletons, and the reader's
error constructor. The writer (serialize_write) and the reader (serialize_read) both
use it; fx.serialize re-exports it.
"""

from __future__ import annotations

from . import dtypes as _dt

FORMAT = "fntorch.export"
FORMAT_VERSION = 1
MAX_BYTES = 1 << 31  # a bound on what reading accepts at all

_DTYPES = {str(d): d for d in _dt.all_dtypes} | {"float0": _dt.float0}
_DTYPE_NAMES = {d: n for n, d in _DTYPES.items()}


class _Leaf:
    """The placeholder for a leaf in a tree skeleton (``LEAF``)."""

    __slots__ = ()

    def __repr__(self):
        return "LEAF"


LEAF = _Leaf()


def _err(where: str, what: str) -> ValueError:
    return ValueError(f"deserialize: {where}: {what}")
