"""Reading and validating the export format (docs/export.md): the inverse of
serialize_write, from bytes to a graph, its trees and avals.

Reading treats the bytes as untrusted: nothing runs but the abstract-eval rules of
registered primitives (no pickle, no eval); every check failure, and anything else that
goes wrong while reading, is a ValueError that says what is wrong and where.
fx.serialize re-exports these names.
"""

from __future__ import annotations

import base64
import binascii
import collections
import json
import keyword
import math
from collections.abc import Callable

import numpy as np

from .core import ShapedArray, abstract_eval_rules, primitives
from .graph import Eqn, Graph, Literal, Var
from .serialize_schema import _DTYPES, FORMAT, FORMAT_VERSION, LEAF, MAX_BYTES, _err
from .serialize_write import encode, encode_graph  # noqa: F401 - the doctests' round trips


def _obj(x, where: str, keys: tuple) -> dict:
    if not isinstance(x, dict):
        raise _err(where, f"expected an object with keys {list(keys)}, got {_kind(x)}")
    missing = [k for k in keys if k not in x]
    if missing:
        raise _err(where, f"missing key(s) {missing}")
    extra = [k for k in x if k not in keys]
    if extra:
        raise _err(where, f"unknown key(s) {extra[:5]}")
    return x


def _list(x, where: str) -> list:
    if not isinstance(x, list):
        raise _err(where, f"expected a list, got {_kind(x)}")
    return x


def _int(x, where: str, lo: int | None = None) -> int:
    if type(x) is not int:
        raise _err(where, f"expected an int, got {_kind(x)}")
    if lo is not None and x < lo:
        raise _err(where, f"expected an int >= {lo}, got {x}")
    return x


def _str(x, where: str) -> str:
    if not isinstance(x, str):
        raise _err(where, f"expected a string, got {_kind(x)}")
    return x


def _kind(x) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a bool"}.get(
        type(x), "null" if x is None else f"a {type(x).__name__}"
    )


def _decode_dtype(x, where: str) -> np.dtype:
    name = _str(x, where)
    if name not in _DTYPES:
        raise _err(where, f"unknown dtype {name[:40]!r} (known: {sorted(_DTYPES)})")
    return _DTYPES[name]


def _decode_shape(x, where: str) -> tuple:
    return tuple(_int(d, f"{where} dim", 0) for d in _list(x, where))


def _decode_aval(x, where: str) -> ShapedArray:
    d = _obj(x, where, ("shape", "dtype", "weak"))
    if not isinstance(d["weak"], bool):
        raise _err(where, f"weak: expected a bool, got {_kind(d['weak'])}")
    return ShapedArray(
        _decode_shape(d["shape"], f"{where} shape"),
        _decode_dtype(d["dtype"], f"{where} dtype"),
        d["weak"],
    )


