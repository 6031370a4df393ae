"""The machinery shared by the custom calls (custom_jvp, custom_vjp, checkpoint).

A *custom call* is seen by the traces through ``Trace.process_custom`` rather than as a
primitive, because its rules are Python functions the user supplies. Eager evaluation
and staging inline the plain function; the JVP trace applies the call's rule; the batch
trace vmaps the function and the rules and hands the batched call to its parent.

``_Call`` is the base of the calls over flat tensors; the helpers here resolve keyword
arguments to positions, split static from differentiable arguments, and find the
tracers a call's user functions close over (a batch trace that hands such a call down
unbatched must batch it all the same).
"""

from __future__ import annotations

import functools
import inspect
import types

from .. import tree as tree_util
from ..fx.core import Tensor, Tracer, current_trace
from .batching import BatchTrace, BatchTracer


def _to_tensors(xs, where):
    from ._args import _as_tensor

    return [_as_tensor(x, where) for x in xs]


def _resolve_kwargs(fun, args, kwargs, name):
    """The positional arguments of a call ``fun(*args, **kwargs)``, defaults filled in, as
    JAX's custom functions see them (their rules take primals by position)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        if kwargs:
            raise TypeError(f"{name}: keyword arguments need a function with a signature")
        return args
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"{name}: keyword arguments {sorted(bound.kwargs)} could not be resolved to "
            "positions; pass them positionally"
        )
    return bound.args


def _split_static(args, nondiff_argnums, name):
    """Splits a custom function's arguments into the static ones (``nondiff_argnums``)
    and the flattened differentiable ones; ``merge`` puts them back in order."""
    static = [args[i] for i in nondiff_argnums]
    dyn = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    flat, in_tree = tree_util.flatten(tuple(dyn))

    def merge(dyn_args):
        out = list(dyn_args)
        for i, s in zip(nondiff_argnums, static):
            out.insert(i, s)
        return out

    return static, dyn, _to_tensors(flat, name), in_tree, merge


def _handing_trace(origin, outer):
    """The trace of ``origin``'s parent chain whose parent is ``outer``: the one that handed
    a custom call made under ``origin`` down to ``outer`` (``None`` if there is none)."""
    t = origin
    while t is not None:
        if t.parent is outer:
            return t
        t = t.parent
    return None


def _captures_tracer_of(objs, trace) -> bool:
    """Whether the functions and values ``objs`` capture, through closures, partials and
    pytrees, a tracer of ``trace`` (or of a batch trace it stands for; of any trace when
    ``trace`` is None)."""
    own = (trace, *getattr(trace, "adopted", ()))
    seen, todo = set(), list(objs)
    while todo:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Tracer):
            if trace is None or o._trace in own:
                return True
            # A tracer of a transform nested in ``trace`` may carry one of its tracers.
            todo += [getattr(o, a, None) for a in getattr(type(o), "__slots__", ())]
        elif isinstance(o, types.FunctionType):
            for cell in o.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:  # a cell not yet assigned
                    pass
        elif isinstance(o, functools.partial):
            todo += [o.func, *o.args, *o.keywords.values()]
        elif isinstance(o, types.MethodType):
            todo += [o.__func__, o.__self__]
        elif not isinstance(o, (Tensor, str, bytes, int, float, type(None))):
            leaves = tree_util.leaves(o)
            if leaves != [o]:
                todo += leaves
    return False


class _Call:
    """A custom call over flat tensors. ``fun(flat) -> flat``; ``out_tree`` is recorded
    on first run (shared by batched copies through ``box``).

    ``origin`` is the trace the call was made under and ``captures`` its user functions
    and static arguments (what can hold tracers the call's arguments do not show);
    ``batcher`` is the batch trace that made this call a batched copy, if any.
    """

    kind = "custom"

    def __init__(self, fun_flat, box, captures=()):
        self.fun_flat = fun_flat
        self.box = box
        self.origin = current_trace()
        self.captures = captures
        self.batcher = None

    def derived(self, new, batcher):
        new.origin, new.captures, new.batcher = self.origin, self.captures, batcher
        return new

    def inline(self, *args):
        return self.fun_flat(list(args))

    def closes_over_tracers(self) -> bool:
        """Whether the user's functions capture a tracer of any transform (a graph that
        stages this call inlines it then: see ``GraphTrace.process_custom``)."""
        return _captures_tracer_of(self.captures, None)

    def __repr__(self):
        fun = self.captures[0] if self.captures else self.fun_flat
        return f"{self.kind}({getattr(fun, '__name__', type(fun).__name__)})"

    def batch_trace(self):
        """The batch trace batching this call, when called from `batched` under its parent."""
        t = _handing_trace(self.origin, current_trace())
        return t if isinstance(t, BatchTrace) else None

    def bind_with(self, vals):
        outer = current_trace()
        hander = _handing_trace(self.origin, outer)
        if (
            isinstance(hander, BatchTrace)
            and hander is not self.batcher
            and _captures_tracer_of(self.captures, hander)
        ):
            # A batch trace hands this call down unbatched, but the user functions close
            # over its tracers, which ``outer`` cannot read: batch the call all the same.
            outs = self.batched(hander.axis_size, [None] * len(vals)).bind_with(vals)
            return [BatchTracer(hander, o, 0) for o in outs]
        return outer.process_custom(self.kind, self, list(vals))
