"""Cells under ``ft.jit``: the cells a trace reads become implicit inputs of its graph,
the cells it writes implicit outputs, written back after each call.

While ``stage`` traces with ``cells=True`` a ``CellScope`` is the innermost of
``fx.cell.scopes``: a cell's first read makes a new graph input standing for it, a write
rebinds the scope's view of the cell (so later reads in the trace see the new value),
and the cells keep their buffers untouched, so no tracer ever lands in one and a failed
trace changes nothing. ``CellSignature`` is what the compiled entry keeps: weak
references to the cells read and written, their abstract values (a cell whose shape or
dtype changed no longer matches, and the call traces again), and, for a cell the trace
itself created (an optimizer's moment made on its first step), its initial buffer, used
when the cell is gone.

>>> import fntorch as ft
>>> from fntorch.fx.cell import Cell
>>> c = Cell(ft.ones(2), name="w")
>>> f = ft.jit(lambda x: c.add_(x) * 1.0)
>>> f(ft.ones(2)).tolist(), c.tolist()
([2.0, 2.0], [2.0, 2.0])
>>> f(ft.ones(2)).tolist(), f.stats["traces"]
([3.0, 3.0], 1)
"""

from __future__ import annotations

import weakref

import numpy as np

from ..fx.cell import Cell, traced_write_error
from ..fx.core import ShapedArray, Tracer, _new_tensor, get_aval  # noqa: F401 (the doctests use it)


class CellScope:
    """The cells one jit trace reads and writes (see the module docstring).

    >>> import fntorch as ft
    >>> from fntorch.fx.graph import GraphTrace
    >>> scope = CellScope(GraphTrace(ft.fx.current_trace()))
    >>> c = Cell(ft.zeros(3)); type(scope.read(c)).__name__, len(scope.inputs)
    ('GraphTracer', 1)
    """

    def __init__(self, trace):
        self.trace = trace
        self.values: dict = {}  # id(cell) -> (cell, its value in the trace now)
        self.inputs: list = []  # (kind, cell, aval): "cell" values and "grad"s, in order
        self.written: dict = {}  # id(cell) -> cell, in the order first written
        self.fresh: dict = {}  # id(cell) -> the initial buffer of a cell made in the trace
        self.grads: dict = {}  # id(cell) -> (cell, its .grad before the trace touched it)
        self.grad_outs: list = []  # (cell, whether its final .grad is a tensor)
        self.none_grads: list = []  # cells whose .grad the trace found None (guards)
        self.tape = None  # the autograd tape recording onto this trace (``nn/autograd``)

    def born(self, cell: Cell) -> None:
        """``cell`` was created during the trace."""
        self.fresh[id(cell)] = cell._buf

    def read(self, cell: Cell):
        """The value ``cell`` has in the trace: on its first read, a new graph input."""
        got = self.values.get(id(cell))
        if got is not None:
            return got[1]
        aval = get_aval(cell._buf).strong()
        t = self.trace.new_arg(aval)
        self.inputs.append(("cell", cell, aval))
        self.values[id(cell)] = (cell, t)
        return t

    def grad_of(self, cell: Cell):
        """``cell.grad`` in the trace (read by ``backward`` accumulating into it, an
        optimizer, ``zero_grad``): on first touch a concrete gradient becomes an implicit
        input and the old one is kept to restore; a None one is a guard, since the
        compiled call assumes it (a later call with a gradient there traces anew)."""
        if id(cell) not in self.grads:
            g = cell._grad
            self.grads[id(cell)] = (cell, g)
            if g is None:
                self.none_grads.append(cell)
            elif not isinstance(g, Tracer):
                aval = get_aval(g).strong()
                cell._grad = self.trace.new_arg(aval)
                self.inputs.append(("grad", cell, aval))
        return cell._grad

    def set_grad(self, cell: Cell, value) -> None:
        """Sets ``cell.grad`` for the rest of the trace; its final value is an output. A
        write before any read depends on nothing: no input, no guard (``zero_grad``)."""
        if id(cell) not in self.grads:
            self.grads[id(cell)] = (cell, cell._grad)
        cell._grad = value

    def write(self, cell: Cell, buf) -> None:
        """Rebinds ``cell`` in the trace to ``buf``; a tracer of another transform (a
        ``vmap`` or ``grad`` inside the jit'ed function) is a ValueError naming the cell."""
        if isinstance(buf, Tracer) and buf._trace is not self.trace:
            raise traced_write_error(cell, buf)
        self.values[id(cell)] = (cell, buf)
        self.written.setdefault(id(cell), cell)

    def outputs(self) -> list:
        """The final values of the written cells, in ``written``'s order, then the final
        ``.grad``s that are tensors (a None one is written back as None)."""
        out = [self.values[k][1] for k in self.written]
        for cell, _ in self.grads.values():
            g = cell._grad
            self.grad_outs.append((cell, g is not None))
            if g is not None:
                out.append(g)
        return out

    def restore(self) -> None:
        """Puts back every ``.grad`` the trace touched (no tracer outlives it)."""
        for cell, g in self.grads.values():
            cell._grad = g

    def signature(self) -> CellSignature | None:
        """What a compiled entry needs to feed and write back these cells (None: none)."""
        if not self.inputs and not self.written and not self.grads:
            return None
        return CellSignature(
            [(k, c, a, self.fresh.get(id(c)) if k == "cell" else None) for k, c, a in self.inputs],
            list(self.written.values()),
            self.grad_outs,
            self.none_grads,
        )


