"""Writing the export format (docs/export.md): graphs, params, abstract values and
pytree structures as versioned JSON.

Writing refuses what the format cannot hold (a param holding a Python callable, a tree
node that is not a tuple, list, dict, None or namedtuple) with a ValueError naming it.
fx.serialize re-exports these names.
"""

from __future__ import annotations

import base64
import collections
import json

import numpy as np

from .core import ShapedArray, Tensor, primitives
from .device import device_of_buffer
from .graph import Graph, Literal, Var, custom_call
from .serialize_schema import _DTYPE_NAMES, FORMAT, FORMAT_VERSION, LEAF


def _dtype_name(dtype, where: str) -> str:
    name = _DTYPE_NAMES.get(np.dtype(dtype))
    if name is None:
        raise ValueError(f"export: {where}: dtype {dtype} has no name in the format")
    return name


def _encode_aval(a: ShapedArray, where: str) -> dict:
    return {
        "shape": [int(d) for d in a.shape],
        "dtype": _dtype_name(a.dtype, where),
        "weak": bool(a.weak_type),
    }


def _host(x) -> np.ndarray:
    if isinstance(x, Tensor):
        v = x._value
        return np.asarray(device_of_buffer(v).to_host(v))
    return np.asarray(x)


def _encode_array(x, where: str) -> dict:
    a = _host(x)  # tobytes() writes C order
    dt = a.dtype
    if dt.byteorder == ">":
        a = a.astype(dt.newbyteorder("<"))
    return {
        "dtype": _dtype_name(dt, where),
        "shape": [int(d) for d in a.shape],
        "data": base64.b64encode(a.tobytes()).decode("ascii"),
    }


def encode_param(v, where: str):
    """A param value as JSON (the tags are listed in docs/export.md).

    >>> encode_param((1, 2.5, None), "p")
    {'tuple': [1, {'float': '2.5'}, None]}
    """
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int) and not isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float) and not isinstance(v, np.floating):
        return {"float": repr(float(v))}
    if isinstance(v, Graph):
        return {"graph": encode_graph(v, where)}
    if isinstance(v, np.dtype):
        return {"dtype": _dtype_name(v, where)}
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"dtype": _dtype_name(np.dtype(v), where)}
    if isinstance(v, np.ndarray):
        return {"array": _encode_array(v, where)}
    if isinstance(v, np.generic):
        return {"scalar": _encode_array(v, where)}
    if isinstance(v, tuple) and not hasattr(type(v), "_fields"):
        return {"tuple": [encode_param(x, where) for x in v]}
    if isinstance(v, list):
        return {"list": [encode_param(x, where) for x in v]}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"dict": [[k, encode_param(x, where)] for k, x in v.items()]}
    if callable(v):
        raise ValueError(
            f"export: {where} holds a Python callable "
            f"({getattr(v, '__name__', type(v).__name__)}), which the format cannot "
            "hold: only graphs of primitives are exported"
        )
    raise ValueError(f"export: {where} holds a {type(v).__name__}, which the format cannot hold")


def encode_graph(g: Graph, where: str = "graph") -> dict:
    """A graph as JSON: its vars numbered from 0 in order of definition.

    >>> import fntorch as ft
    >>> d = encode_graph(ft.make_graph(lambda x: ft.sin(x))(ft.ones(2)))
    >>> [e["primitive"] for e in d["eqns"]], d["outvars"]
    (['sin'], [{'var': 1}])
    """
    ids: dict[int, int] = {}

    def define(v: Var) -> dict:
        ids[v.id] = len(ids)
        return {"id": ids[v.id], "aval": _encode_aval(v.aval, where)}

    def atom(v, at: str):
        if isinstance(v, Literal):
            return {"literal": encode_param(v.value, at), "aval": _encode_aval(v.aval, at)}
        if v.id not in ids:
            raise ValueError(f"export: {at} reads a value defined outside its graph")
        return {"var": ids[v.id]}

    constvars = [define(v) for v in g.constvars]
    consts = [_encode_array(c, f"{where} const {i}") for i, c in enumerate(g.consts)]
    invars = [define(v) for v in g.invars]
    eqns = []
    for n, e in enumerate(g.eqns):
        at = f"{where} equation {n} ({e.primitive.name})"
        if e.primitive is custom_call:
            raise ValueError(f"export: {at}: inline custom calls first (inline_custom_calls)")
        if primitives.get(e.primitive.name) is not e.primitive:
            raise ValueError(f"export: {at}: the primitive is not in the registry")
        ins = [atom(v, at) for v in e.inputs]
        params = {k: encode_param(p, f"{at} param {k!r}") for k, p in e.params.items()}
        outs = [define(v) for v in e.outputs]
        eqns.append(
            {"primitive": e.primitive.name, "inputs": ins, "outputs": outs, "params": params}
        )
    outvars = [atom(v, f"{where} outputs") for v in g.outvars]
    return {
        "constvars": constvars,
        "consts": consts,
        "invars": invars,
        "eqns": eqns,
        "outvars": outvars,
    }


def encode_tree(skeleton, where: str = "tree"):
    """A tree skeleton (a pytree whose leaves are ``LEAF``) as JSON.

    >>> encode_tree((LEAF, {"a": None}))
    {'tuple': ['leaf', {'dict': [['a', 'none']]}]}
    """
    if skeleton is LEAF:
        return "leaf"
    if skeleton is None:
        return "none"
    if isinstance(skeleton, tuple) and hasattr(type(skeleton), "_fields"):
        return {
            "namedtuple": type(skeleton).__name__,
            "fields": list(type(skeleton)._fields),
            "children": [encode_tree(c, where) for c in skeleton],
        }
    if type(skeleton) in (tuple, list):
        return {type(skeleton).__name__: [encode_tree(c, where) for c in skeleton]}
    if type(skeleton) in (dict, collections.OrderedDict):
        items = []
        for k, c in skeleton.items():
            if not (isinstance(k, str) or (type(k) is int)):
                raise ValueError(f"export: {where}: dict key {k!r} is not a str or an int")
            items.append([k, encode_tree(c, where)])
        return {"dict": items}
    raise ValueError(
        f"export: {where}: a {type(skeleton).__name__} node; the format holds tuples, lists, "
        "dicts, None and namedtuples (pass the leaves in one of those)"
    )


def encode(graph, in_skeleton, out_skeleton, in_avals, out_avals, fntorch_version) -> bytes:
    """The export's bytes: versioned UTF-8 JSON (docs/export.md).

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: x + 1.0)(ft.ones(2))
    >>> data = encode(g, ((LEAF,), {}), LEAF, g.in_avals, g.out_avals, "0.1.0")
    >>> data[:40]
    b'{"format": "fntorch.export", "version": '
    """
    doc = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "fntorch_version": str(fntorch_version),
        "in_tree": encode_tree(in_skeleton, "in_tree"),
        "out_tree": encode_tree(out_skeleton, "out_tree"),
        "in_avals": [_encode_aval(a, "in_avals") for a in in_avals],
        "out_avals": [_encode_aval(a, "out_avals") for a in out_avals],
        "graph": encode_graph(graph),
    }
    return json.dumps(doc, allow_nan=False).encode("utf-8")
