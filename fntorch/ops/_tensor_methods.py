"""Tensor methods: the PyTorch-named methods attached to Tensor, and their shared helpers.

The methods live in four modules, each attaching its methods when imported (this module
imports them): `fntorch.ops._tensor_methods_math` (elementwise, arithmetic and reduction
methods), `fntorch.ops._tensor_methods_shape` (shape, manipulation, indexing, sorting and
selection), `fntorch.ops._tensor_methods_convert` (dtype and device conversions,
identity and ``new_*``) and `fntorch.ops._tensor_methods_torch` (PyTorch spellings:
``x.size()`` beside the Array API's ``x.size``, ``narrow``, ``is_cuda``). Each table row
attaches one method that calls a public function (``ft.<name>``) with ``self`` first;
reductions translate PyTorch's ``dim=``/``keepdim=`` to the Array API's
``axis=``/``keepdims=`` (both spellings are accepted). Here: the argument helpers they
share (``dim``/``axis``, shape arguments) and ``return_types``, the namedtuple types of
``(values, indices)`` results. See `fntorch.ops._tensor`.
"""

from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

from ..fx.core import Tensor

# ----------------------------------------------------------------------------- helpers


def _axis(dim, axis, where: str):
    """PyTorch's ``dim`` or the Array API's ``axis`` (lists become tuples)."""
    if dim is not None and axis is not None:
        raise TypeError(f"{where}: got both dim={dim!r} and axis={axis!r}; pass one")
    a = axis if dim is None else dim
    return tuple(a) if isinstance(a, list) else a


def _keepdims(keepdim, keepdims) -> bool:
    return builtins.bool(keepdim if keepdims is None else keepdims)


def _shape_args(args, where: str) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike; a float is refused, not truncated (as PyTorch)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    try:
        return tuple(operator.index(a) for a in args)
    except TypeError:
        raise TypeError(f"{where}: expected ints or one tuple of ints, got {args!r}") from None


def _keyword_or_args(args, value, where: str, name: str) -> tuple:
    """PyTorch's keyword spelling (``x.permute(dims=(1, 0))``) of a varargs method."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{where}: got {name} both as positional arguments and as {name}=")
    return (value,)


def _norm(where: str, d, ndim: int) -> int:
    from ._api_common import normalize_axis

    return normalize_axis(where, d, ndim)


class _ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


def _result(name: str):
    """A namedtuple type ``(values, indices)`` named like PyTorch's return types."""
    cls = type(name, (_ValuesIndices,), {"__slots__": ()})
    cls.__doc__ = f"The ``(values, indices)`` result of ``Tensor.{name}``."
    return cls


class return_types:  # noqa: N801 - mirrors torch.return_types
    """The namedtuple types of methods that return ``(values, indices)``."""

    max = _result("max")
    min = _result("min")
    sort = _result("sort")
    topk = _result("topk")


# The parts attach their methods when imported; they import the helpers above, so they
# come last (no method name is attached by two parts, so their order changes nothing).
from . import (  # noqa: E402
    _tensor_inplace,  # noqa: F401  (it imports the other parts first: it wraps them)
    _tensor_methods_convert,  # noqa: F401
    _tensor_methods_math,  # noqa: F401
    _tensor_methods_shape,  # noqa: F401
    _tensor_methods_torch,  # noqa: F401
)