class CellSignature:
    """The cells of one compiled entry: ``buffers()`` for a call, ``write_back(outs)``.

    >>> import fntorch as ft
    >>> c = Cell(ft.ones(2))
    >>> sig = CellSignature([("cell", c, ShapedArray((2,), ft.float32), None)], [c])
    >>> [b.tolist() for b in sig.buffers()]
    [[1.0, 1.0]]
    """

    __slots__ = ("inputs", "outputs", "grads", "n_out", "none_grads")

    def __init__(self, inputs: list, outputs: list, grads: list = (), none_grads: list = ()):
        self.inputs = [(k, weakref.ref(c), a, fresh) for k, c, a, fresh in inputs]
        self.outputs = [weakref.ref(c) for c in outputs]
        self.grads = [(weakref.ref(c), present) for c, present in grads]
        self.n_out = len(outputs) + sum(p for _, p in grads)
        self.none_grads = [weakref.ref(c) for c in none_grads]

    def buffers(self) -> list | None:
        """The cells' current buffers, or None when one no longer matches its trace (its
        shape or dtype changed, or it is gone and was not made by the trace)."""
        for ref in self.none_grads:
            c = ref()
            if c is not None and c._grad is not None:
                return None  # traced with no gradient there: this call has one
        out = []
        for kind, ref, aval, fresh in self.inputs:
            c = ref()
            if c is None:
                if fresh is None:
                    return None
                out.append(fresh)
                continue
            if kind == "grad":
                if c._grad is None:
                    return None
                b = c._grad._value
            else:
                b = c._buf
            if type(b) is not np.ndarray and isinstance(b, np.generic):
                # an eager 0-d result (BatchNorm's num_batches_tracked + 1): a kernel
                # reads an array's data, never a numpy scalar's
                b = np.asarray(b)
            if tuple(b.shape) != aval.shape or b.dtype != aval.dtype:
                return None
            out.append(b)
        return out

    def operands(self) -> list:
        """The cells (and gradients) themselves, as a traced call's extra arguments."""
        out = []
        for kind, ref, _, fresh in self.inputs:
            c = ref()
            if c is None:
                out.append(_new_tensor(fresh))
            else:
                out.append(c.grad if kind == "grad" else c)
        return out

    def set_back(self, values) -> None:
        """Writes a traced call's cell outputs (tensors or tracers) through ``set_``."""
        n = len(self.outputs)
        for ref, v in zip(self.outputs, values[:n]):
            c = ref()
            if c is not None:
                c.set_(v)
        rest = iter(values[n:])
        for ref, present in self.grads:
            v = next(rest) if present else None
            c = ref()
            if c is not None:
                c.grad = v

    def write_back(self, bufs) -> None:
        """Writes the call's cell outputs into the cells that are still alive."""
        n = len(self.outputs)
        for ref, b in zip(self.outputs, bufs[:n]):
            c = ref()
            if c is not None:
                c._buf = b
                c._written()
        rest = iter(bufs[n:])
        for ref, present in self.grads:
            b = next(rest) if present else None
            c = ref()
            if c is not None:
                c._grad = None if b is None else _new_tensor(b)


__all__ = ["CellScope", "CellSignature"]
