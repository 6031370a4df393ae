"""custom_vjp: a function with a user-defined reverse derivative, and its linear
primitive ``custom_lin``.

Reverse mode of custom_vjp (and of checkpoint, a ``_VJPCall`` too) goes through one
linear primitive, ``custom_lin``, staged into the linear graph with the user's backward
function as a param; its transpose rule calls that function. The residuals are its
leading operands (constants of the linear map), not values the param closes over: cond
and scan move a body's linear part into a graph of its own and carry only operands
along. So ``vjp = linearize + transpose`` holds for these calls too.

``custom_lin`` evaluated with concrete tangents is forward mode proper: it runs the
call's forward fallback (checkpoint's) or raises (custom_vjp has none). That impl only
binds other primitives, so it holds for every device: it is registered in
``fntorch.fx.device.universal_impls``, and in the CPU's table as well, which compiled
programs read directly.
"""

from __future__ import annotations

import functools

from .. import tree as tree_util
from ..fx.core import (
    Primitive,
    ShapedArray,
    Tensor,
    abstract_eval_rules,
    check_callable,
    current_trace,
)
from ..fx.device import universal_impls
from . import ad
from .ad import Zero, instantiate, jvp_rules, transpose_rules
from .batching import batch_rules
from .custom_call import _Call, _resolve_kwargs, _split_static, _to_tensors

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
    res, tangents = list(args[:num_res]), list(args[num_res:])
    return [o._value if isinstance(o, Tensor) else o for o in jvp_fallback(res, tangents)]


# Device-independent: it only binds other primitives (every device's table falls back
# to universal_impls, compiled programs' library steps included).
universal_impls[custom_lin_p] = _custom_lin_forward


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
    from .vectorize import vmap

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
        from .vectorize import _vmap, vmap

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