def _decode_array(x, where: str) -> np.ndarray:
    d = _obj(x, where, ("dtype", "shape", "data"))
    dtype = _decode_dtype(d["dtype"], f"{where} dtype")
    shape = _decode_shape(d["shape"], f"{where} shape")
    try:
        raw = base64.b64decode(_str(d["data"], f"{where} data"), validate=True)
    except (binascii.Error, ValueError):
        raise _err(where, "data is not valid base64") from None
    size = math.prod(shape)
    if size * dtype.itemsize != len(raw) or (dtype.itemsize == 0 and raw):
        raise _err(
            where,
            f"shape {list(shape)} of {d['dtype']} needs {size * dtype.itemsize} bytes, "
            f"the data has {len(raw)}",
        )
    if dtype.itemsize == 0:
        return np.zeros(shape, dtype)
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def decode_param(x, where: str, depth: int = 0):
    """A param value from its JSON (``encode_param``'s inverse).

    >>> decode_param({"tuple": [1, {"float": "inf"}]}, "p")
    (1, inf)
    """
    if depth > 64:
        raise _err(where, "params nested too deeply")
    if x is None or isinstance(x, (bool, str)):
        return x
    if type(x) is int:
        return x
    if not isinstance(x, dict) or len(x) != 1:
        raise _err(
            where,
            f"expected a param (null, a bool, an int, a string or a tagged object), got {_kind(x)}",
        )
    ((tag, v),) = x.items()
    if tag == "float":
        try:
            return float(_str(v, where))
        except ValueError:
            raise _err(where, f"{v[:40]!r} is not a float") from None
    if tag == "tuple":
        return tuple(decode_param(p, where, depth + 1) for p in _list(v, where))
    if tag == "list":
        return [decode_param(p, where, depth + 1) for p in _list(v, where)]
    if tag == "dict":
        out = {}
        for item in _list(v, where):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise _err(where, "a dict param's items are [key, value] with string keys")
            out[item[0]] = decode_param(item[1], where, depth + 1)
        return out
    if tag == "dtype":
        return _decode_dtype(v, where)
    if tag == "array":
        return _decode_array(v, where)
    if tag == "scalar":
        a = _decode_array(v, where)
        if a.shape != ():
            raise _err(where, f"a scalar param has shape {list(a.shape)}")
        return a[()]
    if tag == "graph":
        return decode_graph(v, where, depth + 1)
    raise _err(where, f"unknown param tag {tag[:40]!r}")


# Params whose names the primitives share, with the kind each must have: a check that is
# data, next to nothing else. Params not named here are checked by the abstract eval.
def _is_int(p):
    return type(p) is int


def _is_ints(p):
    return isinstance(p, tuple) and all(map(_is_int, p))


def _is_int_pairs(p):
    return isinstance(p, tuple) and all(_is_ints(q) and len(q) == 2 for q in p)


def _is_dtype(p):
    return isinstance(p, np.dtype)


PARAM_KINDS: dict[str, tuple[str, Callable]] = {
    "axis": ("an int", _is_int),
    "dimension": ("an int", _is_int),
    "y": ("an int", _is_int),
    "axes": ("a tuple of ints", _is_ints),
    "shape": ("a tuple of ints", _is_ints),
    "dimensions": ("a tuple of ints", _is_ints),
    "broadcast_dimensions": ("a tuple of ints", _is_ints),
    "slice_sizes": ("a tuple of ints", _is_ints),
    "window_strides": ("a tuple of ints", _is_ints),
    "window_dimensions": ("a tuple of ints", _is_ints),
    "padding_config": (
        "a tuple of int pairs",
        lambda p: isinstance(p, tuple) and all(_is_ints(q) for q in p),
    ),
    "reverse": ("a bool", lambda p: isinstance(p, bool)),
    "is_stable": ("a bool", lambda p: isinstance(p, bool)),
    "new_dtype": ("a dtype", _is_dtype),
    "index_dtype": ("a dtype", _is_dtype),
    "dtype": ("a dtype", _is_dtype),
    "preferred_element_type": ("a dtype or None", lambda p: p is None or _is_dtype(p)),
    "branches": (
        "a tuple of graphs",
        lambda p: isinstance(p, tuple) and all(isinstance(q, Graph) for q in p),
    ),
    "body": ("a graph", lambda p: isinstance(p, Graph)),
    "cond_graph": ("a graph", lambda p: isinstance(p, Graph)),
    "body_graph": ("a graph", lambda p: isinstance(p, Graph)),
    "graph": ("a graph", lambda p: isinstance(p, Graph)),
}


def _same(a: ShapedArray, b) -> bool:
    return (
        isinstance(b, ShapedArray)
        and a.shape == tuple(b.shape)
        and a.dtype == b.dtype
        and bool(a.weak_type) == bool(b.weak_type)
    )


