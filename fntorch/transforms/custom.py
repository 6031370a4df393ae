"""User-defined derivatives (custom_jvp, custom_vjp) and rematerialization (checkpoint).

Each is a *custom call*: the traces see it through ``Trace.process_custom`` rather than as
a primitive, because its rules are Python functions the user supplies. Eager evaluation
and staging inline the plain function; the JVP trace applies the user's rule; the batch
trace vmaps the function and the rules and hands the batched call to its parent.

Reverse mode of custom_vjp and checkpoint goes through one linear primitive,
``custom_lin``, staged into the linear graph with the user's backward function as a
param; its transpose rule calls that function. The residuals are its leading operands
(constants of the linear map), not values the param closes over: cond and scan move a
body's linear part into a graph of its own and carry only operands along. So
``vjp = linearize + transpose`` holds for them too, and checkpoint recomputes its
forward pass inside the backward pass.
"""

from __future__ import annotations

import functools
import inspect
import types

from .. import tree as tree_util
from ..devices import cpu_impls
from ..fx.core import (
    Primitive,
    ShapedArray,
    Tensor,
    Tracer,
    abstract_eval_rules,
    check_callable,
    current_trace,
    get_aval,
)
from ..fx.graph import eval_graph, hoist_consts, trace_to_graph
from . import ad
from .ad import Zero, instantiate, jvp_rules, transpose_rules
from .batching import BatchTrace, BatchTracer, batch_rules


def _to_tensors(xs, where):
    from .api import _as_tensor

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


# ------------------------------------------------------------------------ custom_jvp


class _JVPCall(_Call):
    kind = "custom_jvp"

    def __init__(self, fun_flat, rule_flat, box, captures=()):
        super().__init__(fun_flat, box, captures)
        self.rule_flat = rule_flat

    def jvp(self, primals, tangents):
        return self.rule_flat(primals, [instantiate(t) for t in tangents])

    def batched(self, axis_size, dims):
        from .api import _vmap

        bt = self.batch_trace()
        dims = list(dims)
        fun = _vmap(self.fun_flat, in_axes=(dims,), axis_size=axis_size, _adopt=bt)
        rule = _vmap(self.rule_flat, in_axes=(dims, dims), axis_size=axis_size, _adopt=bt)
        return self.derived(_JVPCall(fun, rule, self.box), bt)


