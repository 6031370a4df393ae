"""PyTorch's in-place methods (``add_``, ``copy_``, ``zero_``, ...): on a cell they rebind
its value; on a plain tensor they raise ``TypeError`` naming the out-of-place form.

Each method computes the out-of-place result with the Tensor method of the same name
without the underscore and rebinds the cell to it (``Cell.set_``). On a cell that
requires grad, outside ``ft.no_grad()``, they raise as PyTorch does (a leaf that requires
grad may not change under the tape); ``p.data`` is the cell's detached alias and takes
them. The result keeps the cell's dtype and shape, as PyTorch's in-place ops do.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.ones(2))
>>> with ft.no_grad():
...     _ = p.mul_(3.0).add_(ft.ones(2), alpha=2)
>>> p.tolist()
[5.0, 5.0]
>>> ft.ones(2).add_(1.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
TypeError: Tensor.add_: fntorch tensors are immutable; use the out-of-place form ...
"""

from __future__ import annotations

import numpy as np

from ..fx.cell import Cell
from ..fx.core import Tensor, _new_tensor
from . import (  # the methods this module wraps are attached first
    _tensor_methods_convert,  # noqa: F401
    _tensor_methods_math,  # noqa: F401
    _tensor_methods_shape,  # noqa: F401
)


def _check(self, name: str, base: str):
    if not isinstance(self, Cell):
        raise TypeError(
            f"Tensor.{name}: fntorch tensors are immutable; use the out-of-place form "
            f"`t = t.{base}(...)` (in-place methods work on cells: nn.Parameter, registered "
            "buffers, and p.data)"
        )
    if self._taped:
        raise RuntimeError(
            f"{name}: a leaf {type(self).__name__} that requires grad is being used in an "
            "in-place operation; wrap it in ft.no_grad(), or write p.data"
        )


def _same_type(new, old) -> Tensor:
    """``new`` with ``old``'s dtype and broadcast to its shape (in-place semantics)."""
    from . import api

    new = new if isinstance(new, Tensor) else api.asarray(new)
    if new.dtype != old.dtype:
        new = new.astype(old.dtype)
    if tuple(new.shape) != tuple(old.shape):
        new = api.broadcast_to(new, old.shape)
    return new


def _inplace(name: str, base: str):
    def method(self, *args, **kwargs):
        _check(self, name, base)
        old = self._read()
        self.set_(_same_type(getattr(old, base)(*args, **kwargs), old))
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"In place on a cell: ``c.set_(c.{base}(...))``, keeping its dtype and shape (see "
        "``fntorch.ops._tensor_inplace``).\n\n"
        "    >>> import fntorch as ft\n"
        "    >>> c = ft.nn.Buffer(ft.ones(2))  # a cell that never requires grad\n"
        "    >>> c.mul_(3.0).add_(1.0).tolist()\n"
        "    [4.0, 4.0]\n"
    )
    return method


_PAIRS = (
    "add", "sub", "mul", "div", "pow", "clamp", "clamp_min", "clamp_max", "neg", "abs",
    "sqrt", "rsqrt", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil",
    "round", "trunc", "reciprocal", "square", "fmod", "remainder", "masked_fill", "lerp",
    "addcmul", "addcdiv", "t", "squeeze", "unsqueeze", "transpose", "sign", "exp2",
    "log1p", "expm1", "erf", "atan2", "hypot", "maximum", "minimum", "logical_not",
)  # fmt: skip


def _copy_(self, src, non_blocking=False):
    """Writes ``src`` (broadcast, cast to the cell's dtype) into the cell.

    >>> import fntorch as ft
    >>> ft.nn.Buffer(ft.ones(2)).copy_(ft.asarray([1.0, 5.0])).tolist()
    [1.0, 5.0]
    """
    _check(self, "copy_", "copy")
    self.set_(_same_type(src, self._read()))
    return self


def _fill_(self, value):
    """Every element of the cell becomes ``value``.

    >>> import fntorch as ft
    >>> ft.nn.Buffer(ft.ones(2)).fill_(7.0).tolist()
    [7.0, 7.0]
    """
    _check(self, "fill_", "full_like")
    old = self._read()
    v = value._value if isinstance(value, Tensor) else value
    self.set_(_new_tensor(np.full(old.shape, v, old.dtype)))
    return self


def _zero_(self):
    """The cell becomes zeros of its shape and dtype.

    >>> import fntorch as ft
    >>> ft.nn.Buffer(ft.ones(2)).zero_().tolist()
    [0.0, 0.0]
    """
    _check(self, "zero_", "zeros_like")
    return _fill_(self, 0)


def _attach() -> None:
    for base in _PAIRS:
        if hasattr(Tensor, base):
            setattr(Tensor, base + "_", _inplace(base + "_", base))
    Tensor.copy_ = _copy_
    Tensor.fill_ = _fill_
    Tensor.zero_ = _zero_


_attach()
