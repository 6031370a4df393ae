"""``ft.compile``: ``torch.compile``'s entry point to ``ft.jit``.

For a function it is ``ft.jit`` (the cells the function reads and writes are implicit
inputs and outputs, see ``transforms/jit_cells.py``, so a PyTorch-style step compiles
whole). For a module it returns an ``OptimizedModule`` wrapping it, as PyTorch does:
the original is ``_orig_mod`` (so ``state_dict`` keys get PyTorch's ``_orig_mod.``
prefix) and ``forward`` runs the compiled module. When grad mode is on and a parameter
requires grad, the module runs as one ``jit_call`` whose extra operands are the cells it
reads (its buffers written are extra outputs, set after the call): the tape records
that call and ``loss.backward()`` runs its transpose, a compiled backward. Without grad
it runs as a compiled program whose cells are implicit inputs and outputs. Either way
an optimizer's update is seen by the next call without a retrace.

>>> import fntorch as ft
>>> f = ft.compile(lambda x: ft.sin(x) * 2.0)
>>> f(ft.zeros(2)).tolist()
[0.0, 0.0]
"""

from __future__ import annotations

from .nn.autograd import is_grad_enabled
from .nn.module import Module
from .transforms.jit import JitFunction, jit

__all__ = ["compile", "OptimizedModule"]

# What ``backend=`` may name: every one compiles through fntorch's own lowering.
_BACKENDS = (None, "inductor", "fntorch", "eager", "aot_eager")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class OptimizedModule(Module):
    """A module whose ``forward`` is compiled (what ``ft.compile(module)`` returns).

    >>> import fntorch as ft
    >>> m = ft.compile(ft.nn.Linear(2, 1))
    >>> sorted(m.state_dict())
    ['_orig_mod.bias', '_orig_mod.weight']
    >>> m(ft.ones((3, 2))).shape
    (3, 1)
    """

    def __init__(self, mod: Module):
        super().__init__()
        self._orig_mod = mod
        name = type(mod).__name__
        # ``forward`` reads the module's cells: implicit inputs, buffers written outputs.
        self._forward = jit(_named(lambda *a, **k: mod(*a, **k), name))

    def forward(self, *args, **kwargs):
        """Runs the compiled module (see the class docstring)."""
        if is_grad_enabled() and any(p.requires_grad for p in self._orig_mod.parameters()):
            # One jit_call whose operands are the cells: the tape records it, and its
            # transpose is the compiled backward.
            return self._forward._call_traced(args, kwargs)
        return self._forward(*args, **kwargs)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"


def _named(fn, name: str):
    fn.__name__ = name
    return fn


def compile(  # noqa: A001 (torch.compile's name)
    model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None, options=None,
    disable: bool = False,
):  # fmt: skip
    """Compiles a function (``ft.jit``) or a module (an ``OptimizedModule``), as
    ``torch.compile``; used bare or as a decorator (``@ft.compile(...)``).

    - ``fullgraph``: accepted; a jit trace is always one whole graph (a Python branch on
      a traced value raises ``ConcretizationError`` rather than breaking the graph).
    - ``dynamic``: accepted and ignored: every new shape traces again, as
      ``dynamic=False``; there are no symbolic shapes to make dynamic.
    - ``mode``: one of PyTorch's mode names; all compile the same way.
    - ``backend``: None, ``"inductor"``, ``"fntorch"``, ``"eager"`` or ``"aot_eager"``
      (all fntorch's lowering); any other is a ValueError naming it.
    - ``disable=True`` returns ``model`` unchanged.

    >>> import fntorch as ft
    >>> @ft.compile(backend="inductor")
    ... def f(x):
    ...     return x + 1.0
    >>> f(ft.ones(2)).tolist()
    [2.0, 2.0]
    >>> ft.compile(f, backend="tvm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: compile: backend must be None, 'inductor', 'fntorch', ... got 'tvm'
    """
    if backend not in _BACKENDS and not callable(backend):
        names = ", ".join(repr(b) for b in _BACKENDS[1:-1])
        raise ValueError(
            f"compile: backend must be None, {names} or {_BACKENDS[-1]!r}, got {backend!r}"
        )
    if callable(backend):
        raise ValueError(
            f"compile: backend must name one of fntorch's backends, got the callable "
            f"{getattr(backend, '__name__', backend)!r}; custom backends are not supported"
        )
    if mode not in _MODES:
        raise ValueError(f"compile: mode must be one of {_MODES[1:]} or None, got {mode!r}")
    if model is None:
        return lambda m: compile(
            m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
            options=options, disable=disable,
        )  # fmt: skip
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)
    if isinstance(model, (JitFunction, OptimizedModule)):
        return model
    if not callable(model):
        raise TypeError(
            f"compile: model must be a function or an nn.Module, got {type(model).__name__}"
        )
    return jit(model)
