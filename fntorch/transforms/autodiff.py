"""Autodiff transforms: jvp, linearize, vjp, value_and_grad, grad, jacfwd, jacrev,
hessian and stop_gradient.

Each flattens its arguments with ``fntorch.tree`` (``_args``), runs the function in a
fresh trace (so nested transforms never confuse each other's tracers) and unflattens the
result; the jacobians batch their jvps and vjps with ``vmap``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.core import Tensor, check_callable, constant_device, get_aval
from ..fx.device import default_device, host_device
from ..fx.graph import Graph
from . import ad
from ._args import (
    _as_argnums,
    _as_tensor,
    _check_argnums,
    _flat_fun,
    _flatten_raw,
    _is_weak,
    _join_aux,
    _split_aux,
    _unpack_aux,
    _weak_as_given,
)
from .ad import Zero, graph_outvars_transpose, instantiate, jvp_flat, linearize_flat
from .vectorize import vmap

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
    if isinstance(x, (float, complex)) and dt.is_inexact(like.dtype):
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
    if type(t) is not Zero:
        return t
    dev = constant_device(p)
    if dev is None:
        return instantiate(t)
    with default_device(dev):  # the zeros stand for p: made on its device
        return instantiate(t)


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
        dev = constant_device(*flat_p)
        if dev is None:
            res = _transpose(graph, cts, flat_p, diff)
        else:
            # The zeros the transpose rules instantiate (cotangents broadcast from a
            # scalar) stand for the primals: they are made on the primals' device.
            with default_device(dev):
                res = _transpose(graph, cts, flat_p, diff)
        return tuple(tree_util.unflatten(in_tree, res))

    if has_aux:
        return outs, vjp_fn, _join_aux(box, pouts[n_out:])
    return outs, vjp_fn


def _transpose(graph, cts, flat_p, diff):
    """The cotangent of each primal (instantiated zeros for those not differentiated)."""
    got = iter(graph_outvars_transpose(graph, cts))
    return [instantiate(next(got) if d else Zero.like(p)) for p, d in zip(flat_p, diff)]


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
        splits = [_split_modules(args[i]) for i in nums]
        _check_float_args("grad", name, nums, [d for d, _, _ in splits])

        def partial_fun(*dyn):
            full = list(args)
            for i, v, (_, to_arg, _) in zip(nums, dyn, splits):
                full[i] = to_arg(v)
            return fun(*full, **kwargs)

        res = _vjp(partial_fun, [d for d, _, _ in splits], has_aux, "grad")
        out, vjp_fn = res[0], res[1]
        if not isinstance(out, Tensor) or out.shape != ():
            shape = getattr(out, "shape", type(out).__name__)
            raise TypeError(
                f"grad requires a scalar (0-d) output, but {name} returned shape {shape}; "
                "reduce it (e.g. .sum()), or use ft.vjp / ft.jacrev for non-scalar outputs"
            )
        if not dt.is_float(out.dtype):
            hint = "; take its real part or abs (as JAX)" if dt.is_complex(out.dtype) else ""
            raise TypeError(
                f"grad requires a real float output, but {name} returned dtype {out.dtype}{hint}"
            )
        from ..ops import lax

        seed = lax.full((), 1, out.dtype)  # a host scalar: of no device
        if type(out) is Tensor and out.device is not host_device():
            seed = Tensor(out.device.put(seed._value))  # the cotangents broadcast from it
        g = tuple(to_grad(x) for x, (_, _, to_grad) in zip(vjp_fn(seed), splits))
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


def _split_modules(arg):
    """``(differentiated, to_arg, to_grad)`` for one argument of ``grad``: a Module in it
    (a class with ``_grad_split``, nn/module_tree.py) is differentiated through its
    parameters only, its buffers held as constants and ``None`` as their gradient
    (API.md "Decisions"); other leaves pass through as they are."""
    split = lambda x: hasattr(type(x), "_grad_split")  # noqa: E731
    nodes, tree = tree_util.flatten(arg, is_leaf=split)
    if not any(split(n) for n in nodes):
        return arg, lambda v: v, lambda g: g
    parts = [n._grad_split() if split(n) else (n, None, None) for n in nodes]

    def rebuild(values, which):
        return tree_util.unflatten(
            tree, [v if p[which] is None else p[which](v) for p, v in zip(parts, values)]
        )

    return [p[0] for p in parts], lambda v: rebuild(v, 1), lambda g: rebuild(g, 2)


def _dyn_args(args, argnums, where):
    nums = _check_argnums(argnums, len(args), where, distinct=True)
    return nums, [args[i] for i in nums]


def _check_float_args(where, name, nums, dyn) -> None:
    """A TypeError naming the first differentiated argument (positions ``nums``, values
    ``dyn``) of function ``name`` that has a non-float leaf."""
    for i, a in zip(nums, dyn):
        if getattr(type(a), "_grad_allows_int_leaves", False):
            continue  # a Module: its integer buffers are state, with float0 gradients
        for leaf in tree_util.leaves(a):
            d = get_aval(leaf).dtype
            if not dt.is_inexact(d):
                raise TypeError(
                    f"{where} requires float inputs (the derivative of integer and bool "
                    f"inputs is not defined), but argument {i} of {name} has dtype {d}; "
                    "convert it with .float() or leave it out of argnums"
                )


def _float_dtype(leaves, where, what="inputs"):
    ds = [get_aval(x).dtype for x in leaves]
    for d in ds:
        if not dt.is_inexact(d):
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

        basis = _eye(total, dtype, flat_in)
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

        rows = vmap(pull)(_eye(total, dtype, out_leaves))  # per input leaf: (total_out, *in.shape)
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


def _eye(n, dtype, like):
    """The ``n`` by ``n`` identity, on the device of the tensors ``like``."""
    eye = np.eye(n, dtype=dtype)
    dev = constant_device(*like)
    return Tensor(eye if dev is None else dev.put(eye))


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
