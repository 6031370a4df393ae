"""PyTorch's in-place methods (``add_``, ``copy_``, ``zero_``, ``normal_``, ...): on a cell
they rebind its value; on a plain tensor they raise ``TypeError`` naming the out-of-place
form. ``requires_grad_`` is here too: on a plain tensor it returns a new leaf cell.

Each method computes the out-of-place result with the Tensor method of the same name
without the underscore and rebinds the cell to it (``Cell.set_``). On a cell that
requires grad, outside ``ft.no_grad()``, they raise as PyTorch does (a leaf that requires
grad may not change under the tape); ``p.data`` is the cell's detached alias and takes
them. The result keeps the cell's dtype and shape, as PyTorch's in-place ops do.

The random fills (``normal_``, ``uniform_``, ``exponential_``, ``bernoulli_``,
``random_``, ``log_normal_``, ``cauchy_``, ``geometric_``) draw from the global key
(``ft.manual_seed``) or a ``generator=``: PyTorch's distributions, not its numbers. Their
samplers live in the random room, which registers them in ``random_fills`` (ops may not
import it).

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

from ..fx import dtypes
from ..fx.cell import Cell
from ..fx.core import Tensor, Tracer, _new_tensor
from . import (  # the methods this module wraps are attached first
    _tensor_methods_convert,  # noqa: F401
    _tensor_methods_math,  # noqa: F401
    _tensor_methods_shape,  # noqa: F401
)


def _check(self, name: str, base: str, form: str | None = None):
    """Raises unless ``self`` is a cell that may be written now; ``form`` is the
    out-of-place spelling to suggest (default ``t.{base}(...)``)."""
    if not isinstance(self, Cell):
        raise TypeError(
            f"Tensor.{name}: fntorch tensors are immutable; use the out-of-place form "
            f"`t = {form or f't.{base}(...)'}` (in-place methods work on cells: nn.Parameter, "
            "registered buffers, and p.data)"
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


# ------------------------------------------------------------------- random fills

# name -> sampler(shape, dtype, generator, *args) -> Tensor, registered by the random room
# (fntorch/random/_fills.py); each checks its arguments before drawing.
random_fills: dict = {}


def _fill_random(self, name: str, form: str, generator, *args):
    _check(self, name, "", form)
    old = self._read()
    new = random_fills[name](tuple(old.shape), old.dtype, generator, *args)
    self.set_(_same_type(new, old))
    return self


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills the cell with draws from N(``mean``, ``std``**2), as PyTorch's ``normal_``.

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(0); b = ft.nn.Buffer(ft.zeros(10_000)).normal_(2.0, 0.5)
    >>> round(b.mean().item(), 1), round(b.std().item(), 1)
    (2.0, 0.5)
    """
    return _fill_random(self, "normal_", "ft.normal(mean, std, t.shape)", generator, mean, std)


def _uniform_(self, a=0.0, b=1.0, *, generator=None, **bounds):
    """Fills the cell with draws from U[``a``, ``b``), as PyTorch's ``uniform_`` (which
    also takes its bounds as ``**{"from": a, "to": b}``).

    >>> import fntorch as ft
    >>> b = ft.nn.Buffer(ft.zeros(1000)).uniform_(-2.0, -1.0)
    >>> bool((b >= -2.0).all() and (b < -1.0).all())
    True
    """
    a, b = _bounds("uniform_", a, b, bounds)
    return _fill_random(self, "uniform_", "ft.rand_like(t) * (b - a) + a", generator, a, b)


def _bounds(name: str, a, b, bounds: dict):
    """PyTorch's ``from``/``to`` keywords (``from`` is a Python keyword) for ``a``, ``b``."""
    unknown = set(bounds) - {"from", "to"}
    if unknown:
        raise TypeError(f"Tensor.{name}: unexpected keyword arguments {sorted(unknown)}")
    return bounds.get("from", a), bounds.get("to", b)


def _exponential_(self, lambd=1.0, *, generator=None):
    """Fills the cell with draws from the exponential distribution of rate ``lambd``.

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(0); b = ft.nn.Buffer(ft.zeros(10_000)).exponential_(4.0)
    >>> round(b.mean().item(), 2), bool((b >= 0).all())
    (0.25, True)
    """
    form = "-ft.log1p(-ft.rand_like(t)) / lambd"
    return _fill_random(self, "exponential_", form, generator, lambd)


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills the cell with ``exp`` of draws from N(``mean``, ``std``**2).

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(0); b = ft.nn.Buffer(ft.zeros(10_000)).log_normal_(0.0, 0.25)
    >>> round(b.log().mean().item(), 1), bool((b > 0).all())
    (0.0, True)
    """
    form = "ft.exp(ft.normal(mean, std, t.shape))"
    return _fill_random(self, "log_normal_", form, generator, mean, std)


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills the cell with draws from the Cauchy distribution at ``median``, scale ``sigma``.

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(0); b = ft.nn.Buffer(ft.zeros(10_000)).cauchy_(3.0)
    >>> round(ft.sort(b)[5_000].item())  # the median
    3
    """
    form = "median + sigma * ft.tan(ft.pi * (ft.rand_like(t) - 0.5))"
    return _fill_random(self, "cauchy_", form, generator, median, sigma)