class custom_jvp:
    """A function with a user-defined forward derivative (JAX's decorator API).

    >>> import fntorch as ft
    >>> @ft.custom_jvp
    ... def f(x):
    ...     return ft.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t
    >>> float(ft.grad(f)(1.0))
    2.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        check_callable("custom_jvp", "fun", fun)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp_rule = None

    def defjvp(self, rule):
        """Sets the rule ``rule(primals, tangents) -> (out, tangent_out)`` (with the
        ``nondiff_argnums`` arguments first); returns it, so it works as a decorator."""
        check_callable("custom_jvp.defjvp", "rule", rule)
        self.jvp_rule = rule
        return rule

    def __call__(self, *args, **kwargs):
        """Calls the function; transforms above apply the JVP rule instead of tracing
        through its body (keyword arguments are bound to positions, as in JAX).

        >>> import fntorch as ft
        >>> f = ft.custom_jvp(ft.sin)
        >>> _ = f.defjvp(lambda p, t: (f(p[0]), 2.0 * t[0]))
        >>> float(f(0.0)), float(ft.grad(f)(0.0))
        (0.0, 2.0)
        """
        args = _resolve_kwargs(self.fun, args, kwargs, self.__name__)
        if self.jvp_rule is None:
            raise AttributeError(
                f"custom_jvp function {self.__name__} has no JVP rule: define one with @f.defjvp"
            )
        static, dyn, flat, in_tree, merge = _split_static(args, self.nondiff_argnums, self.__name__)
        box = {}

        def fun_flat(xs):
            out = self.fun(*merge(tree_util.unflatten(in_tree, xs)))
            leaves, box["out_tree"] = tree_util.flatten(out)
            return _to_tensors(leaves, self.__name__)

        def rule_flat(primals, tangents):
            ps = tree_util.unflatten(in_tree, primals)
            ts = tree_util.unflatten(in_tree, tangents)
            out, tout = (
                self.jvp_rule(*static, tuple(ps), tuple(ts))
                if static
                else self.jvp_rule(tuple(ps), tuple(ts))
            )
            leaves, box["out_tree"] = tree_util.flatten(out)
            tleaves, ttree = tree_util.flatten(tout)
            if ttree != box["out_tree"]:
                raise TypeError(
                    f"custom_jvp rule of {self.__name__}: the tangent output has structure {ttree} "
                    f"but the primal output has structure {box['out_tree']}"
                )
            outs = _to_tensors(leaves, self.__name__)
            where = f"custom_jvp rule of {self.__name__}"
            return outs, [_rule_tangent(t, o, where) for t, o in zip(tleaves, outs)]

        outs = current_trace().process_custom(
            "custom_jvp",
            _JVPCall(fun_flat, rule_flat, box, [self.fun, self.jvp_rule, static]),
            flat,
        )
        return tree_util.unflatten(box["out_tree"], outs)


def _rule_tangent(t, out, where):
    """The tangent a rule returned for primal output ``out``, checked as JAX does: a
    TypeError unless it has the shape and dtype of ``out``'s tangent. An integer output
    carries no tangent (JAX's float0), whatever the rule returned for it."""
    if not ad.is_differentiable(out):
        return ad.zeros(ad.tangent_aval(get_aval(out)))
    if isinstance(t, float):
        from ..ops import lax

        t = lax.full((), t, out.dtype)
    t = _to_tensors([t], where)[0]
    if t.shape != out.shape or t.dtype != out.dtype:
        raise TypeError(
            f"{where}: the tangent of an output of shape {out.shape} and dtype {out.dtype} "
            f"has shape {t.shape} and dtype {t.dtype}; it must have the output's shape and dtype"
        )
    return t


# ------------------------------------------------------------------------ custom_vjp

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_abstract(*args, num_res, out_avals, bwd, jvp_fallback):
    return list(out_avals)


abstract_eval_rules[custom_lin_p] = _custom_lin_abstract


def _custom_lin_forward(*args, num_res, out_avals, bwd, jvp_fallback):
    # Reached only when tangents are concrete: forward mode proper, not linearization.
    if jvp_fallback is None:
        raise TypeError(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function; "
            "use ft.vjp/ft.grad, or define the derivative with ft.custom_jvp"
        )
    from ..fx.core import Tensor

    res, tangents = list(args[:num_res]), list(args[num_res:])
    return [o._value if isinstance(o, Tensor) else o for o in jvp_fallback(res, tangents)]


cpu_impls[custom_lin_p] = _custom_lin_forward


def _custom_lin_jvp(primals, tangents, *, num_res, **params):
    # Linear in its tangent operands; the residuals are constants of the linear map.
    res = primals[:num_res]
    out = custom_lin_p.bind(*primals, num_res=num_res, **params)
    tout = custom_lin_p.bind(*res, *map(instantiate, tangents[num_res:]), num_res=num_res, **params)
    return out, tout


jvp_rules[custom_lin_p] = _custom_lin_jvp


def _custom_lin_transpose(cts, *args, num_res, out_avals, bwd, jvp_fallback):
    cts = [instantiate(c) if type(c) is Zero else c for c in cts]
    return [None] * num_res + list(bwd(list(args[:num_res]), cts))


transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_lin_batch(axis_size, args, dims, *, num_res, out_avals, bwd, jvp_fallback):
    if jvp_fallback is None:
        _custom_lin_forward(num_res=0, out_avals=out_avals, bwd=bwd, jvp_fallback=None)
    from .api import vmap

    in_axes = (list(dims[:num_res]), list(dims[num_res:]))
    outs = vmap(jvp_fallback, in_axes=in_axes, axis_size=axis_size)(
        list(args[:num_res]), list(args[num_res:])
    )
    return outs, [0] * len(outs)


batch_rules[custom_lin_p] = _custom_lin_batch


class _VJPCall(_Call):
    kind = "custom_vjp"

    def __init__(self, fun_flat, fwd_flat, bwd_flat, box, jvp_fallback=None, captures=()):
        super().__init__(fun_flat, box, captures)
        self.fwd_flat = fwd_flat
        self.bwd_flat = bwd_flat
        self.jvp_fallback = jvp_fallback

    def jvp(self, primals, tangents):
        outs, res = self.fwd_flat(primals)
        out_avals = tuple(ad.tangent_aval(ShapedArray(o.shape, o.dtype)) for o in outs)
        # The residuals (and, for the forward fallback, the primals) are operands, not
        # values closed over by ``bwd``: a control-flow rule that stages the linear map
        # hoists its operands, but would leave closed-over tracers behind, dead.
        leaves, res_tree = tree_util.flatten(res)
        is_dyn = [isinstance(x, Tensor) for x in leaves]
        static = [None if d else x for x, d in zip(leaves, is_dyn)]
        ops = [x for x, d in zip(leaves, is_dyn) if d]
        n = len(ops)

        def bwd(vals, cts):
            it = iter(vals[:n])
            full = [next(it) if d else x for x, d in zip(static, is_dyn)]
            return self.bwd_flat(tree_util.unflatten(res_tree, full), cts)

        fallback = None
        if self.jvp_fallback is not None:
            ops += list(primals)

            def fallback(vals, ts):
                return self.jvp_fallback(vals[n:], ts)

        touts = custom_lin_p.bind(
            *ops,
            *[instantiate(t) for t in tangents],
            num_res=len(ops),
            out_avals=out_avals,
            bwd=bwd,
            jvp_fallback=fallback,
        )
        return outs, touts

    def batched(self, axis_size, dims):
        from .api import _vmap, vmap

        bt = self.batch_trace()
        dims = list(dims)
        fun = _vmap(self.fun_flat, in_axes=(dims,), axis_size=axis_size, _adopt=bt)
        fwd = _vmap(self.fwd_flat, in_axes=(dims,), axis_size=axis_size, _adopt=bt)

        def bwd_tensors(res, cts):
            # vmap carries tensors only: a symbolic zero cotangent travels as None.
            return [None if type(c) is Zero else c for c in self.bwd_flat(res, cts)]

        def bwd(res, cts):
            from ..ops import lax

            outs = _vmap(bwd_tensors, axis_size=axis_size, _adopt=bt)(res, cts)
            # Inputs that were not batched get the sum of their per-example cotangents.
            return [
                o if o is None or d is not None else lax.reduce_sum(o, (0,))
                for o, d in zip(outs, dims)
            ]

        fallback = None
        if self.jvp_fallback is not None:
            fallback = vmap(self.jvp_fallback, in_axes=(dims, dims), axis_size=axis_size)
        call = _VJPCall(fun, fwd, bwd, self.box, fallback)
        call.kind = self.kind
        return self.derived(call, bt)


class custom_vjp:
    """A function with a user-defined reverse derivative (JAX's decorator API).

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct) -> tuple of cotangents``,
    one per argument.

    >>> import fntorch as ft
    >>> @ft.custom_vjp
    ... def clip_grad(x):
    ...     return x
    >>> clip_grad.defvjp(lambda x: (x, None), lambda res, g: (ft.clip(g, -1.0, 1.0),))
    >>> float(ft.grad(lambda x: 5.0 * clip_grad(x))(2.0))
    1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        check_callable("custom_vjp", "fun", fun)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """Sets ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, cotangent) ->
        one cotangent per argument`` (``nondiff_argnums`` arguments first in both)."""
        check_callable("custom_vjp.defvjp", "fwd", fwd)
        check_callable("custom_vjp.defvjp", "bwd", bwd)
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        """Calls the function; reverse mode runs ``fwd`` and ``bwd`` instead of tracing
        through its body (keyword arguments are bound to positions, as in JAX).

        >>> import fntorch as ft
        >>> f = ft.custom_vjp(ft.sin)
        >>> f.defvjp(lambda x: (ft.sin(x), None), lambda res, g: (3.0 * g,))
        >>> float(f(0.0)), float(ft.grad(f)(0.0))
        (0.0, 3.0)
        """
        args = _resolve_kwargs(self.fun, args, kwargs, self.__name__)
        if self.fwd is None:
            raise AttributeError(
                f"custom_vjp function {self.__name__} has no VJP rule: "
                "define one with f.defvjp(fwd, bwd)"
            )
        static, dyn, flat, in_tree, merge = _split_static(args, self.nondiff_argnums, self.__name__)
        box = {}
        name = self.__name__

        def fun_flat(xs):
            out = self.fun(*merge(tree_util.unflatten(in_tree, xs)))
            leaves, box["out_tree"] = tree_util.flatten(out)
            return _to_tensors(leaves, name)

        def fwd_flat(xs):
            res = self.fwd(*merge(tree_util.unflatten(in_tree, xs)))
            if not (isinstance(res, tuple) and len(res) == 2):
                raise TypeError(f"custom_vjp fwd of {name} must return (output, residuals)")
            out, residuals = res
            leaves, box["out_tree"] = tree_util.flatten(out)
            return _to_tensors(leaves, name), residuals

        def bwd_flat(residuals, cts):
            ct_tree = tree_util.unflatten(box["out_tree"], cts)
            args = (*static, residuals, ct_tree) if static else (residuals, ct_tree)
            got = self.bwd(*args)
            if not isinstance(got, (tuple, list)) or len(got) != len(dyn):
                raise TypeError(
                    f"custom_vjp bwd of {name} must return a tuple with one cotangent per "
                    f"differentiable argument ({len(dyn)}), got {type(got).__name__}"
                    + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else "")
                )
            return _flatten_cts(tuple(got), in_tree, flat, name)

        captures = [self.fun, self.fwd, self.bwd, static]
        call = _VJPCall(fun_flat, fwd_flat, bwd_flat, box, captures=captures)
        outs = current_trace().process_custom("custom_vjp", call, flat)
        return tree_util.unflatten(box["out_tree"], outs)


def _flatten_cts(got, in_tree, primals, name):
    leaves = []
    for g, sub in zip(got, in_tree.children()):
        if g is None:
            leaves.extend([None] * sub.num_leaves)
        else:
            gl, gt = tree_util.flatten(g)
            if gt != sub:
                raise TypeError(
                    f"custom_vjp bwd of {name}: a cotangent has structure {gt}, expected {sub}"
                )
            leaves.extend(gl)
    out = []
    for c, p in zip(leaves, primals):
        if c is None or not ad.is_differentiable(p):
            out.append(Zero.like(p))
            continue
        c = _to_tensors([c], name)[0]
        if c.shape != p.shape:
            raise ValueError(
                f"custom_vjp bwd of {name}: a cotangent has shape {c.shape} but its argument "
                f"has shape {p.shape}"
            )
        # As JAX, a float cotangent of another precision is accepted; it takes the
        # argument's dtype so that the rest of the backward pass sees consistent dtypes.
        if c.dtype != p.dtype:
            from ..ops import lax

            c = lax.convert_element_type(c, p.dtype)
        out.append(c)
    return out


# ------------------------------------------------------------------------ checkpoint


def checkpoint(fun, *, static_argnums=()):
    """Rematerialization: ``fun``'s intermediates are not kept for the backward pass but
    recomputed there, trading compute for memory.

    As JAX's, ``fun`` is staged out at its arguments' shapes and dtypes, so that the
    values it closes over, tracers of enclosing transforms included, become explicit
    inputs of the call; Python control flow on an argument's value needs it in
    ``static_argnums``.

    >>> import fntorch as ft
    >>> f = ft.checkpoint(lambda x: ft.sin(ft.sin(x)))
    >>> round(float(ft.grad(f)(1.0)), 4)
    0.36
    """

    check_callable("checkpoint", "fun", fun)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        from .api import _check_argnums, jvp, vjp

        nums = _check_argnums(static, len(args), "checkpoint static_argnums") if static else ()
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        flat, in_tree = tree_util.flatten((dyn, kwargs))
        flat = _to_tensors(flat, "checkpoint")
        box = {}

        def staged(*xs):
            d, k = tree_util.unflatten(in_tree, list(xs))
            it = iter(d)
            a = [args[i] if i in nums else next(it) for i in range(len(args))]
            leaves, box["out_tree"] = tree_util.flatten(fun(*a, **k))
            return _to_tensors(leaves, "checkpoint"), None

        # Custom calls inside stay custom_call equations, which keep their rules.
        graph, _ = trace_to_graph(staged, [get_aval(x) for x in flat], name="checkpoint")
        closed, consts = hoist_consts(graph)

        def fun_flat(xs):
            return _to_tensors(eval_graph(closed, *xs), "checkpoint")

        def fwd_flat(xs):
            # Only the inputs are residuals: the backward pass recomputes the rest.
            return fun_flat(xs), list(xs)

        def bwd_flat(res, cts):
            _, pullback = vjp(fun_flat, res)
            return [Zero.like(r) if c is None else c for r, c in zip(res, pullback(cts)[0])]

        def fallback(primals, tangents):
            return jvp(fun_flat, (primals,), (tangents,))[1]

        call = _VJPCall(fun_flat, fwd_flat, bwd_flat, box, jvp_fallback=fallback)
        call.kind = "checkpoint"
        outs = current_trace().process_custom("checkpoint", call, consts + flat)
        return tree_util.unflatten(box["out_tree"], outs)

    return wrapped
