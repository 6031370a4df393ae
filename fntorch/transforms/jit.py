"""``ft.jit``: trace once per abstract signature, cache, run a compiled program.

A call flattens its arguments (``fntorch.tree``) and builds the cache key: the pytree
structure, the shape, dtype and weak type of every leaf (and its device when it is not
the CPU), and the values of the static arguments. On a miss the function is staged out
to a ``Graph`` (``staging.stage``, as ``make_graph`` stages), simplified, fused and
compiled by ``fntorch.lowering``; on a hit the compiled program runs on the input
buffers directly, without re-entering the tracer. ``jit_keys`` builds the key,
``jit_config`` holds ``ft.config``, ``jit_lowered`` what ``lower`` returns.

Composition: called with tracers (under ``grad``, ``vmap``, ``make_graph`` or another
``jit``), the function is traced inline into the current trace, so ``grad(jit(f))``,
``vmap(jit(f))``, ``jit(grad(f))``, ``jit(vmap(f))`` and ``jit(jit(f))`` are all
correct. An inner ``jit`` under an outer transform is not compiled separately (yet):
the outer transform sees its primitives.

Python scalars passed as dynamic arguments are weak-typed traced values: ``f(x, 2.0)``
and ``f(x, 3.0)`` share one trace and ``2.0`` never widens ``x``'s dtype.

Donation (``donate_argnums``): the tensors of those arguments hand their buffers to the
call, which may write an output into them (when the shapes and dtypes match and no
other tensor or array still references the buffer). The donated tensors are invalid
afterwards: using one raises ``RuntimeError``. Without donation a compiled program
never writes into its inputs.

Set ``FNTORCH_LOG_COMPILES=1`` or ``ft.config.update("log_compiles", True)`` to log,
on the ``"fntorch.jit"`` logger, every trace and why it happened;
``explain_cache_misses`` logs, for each retrace, which argument changed and how, against
the closest signature compiled before. Past ``config.max_retraces`` retraces a function
warns once, naming the argument that keeps changing. ``disable_jit()`` (or
``FNTORCH_DISABLE_JIT=1``) runs jit'ed functions as plain Python.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import threading
import time
import types
from collections import Counter
from collections.abc import Callable

import numpy as np
import optree

from .. import tree as tree_util
from ..fx import autocast as _fx_autocast
from ..fx import core as _fx_core
from ..fx.core import (
    EVAL_TRACE,
    ConcretizationError,
    ShapedArray,
    Tensor,
    Tracer,
    _new_tensor,
    current_trace,
    get_aval,
    host_device,
)
from . import debug_rules
from .jit_config import Config, _disable_state, _jit_disabled, config, disable_jit  # noqa: F401
from .jit_explain import explain_miss
from .jit_keys import _ArgumentKeys, _flat_structure, _type_key, positional_signature  # noqa: F401
from .jit_lowered import Compiled, Lowered, _aval_str  # noqa: F401
from .staging import stage

__all__ = ["jit", "config", "disable_jit"]

logger = logging.getLogger("fntorch.jit")

# ``fntorch.profiler`` sets this to its recorder while a profile runs: traces and
# compiles report (name, category, start, end) to it. Read on cache misses only.
_profile_hook = None


# ------------------------------------------------------------------- donated buffers


_DONATED_MESSAGE = (
    "this tensor was donated to a jit-compiled function (donate_argnums) and its buffer "
    "was handed to that call; it can no longer be used. Keep using the function's "
    "outputs instead, or do not donate the argument."
)


class _DonatedTensor(Tensor):
    """The class a donated tensor takes after the call: every use of its value raises."""

    __slots__ = ()

    @property
    def _value(self):
        raise RuntimeError(_DONATED_MESSAGE)

    def __repr__(self):
        return "Tensor(<donated>)"


def _invalidate(t: Tensor) -> None:
    Tensor._value.__set__(t, None)  # drop the buffer: it now belongs to an output
    t.__class__ = _DonatedTensor


# References to a buffer while jit checks it: the tensor's slot, the list of input
# buffers, the local name, and getrefcount's argument. More means someone else (a view,
# a numpy array the user holds) still sees the buffer, so it is not reused; nor is a
# buffer that is itself a view of memory someone else sees (``steps.exclusive``).
_EXCLUSIVE_REFS = 4


# ---------------------------------------------------------------------- signatures


class _Entry:
    """A compiled signature: the program and what is needed to call it and explain it."""

    __slots__ = (
        "program",
        "out_tree",
        "graph",
        "plan",
        "donate_flat",
        "key",
        "names",
        "trace_s",
        "compile_s",
        "first_run_s",  # the first call's run: kernels compile their variants there
        "device",  # the device the program runs on (its target compiled it)
        "single",
        "cells",  # the CellSignature of the cells it reads and writes, or None
        "alt",  # the entry compiled before it for the same arguments' key, or None
        "plain",  # no cells and no donation: a hit calls the program on the buffers as is
    )

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        self.plain = self.cells is None and not self.donate_flat

    def tensors(self, outs):
        """The program's output buffers ``outs`` as the function's output tree."""
        if self.single:
            return _new_tensor(outs[0])
        return optree.tree_unflatten(self.out_tree, [_new_tensor(o) for o in outs])


def _items(name: str, what: str, value, kind: type) -> tuple:
    """``value``, one ``kind`` or an iterable of them, as a tuple; else a TypeError."""
    items = (value,) if isinstance(value, kind) else value
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if items is None or not all(isinstance(i, kind) for i in items):
        raise TypeError(
            f"jit({name}): {what} must be {'an int' if kind is int else 'a str'} or a tuple "
            f"of them, got {value!r}"
        )
    return items


class JitFunction(_ArgumentKeys):
    """A function compiled by ``ft.jit`` (see ``jit``): call it, or ``lower`` it.

    ``stats`` counts traces and cache hits and misses.

    >>> import fntorch as ft
    >>> f = ft.jit(lambda x: x * 2.0)
    >>> f(ft.ones(2)).tolist(), f.stats["traces"]
    ([2.0, 2.0], 1)
    """

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums):
        functools.update_wrapper(self, fun, updated=())  # never copy its __dict__ over ours
        self.fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        nums = _items(self._name, "static_argnums", static_argnums, int)
        names = _items(self._name, "static_argnames", static_argnames, str)
        donate = _items(self._name, "donate_argnums", donate_argnums, int)
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self._params = None if params is None else [p.name for p in params if p.kind in kinds]
        if params is not None:
            nums, donate = self._check_argnums(params, nums, names, donate)
        # A static argument may come positionally or by keyword: know both spellings.
        nums = set(nums)
        names = set(names)
        for i in list(nums):
            if self._params is not None and 0 <= i < len(self._params):
                names.add(self._params[i])
        for n in list(names):
            if self._params is not None and n in self._params:
                nums.add(self._params.index(n))
        if set(donate) & nums:
            raise ValueError(
                f"jit({self._name}): an argument cannot be both static and donated "
                f"(static_argnums={tuple(sorted(nums))}, donate_argnums={donate})"
            )
        self._static_nums = tuple(sorted(nums))
        self._static_names = frozenset(names)
        self._donate = tuple(donate)
        self._cache: dict = {}
        self._graphs: dict = {}  # abstract signature -> (closed graph, consts, out tree)
        self._compile_lock = threading.RLock()
        self._last_key = None
        # Every signature compiled, for explaining misses: (key, leaf names, per-argument
        # tree structures); which arguments changed at each retrace; warned yet?
        self._history: list = []
        self._changed: Counter = Counter()
        self._warned = False
        self.stats = {"traces": 0, "hits": 0, "misses": 0}

    def _check_argnums(self, params, nums, names, donate):
        """``(static_argnums, donate_argnums)`` with negative positions counted from the
        end of the function's positional parameters (``params``: its signature's); a
        position or name it does not have is a ValueError. With ``*args``, positions are
        read at each call instead (``_split``), as they are without a signature."""
        kinds = {p.kind for p in params}
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            unknown = sorted(set(names) - {p.name for p in params})
            if unknown:
                raise ValueError(
                    f"jit({self._name}): static_argnames={tuple(names)} names "
                    f"{', '.join(map(repr, unknown))}, which {self._name} does not take"
                )
        if inspect.Parameter.VAR_POSITIONAL in kinds:
            return nums, donate
        n = len(self._params)

        def norm(what, got):
            bad = [i for i in got if not -n <= i < n]
            if bad:
                raise ValueError(
                    f"jit({self._name}): {what}={tuple(got)}, but {self._name} takes {n} "
                    f"positional argument{'s' * (n != 1)}"
                )
            return tuple(i % n for i in got)

        return norm("static_argnums", nums), norm("donate_argnums", donate)

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self):
        return f"<jit({self._name})>"

    # -------------------------------------------------------------------- calls

    def __call__(self, *args, **kwargs):
        """Runs the compiled program for these arguments' signature (tracing it once);
        inside another transform, the function is inlined into that transform."""
        if args and not kwargs and not self._static_nums:
            # a call of a compiled kernel on tensors, in one frame (W3: the host time
            # before the kernel starts): ``_dispatch`` does the same, and everything else
            sig = positional_signature(args)
            entry = None if sig is None else self._cache.get((len(args), sig, ()))
            if (
                entry is not None
                and entry.plain
                and not _disable_state[0]
                and _fx_core._debug_check is None
                and not _fx_autocast._open[0]
                and current_trace() is EVAL_TRACE
            ):
                self.stats["hits"] += 1
                return entry.tensors(entry.program(*[a._value for a in args]))
        if _disable_state[0] and _jit_disabled.get():
            return self.fun(*args, **kwargs)
        out = self._dispatch(*args, **kwargs)
        if _fx_core._debug_check is not None:  # ft.config debug_nans / debug_infs
            debug_rules.check_jit_result(self.fun, args, kwargs, out, self._name)
        return out

    def _call_taped(self, args):
        """``self(*args)`` for flat tensor arguments of which one is on the tape (a
        ``TapeTensor`` or a cell that requires grad): recorded as one ``jit_call``, as
        ``_dispatch`` would, without first computing the signature of the compiled cache
        (a fused eager composite's per-call cost on the tape)."""
        if (_disable_state[0] and _jit_disabled.get()) or _fx_core._debug_check is not None:
            return self(*args)
        return self._call_traced(args, {})

    def _dispatch(self, *args, **kwargs):
        if current_trace() is not EVAL_TRACE:
            return self._call_traced(args, kwargs)  # one jit_call in the enclosing trace
        got = self._signature(args, kwargs)
        if got is None:
            return self._call_traced(args, kwargs)
        key, bufs, leaves, split = got
        if _fx_autocast._open[0]:  # a program traced under autocast is kept apart
            key = _with_autocast(key)
        for x in leaves:
            if type(x) is not Tensor and getattr(
                x, "_taped", False
            ):  # a Parameter that requires grad: recorded on the tape as one call
                return self._call_traced(args, kwargs)
        entry, extra = self._lookup(key)
        if entry is not None:
            self.stats["hits"] += 1
            return self._run(entry, bufs, leaves, extra)
        with self._compile_lock:  # threads calling at once trace and compile once
            entry, extra = self._lookup(key)
            fresh = entry is None
            if fresh:
                entry = self._compile(key, args, kwargs, split)
                extra = entry.cells.buffers() if entry.cells is not None else ()
        if not fresh:
            self.stats["hits"] += 1
            return self._run(entry, bufs, leaves, extra)
        t0 = time.perf_counter()
        out = self._run(entry, bufs, leaves, extra)
        entry.first_run_s = time.perf_counter() - t0
        return out

    def _lookup(self, key):
        """``(entry, cell buffers)`` of the compiled entry for ``key`` whose cells match
        theirs now (``jit_cells``), else ``(None, None)``."""
        entry = self._cache.get(key)
        while entry is not None:
            if entry.cells is None:
                return entry, ()
            extra = entry.cells.buffers()
            if extra is not None:
                return entry, extra
            entry = entry.alt
        return None, None

    def _call_traced(self, args, kwargs):
        """``jit_call`` of the function's closed graph at the arguments' abstract values
        (``transforms/call.py``): under another transform the function stays one
        compiled call, whose rules give its derivative and batched forms."""
        from ..fx.graph import hoist_consts
        from ..ops._prims_control import call_p

        dyn, dyn_kwargs, static_key, pos = self._split(args, kwargs)
        leaves, treedef = optree.tree_flatten(
            (dyn, dyn_kwargs), none_is_leaf=False, namespace=tree_util.NAMESPACE
        )
        sig = []
        for k, x in enumerate(leaves):
            if not isinstance(x, (Tensor, Tracer, np.ndarray, np.generic, bool, int, float)):
                name = self._leaf_names(dyn, dyn_kwargs, pos)[k]
                raise TypeError(
                    f"jit({self._name}): argument {name} is a {type(x).__name__}; expected "
                    "a tensor, an array or a number (or a pytree of them)"
                )
            a = get_aval(x)
            sig.append(
                (tuple(a.shape), a.dtype, True) if a.weak_type else (tuple(a.shape), a.dtype)
            )
        key = _with_autocast((treedef, tuple(sig), static_key))
        got = self._graphs.get(key)
        if got is not None and got[3] is not None and got[3].buffers() is None:
            got = None  # a cell it reads changed its shape or dtype, or is gone
        if got is None:
            names = self._leaf_names(dyn, dyn_kwargs, pos)
            split = (dyn, dyn_kwargs, pos)
            graph, (out_tree, cells) = self._trace(key, args, kwargs, split, names, cells=True)
            self.stats["traces"] += 1
            closed, consts = hoist_consts(graph)
            got = (closed, consts, out_tree, cells)
            # A graph closed over another trace's tracer is only good for this call.
            if not any(isinstance(c, Tracer) for c in consts):
                self._graphs[key] = got
        closed, consts, out_tree, cells = got
        # The cells themselves are the call's extra arguments: the tape records the call
        # when one requires grad, and an enclosing jit trace reads them as its inputs.
        extra = [] if cells is None else cells.operands()
        outs = call_p.bind(*consts, *leaves, *extra, graph=closed, name=self._name)
        if cells is not None and cells.n_out:
            n = len(outs) - cells.n_out
            cells.set_back(list(outs[n:]))
            outs = outs[:n]
        return optree.tree_unflatten(out_tree, list(outs))

    def _run(self, entry, bufs, leaves, extra=None):
        if entry.donate_flat:
            from ..lowering.steps import exclusive

            for i in entry.donate_flat:
                v = bufs[i]
                if isinstance(v, np.ndarray) and (
                    sys.getrefcount(v) > _EXCLUSIVE_REFS or not exclusive(v)
                ):
                    v = v.view()
                    v.flags.writeable = False  # someone else sees it: never reused
                    bufs[i] = v
                del v
        cells = entry.cells
        if extra is None:  # a Compiled's call: its cells' buffers now
            extra = () if cells is None else cells.buffers()
            if extra is None:
                raise ValueError(
                    f"jit({self._name}): a cell this compiled program reads changed its "
                    "shape or dtype (or is gone) since it was compiled; lower it again"
                )
        outs = entry.program(*bufs, *extra)
        if cells is not None and cells.n_out:
            n = len(outs) - cells.n_out
            cells.write_back(outs[n:])
            outs = outs[:n]
        for i in entry.donate_flat:
            x = leaves[i]
            if type(x) is Tensor:
                _invalidate(x)
        return entry.tensors(outs)

    def _compile(self, key, args, kwargs, split) -> _Entry:
        dyn, dyn_kwargs, pos = split
        self.stats["misses"] += 1
        names = self._leaf_names(dyn, dyn_kwargs, pos)
        structs = self._arg_structures(dyn, dyn_kwargs, pos)
        explain_miss(self, key, names, structs)  # logs, and warns past max_retraces
        t0 = time.perf_counter()
        graph, (out_tree, cells) = self._trace(key, args, kwargs, split, names, cells=True)
        self.stats["traces"] += 1
        t1 = time.perf_counter()
        donate_flat = self._donated_leaves(dyn, pos)
        from ..lowering import compile_graph

        device = self._device(key, names)
        if device.target is None:
            raise RuntimeError(
                f"jit({self._name}): device {device} has no compiler (its Device.target is "
                "None); call the function without jit, or move its arguments to a device "
                "that has one"
            )
        with _fx_autocast.suspended():  # folding binds the graph's own dtypes
            program = compile_graph(
                graph, device.target, donated=donate_flat, backend=config.kernel_backend
            )
        plan = program.plan
        g = plan.graph
        if _profile_hook is not None:
            _profile_hook(f"trace jit({self._name})", "trace", t0, t1)
            _profile_hook(f"compile jit({self._name})", "compile", t1, time.perf_counter())
        entry = _Entry(
            program=program,
            out_tree=out_tree,
            graph=g,
            plan=plan,
            donate_flat=tuple(donate_flat),
            key=key,
            names=names,
            trace_s=t1 - t0,
            compile_s=time.perf_counter() - t1,
            first_run_s=0.0,
            device=device,
            single=out_tree.is_leaf(),
            cells=cells,
            alt=self._cache.get(key),  # an entry for other cells' shapes, tried after it
        )
        self._cache[key] = entry
        self._last_key = key
        self._history.append((key, names, structs))
        return entry

    def _device(self, key, names):
        """The one device the leaves of ``key`` are on (a leaf's key is (shape, dtype) on
        the CPU, (shape, dtype, True) for a Python scalar, of no device, else (shape,
        dtype, device)); with none, the key's default device or the host."""
        found: dict = {}
        for name, s in zip(names, key[1]):
            if len(s) == 2:
                found.setdefault(host_device(), name)
            elif s[2] is not True:
                found.setdefault(s[2], name)
        if len(found) > 1:
            (a, x), (b, y) = list(found.items())[:2]
            raise ValueError(
                f"jit({self._name}): arguments are on different devices ({a} and {b}): "
                f"{x} is on {a} and {y} is on {b}; move them to one device first (Tensor.to)"
            )
        if found:
            return next(iter(found))
        return key[3] if len(key) > 3 else host_device()

    def _trace(self, key, args, kwargs, split, names, cells=False):
        dyn, dyn_kwargs, pos = split
        treedef = key[0]
        if isinstance(treedef, int):  # the fast path's key: a flat tuple of tensors
            treedef = optree.tree_structure(
                (dyn, dyn_kwargs), none_is_leaf=False, namespace=tree_util.NAMESPACE
            )
        avals = [ShapedArray(s[0], s[1], len(s) > 2 and s[2] is True) for s in key[1]]
        static_kwargs = {k: v for k, v in kwargs.items() if k in self._static_names}
        name = self._name

        try:
            return stage(
                self.fun,
                args,
                pos,
                treedef,
                avals,
                static_kwargs,
                name=f"jit({name})",
                check_outputs=True,
                cells=cells,
            )
        except ConcretizationError as e:
            dyn_list = ", ".join(f"{n} ({_aval_str(s)})" for n, s in zip(names, key[1]))
            raise ConcretizationError(
                f"{e}\nWhile tracing jit({name}), whose traced (dynamic) arguments are "
                f"{dyn_list or 'none'}: mark the argument this decision depends on static with "
                f"ft.jit({name}, static_argnums=...) or static_argnames=... (static values must "
                "be hashable; each new value traces again)."
            ) from e

    def _donated_leaves(self, dyn, pos) -> list:
        if not self._donate:
            return []
        n_args = len(dyn) + len(pos)
        want = {i % n_args for i in self._donate if -n_args <= i < n_args}
        out, off, j = [], 0, 0
        for i in range(n_args):
            if i in pos:
                continue
            n = len(tree_util.leaves(dyn[j]))
            if i in want:
                out.extend(range(off, off + n))
            off += n
            j += 1
        return out

    # ------------------------------------------------------------------ public

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces and lowers at these arguments: ``.graph``, ``.as_text()``, ``.compile()``.

        >>> import fntorch as ft
        >>> lo = ft.jit(lambda x: ft.exp(x) + 1.0).lower(ft.ones(3))
        >>> [e.primitive.name for e in lo.graph.eqns]
        ['exp', 'add']
        """
        got = self._signature(args, kwargs)
        if got is None:
            raise TypeError(f"jit({self._name}).lower: arguments must be concrete, not tracers")
        key, _, _, split = got
        key = _with_autocast(key)
        entry = self._cache.get(key) or self._compile(key, args, kwargs, split)
        return Lowered(self, entry)

    def _cache_size(self) -> int:
        n = 0
        for entry in self._cache.values():
            while entry is not None:
                n += 1
                entry = entry.alt
        return n

    def clear_cache(self) -> None:
        """Forgets every compiled signature (the next call traces again)."""
        self._cache.clear()
        self._graphs.clear()
        self._last_key = None
        self._history.clear()


def _with_autocast(key: tuple) -> tuple:
    """``key`` with the autocast policy in force (``fx/autocast.py``) in its static part:
    the same arguments trace again under another policy, since the casts are in the graph.
    """
    ac = _fx_autocast.cache_key()
    if ac is None:
        return key
    # a (where, type, value) entry like a static argument's, so that jit's miss
    # explanations name it
    return (key[0], key[1], (*key[2], ("(autocast)", tuple, ac)), *key[3:])


def jit(fun: Callable, static_argnums=(), static_argnames=(), donate_argnums=()) -> JitFunction:
    """Compiles ``fun``: traced once per abstract signature, then run as fused kernels.

    ``static_argnums`` / ``static_argnames``: arguments that are Python values (hashable)
    the function may branch on; each new value (or element type, in a tuple) traces
    again. ``donate_argnums``: arguments whose buffers outputs may reuse (the tensors are
    invalid after the call). Negative positions count from the end of ``fun``'s
    positional parameters; a position or name ``fun`` does not have is a ValueError.

    >>> import fntorch as ft
    >>> f = ft.jit(lambda x, n: x * n if n > 1 else x, static_argnums=1)
    >>> f(ft.ones(2), 3).tolist()
    [3.0, 3.0]
    >>> f._cache_size()
    1
    """
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {type(fun).__name__}")
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)
