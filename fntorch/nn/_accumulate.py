"""Where ``backward`` puts the gradients: each cell's cotangent added into its ``.grad``
as soon as the transpose has made it final, then the cell's post-accumulate-grad hooks.

The tape's backward is one transposed graph, but ``ad.backward_pass`` reports each
input's cotangent the moment no equation left to transpose reads it. A cell read more
than once (a write during the recording gives it a new tape input) is final when the
last of its inputs is. Accumulating there, in the order the gradients become final
(last layers first), is what lets ``DistributedDataParallel`` start a bucket's
all-reduce while the first layers' gradients are still being computed, as PyTorch's
reducer does with its autograd hooks.

>>> import fntorch as ft
>>> w = ft.nn.Parameter(ft.asarray([1.0, 2.0]))
>>> h = w.register_post_accumulate_grad_hook(lambda p: print(p.grad.tolist()))
>>> (w * w).sum().backward()
[2.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from ..fx.cell import scopes as _cell_scopes
from ..fx.core import Tensor, Tracer, _new_tensor
from ..transforms.ad import Zero


def torch_convention(x):
    """A complex gradient in PyTorch's convention from JAX's, or back: its conjugate.

    ``ft.grad`` gives JAX's ``df/dx - i df/dy`` for a real ``f`` of ``z = x + iy``;
    PyTorch's ``.grad`` is ``df/dx + i df/dy``, the direction of steepest ascent, so
    that ``p - lr * p.grad`` descends (the optimizers rely on it).

    >>> import fntorch as ft
    >>> torch_convention(ft.asarray([1 + 2j])).tolist()
    [(1-2j)]
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind != "c":
        return x
    from ..ops import lax

    return lax.conj(x)


def accumulate(cell, ct, create_graph: bool) -> None:
    """Adds ``ct`` (PyTorch's convention) into ``cell.grad``: eagerly, recorded (with
    ``create_graph``), or staged into the jit trace that carries ``.grad`` out.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(2)); accumulate(p, ft.ones(2), False)
    >>> accumulate(p, ft.ones(2), False); p.grad.tolist()
    [2.0, 2.0]
    """
    if create_graph and not _cell_scopes:
        cell.grad = ct if cell.grad is None else cell.grad + ct
        return
    if not isinstance(ct, Tracer):
        ct = _new_tensor(ct._value) if isinstance(ct, Tensor) else _new_tensor(np.asarray(ct))
    if _cell_scopes:  # a jit trace: its scope carries .grad out of the call
        prev = _cell_scopes[-1].grad_of(cell)
        _cell_scopes[-1].set_grad(cell, ct if prev is None else prev + ct)
        return
    cell.grad = ct if cell.grad is None else _new_tensor(cell.grad._value + ct._value)


class Accumulation:
    """One ``backward``'s accumulation: ``leaf(cell, ct, last)`` for each tape input as
    it becomes final (``last``: the cell's last input), in the order the transpose
    finishes them. ``cells`` lists the cells whose ``.grad`` it wrote. ``only``: the ids
    of the cells to write (``backward(inputs=...)``), or None for all. The hooks run
    with grad mode set by ``grad_mode`` (a context var) to ``create_graph``, as
    PyTorch runs a backward's hooks.

    >>> import fntorch as ft
    >>> from fntorch.nn._grad_mode import _grad_enabled
    >>> p = ft.nn.Parameter(ft.zeros(1)); acc = Accumulation(None, False, _grad_enabled)
    >>> acc.leaf(p, ft.ones(1), True); [c is p for c in acc.cells], p.grad.tolist()
    ([True], [1.0])
    """

    def __init__(self, only, create_graph: bool, grad_mode):
        self.only, self.create_graph, self.grad_mode = only, create_graph, grad_mode
        self.cells: list = []
        self._written: set = set()

    def leaf(self, cell, ct, last: bool) -> None:
        """The cotangent ``ct`` of one of ``cell``'s tape inputs is final."""
        if type(ct) is not Zero and (self.only is None or id(cell) in self.only):
            accumulate(cell, torch_convention(ct), self.create_graph)
            if id(cell) not in self._written:
                self._written.add(id(cell))
                self.cells.append(cell)
        if last and id(cell) in self._written:
            hooks = getattr(cell, "_post_accumulate_grad_hooks", None)
            if hooks:
                token = self.grad_mode.set(self.create_graph)
                try:
                    for hook in list(hooks.values()):
                        hook(cell)
                finally:
                    self.grad_mode.reset(token)
