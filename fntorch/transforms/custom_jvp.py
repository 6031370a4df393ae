"""custom_jvp: a function with a user-defined forward derivative.

The JVP trace applies the user's rule (``_JVPCall.jvp``) instead of tracing through the
function's body; reverse mode linearizes that rule. Batching vmaps the function and the
rule together (``_JVPCall.batched``). The shared custom-call machinery is in
``custom_call``.
"""

from __future__ import annotations

import functools

from .. import tree as tree_util
from ..fx.core import check_callable, current_trace, get_aval
from . import ad
from .ad import instantiate
from .custom_call import _Call, _resolve_kwargs, _split_static, _to_tensors


class _JVPCall(_Call):
    kind = "custom_jvp"

    def __init__(self, fun_flat, rule_flat, box, captures=()):
        super().__init__(fun_flat, box, captures)
        self.rule_flat = rule_flat

    def jvp(self, primals, tangents):
        return self.rule_flat(primals, [instantiate(t) for t in tangents])

    def batched(self, axis_size, dims):
        from .vectorize import _vmap

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
