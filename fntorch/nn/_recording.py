"""The recording: eager operations on taped operands, recorded on the tape.

While grad mode is on, eager dispatch (``fx.core.tape_hook``) hands this module an
operation with a ``_taped`` operand (a cell with ``requires_grad``, or a ``TapeTensor``
recorded from one). ``_record`` runs it through the tape's ``JVPTrace``, whose tangents
are staged into one ``GraphTrace`` while the primals compute eagerly, and returns the
outputs as ``TapeTensor``s: the value, its tangent on the tape and its ``_GradFn`` (the
primitive and its operands, for ``create_graph``). The tape of the moment is a module
global, or under ``ft.jit`` the cell scope's, staged onto the jit trace. ``autograd``
transposes what is recorded here (``backward``, ``grad``).

>>> import fntorch as ft
>>> y = ft.nn.Parameter(ft.asarray([1.0, 2.0])) * 3.0
>>> type(y).__name__, y.grad_fn, y.tolist()
('TapeTensor', <mulBackward>, [3.0, 6.0])
"""

from __future__ import annotations

from ..fx import core
from ..fx.cell import scopes as _cell_scopes
from ..fx.core import EVAL_TRACE, Tensor, Tracer, _new_tensor, set_current_trace
from ..fx.graph import GraphTrace, GraphTracer
from ..transforms.ad import JVPTrace, JVPTracer, is_differentiable
from ._grad_mode import _grad_enabled


class _Tape:
    """One recording: a JVP trace whose tangents are staged into a graph trace."""

    def __init__(self, parent=EVAL_TRACE):
        # Under ft.jit the tape stages onto the jit's trace: forward, backward and the
        # ``.grad`` sums all land in the compiled program.
        self.graph = GraphTrace(parent, stage_all=False, name="tape")
        self.jvp = JVPTrace(self.graph, name="tape")
        self.leaves: list = []  # (cell, its tangent input) in the order they were read

    def leaf(self, cell) -> GraphTracer:
        t = cell._tape_leaf
        if t is None or t._trace is not self.graph:
            t = self.graph.new_arg(core.ShapedArray(cell.shape, cell.dtype))
            cell._tape_leaf = t
            self.leaves.append((cell, t))
        return t


_tape: list = [None]


def _current() -> _Tape:
    if _cell_scopes:  # a jit trace: its own tape, staged onto it
        scope = _cell_scopes[-1]
        if scope.tape is None:
            scope.tape = _Tape(scope.trace)
        return scope.tape
    if _tape[0] is None:
        _tape[0] = _Tape()
    return _tape[0]


def _active():
    """The tape that records now (None when there is none yet)."""
    return _cell_scopes[-1].tape if _cell_scopes else _tape[0]


def _drop(tape) -> None:
    """Later operations record on a new tape."""
    if _tape[0] is tape:
        _tape[0] = None
    for scope in _cell_scopes:
        if scope.tape is tape:
            scope.tape = None


def _primal(a):
    """The value of a taped operand: a jit trace's tracer as it is, else a tensor."""
    v = a._value
    return v if isinstance(v, Tracer) else _new_tensor(v)


class _GradFn:
    """What ``t.grad_fn`` holds for a recorded value: the primitive that made it, with
    its operands (``args``: the recorded values and cells that require grad as they
    are, other tensors by value), so that ``create_graph=True`` can recompute the
    outputs as a function of the cells. A backward without ``retain_graph`` frees
    ``args`` (``None``), as PyTorch frees its saved tensors."""

    __slots__ = ("name", "prim", "params", "args")

    def __init__(self, prim, params, args):
        self.name = prim.name
        self.prim = prim
        self.params = params
        self.args = args

    def __repr__(self):
        return f"<{self.name}Backward>"


class TapeTensor(Tensor):
    """A value computed from cells that require grad: a concrete tensor plus its tangent
    on the tape, so that ``backward`` can reach the cells.

    >>> import fntorch as ft
    >>> y = ft.nn.Parameter(ft.ones(2)) * 2.0
    >>> type(y).__name__, y.tolist()
    ('TapeTensor', [2.0, 2.0])
    """

    __slots__ = ("_tangent", "_tape", "grad_fn", "_index")
    requires_grad = True

    def __init__(self, value, tangent, tape, grad_fn, index=0):
        self._value = value
        self._tangent = tangent
        self._tape = tape
        self.grad_fn = grad_fn
        self._index = index  # which of grad_fn's outputs (a primitive with several)

    @property
    def _taped(self) -> bool:
        return self._tape is _active() and _grad_enabled.get()

    @property
    def is_leaf(self) -> bool:
        return False

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulates d(self)/d(cell) into ``.grad`` of every cell it was computed from
        (``gradient``: the cotangent, required unless ``self`` is a scalar; ``inputs``:
        only these cells)."""
        from .autograd import backward  # autograd imports this module

        backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        """The value, no longer recorded."""
        return _new_tensor(self._value)

    def __repr__(self):
        return repr(_new_tensor(self._value))[:-1] + f", grad_fn={self.grad_fn})"


def _record(prim, args, params):
    """Eager dispatch of ``prim`` with a taped operand: computes it and records the
    linear part of its jvp on the current tape."""
    if not _grad_enabled.get():
        return prim.bind(*[_untaped(a) for a in args], **params)
    tape = _current()
    jvp = tape.jvp
    ins = []
    saved = []
    for a in args:
        if isinstance(a, TapeTensor) and a._tape is tape:
            ins.append(JVPTracer(jvp, _primal(a), a._tangent))
            saved.append(a)
        elif getattr(a, "_tape_leaf", False) is not False and a._taped:  # a cell
            ins.append(JVPTracer(jvp, _primal(a), tape.leaf(a)))
            saved.append(a)
        else:
            ins.append(_untaped(a))
            saved.append(_snapshot(a))
    with set_current_trace(jvp):
        out = prim.bind(*ins, **params)
    grad_fn = _GradFn(prim, params, saved)
    if prim.multiple_results:
        return [_wrap(o, tape, grad_fn, i) for i, o in enumerate(out)]
    return _wrap(out, tape, grad_fn, 0)


def _untaped(a):
    return _primal(a) if isinstance(a, Tensor) and a._taped else a


def _snapshot(a):
    """An operand that is a constant to the tape, as its value now: a cell (a buffer,
    the random key) may be rebound before ``create_graph`` recomputes from it."""
    if isinstance(a, Tensor) and type(a) is not Tensor and not isinstance(a, Tracer):
        return _primal(a)
    return a


def _wrap(out, tape, grad_fn, index):
    if isinstance(out, JVPTracer) and out._trace is tape.jvp:
        t = out.tangent
        if isinstance(t, GraphTracer) and is_differentiable(out.primal):
            p = out.primal
            value = p if isinstance(p, Tracer) else p._value
            return TapeTensor(value, t, tape, grad_fn, index)
        return out.primal
    return out


core.tape_hook[0] = _record


def _plain_backward(self, gradient=None, retain_graph=None, create_graph=False):
    """``loss.backward()``: on a value recorded from cells that require grad (a
    ``TapeTensor``) it fills their ``.grad``; on any other tensor it raises.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.asarray(2.0)); (p * p).backward(); float(p.grad)
    4.0
    """
    raise RuntimeError(
        "backward: this tensor does not require grad and has no grad_fn: it was not "
        "computed from an nn.Parameter with requires_grad=True outside ft.no_grad()"
    )


Tensor.backward = _plain_backward
