"""Fuzz ``ft.fx.deserialize``: random bytes and mutated valid exports either load or
raise ValueError, never another exception, and never hang (bounded sizes)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft


def _f(x, y):
    z = ft.cond(ft.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    return {"a": ft.sum(ft.tanh(z @ y), axis=0), "b": (ft.cumsum(x, axis=1), None)}


VALID = ft.export(
    _f, np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
).serialize()


def _load(data: bytes):
    try:
        ft.fx.deserialize(data)
    except ValueError as e:
        assert str(e)


@settings(max_examples=60)
@given(st.binary(max_size=300))
def test_random_bytes_raise_value_error(data):
    _load(data)


@settings(max_examples=60)
@given(st.data())
def test_mutated_bytes_raise_value_error_or_load(data):
    b = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        i = data.draw(st.integers(0, len(b) - 1), label="at")
        op = data.draw(st.sampled_from(["flip", "delete", "insert", "truncate"]), label="op")
        if op == "flip":
            b[i] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        elif op == "delete":
            del b[i : i + data.draw(st.integers(1, 8), label="n")]
        elif op == "insert":
            b[i:i] = data.draw(st.binary(min_size=1, max_size=8), label="bytes")
        else:
            del b[i:]
        if not b:
            break
    _load(bytes(b))


REPLACEMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.text(max_size=8),
    st.sampled_from(["float32", "int64", "bfloat16", "complex64", "sin", "cond", "leaf", "none"]),
    st.sampled_from([[], [3], [-1, 2], [2**40, 2**40], {}, {"tuple": []}, {"float": "nan"}]),
    st.sampled_from([{"graph": {}}, {"dtype": "float0"}, {"array": {}}, {"var": 0}]),
)


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from _paths(v, (*path, k))


DOC = json.loads(VALID)
PATHS = list(_paths(DOC))[1:]


@settings(max_examples=150)
@given(st.data())
def test_mutated_json_values_raise_value_error_or_load(data):
    doc = json.loads(VALID)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        path = data.draw(st.sampled_from(PATHS), label="path")
        node = doc
        try:
            for k in path[:-1]:
                node = node[k]
            if data.draw(st.booleans(), label="delete") and isinstance(node, dict):
                node.pop(path[-1], None)
            else:
                node[path[-1]] = data.draw(REPLACEMENTS, label="value")
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed the path
    _load(json.dumps(doc).encode())