def _geometric_(self, p, *, generator=None):
    """Fills the cell with the number of Bernoulli(``p``) trials up to the first success
    (1, 2, ...), as PyTorch's ``geometric_``.

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(0); b = ft.nn.Buffer(ft.zeros(10_000)).geometric_(0.5)
    >>> round(b.mean().item(), 1), b.min().item()
    (2.0, 1.0)
    """
    form = "ft.floor(ft.log1p(-ft.rand_like(t)) / math.log1p(-p)) + 1"
    return _fill_random(self, "geometric_", form, generator, p)


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fills the cell with 1 with probability ``p`` (a number or a tensor that broadcasts
    to the cell), else 0, as PyTorch's ``bernoulli_``.

    >>> import fntorch as ft
    >>> ft.nn.Buffer(ft.zeros(3)).bernoulli_(ft.asarray([0.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    return _fill_random(self, "bernoulli_", "ft.bernoulli(ft.full_like(t, p))", generator, p)


def _random_(self, low=None, high=None, *, generator=None, **bounds):
    """Fills the cell with integers drawn uniformly from [``low``, ``high``), as PyTorch's
    ``random_``: ``random_(high)`` is [0, ``high``); ``random_()`` is [0, 2**mantissa] for
    floats (every value exact) and [0, the dtype's max) for integers.

    >>> import fntorch as ft
    >>> b = ft.nn.Buffer(ft.zeros(100, dtype=ft.int64)).random_(3, 5)
    >>> sorted(set(b.tolist()))
    [3, 4]
    """
    low, high = _bounds("random_", low, high, bounds)
    if high is None and low is not None:
        low, high = 0, low
    return _fill_random(self, "random_", "ft.randint_like(t, low, high)", generator, low, high)


# ------------------------------------------------------------------- requires_grad_

# The leaf cell class ``requires_grad_`` makes of a plain tensor: nn registers
# ``Parameter`` here (ops may not import nn).
leaf_cell: list = [None]


def _requires_grad_(self, requires_grad: bool = True):
    """PyTorch's ``requires_grad_``. A tensor is an immutable value, so on a plain tensor
    this cannot change ``self``: it *returns* a new leaf cell (an ``nn.Parameter`` with
    ``self``'s value) whose operations the tape records, as ``ft.tensor(data,
    requires_grad=True)`` does. Use the result: ``x = ft.randn(3).requires_grad_()``
    works as in PyTorch, while ``x.requires_grad_(); f(x)`` records nothing (``x`` is still
    the plain tensor). On a value that already requires grad, or with ``False`` on one
    that does not, it returns ``self``; on a parameter it sets the flag in place.

    >>> import fntorch as ft
    >>> x = ft.asarray([1.0, 2.0]).requires_grad_()
    >>> (x * x).sum().backward(); x.is_leaf, x.grad.tolist()
    (True, [2.0, 4.0])
    """
    if isinstance(self, Tracer):
        raise ValueError(
            "Tensor.requires_grad_: got a traced value (inside "
            f"{self._trace.transform_name}); the tape records eager values only: take "
            "derivatives inside a transform with ft.grad / ft.vjp instead"
        )
    if not requires_grad:
        if self.requires_grad and not self.is_leaf:
            raise RuntimeError(
                "requires_grad_: you can only change requires_grad flags of leaf variables; "
                "to use a computed value without its gradient, use value.detach()"
            )
        return self
    if self.requires_grad:
        return self
    if isinstance(self, Cell):
        raise TypeError(
            f"Tensor.requires_grad_: a {type(self).__name__} never requires grad (a buffer, "
            "or p.data); make a parameter of its value: ft.nn.Parameter(t.detach())"
        )
    if not dtypes.is_inexact(self.dtype):
        raise RuntimeError(
            f"requires_grad_: only tensors of floating point and complex dtype can require "
            f"gradients, "
            f"got {self.dtype}"
        )
    return leaf_cell[0](_new_tensor(self._value))


def _attach() -> None:
    for base in _PAIRS:
        if hasattr(Tensor, base):
            setattr(Tensor, base + "_", _inplace(base + "_", base))
    for method in (_copy_, _fill_, _zero_, _normal_, _uniform_, _exponential_, _log_normal_,
                   _cauchy_, _geometric_, _bernoulli_, _random_, _requires_grad_):  # fmt: skip
        setattr(Tensor, method.__name__[1:], method)  # `_normal_` is Tensor.normal_


_attach()
