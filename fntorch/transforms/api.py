"""The public transforms: jvp, linearize, vjp, grad, jacobians, vmap, make_graph.

Each flattens its arguments with ``fntorch.tree``, runs the function in a fresh trace
(so nested transforms never confuse each other's tracers) and unflattens the result.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.core import (
    Tensor,
    Tracer,
    as_tensor_leaf,
    check_callable,
    check_tracer,
    current_trace,
    get_aval,
    set_current_trace,
)
from ..fx.graph import Graph, trace_to_graph
from . import ad
from .ad import Zero, graph_outvars_transpose, instantiate, jvp_flat, linearize_flat
from .batching import BatchTrace, BatchTracer, moveaxis
from .custom import checkpoint, custom_jvp, custom_vjp

__all__ = [
    "jvp",
    "linearize",
    "vjp",
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "hessian",
    "vmap",
    "make_graph",
    "stop_gradient",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
]


_as_tensor = as_tensor_leaf


def _flatten_raw(args, where):
    """``args``' leaves as given (a Python scalar stays one: weak), as tensors, and the
    tree structure."""
    leaves, treedef = tree_util.flatten(args)
    return leaves, [_as_tensor(x, where) for x in leaves], treedef


def _is_weak(raw) -> list[bool]:
    """Which leaves are Python scalars: weakly typed, so that differentiating one never
    lets it widen a tensor (``f16 * 3.0`` stays float16), as in JAX."""
    return [type(r) in (bool, int, float) for r in raw]


def _weak_as_given(raw, flat) -> list:
    """The leaves to differentiate at: Python scalars as given (so a transform built on
    ``jvp`` or ``vjp`` sees them weak, ``_is_weak``), the others as tensors."""
    return [r if w else x for r, x, w in zip(raw, flat, _is_weak(raw))]


def _flat_fun(fun, in_tree, out_box, where, has_aux=False):
    """``fun`` as a function of a flat list returning a flat list; records output trees."""

    def flat(xs):
        out = fun(*tree_util.unflatten(in_tree, xs))
        if has_aux:
            out, aux = _unpack_aux(out, where)
            aux_leaves = _split_aux(aux, out_box)
        else:
            aux_leaves = []
        leaves, out_box["out_tree"] = tree_util.flatten(out)
        out_box["n_out"] = len(leaves)
        return [_as_tensor(x, where) for x in leaves] + list(aux_leaves)

    return flat


def _unpack_aux(out, where):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"{where} with has_aux=True: the function must return a pair (output, aux), "
            f"got {'a Tensor' if isinstance(out, (Tensor, Tracer)) else type(out).__name__}"
        )
    return out


def _split_aux(aux, box) -> list:
    """The array leaves of ``aux``, which the transform carries out as values; the others
    (strings, None-like markers, any object) are kept in ``box`` and come back unchanged
    (``_join_aux``), as in JAX: aux is not differentiated."""
    leaves, box["aux_tree"] = tree_util.flatten(aux)
    keep = (Tensor, np.ndarray, np.generic, bool, int, float)
    box["aux_static"] = {i: x for i, x in enumerate(leaves) if not isinstance(x, keep)}
    return [x for i, x in enumerate(leaves) if i not in box["aux_static"]]


def _join_aux(box, traced):
    it = iter(traced)
    static = box["aux_static"]
    n = box["aux_tree"].num_leaves
    return tree_util.unflatten(
        box["aux_tree"], [static[i] if i in static else next(it) for i in range(n)]
    )


# -------------------------------------------------------------------------- jvp


def jvp(fun: Callable, primals: Sequence, tangents: Sequence):
    """Forward-mode derivative: ``(fun(*primals), J @ tangents)``.

    >>> import fntorch as ft
    >>> y, t = ft.jvp(ft.sin, (0.0,), (2.0,))
    >>> float(y), float(t)
    (0.0, 2.0)
    """
    check_callable("jvp", "fun", fun)
    for arg, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"jvp: {arg} must be a tuple (or list) of arguments, got {type(value).__name__}"
            )
    raw, flat_p, in_tree = _flatten_raw(tuple(primals), "jvp")
    flat_t, t_tree = tree_util.flatten(tuple(tangents))
    if t_tree != in_tree:
        # A TypeError, as JAX (a structure is part of the arguments' type).
        raise TypeError(
            "jvp: tangents must have the structure of primals; "
            f"primals {in_tree}, tangents {t_tree}"
        )
    flat_t = [_tangent_in(p, t) for p, t in zip(flat_p, flat_t)]
    box: dict = {}
    flat_fun = _flat_fun(fun, in_tree, box, "jvp")
    pouts, touts = jvp_flat(flat_fun, flat_p, flat_t, "jvp", _is_weak(raw))
    touts = [_tangent_out(p, t) for p, t in zip(pouts, touts)]
    return (
        tree_util.unflatten(box["out_tree"], pouts),
        tree_util.unflatten(box["out_tree"], touts),
    )


def _tangent_in(p, t, where="jvp"):
    if not ad.is_differentiable(p):
        # An integer primal's tangent (float0, as JAX) carries no data but must fit its shape.
        if np.shape(t) != p.shape:
            raise ValueError(
                f"{where}: a tangent has shape {np.shape(t)} but its primal has shape {p.shape}"
            )
        return Zero.like(p)
    return _match_aval(t, p, where, "tangent", "primal")


def _match_aval(x, like, where, what, of):
    """``x`` as a tangent or cotangent for ``like``: same shape (else ValueError) and dtype
    (else TypeError), as JAX checks; only a Python float, which is weakly typed, is
    converted."""
    if isinstance(x, float) and dt.is_float(like.dtype):
        from ..ops import lax

        x = lax.full((), x, like.dtype)
    x = _as_tensor(x, where)
    if x.shape != like.shape:
        raise ValueError(
            f"{where}: a {what} has shape {x.shape} but its {of} has shape {like.shape}"
        )
    if x.dtype != like.dtype:
        raise TypeError(
            f"{where}: a {what} has dtype {x.dtype} but its {of} has dtype {like.dtype}; "
            f"a {what} must have its {of}'s dtype"
        )
    return x


def _tangent_out(p, t):
    return instantiate(t) if type(t) is Zero else t


def linearize(fun: Callable, *primals):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` applies the linearized function.

    >>> import fntorch as ft
    >>> y, f_jvp = ft.linearize(ft.sin, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    from ..fx.graph import eval_graph

    check_callable("linearize", "fun", fun)
    raw, flat_p, in_tree = _flatten_raw(primals, "linearize")
    box: dict = {}
    flat_fun = _flat_fun(fun, in_tree, box, "linearize")
    pouts, graph, diff = linearize_flat(flat_fun, flat_p, "vjp", _is_weak(raw))
    out_tree = box["out_tree"]

    def f_jvp(*tangents):
        flat_t, t_tree = tree_util.flatten(tuple(tangents))
        if t_tree != in_tree:
            raise TypeError(f"linearize: tangents have structure {t_tree}, expected {in_tree}")
        checked = [_tangent_in(p, t, "linearize") for p, t in zip(flat_p, flat_t)]
        ins = [t for t, d in zip(checked, diff) if d]
        live = [v for v in graph.outvars if v is not None]
        sub = Graph(graph.invars, live, graph.eqns, graph.constvars, graph.consts)
        vals = iter(eval_graph(sub, *ins))
        outs = [
            next(vals) if v is not None else instantiate(Zero.like(p))
            for v, p in zip(graph.outvars, pouts)
        ]
        return tree_util.unflatten(out_tree, outs)

    return tree_util.unflatten(out_tree, pouts), f_jvp


# -------------------------------------------------------------------------- vjp


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """Reverse mode: ``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns a tuple with one
    cotangent per primal.

    >>> import fntorch as ft
    >>> y, vjp_fn = ft.vjp(lambda x: x * x, 3.0)
    >>> float(vjp_fn(ft.asarray(1.0))[0])
    6.0
    """
    check_callable("vjp", "fun", fun)
    return _vjp(fun, primals, has_aux, "vjp")


def _vjp(fun, primals, has_aux, where):
    """``vjp``, its errors worded for the public transform ``where`` built on it."""
    raw, flat_p, in_tree = _flatten_raw(primals, where)
    box: dict = {}
    flat_fun = _flat_fun(fun, in_tree, box, where, has_aux)
    pouts, graph, diff = linearize_flat(flat_fun, flat_p, "vjp", _is_weak(raw))
    n_out = box["n_out"]
    out_tree = box["out_tree"]
    outs = tree_util.unflatten(out_tree, pouts[:n_out])

    def vjp_fn(ct):
        ct_flat, ct_tree = tree_util.flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(
                f"vjp_fn: the cotangent has structure {ct_tree}, expected the output's {out_tree}"
            )
        cts = []
        for c, p in zip(ct_flat, pouts):
            if ad.is_differentiable(p):
                cts.append(_match_aval(c, p, "vjp_fn", "cotangent", "output"))
            elif np.shape(c) != p.shape:
                # An integer output's cotangent (float0, as JAX) only has to fit its shape.
                raise ValueError(
                    f"vjp_fn: a cotangent has shape {np.shape(c)} but its output has shape "
                    f"{p.shape}"
                )
            else:
                cts.append(None)
        cts += [None] * (len(graph.outvars) - len(cts))
        got = iter(graph_outvars_transpose(graph, cts))
        res = []
        for p, d in zip(flat_p, diff):
            res.append(instantiate(next(got)) if d else instantiate(Zero.like(p)))
        return tuple(tree_util.unflatten(in_tree, res))

    if has_aux:
        return outs, vjp_fn, _join_aux(box, pouts[n_out:])
    return outs, vjp_fn


def _as_argnums(argnums):
    """``argnums`` with numpy integers made Python ints, as JAX takes any index."""
    if isinstance(argnums, np.integer):
        return int(argnums)
    if isinstance(argnums, (tuple, list)):
        return tuple(int(a) if isinstance(a, np.integer) else a for a in argnums)
    return argnums


def _check_argnums(argnums, nargs, where, distinct=False):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, Sequence) and all(isinstance(a, int) for a in argnums):
        nums = tuple(argnums)
    else:
        raise TypeError(f"{where}: argnums must be an int or a tuple of ints, got {argnums!r}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{where}: argnums {argnums!r} out of range for a function called with {nargs} "
                "positional arguments"
            )
    nums = tuple(a % nargs for a in nums)
    # One argument differentiated twice would take only the last slot's value.
    if distinct and len(set(nums)) != len(nums):
        raise ValueError(f"{where}: argnums {argnums!r} names an argument more than once")
    return nums


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False):
    """``f -> (x -> (f(x), grad f(x)))`` for a scalar float output.

    >>> import fntorch as ft
    >>> v, g = ft.value_and_grad(lambda x: (x ** 2).sum())(ft.asarray([1.0, 2.0]))
    >>> float(v), g.tolist()
    (5.0, [2.0, 4.0])
    """
    check_callable("value_and_grad", "fun", fun)
    argnums = _as_argnums(argnums)
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "grad", distinct=True)
        _check_float_args("grad", name, nums, [args[i] for i in nums])

        def partial_fun(*dyn):
            full = list(args)
            for i, v in zip(nums, dyn):
                full[i] = v
            return fun(*full, **kwargs)

        res = _vjp(partial_fun, [args[i] for i in nums], has_aux, "grad")
        out, vjp_fn = res[0], res[1]
        if not isinstance(out, Tensor) or out.shape != ():
            shape = getattr(out, "shape", type(out).__name__)
            raise TypeError(
                f"grad requires a scalar (0-d) output, but {name} returned shape {shape}; "
                "reduce it (e.g. .sum()), or use ft.vjp / ft.jacrev for non-scalar outputs"
            )
        if not dt.is_float(out.dtype):
            raise TypeError(f"grad requires a float output, but {name} returned dtype {out.dtype}")
        from ..ops import lax

        g = vjp_fn(lax.full((), 1, out.dtype))
        g = g[0] if isinstance(argnums, int) else g
        return ((out, res[2]), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(fun: Callable, argnums=0, has_aux: bool = False):
    """The gradient of a scalar-valued function.

    >>> import fntorch as ft
    >>> float(ft.grad(ft.sin)(0.0))
    1.0
    """
    check_callable("grad", "fun", fun)
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (v, g) = vg(*args, **kwargs)
        return (g, v[1]) if has_aux else g

    return grad_f


# -------------------------------------------------------------------- jacobians


def _dyn_args(args, argnums, where):
    nums = _check_argnums(argnums, len(args), where, distinct=True)
    return nums, [args[i] for i in nums]


def _check_float_args(where, name, nums, dyn) -> None:
    """A TypeError naming the first differentiated argument (positions ``nums``, values
    ``dyn``) of function ``name`` that has a non-float leaf."""
    for i, a in zip(nums, dyn):
        for leaf in tree_util.leaves(a):
            d = get_aval(leaf).dtype
            if not dt.is_float(d):
                raise TypeError(
                    f"{where} requires float inputs (the derivative of integer and bool "
                    f"inputs is not defined), but argument {i} of {name} has dtype {d}; "
                    "convert it with .float() or leave it out of argnums"
                )


def _float_dtype(leaves, where, what="inputs"):
    ds = [get_aval(x).dtype for x in leaves]
    for d in ds:
        if not dt.is_float(d):
            raise TypeError(f"{where} requires float {what}, got dtype {d}")
    return dt.result_type(*ds) if ds else dt.float32


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False):
    """The Jacobian by forward mode (one jvp per input element, batched by vmap).

    Output shape: ``out.shape + in.shape`` per (output leaf, input leaf).

    >>> import fntorch as ft
    >>> ft.jacfwd(lambda x: x * x)(ft.asarray([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    check_callable("jacfwd", "fun", fun)
    argnums = _as_argnums(argnums)
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def jac(*args, **kwargs):
        nums, dyn = _dyn_args(args, argnums, "jacfwd")
        raw, flat_in, in_tree = _flatten_raw(tuple(dyn), "jacfwd")
        _check_float_args("jacfwd", name, nums, dyn)
        primals = tuple(_weak_as_given(raw, flat_in))
        dtype = _float_dtype(flat_in, "jacfwd")
        sizes = [x.size for x in flat_in]
        total = sum(sizes)

        partial_flat = _partial_flat(fun, args, kwargs, nums, in_tree)
        box: dict = {}

        def with_aux(*flat):
            out = partial_flat(*flat)
            if not has_aux:
                return out, None
            out, aux = _unpack_aux(out, "jacfwd")
            return out, _split_aux(aux, box)

        def push(basis_vec):
            ts = _split_basis(basis_vec, flat_in, sizes)
            (out, aux), (tout, _) = jvp(with_aux, primals, tuple(ts))
            return tout, aux

        basis = _eye(total, dtype)
        touts, aux = vmap(push, out_axes=(-1, None))(basis)
        result = tree_util.map(lambda t: _split_last(t, flat_in, sizes, in_tree, argnums), touts)
        return (result, _join_aux(box, aux)) if has_aux else result

    return jac


def jacrev(fun: Callable, argnums=0, has_aux: bool = False):
    """The Jacobian by reverse mode (one vjp per output element, batched by vmap).

    >>> import fntorch as ft
    >>> ft.jacrev(lambda x: x * x)(ft.asarray([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    check_callable("jacrev", "fun", fun)
    argnums = _as_argnums(argnums)
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def jac(*args, **kwargs):
        from ..ops import lax

        nums, dyn = _dyn_args(args, argnums, "jacrev")
        raw, flat_in, in_tree = _flatten_raw(tuple(dyn), "jacrev")
        _check_float_args("jacrev", name, nums, dyn)
        primals = _weak_as_given(raw, flat_in)

        partial_flat = _partial_flat(fun, args, kwargs, nums, in_tree)
        res = _vjp(partial_flat, primals, has_aux, "jacrev")
        out, vjp_fn = res[0], res[1]
        out_leaves, out_tree = tree_util.flatten(out)
        out_leaves = [_as_tensor(o, "jacrev") for o in out_leaves]
        sizes = [o.size for o in out_leaves]
        total = sum(sizes)
        dtype = _float_dtype(out_leaves, "jacrev", "outputs")

        def pull(basis_vec):
            cts = _split_basis(basis_vec, out_leaves, sizes)
            return vjp_fn(tree_util.unflatten(out_tree, cts))

        rows = vmap(pull)(_eye(total, dtype))  # per input leaf: (total_out, *in.shape)
        per_out = []
        off = 0
        for o, n in zip(out_leaves, sizes):
            row = []
            for r, x in zip(rows, flat_in):
                piece = (
                    lax.slice(r, (off,) + (0,) * x.ndim, (off + n, *x.shape)) if n != total else r
                )
                row.append(lax.reshape(piece, (*o.shape, *x.shape)))
            off += n
            per_out.append(_select_args(tree_util.unflatten(in_tree, row), argnums))
        result = tree_util.unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result

    return jac


def _partial_flat(fun, args, kwargs, nums, in_tree):
    """``fun`` as a function of the flat leaves of the arguments at positions ``nums``;
    keyword arguments pass through undifferentiated, as in JAX."""

    def partial_flat(*flat):
        full = list(args)
        for i, v in zip(nums, tree_util.unflatten(in_tree, list(flat))):
            full[i] = v
        return fun(*full, **kwargs)

    return partial_flat


def _split_basis(vec, like, sizes):
    """Cuts a basis vector into pieces shaped and typed like the tensors ``like``."""
    from ..ops import lax

    pieces, off, total = [], 0, sum(sizes)
    for x, n in zip(like, sizes):
        piece = lax.slice(vec, (off,), (off + n,)) if n != total else vec
        pieces.append(lax.convert_element_type(lax.reshape(piece, x.shape), x.dtype))
        off += n
    return pieces


def _select_args(dyn_tree, argnums):
    return dyn_tree[0] if isinstance(argnums, int) else tuple(dyn_tree)


def _split_last(t, flat_in, sizes, in_tree, argnums):
    from ..ops import lax

    pieces, off = [], 0
    total = sum(sizes)
    out_shape = t.shape[:-1]
    for x, n in zip(flat_in, sizes):
        nd = len(out_shape)
        piece = lax.slice(t, (0,) * nd + (off,), (*out_shape, off + n)) if n != total else t
        pieces.append(lax.reshape(piece, (*out_shape, *x.shape)))
        off += n
    return _select_args(tree_util.unflatten(in_tree, pieces), argnums)


def _eye(n, dtype):
    return Tensor(np.eye(n, dtype=dtype))


def hessian(fun: Callable, argnums=0, has_aux: bool = False):
    """The Hessian, ``jacfwd(jacrev(fun))``.

    >>> import fntorch as ft
    >>> ft.hessian(lambda x: (x ** 3).sum())(ft.asarray([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    check_callable("hessian", "fun", fun)
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)


def stop_gradient(x):
    """``x``, with derivatives stopped: it is a constant to every enclosing grad/jvp.

    >>> import fntorch as ft
    >>> float(ft.grad(lambda x: x * ft.stop_gradient(x))(3.0))
    3.0
    """
    from ..ops import lax

    return tree_util.map(lambda v: lax.stop_gradient(_as_tensor(v, "stop_gradient")), x)


# -------------------------------------------------------------------------- vmap


class _AdoptingBatchTrace(BatchTrace):
    """A batch trace that also owns the tracers of ``adopted``, a live batch trace of the
    same axis (JAX's batch-trace tags). A batch trace that hands a custom call down to
    its parent vmaps the call's user functions with one of these, since they may close
    over the handing trace's tracers, which its parent cannot read."""

    def __init__(self, parent, axis_size, adopted):
        super().__init__(parent, axis_size, adopted.transform_name)
        # Adoption is transitive: ``adopted`` may itself stand for another batch trace.
        self.adopted = (adopted, *getattr(adopted, "adopted", ()))

    def adopt(self, x):
        if isinstance(x, BatchTracer) and x._trace in self.adopted:
            return BatchTracer(self, x.val, x.bdim)
        return x

    def unpack(self, args, where):
        return super().unpack([self.adopt(a) for a in args], where)


def vmap(fun: Callable, in_axes=0, out_axes=0, axis_size: int | None = None):
    """Vectorizing map: ``fun`` applied along an axis of its arguments, batched.

    >>> import fntorch as ft
    >>> ft.vmap(lambda r: r.sum())(ft.ones((3, 4))).tolist()
    [4.0, 4.0, 4.0]
    """
    check_callable("vmap", "fun", fun)
    if axis_size is not None and (
        isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer)) or axis_size < 0
    ):
        raise ValueError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    return _vmap(fun, in_axes, out_axes, axis_size)


def _vmap(fun, in_axes=0, out_axes=0, axis_size=None, _adopt=None):
    """``vmap``; with ``_adopt``, a live batch trace whose tracers this one treats as its
    own (``_AdoptingBatchTrace``; the custom-function rules use it)."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap({name}): in_axes is a tuple of length {len(in_axes)} but the function "
                f"got {len(args)} positional arguments; in_axes must match the arguments "
                f"(in_axes structure {tree_util.structure(in_axes)}, arguments structure "
                f"{tree_util.structure(args)})"
            )
        raw, flat, in_tree = _flatten_raw(args, f"vmap({name})")
        axes = tree_util.tree_prefix_broadcast(in_axes, args, "vmap: in_axes")
        kw_raw, kw_flat, kw_tree = _flatten_raw(kwargs, f"vmap({name})")
        flat_all = flat + kw_flat
        axes_all = list(axes) + [0] * len(kw_flat)
        size = _batch_size(
            name,
            flat_all,
            axes_all,
            axis_size,
            lambda: _leaf_names(args, "args") + _leaf_names(kwargs, "kwargs"),
        )
        if _adopt is None:
            trace = BatchTrace(current_trace(), size, "vmap")
        else:
            trace = _AdoptingBatchTrace(current_trace(), size, _adopt)
        ins = []
        for x, leaf, ax in zip(flat_all, raw + kw_raw, axes_all):
            if ax is None:
                # An unmapped Python scalar stays weak, as it is eagerly and under jit.
                ins.append(leaf if type(leaf) in (bool, int, float) else x)
            else:
                ins.append(BatchTracer(trace, x, ax % x.ndim))
        try:
            with set_current_trace(trace):
                a = tree_util.unflatten(in_tree, ins[: len(flat)])
                k = tree_util.unflatten(kw_tree, ins[len(flat) :])
                out = fun(*a, **k)
            out_flat, out_tree = tree_util.flatten(out)
            oaxes = tree_util.tree_prefix_broadcast(out_axes, out, "vmap: out_axes", "outputs")
            if _adopt is not None:
                out_flat = [trace.adopt(o) for o in out_flat]
            res = [_out_value(trace, o, ax, size, name) for o, ax in zip(out_flat, oaxes)]
        finally:
            trace.dead = True
        return tree_util.unflatten(out_tree, res)

    return vmapped


def _leaf_names(tree, root):
    """Python expressions for the leaves of ``tree`` (``args[0]['w']``), for error messages."""
    import optree

    accessors = optree.tree_accessors(tree, none_is_leaf=False, namespace=tree_util.NAMESPACE)
    return [a.codify(root) for a in accessors]


def _batch_size(name, flat, axes, axis_size, leaf_names):
    """The mapped axis' size; ``leaf_names()`` names the leaves of ``flat`` for the errors
    (only then, as it walks the arguments again)."""
    sizes = []
    for i, (x, ax) in enumerate(zip(flat, axes)):
        if ax is None:
            continue
        # A bool is an int to Python, but in_axes=True is a mistake, never axis 1.
        if isinstance(ax, bool) or not isinstance(ax, int):
            raise ValueError(f"vmap({name}): in_axes entries must be int or None, got {ax!r}")
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"vmap({name}): in_axes={ax} is out of range for {leaf_names()[i]} of rank "
                f"{x.ndim} (shape {x.shape})"
            )
        sizes.append((i, x.shape[ax]))
    if axis_size is not None:
        sizes_set = {s for _, s in sizes} | {axis_size}
    else:
        sizes_set = {s for _, s in sizes}
    if not sizes_set:
        raise ValueError(
            f"vmap({name}): no argument is mapped (all in_axes are None); pass axis_size="
        )
    if len(sizes_set) > 1:
        names = leaf_names()
        listed = ", ".join(f"{names[i]} has size {s}" for i, s in sizes)
        extra = f" and axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(
            f"vmap({name}) got inconsistent sizes for the mapped axis: {listed}{extra}"
        )
    return sizes_set.pop()


def _out_axis(ax, ndim: int, name: str) -> int:
    """``out_axes`` entry ``ax`` for an output of rank ``ndim`` (mapped axis included)."""
    if isinstance(ax, bool) or not isinstance(ax, int) or not -ndim <= ax < ndim:
        raise ValueError(
            f"vmap({name}): out_axes entry {ax!r} is out of range for an output of rank "
            f"{ndim} (the mapped axis included): expected an int in [{-ndim}, {ndim})"
        )
    return ax % ndim


def _out_value(trace, o, ax, size, name):
    from ..ops import lax

    if isinstance(o, BatchTracer) and o._trace is trace:
        if ax is None:
            raise ValueError(
                f"vmap({name}): out_axes is None for an output that is batched; "
                "only outputs that do not depend on the mapped axis can have out_axes=None"
            )
        return moveaxis(o.val, o.bdim, _out_axis(ax, o.val.ndim, name))
    if isinstance(o, Tracer):
        check_tracer(o, "vmap")
    o = _as_tensor(o, "vmap")
    if ax is None:
        return o
    shape = list(o.shape)
    ax = _out_axis(ax, o.ndim + 1, name)
    shape.insert(ax, size)
    dims = [d for d in range(o.ndim + 1) if d != ax]
    return lax.broadcast_in_dim(o, tuple(shape), tuple(dims))


# -------------------------------------------------------------------- make_graph


def make_graph(fun: Callable, static_argnums=()):
    """``fun`` staged out to an ``ft.fx.Graph`` at the example arguments' shapes and dtypes.

    >>> import fntorch as ft
    >>> print(ft.make_graph(lambda x: ft.exp(x) + 1.0)(ft.zeros(3)))
    { lambda a:f32[3]. let
        b:f32[3] = exp a
        c:f32[3] = add b 1.0
      in (c) }
    """
    check_callable("make_graph", "fun", fun)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def staged(*args, **kwargs):
        nums = _check_argnums(static, len(args), "make_graph static_argnums") if static else ()
        dyn = [a for i, a in enumerate(args) if i not in nums]
        raw, flat, in_tree = _flatten_raw((tuple(dyn), kwargs), "make_graph")

        def flat_fun(*xs):
            dyn_args, kw = tree_util.unflatten(in_tree, list(xs))
            it = iter(dyn_args)
            full = [args[i] if i in nums else next(it) for i in range(len(args))]
            out = fun(*full, **kw)
            leaves = [_as_tensor(o, "make_graph") for o in tree_util.leaves(out)]
            return leaves, None

        # A Python scalar argument stays weak (its own aval), as under jit: x + 1 keeps an
        # int8 x's dtype.
        avals = [get_aval(r if type(r) in (bool, int, float) else x) for r, x in zip(raw, flat)]
        graph, _ = trace_to_graph(flat_fun, avals)
        return graph

    return staged
