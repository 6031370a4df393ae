"""The tape: PyTorch's ``loss.backward()`` as the linearize machinery run eagerly.

While grad mode is on (``_grad_mode.py``), an eager operation with an operand that is
``_taped`` (a cell with ``requires_grad``, or a ``TapeTensor`` recorded from one) is
handed by eager dispatch (``fx.core.tape_hook``) to ``_recording.py``. It runs through a
``JVPTrace`` whose tangents are staged into one ``GraphTrace`` (the tape) while the
primals compute eagerly: the value is computed as usual and the linear part of the
primitive's jvp is recorded, exactly what ``ft.linearize`` does. This module is the way
back: ``backward`` transposes the recording from the loss (``ad.backward_pass``) and adds
the cotangents into the ``.grad`` of the cells that were read (``_accumulate.py``);
``grad`` returns them instead; with ``create_graph=True`` both recompute the recorded
operations and record their ``vjp``. There are no derivative rules but the primitives'.
The tape's public names (``TapeTensor``, the grad-mode context managers) are
re-exported here.

Plain eager dispatch pays nothing for this: ``Tensor._taped`` is a class attribute that
only cells and recorded values override, and it is read only for operands that are not
plain tensors.

Complex cells get PyTorch's gradients: ``.grad`` (and ``autograd.grad``) is the
conjugate of ``ft.grad``'s JAX convention, ``df/dx + i df/dy`` for a real loss, so the
optimizers' ``p - lr * p.grad`` descends as in PyTorch.

After a ``backward``, later operations record on a new tape; values of the old one can
still be differentiated (their tape is kept as long as they are), and mixing them with
the new tape's treats them as constants.

>>> import fntorch as ft
>>> w = ft.nn.Parameter(ft.asarray([1.0, 2.0]))
>>> loss = (w * w).sum()
>>> loss.requires_grad, loss.grad_fn is not None
(True, True)
>>> loss.backward(); w.grad.tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import collections
import contextlib

import numpy as np

from ..fx import autocast as _fx_autocast
from ..fx.core import Tensor, _new_tensor, constant_device, set_current_trace
from ..fx.device import default_device, host_device
from ..transforms.ad import Zero, backward_pass
from ..transforms.autodiff import vjp
from ._accumulate import Accumulation, torch_convention
from ._grad_mode import (
    _grad_enabled,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from ._recording import TapeTensor, _drop

__all__ = [
    "TapeTensor", "backward", "grad", "no_grad", "enable_grad", "inference_mode",
    "set_grad_enabled", "is_grad_enabled",
]  # fmt: skip


# ---------------------------------------------------------------------------- backward


def _tape_of(outputs):
    """The one live tape the ``outputs`` (TapeTensors) were recorded on."""
    tapes = {o._tape for o in outputs}
    if len(tapes) != 1:
        raise RuntimeError("backward: the outputs were recorded on different tapes")
    (tape,) = tapes
    if tape is None:
        raise RuntimeError(_FREED)
    return tape


_FREED = (
    "backward: trying to backward through the graph a second time (or after its "
    "values were freed); specify retain_graph=True on the first backward"
)


def _release(outputs, tape) -> None:
    """A backward without ``retain_graph``: the outputs leave the tape, later operations
    record on a new one, and the recorded operands are freed (so that holding the loss
    does not hold every intermediate value)."""
    for o in outputs:
        o._tape = None
    _drop(tape)
    for fn in _nodes(outputs, None):
        fn.args = None


def _transpose(outputs, cotangents, retain_graph, on_leaf=None):
    """``[(cell, cotangent)]`` of the cells the ``outputs`` (TapeTensors of one tape) were
    computed from. ``on_leaf(cell, ct, last)`` is called as each tape input's cotangent
    becomes final, during the transpose (``last``: the cell's last input)."""
    tape = _tape_of(outputs)
    g = tape.graph.to_graph([o._tangent for o in outputs])
    final = None
    if on_leaf is not None:
        left = collections.Counter(id(cell) for cell, _ in tape.leaves)

        def final(i, ct):
            cell = tape.leaves[i][0]
            left[id(cell)] -= 1
            on_leaf(cell, ct, left[id(cell)] == 0)

    # The zeros the transpose rules make (broadcast from a scalar) stand for values of
    # the cotangents' device: made there, as in ``vjp``. The backward runs in the dtypes
    # the forward recorded, also inside ft.autocast.
    dev = constant_device(*cotangents)
    with (
        set_current_trace(tape.graph.parent),
        default_device(dev) if dev else contextlib.nullcontext(),
        _fx_autocast.suspended(),
    ):
        cts = backward_pass(g, list(cotangents), final)
    pairs = [(cell, ct) for (cell, _), ct in zip(tape.leaves, cts) if type(ct) is not Zero]
    if not retain_graph:
        _release(outputs, tape)
    return pairs


# ------------------------------------------------------------------ create_graph=True
# The tape holds the linear part only: its residuals are constants, so transposing it
# again cannot give second derivatives. ``create_graph`` instead recomputes the outputs
# from the recorded operations as a function of the cells and takes its ``vjp`` with
# the tape recording: the primal recomputation and the transpose rules run eagerly on
# taped values, so the cotangents are recorded values themselves (JAX's nesting of
# linearize inside an outer JVP, the outer one being the tape).


def _nodes(outputs, where):
    """The ``grad_fn`` of every recorded value the ``outputs`` depend on, each after the
    ones it reads (an explicit stack: a long chain must not hit Python's recursion
    limit). A freed one raises, naming ``where``; with ``where=None`` it is skipped."""
    order, seen = [], set()
    stack = [(o.grad_fn, False) for o in outputs]
    while stack:
        fn, done = stack.pop()
        if done:
            order.append(fn)
            continue
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        stack.append((fn, True))
        if fn.args is None:
            if where is None:  # freeing: an earlier backward freed this part already
                continue
            raise RuntimeError(_FREED.replace("backward", where, 1))
        for a in fn.args:
            if isinstance(a, TapeTensor) and id(a.grad_fn) not in seen:
                stack.append((a.grad_fn, False))
    return order


def _is_cell(a) -> bool:
    return getattr(a, "_tape_leaf", False) is not False


def _recompute(outputs, where):
    """``(cells, f)``: the cells that require grad that the ``outputs`` were computed
    from, and ``f(*cell_values)``, the outputs recomputed from them."""
    order = _nodes(outputs, where)
    cells, seen = [], set()
    for fn in order:
        for a in fn.args:
            if _is_cell(a) and id(a) not in seen:
                seen.add(id(a))
                cells.append(a)

    def f(*values):
        env = {id(c): v for c, v in zip(cells, values)}
        got: dict = {}
        for fn in order:
            ins = []
            for a in fn.args:
                if isinstance(a, TapeTensor):
                    ins.append(got[id(a.grad_fn)][a._index])
                else:
                    ins.append(env[id(a)] if _is_cell(a) else a)
            out = fn.prim.bind(*ins, **fn.params)
            got[id(fn)] = out if fn.prim.multiple_results else [out]
        return [got[id(o.grad_fn)][o._index] for o in outputs]

    return cells, f


def _transpose_taped(outputs, cotangents, retain_graph, where):
    """``_transpose`` with the backward recorded on the tape: the cotangents are
    recorded values (``TapeTensor``) wherever they depend on a cell."""
    tape = _tape_of(outputs)
    cells, f = _recompute(outputs, where)
    if not retain_graph:
        _release(outputs, tape)
    with set_grad_enabled(True), _fx_autocast.suspended():
        _, pullback = vjp(f, *cells)
        cts = pullback(list(cotangents))
    return list(zip(cells, cts))


def _cotangent(out, g, where, create_graph=False):
    if g is None:
        if out.shape != ():
            raise RuntimeError(
                f"{where}: grad can be implicitly created only for scalar outputs; pass "
                f"gradient= (a tensor of shape {tuple(out.shape)})"
            )
        one, dev = np.ones((), out.dtype), out.device  # None: staged, of no known device
        # the seed lives beside the loss (a GPU loss gets a GPU one)
        return _new_tensor(one if dev is None or dev is host_device() else dev.put(one))
    g = g if isinstance(g, Tensor) else _new_tensor(np.asarray(g, out.dtype))
    if tuple(g.shape) != tuple(out.shape):
        raise RuntimeError(
            f"{where}: gradient has shape {tuple(g.shape)}, expected {tuple(out.shape)}"
        )
    if create_graph and isinstance(g, TapeTensor):
        return g  # a recorded cotangent stays one: the gradients depend on it too
    return _new_tensor(g._value)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Adds the gradients of ``tensors`` (summed with ``grad_tensors`` weights) into the
    ``.grad`` of the cells they were computed from, as ``torch.autograd.backward``.

    >>> import fntorch as ft
    >>> w = ft.nn.Parameter(ft.asarray(3.0))
    >>> ft.autograd.backward(w * w); ft.autograd.backward(w * 2.0); float(w.grad)
    8.0

    With ``create_graph=True`` the backward is recorded too: ``.grad`` is then a recorded
    value (``retain_graph`` defaults to ``create_graph``, as PyTorch's).

    >>> x = ft.tensor(3.0, requires_grad=True)
    >>> (x ** 3).backward(create_graph=True); g = x.grad; float(g), g.requires_grad
    (27.0, True)
    >>> x.grad = None; g.backward(); float(x.grad)
    18.0
    """
    if retain_graph is None:
        retain_graph = create_graph
    outs = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
    gs = grad_tensors if isinstance(grad_tensors, (list, tuple)) else [grad_tensors] * len(outs)
    for o in outs:
        if not isinstance(o, TapeTensor):
            raise RuntimeError(
                "backward: element 0 of tensors does not require grad and does not have a "
                "grad_fn (it was not computed from a Parameter with requires_grad=True "
                "outside ft.no_grad())"
            )
    cts = [torch_convention(_cotangent(o, g, "backward", create_graph)) for o, g in zip(outs, gs)]
    only = None if inputs is None else {id(c) for c in inputs}
    acc = Accumulation(only, create_graph, _grad_enabled)
    if create_graph:
        for cell, ct in _transpose_taped(outs, cts, retain_graph, "backward"):
            acc.leaf(cell, ct, True)
    else:
        _transpose(outs, cts, retain_graph, acc.leaf)
    for hook in list(post_backward_hooks):
        hook(acc.cells)


# Called as ``hook(cells)`` at the end of each ``backward``, with the cells whose
# ``.grad`` it wrote (eagerly, or staged under ``ft.jit``), after every cell's
# post-accumulate-grad hooks: DistributedDataParallel (nn/parallel) waits for its
# buckets' all-reduces here, as PyTorch's reducer finalizes in its autograd callback.
post_backward_hooks: list = []


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):  # fmt: skip
    """The gradients of ``outputs`` with respect to ``inputs`` (cells), as
    ``torch.autograd.grad``: returned, not accumulated into ``.grad``.

    >>> import fntorch as ft
    >>> w = ft.nn.Parameter(ft.asarray([1.0, 2.0]))
    >>> (g,) = ft.autograd.grad((w ** 3).sum(), [w]); g.tolist(), w.grad
    ([3.0, 12.0], None)

    ``create_graph=True`` records the backward on the tape, so the gradients can be
    differentiated again (``retain_graph`` defaults to ``create_graph``):

    >>> x = ft.tensor(3.0, requires_grad=True)
    >>> (g,) = ft.autograd.grad(x ** 3, x, create_graph=True); float(g)
    27.0
    >>> (h,) = ft.autograd.grad(g, x); float(h)
    18.0
    """
    if retain_graph is None:
        retain_graph = create_graph
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    single = not isinstance(inputs, (list, tuple))
    ins = [inputs] if single else list(inputs)
    for i, c in enumerate(ins):
        if getattr(c, "_tape_leaf", False) is False:
            raise TypeError(
                f"autograd.grad: inputs[{i}] must be a cell that requires grad (an "
                f"nn.Parameter), got {type(c).__name__}"
            )
    gs = grad_outputs if isinstance(grad_outputs, (list, tuple)) else [grad_outputs] * len(outs)
    if not all(isinstance(o, TapeTensor) for o in outs):
        raise RuntimeError("autograd.grad: an output does not require grad")
    cts = [torch_convention(_cotangent(o, g, "autograd.grad", create_graph))
           for o, g in zip(outs, gs)]  # fmt: skip
    if create_graph:
        pairs = _transpose_taped(outs, cts, retain_graph, "autograd.grad")
    else:
        pairs = _transpose(outs, cts, retain_graph)
    found: dict = {}
    for cell, ct in pairs:
        ct = torch_convention(ct)
        prev = found.get(id(cell))
        found[id(cell)] = ct if prev is None else prev + ct
    result = []
    for i, c in enumerate(ins):
        ct = found.get(id(c))
        if ct is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(
                    f"autograd.grad: inputs[{i}] was not used to compute the outputs; pass "
                    "allow_unused=True"
                )
            ct = _new_tensor(np.zeros(c.shape, c.dtype)) if materialize_grads else None
        result.append(ct)
    return tuple(result)
