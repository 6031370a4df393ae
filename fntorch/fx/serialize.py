"""The export format: graphs, params, abstract values and pytree structures as versioned
JSON (docs/export.md is the schema), and ``deserialize``.

Writing refuses what the format cannot hold (a param holding a Python callable, a tree
node that is not a tuple, list, dict, None or namedtuple) with a ValueError naming it.
Reading treats the bytes as untrusted: nothing runs but the abstract-eval rules of
registered primitives (no pickle, no eval); every check failure, and anything else that
goes wrong while reading, is a ValueError that says what is wrong and where.

The parts live in their own modules and are re-exported here: serialize_schema (the
format's name, version, dtype names and ``LEAF``), serialize_write (``encode`` and its
helpers) and serialize_read (``decode``, the validator, ``PARAM_KINDS``). This module
keeps ``deserialize`` and the ``Exported`` constructor it calls.
"""

from __future__ import annotations

from .serialize_read import (  # noqa: F401 - re-exported: fx.serialize is the format's home
    PARAM_KINDS,
    _check_eqn,
    _count_leaves,
    _decode,
    _decode_array,
    _decode_aval,
    _decode_dtype,
    _decode_shape,
    _int,
    _kind,
    _list,
    _namedtuple,
    _no_constant,
    _obj,
    _same,
    _str,
    decode,
    decode_graph,
    decode_param,
    decode_tree,
)
from .serialize_schema import (  # noqa: F401 - re-exported
    _DTYPE_NAMES,
    _DTYPES,
    FORMAT,
    FORMAT_VERSION,
    LEAF,
    MAX_BYTES,
    _err,
    _Leaf,
)
from .serialize_write import (  # noqa: F401 - re-exported
    _dtype_name,
    _encode_array,
    _encode_aval,
    _host,
    encode,
    encode_graph,
    encode_param,
    encode_tree,
)

# The constructor of the callable that ``deserialize`` returns: transforms.export
# registers ``Exported`` here at import (fx imports no transforms).
exported_constructor: list = []


def deserialize(data: bytes):
    """The ``Exported`` stored in ``data`` (``Exported.serialize()``'s bytes): callable as
    the exported function was, under ``jit``, ``grad`` and ``vmap`` too. Untrusted bytes
    are safe: nothing but registered primitives' abstract-eval rules runs while reading,
    and anything that is not the format raises ValueError.

    >>> import fntorch as ft
    >>> data = ft.export(lambda x: x * 2.0, ft.ones(2)).serialize()
    >>> ft.fx.deserialize(data)(ft.ones(2)).tolist()
    [2.0, 2.0]
    """
    parts = decode(data)
    if not exported_constructor:
        raise RuntimeError("deserialize: import fntorch (it registers Exported)")
    return exported_constructor[0](parts)