def decode_graph(x, where: str = "graph", depth: int = 0) -> Graph:
    """A graph from its JSON, every equation's output avals checked against its
    primitive's abstract-eval rule.

    >>> import fntorch as ft
    >>> g = decode_graph(encode_graph(ft.make_graph(ft.sin)(ft.ones(2))))
    >>> [e.primitive.name for e in g.eqns]
    ['sin']
    """
    if depth > 32:
        raise _err(where, "sub-graphs nested too deeply")
    d = _obj(x, where, ("constvars", "consts", "invars", "eqns", "outvars"))
    env: dict[int, Var] = {}

    def define(v, at: str) -> Var:
        vd = _obj(v, at, ("id", "aval"))
        i = _int(vd["id"], f"{at} id", 0)
        if i in env:
            raise _err(at, f"var {i} is defined twice")
        var = Var(_decode_aval(vd["aval"], f"{at} aval"))
        env[i] = var
        return var

    def atom(v, at: str):
        if isinstance(v, dict) and "literal" in v:
            ld = _obj(v, at, ("literal", "aval"))
            aval = _decode_aval(ld["aval"], f"{at} aval")
            value = decode_param(ld["literal"], f"{at} literal", depth)
            if isinstance(value, np.ndarray) and value.shape == ():
                pass  # a 0-d array literal, as staging keeps one
            elif not isinstance(value, (bool, int, float, np.generic)) or aval.shape != ():
                raise _err(at, "a literal is a scalar of shape []")
            if isinstance(value, np.generic) and value.dtype != aval.dtype:
                raise _err(at, f"literal of dtype {value.dtype} with aval {aval}")
            return Literal(value, aval)
        vd = _obj(v, at, ("var",))
        i = _int(vd["var"], f"{at} var", 0)
        if i not in env:
            raise _err(at, f"var {i} is used before it is defined")
        return env[i]

    constvars = [
        define(v, f"{where} constvar {k}")
        for k, v in enumerate(_list(d["constvars"], f"{where} constvars"))
    ]
    consts = [
        _decode_array(c, f"{where} const {k}")
        for k, c in enumerate(_list(d["consts"], f"{where} consts"))
    ]
    if len(consts) != len(constvars):
        raise _err(where, f"{len(constvars)} constvars but {len(consts)} consts")
    for k, (v, c) in enumerate(zip(constvars, consts)):
        if v.aval.shape != c.shape or v.aval.dtype != c.dtype:
            raise _err(
                f"{where} const {k}",
                f"data {c.dtype}{list(c.shape)} does not match its var's aval {v.aval}",
            )
    invars = [
        define(v, f"{where} invar {k}") for k, v in enumerate(_list(d["invars"], f"{where} invars"))
    ]
    eqns = []
    for n, e in enumerate(_list(d["eqns"], f"{where} eqns")):
        at = f"{where} equation {n}"
        ed = _obj(e, at, ("primitive", "inputs", "outputs", "params"))
        name = _str(ed["primitive"], f"{at} primitive")
        prim = primitives.get(name)
        if prim is None or prim not in abstract_eval_rules:
            raise _err(at, f"unknown primitive {name[:60]!r}")
        at = f"{at} ({name})"
        ins = [
            atom(v, f"{at} input {k}") for k, v in enumerate(_list(ed["inputs"], f"{at} inputs"))
        ]
        if not isinstance(ed["params"], dict):
            raise _err(at, f"params: expected an object, got {_kind(ed['params'])}")
        params = {}
        for k, p in ed["params"].items():
            value = decode_param(p, f"{at} param {k!r}", depth)
            kind = PARAM_KINDS.get(k)
            if kind is not None and not kind[1](value):
                raise _err(at, f"param {k!r} must be {kind[0]}, got {type(value).__name__}")
            params[k] = value
        out_avals = _check_eqn(prim, ins, params, at)
        outs_json = _list(ed["outputs"], f"{at} outputs")
        if len(outs_json) != len(out_avals):
            raise _err(at, f"{len(outs_json)} outputs stored, the primitive gives {len(out_avals)}")
        outs = [define(v, f"{at} output {k}") for k, v in enumerate(outs_json)]
        for k, (v, a) in enumerate(zip(outs, out_avals)):
            if not _same(v.aval, a):
                raise _err(at, f"output {k} is stored as {v.aval}, the primitive gives {a}")
        eqns.append(Eqn(prim, ins, outs, params))
    outvars = [
        atom(v, f"{where} output {k}")
        for k, v in enumerate(_list(d["outvars"], f"{where} outvars"))
    ]
    return Graph(invars, outvars, eqns, constvars, consts)


