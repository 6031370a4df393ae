"""Cells: the one mutable thing in fntorch, a holder of an immutable tensor value.

Tensors are values and never change. State that PyTorch code mutates in place (a
module's parameters and buffers, an optimizer's moments, the global random key) lives
in a ``Cell``: it is accepted wherever a tensor is (it *is* a ``Tensor``, whose value is
the cell's current one), and only it takes in-place updates: ``c.data = t``,
``c.copy_(t)``, ``c.add_(t)`` and the other in-place methods rebind the cell to a new
value. A plain tensor's in-place method raises ``TypeError`` naming the functional form.

Writing a traced value into a cell (inside ``grad``, ``vmap`` or a trace without a
cell-aware owner) raises ``ValueError`` naming the cell: the write would outlive the
transform. ``write_hooks`` lets a trace that owns cell state (``jit``) take such writes.

>>> import fntorch as ft
>>> c = Cell(ft.zeros(2), name="moment")
>>> c.add_(ft.ones(2)).mul_(3.0)
Cell(moment, [3.0, 3.0])
>>> (c * 2).tolist()
[6.0, 6.0]
"""

from __future__ import annotations

import numpy as np

from .core import Tensor, Tracer, _new_tensor, device_of_buffer

# Called with (cell, tracer) when a traced value is written into a cell; the first hook
# that returns True has taken the write (a jit trace lifting cells into outputs).
write_hooks: list = []

# The jit traces staging now, innermost last (``transforms/jit_cells.py``). While one
# is, every read and write of a cell goes to it, so the cells themselves never hold a
# tracer and a trace that fails leaves them as they were. A scope has ``read(cell)``,
# ``write(cell, buf)`` and ``born(cell)``.
scopes: list = []


def _buffer(value, where: str):
    """The buffer a cell holds for ``value`` (a tensor, array or number)."""
    if isinstance(value, Tracer):
        return value  # checked by the caller
    if isinstance(value, Tensor):
        return value._value
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value)  # a copy: a later write to the source is never seen
    if isinstance(value, (bool, int, float, list, tuple)):
        a = np.asarray(value)
        if a.dtype == np.float64:  # Python floats: the default float dtype, as ft.asarray
            a = a.astype(np.float32)
        return a
    raise TypeError(f"{where}: expected a tensor, an array or a number, got {type(value).__name__}")


def traced_write_error(cell: Cell, buf: Tracer) -> ValueError:
    """The error for writing ``buf``, a tracer no jit trace takes, into ``cell``."""
    return ValueError(
        f"{cell._what()}: cannot write a traced value ({buf.aval.str_short()} of "
        f"{buf._trace.transform_name}) into a cell; a cell's state outlives the "
        "transform. Return the new value from the transformed function instead, or "
        "write it under ft.jit, which carries cell writes out of the call"
    )


class Cell(Tensor):
    """A mutable holder of an immutable tensor value (see the module docstring).

    >>> import fntorch as ft
    >>> c = Cell(ft.ones(3))
    >>> c.data = ft.zeros(3); c.tolist()
    [0.0, 0.0, 0.0]
    """

    __slots__ = ("_buf", "name", "__weakref__")

    def __init__(self, value=None, name: str = ""):
        self.name = name
        self._buf = _buffer(value if value is not None else np.zeros(0, np.float32), "Cell")
        traced = self._buf if isinstance(self._buf, Tracer) else None
        if traced is not None:
            if not scopes:
                raise ValueError(f"Cell({name}): its value cannot be a traced value")
            # Made inside a jit trace: a placeholder buffer until the call writes it.
            self._buf = np.zeros(traced.shape, traced.dtype)
        if scopes:
            scopes[-1].born(self)
            if traced is not None:
                scopes[-1].write(self, traced)

    @property
    def _value(self):
        if scopes:
            return scopes[-1].read(self)
        return self._buf

    @property
    def data(self) -> Tensor:
        """A detached alias of the cell, as PyTorch's ``p.data``: it reads the cell's
        value, is never recorded on the tape, and in-place methods on it write the cell
        (``p.data.add_(g, alpha=-lr)``); assigning ``p.data = t`` rebinds the cell.

        >>> import fntorch as ft
        >>> c = Cell(ft.ones(2)); _ = c.data.mul_(3.0); c.tolist()
        [3.0, 3.0]
        """
        return CellAlias(self)

    @data.setter
    def data(self, value) -> None:
        self.set_(value)

    def set_(self, value):
        """Rebinds the cell to ``value`` (a tensor, array or number); returns the cell.

        >>> import fntorch as ft
        >>> Cell(ft.ones(2)).set_(ft.arange(2.0)).tolist()
        [0.0, 1.0]
        """
        buf = _buffer(value, f"{self._what()}.set_")
        if scopes:
            scopes[-1].write(self, buf)  # a ValueError for another transform's tracer
            self._written()
            return self
        if isinstance(buf, Tracer):
            for hook in write_hooks:
                if hook(self, buf):
                    return self
            raise traced_write_error(self, buf)
        self._buf = buf
        self._written()
        return self

    @property
    def device(self):
        """The device of the cell's buffer (the one it keeps while a jit trace reads it).

        >>> import fntorch as ft
        >>> Cell(ft.ones(1)).device
        device(type='cpu')
        """
        return device_of_buffer(self._buf)

    def _written(self) -> None:
        """Called after each write (subclasses: Parameter drops nothing; tapes reset)."""

    def _read(self) -> Tensor:
        """The current value as a plain tensor."""
        return _new_tensor(self._value)

    def _what(self) -> str:
        return f"{type(self).__name__}({self.name})" if self.name else type(self).__name__

    def __repr__(self):
        v = self._value
        body = np.asarray(v).tolist() if getattr(v, "size", 0) <= 6 else f"shape={v.shape}"
        return f"{type(self).__name__}({self.name + ', ' if self.name else ''}{body})"

    __hash__ = object.__hash__


class CellAlias(Cell):
    """``cell.data``: reads and writes its cell, and never requires grad.

    >>> import fntorch as ft
    >>> c = Cell(ft.zeros(1)); a = c.data; c.data = ft.ones(1); a.tolist()
    [1.0]
    """

    __slots__ = ("_owner",)
    requires_grad = False
    grad = None

    def __init__(self, owner: Cell):
        self._owner = owner
        self.name = owner.name

    @property
    def _value(self):
        if scopes:
            return scopes[-1].read(self._owner)
        return self._owner._buf

    @property
    def data(self) -> Tensor:
        return self

    @property
    def device(self):
        return self._owner.device

    def set_(self, value):
        self._owner.set_(value)
        return self
