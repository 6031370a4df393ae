"""Exact identities: when an equation's output *is* one of its inputs, bit for bit.

``identity_rules[name](params, inputs, out)`` returns the input (a ``Var``) the single
output ``out`` equals, or None; the lowering table puts each rule in its primitive's
entry (``Lowering.identity``), and ``passes.simplify`` aliases the output to it. Only
rules exact for every value hold here: ``x * 1`` and ``x - 0.0`` go, ``x + 0.0`` stays
(it turns ``-0.0`` into ``0.0``), ``x + -0.0`` goes.

>>> identity_rules["integer_pow"]({"y": 1}, ["x"], None)
'x'
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.graph import Literal


def _literal_is(lit, value: float, *, negative_zero: bool | None = None) -> bool:
    v = np.asarray(lit.value)
    if v.dtype == np.bool_:
        return bool(v) == bool(value) and negative_zero is None
    if v != value:
        return False
    if negative_zero is not None and dt.is_float(v.dtype):
        return bool(np.signbit(v)) == negative_zero
    return True


def _same_as_out(x, out) -> bool:
    return (
        not isinstance(x, Literal)
        and x.aval.shape == out.aval.shape
        and (x.aval.dtype == out.aval.dtype)
    )


def _float_or_int_zero(lit, *, add: bool) -> bool:
    """``x + lit == x`` (add) or ``x - lit == x`` (sub) exactly, for every ``x``."""
    # bfloat16's numpy kind is "V", not "f": ask the dtype module.
    if dt.is_float(np.asarray(lit.value).dtype):
        # -0.0 + 0.0 is 0.0: only the zero of the opposite sign is neutral
        return _literal_is(lit, 0.0, negative_zero=add)
    return _literal_is(lit, 0)


def _empty_param(param: str, p, inputs, out):
    return inputs[0] if not p[param] else None


def _convert(p, inputs, out):
    return inputs[0] if inputs[0].aval.dtype == p["new_dtype"] else None


def _reshape(p, inputs, out):
    x = inputs[0]
    return x if tuple(p["new_sizes"]) == tuple(x.aval.shape) else None


def _transpose(p, inputs, out):
    x = inputs[0]
    return x if tuple(p["permutation"]) == tuple(range(len(x.aval.shape))) else None


def _broadcast(p, inputs, out):
    x = inputs[0]
    same = tuple(p["shape"]) == tuple(x.aval.shape)
    ident = tuple(p["broadcast_dimensions"]) == tuple(range(len(p["shape"])))
    return x if same and ident else None


def _slice(p, inputs, out):
    x = inputs[0]
    starts = all(s == 0 for s in p["start_indices"])
    full = starts and tuple(p["limit_indices"]) == tuple(x.aval.shape)
    return x if full and (p["strides"] is None or all(s == 1 for s in p["strides"])) else None


def _integer_pow(p, inputs, out):
    return inputs[0] if p["y"] == 1 else None


def _unit(is_unit, commutes: bool, p, inputs, out):
    """``a op b`` where ``b`` (or ``a``, when ``op`` commutes) is a literal unit of op."""
    a, b = inputs
    if isinstance(b, Literal) and is_unit(b) and _same_as_out(a, out):
        return a
    if commutes and isinstance(a, Literal) and is_unit(a) and _same_as_out(b, out):
        return b
    return None


def _select(p, inputs, out):
    cases = inputs[1:]
    if len(cases) < 1:
        return None
    c0 = cases[0]
    if not isinstance(c0, Literal) and all(c is c0 for c in cases) and _same_as_out(c0, out):
        return c0
    return None


def _one(lit) -> bool:
    return _literal_is(lit, 1)


identity_rules: dict[str, Callable] = {
    "convert_element_type": _convert,
    "reshape": _reshape,
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast,
    "slice": _slice,
    "integer_pow": _integer_pow,
    "mul": partial(_unit, _one, True),
    "add": partial(_unit, partial(_float_or_int_zero, add=True), True),
    "sub": partial(_unit, partial(_float_or_int_zero, add=False), False),
    "div": partial(_unit, _one, False),
    "select_n": _select,
    **{
        name: partial(_empty_param, param)
        for name, param in {
            "squeeze": "dimensions",
            "expand_dims": "dimensions",
            "rev": "dimensions",
            "reduce_sum": "axes",
            "reduce_max": "axes",
            "reduce_min": "axes",
            "reduce_prod": "axes",
            "reduce_and": "axes",
            "reduce_or": "axes",
        }.items()
    },  # fmt: skip
}