def _check_eqn(prim, ins, params, at) -> list:
    """The output avals of one equation from its primitive's abstract-eval rule; any
    error it raises (a wrong arity, a param of the wrong type) is the file's fault."""
    try:
        out = abstract_eval_rules[prim](*[v.aval for v in ins], **params)
    except RecursionError:
        raise _err(at, "the abstract eval recursed too deeply") from None
    except Exception as exc:  # noqa: BLE001 - untrusted input: every failure is the file's
        raise _err(
            at,
            "its inputs and params do not fit the primitive "
            f"({type(exc).__name__}: {str(exc)[:200]})",
        ) from None
    outs = list(out) if prim.multiple_results else [out]
    if not all(isinstance(a, ShapedArray) for a in outs):
        raise _err(at, "the primitive's abstract eval gave no abstract values")
    return outs


_namedtuples: dict[tuple, type] = {}


def _namedtuple(name: str, fields: tuple, where: str) -> type:
    key = (name, fields)
    if key not in _namedtuples:
        names = (name, *fields)
        if (
            not all(n.isidentifier() and not keyword.iskeyword(n) for n in names)
            or any(f.startswith("_") for f in fields)
            or len(set(fields)) != len(fields)
        ):
            raise _err(
                where, f"namedtuple {name[:40]!r} with fields {list(fields)[:8]} is not valid"
            )
        _namedtuples[key] = collections.namedtuple(name, fields)
    return _namedtuples[key]


def decode_tree(x, where: str = "tree", depth: int = 0):
    """A tree skeleton (leaves are ``LEAF``) from its JSON; a namedtuple comes back as a
    namedtuple type of the stored name and fields (one type per name and fields).

    >>> decode_tree({"tuple": ["leaf", "none"]})
    (LEAF, None)
    """
    if depth > 100:
        raise _err(where, "tree nested too deeply")
    if x == "leaf":
        return LEAF
    if x == "none":
        return None
    if not isinstance(x, dict):
        raise _err(where, f"expected a tree node, got {_kind(x)}")
    if "namedtuple" in x:
        d = _obj(x, where, ("namedtuple", "fields", "children"))
        fields = tuple(_str(f, f"{where} field") for f in _list(d["fields"], f"{where} fields"))
        cls = _namedtuple(_str(d["namedtuple"], f"{where} name"), fields, where)
        kids = _list(d["children"], f"{where} children")
        if len(kids) != len(fields):
            raise _err(where, f"namedtuple with {len(fields)} fields has {len(kids)} children")
        return cls(*(decode_tree(c, where, depth + 1) for c in kids))
    if len(x) != 1:
        raise _err(where, "a tree node has one key")
    ((tag, v),) = x.items()
    if tag == "tuple":
        return tuple(decode_tree(c, where, depth + 1) for c in _list(v, where))
    if tag == "list":
        return [decode_tree(c, where, depth + 1) for c in _list(v, where)]
    if tag == "dict":
        out = {}
        for item in _list(v, where):
            if not (isinstance(item, list) and len(item) == 2):
                raise _err(where, "a dict node's items are [key, child]")
            k = item[0]
            if not (isinstance(k, str) or type(k) is int):
                raise _err(where, f"dict key {_kind(k)}: keys are strings or ints")
            if k in out:
                raise _err(where, f"dict key {k!r} appears twice")
            out[k] = decode_tree(item[1], where, depth + 1)
        return out
    raise _err(where, f"unknown tree node {tag[:40]!r}")


