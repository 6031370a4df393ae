"""Reduce, scan and sort primitives and their abstract-eval rules (see docs/primitives.md).

Reductions remove the dims in ``axes`` (a sorted tuple of non-negative axes, possibly
empty); arg-reductions take a 1-tuple ``axes`` and an integer ``index_dtype``; scans keep
the shape and run along ``axis``, from the end when ``reverse``; ``sort`` sorts several
same-shaped operands along ``dimension`` by its first ``num_keys`` operands.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules

__all__ = [
    "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p",
    "reduce_or_p", "argmax_p", "argmin_p", "cumsum_p", "cumprod_p", "cummax_p", "cummin_p",
    "sort_p", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "sort",
    "normalize_axes",
]  # fmt: skip

# Kinds of dtype an operation accepts.
_NUM = "a numeric (integer, float or complex) dtype"
_BOOL = "a bool dtype"
_ANY = "any dtype"
_REAL = "a real (ordered, not complex) dtype"


def _check_dtype(name: str, kind: str, dtype):
    if kind == _REAL and dt.is_complex(dtype):
        raise TypeError(f"{name}: expected {kind}, got {dtype}")
    if kind == _NUM and dtype == dt.bool_:
        raise TypeError(f"{name}: expected {kind}, got {dtype}")
    if kind == _BOOL and dtype != dt.bool_:
        raise TypeError(f"{name}: expected {kind}, got {dtype}")


def _check_axes(name: str, axes, ndim: int, what: str = "axes"):
    if not isinstance(axes, tuple):
        raise TypeError(f"{name}: {what} must be a tuple of ints, got {axes!r}")
    for a in axes:
        if not 0 <= a < ndim:
            raise ValueError(f"{name}: axis {a} in {what}={axes} is out of range for rank {ndim}")
    if list(axes) != sorted(set(axes)):
        raise ValueError(f"{name}: {what}={axes} must be sorted and distinct")


def _check_axis(name: str, axis, ndim: int, what: str = "axis"):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: {what} must be an int, got {axis!r}")
    if not 0 <= axis < ndim:
        raise ValueError(f"{name}: {what}={axis} is out of range for rank {ndim}")


def _weak(x) -> bool:
    return getattr(x, "weak_type", False)


# ------------------------------------------------------------------- reductions


def _reduce_abstract(x, *, axes, name, kind):
    _check_dtype(name, kind, x.dtype)
    _check_axes(name, axes, len(x.shape))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, _weak(x))


def _reduction(name: str, kind: str) -> Primitive:
    p = Primitive(name)

    def abstract(x, *, axes):
        return _reduce_abstract(x, axes=axes, name=name, kind=kind)

    abstract_eval_rules[p] = abstract
    return p


reduce_sum_p = _reduction("reduce_sum", _NUM)
reduce_prod_p = _reduction("reduce_prod", _NUM)
reduce_max_p = _reduction("reduce_max", _REAL)
reduce_min_p = _reduction("reduce_min", _REAL)
reduce_and_p = _reduction("reduce_and", _BOOL)
reduce_or_p = _reduction("reduce_or", _BOOL)


def _arg_reduction(name: str) -> Primitive:
    p = Primitive(name)

    def abstract(x, *, axes, index_dtype):
        _check_dtype(name, _REAL, x.dtype)
        _check_axes(name, axes, len(x.shape))
        if len(axes) != 1:
            raise ValueError(f"{name}: axes must name exactly one axis, got axes={axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(
                f"{name}: axis {axes[0]} of shape {tuple(x.shape)} is empty; "
                "the arg-reduction of an empty axis is undefined"
            )
        if not dt.is_integer(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype)

    abstract_eval_rules[p] = abstract
    return p


argmax_p = _arg_reduction("argmax")
argmin_p = _arg_reduction("argmin")


# ------------------------------------------------------------------------ scans


def _scan(name: str, kind: str) -> Primitive:
    p = Primitive(name)

    def abstract(x, *, axis, reverse):
        _check_dtype(name, kind, x.dtype)
        _check_axis(name, axis, len(x.shape))
        if not isinstance(reverse, bool):
            raise TypeError(f"{name}: reverse must be a bool, got {reverse!r}")
        return ShapedArray(x.shape, x.dtype, _weak(x))

    abstract_eval_rules[p] = abstract
    return p


cumsum_p = _scan("cumsum", _NUM)
cumprod_p = _scan("cumprod", _NUM)
cummax_p = _scan("cummax", _REAL)
cummin_p = _scan("cummin", _REAL)


# ------------------------------------------------------------------------- sort
sort_p = Primitive("sort", multiple_results=True)


def _sort_abstract(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise ValueError("sort: expected at least one operand")
    shape = tuple(operands[0].shape)
    for i, x in enumerate(operands[1:], 1):
        if tuple(x.shape) != shape:
            raise ValueError(
                f"sort: operands must share one shape, got {shape} (operand 0) and "
                f"{tuple(x.shape)} (operand {i})"
            )
    _check_axis("sort", dimension, len(shape), "dimension")
    for x in operands[:num_keys]:
        _check_dtype("sort", _REAL, x.dtype)
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"sort: num_keys={num_keys} must be between 1 and the number of operands "
            f"({len(operands)})"
        )
    return [ShapedArray(shape, x.dtype, _weak(x)) for x in operands]


abstract_eval_rules[sort_p] = _sort_abstract


# --------------------------------------------------------------- lax-style wrappers


def normalize_axes(axes, ndim: int) -> tuple:
    """``axes`` (an int or ints, possibly negative) as a sorted tuple of non-negative axes.

    Out-of-range axes are left as they are so the primitive's check names them.

    >>> normalize_axes((-1, 0), 3)
    (0, 2)
    """
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    return tuple(sorted(int(a) + ndim if -ndim <= a < 0 else int(a) for a in axes))


def _reducer(p, dtype="float32"):
    def f(x, axes):
        axes = normalize_axes(axes, x.ndim)
        if not axes:
            return x
        return p.bind(x, axes=axes)

    f.__name__ = p.name
    f.__doc__ = (
        f"``{p.name}`` over ``axes`` (ints, may be negative); no-op for empty axes.\n\n"
        f"    >>> import numpy as np\n"
        f"    >>> {p.name}(np.ones((2, 3), np.{dtype}), (-1,)).shape\n"
        f"    (2,)\n"
    )
    return f


reduce_sum = _reducer(reduce_sum_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_and = _reducer(reduce_and_p, "bool_")
reduce_or = _reducer(reduce_or_p, "bool_")


def argmax(x, axis: int, index_dtype=dt.int64):
    """Index of the first maximum of ``x`` along ``axis`` (NaN counts as the maximum).

    >>> import numpy as np
    >>> argmax(np.array([[1.0, 3.0, 3.0]]), 1, np.dtype("int32")).shape
    (1,)
    """
    (axis,) = normalize_axes(axis, x.ndim)
    return argmax_p.bind(x, axes=(axis,), index_dtype=np.dtype(index_dtype))


def argmin(x, axis: int, index_dtype=dt.int64):
    """Index of the first minimum of ``x`` along ``axis`` (NaN counts as the minimum).

    >>> import numpy as np
    >>> argmin(np.array([[2.0, 1.0, 1.0]]), 1, np.dtype("int32")).shape
    (1,)
    """
    (axis,) = normalize_axes(axis, x.ndim)
    return argmin_p.bind(x, axes=(axis,), index_dtype=np.dtype(index_dtype))


def _scanner(p, example):
    def f(x, axis: int, reverse: bool = False):
        (axis,) = normalize_axes(axis, x.ndim)
        return p.bind(x, axis=axis, reverse=bool(reverse))

    f.__name__ = p.name
    f.__doc__ = (
        f"Inclusive ``{p.name}`` of ``x`` along ``axis``; from the end when ``reverse``.\n\n"
        f"    >>> import numpy as np\n"
        f"    >>> {p.name}(np.array([1.0, 3.0, 2.0]), 0).shape  # values {example}\n"
        f"    (3,)\n"
    )
    return f


cumsum = _scanner(cumsum_p, "[1.0, 4.0, 6.0]")
cumprod = _scanner(cumprod_p, "[1.0, 3.0, 6.0]")
cummax = _scanner(cummax_p, "[1.0, 3.0, 3.0]")
cummin = _scanner(cummin_p, "[1.0, 1.0, 1.0]")


def sort(operands, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> list:
    """Sorts ``operands`` (one tensor or a sequence of same-shaped tensors) along
    ``dimension``, lexicographically by the first ``num_keys``; NaNs last. Returns a list.

    >>> import numpy as np
    >>> keys, vals = sort([np.array([3.0, 1.0, 2.0]), np.array([0, 1, 2])])
    >>> vals.shape  # values [1, 2, 0]
    (3,)
    """
    if hasattr(operands, "shape"):
        operands = (operands,)
    operands = tuple(operands)
    (dimension,) = normalize_axes(dimension, operands[0].ndim if operands else 0)
    return sort_p.bind(
        *operands, dimension=dimension, is_stable=bool(is_stable), num_keys=int(num_keys)
    )
