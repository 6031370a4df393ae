"""Indexing primitives and their abstract-eval rules (see docs/primitives.md, "Indexing").

``gather(operand, *indices, axes)`` is numpy advanced indexing on the operand axes
``axes`` (one integer index tensor per axis, any order, not necessarily consecutive):
the index tensors broadcast together to a shape ``B`` and the result has shape
``B + [operand dims not in axes, in order]``, the advanced dims always first.
Out-of-range indices clamp. The scatters take the same index operands, then
``updates`` (broadcastable to the gather shape, the operand's dtype), and return the
operand with ``operand[idx] op= updates``; out-of-range indices are dropped.

Index tensors are operands, not params, so they can be traced and batched like any
other value; they never carry a tangent.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules, get_aval

__all__ = [
    "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p",
    "scatter_max_p", "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min",
    "scatter_max",
]  # fmt: skip

gather_p = Primitive("gather")
scatter_p = Primitive("scatter")
scatter_add_p = Primitive("scatter_add")
scatter_mul_p = Primitive("scatter_mul")
scatter_min_p = Primitive("scatter_min")
scatter_max_p = Primitive("scatter_max")


def gather_shape(name: str, operand_shape, index_shapes, axes) -> tuple:
    """The result shape of gathering ``axes`` of ``operand_shape`` with index tensors of
    ``index_shapes``; ValueError (naming ``name``) for bad axes or unbroadcastable indices.

    >>> gather_shape("gather", (5, 6, 7), [(2, 1), (3,)], (2, 0))
    (2, 3, 6)
    """
    operand_shape = tuple(operand_shape)
    nd = len(operand_shape)
    axes = tuple(axes)
    if len(index_shapes) != len(axes):
        raise ValueError(
            f"{name}: expected one index tensor per axis in axes={axes}, got "
            f"{len(index_shapes)} index tensors"
        )
    for a in axes:
        if not isinstance(a, (int, np.integer)) or not 0 <= a < nd:
            raise ValueError(
                f"{name}: axes={axes} must be non-negative ints below the operand's rank "
                f"{nd} (operand shape {operand_shape})"
            )
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes={axes} must be distinct")
    if index_shapes:
        try:
            b = np.broadcast_shapes(*(tuple(s) for s in index_shapes))
        except ValueError:
            listed = ", ".join(str(tuple(s)) for s in index_shapes)
            raise ValueError(
                f"{name}: the index tensors' shapes {listed} cannot be broadcast together"
            ) from None
    else:
        b = ()
    rest = tuple(s for i, s in enumerate(operand_shape) if i not in axes)
    return tuple(b) + rest


def _check_indices(name: str, indices):
    for k, i in enumerate(indices):
        if not dt.is_integer(i.dtype):
            raise TypeError(f"{name}: index tensor {k} must have an integer dtype, got {i.dtype}")


def _gather_abstract(operand, *indices, axes):
    _check_indices("gather", indices)
    shape = gather_shape("gather", operand.shape, [i.shape for i in indices], axes)
    b = shape[: len(shape) - (len(operand.shape) - len(axes))]
    if any(operand.shape[a] == 0 for a in axes) and int(np.prod(b, dtype=np.int64)):
        raise ValueError(
            f"gather: cannot gather from operand shape {tuple(operand.shape)} with axes={axes}: "
            "a gathered axis is empty, so there is nothing to clamp an index to"
        )
    return ShapedArray(shape, operand.dtype, getattr(operand, "weak_type", False))


abstract_eval_rules[gather_p] = _gather_abstract


def _scatter_abstract(name: str, kind: str, operand, *rest, axes):
    if not rest:
        raise ValueError(f"{name}: expected index tensors and updates after the operand")
    indices, updates = rest[:-1], rest[-1]
    _check_indices(name, indices)
    if kind == "numeric" and operand.dtype == dt.bool_:
        raise TypeError(f"{name}: expected a numeric (integer or float) operand, got bool")
    if updates.dtype != operand.dtype:
        raise TypeError(
            f"{name}: updates must have the operand's dtype {operand.dtype}, got {updates.dtype}"
        )
    shape = gather_shape(name, operand.shape, [i.shape for i in indices], axes)
    u = tuple(updates.shape)
    ok = len(u) <= len(shape) and all(d in (1, s) for d, s in zip(u, shape[len(shape) - len(u) :]))
    if not ok:
        raise ValueError(
            f"{name}: updates of shape {u} cannot be broadcast to the gathered shape {shape} "
            f"(operand shape {tuple(operand.shape)}, axes={axes})"
        )
    return ShapedArray(operand.shape, operand.dtype, getattr(operand, "weak_type", False))


abstract_eval_rules[scatter_p] = lambda *a, **p: _scatter_abstract("scatter", "any", *a, **p)
abstract_eval_rules[scatter_add_p] = lambda *a, **p: _scatter_abstract(
    "scatter_add", "numeric", *a, **p
)
abstract_eval_rules[scatter_mul_p] = lambda *a, **p: _scatter_abstract(
    "scatter_mul", "numeric", *a, **p
)
abstract_eval_rules[scatter_min_p] = lambda *a, **p: _scatter_abstract(
    "scatter_min", "any", *a, **p
)
abstract_eval_rules[scatter_max_p] = lambda *a, **p: _scatter_abstract(
    "scatter_max", "any", *a, **p
)


# --------------------------------------------------------------- lax-style wrappers


def _norm_axes(operand, axes) -> tuple:
    nd = get_aval(operand).ndim
    return tuple(int(a) + nd if -nd <= a < 0 else int(a) for a in axes)


def _index_operand(i):
    # Python ints never reach a primitive.
    if type(i) in (bool, float):
        raise TypeError(f"index tensors must be integers, got {type(i).__name__} {i!r}")
    return np.int64(i) if type(i) is int else i


def gather(operand, indices, axes):
    """``operand`` advanced-indexed on ``axes`` by ``indices`` (one index tensor per axis).

    >>> import numpy as np
    >>> x = np.arange(12.0).reshape(3, 4)
    >>> gather(x, [np.array([2, 0])], (1,)).tolist()
    [[2.0, 6.0, 10.0], [0.0, 4.0, 8.0]]
    """
    indices = [_index_operand(i) for i in indices]
    return gather_p.bind(operand, *indices, axes=_norm_axes(operand, axes))


def _scatter_wrapper(p):
    def f(operand, indices, updates, axes):
        indices = [_index_operand(i) for i in indices]
        if type(updates) in (bool, int, float):
            updates = np.asarray(updates, dtype=get_aval(operand).dtype)[()]
        return p.bind(operand, *indices, updates, axes=_norm_axes(operand, axes))

    f.__name__ = f.__qualname__ = p.name
    f.__doc__ = (
        f"``operand`` with ``operand[idx] {_OPS[p.name]} updates`` at the positions that "
        f"``indices`` name on ``axes``; out-of-range indices are dropped.\n\n"
        f"    >>> import numpy as np\n"
        f"    >>> {p.name}(np.zeros(3), [np.array([0, 2])], np.float64(2.0), (0,)).tolist()\n"
        f"    {_EXAMPLES[p.name]}\n"
    )
    return f


_OPS = {
    "scatter": "=", "scatter_add": "+=", "scatter_mul": "*=",
    "scatter_min": "= min(operand[idx], updates)", "scatter_max": "= max(operand[idx], updates)",
}  # fmt: skip
_EXAMPLES = {
    "scatter": "[2.0, 0.0, 2.0]", "scatter_add": "[2.0, 0.0, 2.0]",
    "scatter_mul": "[0.0, 0.0, 0.0]", "scatter_min": "[0.0, 0.0, 0.0]",
    "scatter_max": "[2.0, 0.0, 2.0]",
}  # fmt: skip

scatter = _scatter_wrapper(scatter_p)
scatter_add = _scatter_wrapper(scatter_add_p)
scatter_mul = _scatter_wrapper(scatter_mul_p)
scatter_min = _scatter_wrapper(scatter_min_p)
scatter_max = _scatter_wrapper(scatter_max_p)