def _count_leaves(s) -> int:
    if s is LEAF:
        return 1
    if s is None:
        return 0
    children = s.values() if isinstance(s, dict) else s
    return sum(_count_leaves(c) for c in children)


def decode(data) -> dict:
    """The parts of an export from its bytes: ``graph``, ``in_tree`` and ``out_tree``
    (skeletons), ``in_avals``, ``out_avals``, ``fntorch_version``. Every failure is a
    ValueError saying what is wrong.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: x + 1.0)(ft.ones(2))
    >>> parts = decode(encode(g, ((LEAF,), {}), LEAF, g.in_avals, g.out_avals, "0.1.0"))
    >>> parts["in_tree"], parts["in_avals"]
    (((LEAF,), {}), [f32[2]])
    """
    try:
        return _decode(data)
    except ValueError:
        raise
    except RecursionError:
        raise ValueError("deserialize: the data is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - untrusted input: a safety net, never a crash
        raise ValueError(
            f"deserialize: malformed export ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None


def _decode(data) -> dict:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"deserialize: expected bytes, got {type(data).__name__}")
    if len(data) > MAX_BYTES:
        raise ValueError("deserialize: the data is larger than the format allows")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"deserialize: the data is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"deserialize: the data is not JSON (or is truncated): {exc.msg} at char {exc.pos}"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'deserialize: not an fntorch export (no "format": {FORMAT!r})')
    version = doc.get("version")
    if version != FORMAT_VERSION or type(version) is not int:
        raise ValueError(
            f"deserialize: unknown format version {str(version)[:20]!r}; this fntorch reads "
            f"version {FORMAT_VERSION}"
        )
    keys = (
        "format",
        "version",
        "fntorch_version",
        "in_tree",
        "out_tree",
        "in_avals",
        "out_avals",
        "graph",
    )
    _obj(doc, "export", keys)
    in_avals = [
        _decode_aval(a, f"in_avals {k}") for k, a in enumerate(_list(doc["in_avals"], "in_avals"))
    ]
    out_avals = [
        _decode_aval(a, f"out_avals {k}")
        for k, a in enumerate(_list(doc["out_avals"], "out_avals"))
    ]
    in_tree = decode_tree(doc["in_tree"], "in_tree")
    out_tree = decode_tree(doc["out_tree"], "out_tree")
    if not (
        isinstance(in_tree, tuple)
        and len(in_tree) == 2
        and isinstance(in_tree[0], tuple)
        and isinstance(in_tree[1], dict)
    ):
        raise ValueError("deserialize: in_tree: expected the structure of (args, kwargs)")
    graph = decode_graph(doc["graph"])
    for name, tree, avals, vars_ in (
        ("in", in_tree, in_avals, graph.invars),
        ("out", out_tree, out_avals, graph.outvars),
    ):
        if _count_leaves(tree) != len(avals):
            raise ValueError(
                f"deserialize: {name}_tree has {_count_leaves(tree)} leaves but "
                f"{len(avals)} {name}_avals are stored"
            )
        if len(vars_) != len(avals):
            raise ValueError(
                f"deserialize: the graph has {len(vars_)} {name}puts but "
                f"{len(avals)} {name}_avals are stored"
            )
        for k, (v, a) in enumerate(zip(vars_, avals)):
            if not _same(a, v.aval):
                raise ValueError(
                    f"deserialize: {name}_avals {k} is {a} but the graph's {name}put is {v.aval}"
                )
    return {
        "graph": graph,
        "in_tree": in_tree,
        "out_tree": out_tree,
        "in_avals": in_avals,
        "out_avals": out_avals,
        "fntorch_version": _str(doc["fntorch_version"], "fntorch_version"),
    }


def _no_constant(name):
    raise ValueError(f"deserialize: {name} is not JSON (floats are stored as strings)")
