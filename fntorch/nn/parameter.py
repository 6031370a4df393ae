"""``nn.Parameter`` and buffers: cells a Module registers.

A ``Parameter`` is a ``Cell`` (``fntorch.fx.cell``) with ``requires_grad`` (default True)
and ``grad`` (None until ``loss.backward()`` accumulates into it). Operations on a
parameter that requires grad are recorded on the tape while grad mode is on
(``fntorch.nn.tape``); ``.data`` is its current value, untracked.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.ones(2))
>>> p.requires_grad, p.grad is None, p.shape
(True, True, (2,))

A plain tensor's ``x.requires_grad_()`` (attached to ``Tensor`` here) cannot flag the
immutable value: it returns a new leaf, a ``Parameter`` holding the value, so PyTorch's
``x = ft.randn(3).requires_grad_()`` works while a bare ``x.requires_grad_()``
statement leaves ``x`` untracked (docs/pytorch.md).
"""

from __future__ import annotations

import itertools

from ..fx.cell import Cell
from ..fx.cell import scopes as _cell_scopes
from ..fx.core import Tensor
from ..ops import _tensor_inplace
from ._grad_mode import _grad_enabled


class RemovableHandle:
    """What ``register_post_accumulate_grad_hook`` returns: ``remove()`` takes the hook
    away (PyTorch's ``torch.utils.hooks.RemovableHandle``).

    >>> table = {}; h = RemovableHandle(table); table[h.id] = print; h.remove(); table
    {}
    """

    _ids = itertools.count()

    def __init__(self, table: dict):
        self.table, self.id = table, next(self._ids)

    def remove(self) -> None:
        """Takes the hook away (again: nothing)."""
        self.table.pop(self.id, None)


class Parameter(Cell):
    """A module's learnable tensor: a cell that records on the tape when it requires grad.

    >>> import fntorch as ft
    >>> w = ft.nn.Parameter(ft.zeros(3), requires_grad=False)
    >>> _ = w.requires_grad_(); w.requires_grad
    True
    """

    __slots__ = ("requires_grad", "_grad", "_tape_leaf", "_post_accumulate_grad_hooks")

    def __init__(self, data=None, requires_grad: bool = True):
        if data is None:
            from ..ops import api

            data = api.zeros((0,))
        super().__init__(data)
        self.requires_grad = bool(requires_grad)
        self._grad: Tensor | None = None
        self._tape_leaf = None  # this parameter's input on the current tape, if any
        self._post_accumulate_grad_hooks: dict | None = None

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (None until a ``backward`` reaches this parameter).
        Inside a jit trace, reads and writes go through the trace's cells, so a compiled
        step sees and sets the ``.grad`` of each call, not the one it was traced with.

        >>> import fntorch as ft
        >>> p = ft.nn.Parameter(ft.ones(2)); (p * p).sum().backward(); p.grad.tolist()
        [2.0, 2.0]
        """
        if _cell_scopes:
            return _cell_scopes[-1].grad_of(self)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if _cell_scopes:
            _cell_scopes[-1].set_grad(self, value)
        else:
            self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Parameter:
        """Sets ``requires_grad`` in place; returns the parameter.

        >>> import fntorch as ft
        >>> ft.nn.Parameter(ft.ones(1)).requires_grad_(False).requires_grad
        False
        """
        self.requires_grad = bool(requires_grad)
        return self

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """``hook(param)`` runs each time a ``backward`` has finished adding into
        ``param.grad``: during the backward, as soon as this parameter's gradient is
        final (later layers' hooks first), as PyTorch's. Returns a handle whose
        ``remove()`` takes the hook away.

        >>> import fntorch as ft
        >>> a, b = ft.nn.Parameter(ft.ones(1)), ft.nn.Parameter(ft.ones(1))
        >>> order = []
        >>> for name, p in (("a", a), ("b", b)):
        ...     _ = p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
        >>> ((a * 2.0).exp() * b).sum().backward(); order  # b is used last: final first
        ['b', 'a']
        """
        if not callable(hook):
            raise TypeError(
                "register_post_accumulate_grad_hook: hook must be callable, got "
                f"{type(hook).__name__}"
            )
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        handle = RemovableHandle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    @property
    def _taped(self) -> bool:
        return self.requires_grad and _grad_enabled.get()

    @property
    def is_leaf(self) -> bool:
        """Always True: a Parameter is where gradients stop, as in PyTorch."""
        return True

    def backward(self, *args, **kwargs):
        """Raises RuntimeError: there is nothing to differentiate a leaf by; call
        ``backward`` on a value computed from it."""
        raise RuntimeError(
            "backward: a Parameter is a leaf; call backward on a value computed from it"
        )

    def _written(self) -> None:
        self._tape_leaf = None  # a new value is a new leaf: the old tape saw the old one

    def __repr__(self):
        return "Parameter containing:\n" + repr(self._read())


_tensor_inplace.leaf_cell[0] = Parameter  # what t.requires_grad_() makes of a plain tensor


class Buffer(Cell):
    """A module's registered non-learnable state (BatchNorm's running statistics): a cell
    that never requires grad.

    >>> import fntorch as ft
    >>> ft.nn.Buffer(ft.zeros(2)).requires_grad
    False
    """

    __slots__ = ()
    requires_grad = False
    grad = None

    def __repr__(self):
        return repr(self._read())
