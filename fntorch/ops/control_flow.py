"""Structured control flow, usable under every transform: cond, switch, while_loop,
fori_loop, scan (JAX's semantics).

Each stages the user's functions to graphs at the operands' shapes and dtypes (pytrees
in and out) and binds one primitive of ``_prims_control``; values the functions close
over become operands of that primitive, so ``grad``, ``vmap`` and ``jit`` see them.
"""

from __future__ import annotations

import numpy as np

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.core import ShapedArray, Tensor, Tracer, as_tensor_leaf, check_callable, get_aval
from . import _prims_control as pc
from . import lax

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan"]

_PY_SCALARS = (bool, int, float)


def _as_tensor(x, where):
    """``as_tensor_leaf``, but a Python or numpy scalar (a pred, a counter, an initial
    carry of ``0.0``) becomes a host scalar held by a tensor: of no device, it takes the
    device of the tensors it meets."""
    t = as_tensor_leaf(x, where)
    if t is not x and type(t._value) is np.ndarray and t._value.ndim == 0:
        return Tensor(t._value[()])
    return t


def _flatten(tree, where):
    leaves, treedef = tree_util.flatten(tree)
    weak = [type(x) in _PY_SCALARS or bool(getattr(x, "weak_type", False)) for x in leaves]
    return [_as_tensor(x, where) for x in leaves], treedef, weak


def _describe(treedef, avals) -> str:
    """The pytree of output types, as errors show it: ``(f32[3], {'a': i32[]})``."""
    return repr(tree_util.unflatten(treedef, [ShapedArray(a.shape, a.dtype) for a in avals]))


def _stage(fun, in_tree, in_avals, where, split_pair=False):
    """``fun`` (pytree args of ``in_tree``) staged at ``in_avals``: ``(graph, consts,
    out trees)``; with ``split_pair`` it returns ``(carry, y)`` and both trees come back."""

    def flat(*xs):
        out = fun(*tree_util.unflatten(in_tree, list(xs)))
        if split_pair:
            if not (isinstance(out, tuple) and len(out) == 2):
                # A traced output's class (GraphTracer) would tell the user nothing.
                if isinstance(out, Tensor):
                    got = get_aval(out).str_short()
                elif isinstance(out, (tuple, list)):
                    got = f"a {type(out).__name__} of length {len(out)}"
                else:
                    got = type(out).__name__
                raise TypeError(f"{where}: f must return a pair (carry, y), got {got}")
            c_leaves, c_tree = tree_util.flatten(out[0])
            y_leaves, y_tree = tree_util.flatten(out[1])
            leaves, trees = c_leaves + y_leaves, (c_tree, y_tree, len(c_leaves))
        else:
            leaves, trees = tree_util.flatten(out)
        return [_as_tensor(o, where) for o in leaves], trees

    return pc.closed_graph(flat, in_avals, name=where)


def _weak_avals(leaves, weak):
    """The carries' types as the body first sees them: a Python number's stays weak, so
    that ``0.0 + x16`` in the body is float16 (and the carry then becomes float16)."""
    return [ShapedArray(x.shape, get_aval(x).dtype, w) for x, w in zip(leaves, weak)]


def _promote_weak(init, weak, out_avals):
    """Weakly typed carries (Python numbers) take the dtype the body gives them, as in
    JAX; returns the new carries, or None when nothing changes."""
    changed = False
    new = list(init)
    for i, (x, w, a) in enumerate(zip(init, weak, out_avals)):
        if w and tuple(x.shape) == tuple(a.shape) and x.dtype != a.dtype:
            new[i] = lax.convert_element_type(x, a.dtype)
            changed = True
    return new if changed else None


# ------------------------------------------------------------------------ cond / switch


def _branch_call(index, funs, names, operands, where):
    ops, in_tree, _ = _flatten(operands, where)
    avals = [get_aval(x) for x in ops]
    staged = [_stage(f, in_tree, avals, where) for f in funs]
    g0, _, tree0 = staged[0]
    for (g, _, tree), name in zip(staged[1:], names[1:]):
        if tree != tree0 or not pc.same_types(g.out_avals, g0.out_avals):
            raise TypeError(
                f"{where}: the branches must return the same pytree structure, shapes and "
                f"dtypes, but {names[0]} returns {_describe(tree0, g0.out_avals)} and {name} "
                f"returns {_describe(tree, g.out_avals)}"
            )
    graphs, consts = pc.join_consts([(g, c) for g, c, _ in staged])
    outs = pc.cond_p.bind(index, *consts, *ops, branches=tuple(graphs))
    return tree_util.unflatten(tree0, outs)


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, with ``pred`` a
    (possibly traced) scalar. Both branches must return the same types; eagerly only the
    taken branch runs; under ``vmap`` with a batched ``pred`` both run and are selected.

    >>> import fntorch as ft
    >>> ft.cond(ft.asarray(2.0) > 1.0, lambda x: x * 10.0, lambda x: -x, ft.asarray(3.0)).item()
    30.0
    """
    check_callable("cond", "true_fun", true_fun)
    check_callable("cond", "false_fun", false_fun)
    p = _as_tensor(pred, "cond")
    if p.shape != ():
        raise TypeError(
            f"cond: pred must be a scalar (0-d) boolean or number, got shape {p.shape}; "
            "for an elementwise choice use ft.where"
        )
    if p.dtype != dt.bool_:
        p = lax.ne(p, np.zeros((), p.dtype)[()])
    index = lax.convert_element_type(p, dt.int32)
    return _branch_call(index, (false_fun, true_fun), ("false_fun", "true_fun"), operands, "cond")


def switch(index, branches, *operands):
    """``branches[index](*operands)``; an out-of-range ``index`` is clamped into range.

    >>> import fntorch as ft
    >>> fs = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]
    >>> [ft.switch(i, fs, ft.asarray(5.0)).item() for i in (0, 1, 2, 7)]
    [6.0, 10.0, -5.0, -5.0]
    """
    if callable(branches) or not hasattr(branches, "__iter__"):
        raise TypeError(
            f"switch: branches must be a sequence of functions, got {type(branches).__name__}"
        )
    branches = tuple(branches)
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence of functions, got ()")
    for k, b in enumerate(branches):
        check_callable("switch", f"branches[{k}]", b)
    i = _as_tensor(index, "switch")
    if i.shape != () or not dt.is_integer(i.dtype):
        raise TypeError(f"switch: index must be an integer scalar, got {get_aval(i)}")
    n = len(branches)
    if n == 1:
        return branches[0](*operands)
    i = lax.clamp(0, i, n - 1)  # in the index's own dtype, before narrowing to int32
    i = lax.convert_element_type(i, dt.int32)
    names = tuple(f"branch {k}" for k in range(n))
    return _branch_call(i, branches, names, operands, "switch")


# ------------------------------------------------------------------------ while_loop


def while_loop(cond_fun, body_fun, init_val):
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``.

    ``body_fun`` must keep the carry's pytree structure, shapes and dtypes. Forward
    mode (``jvp``) and ``vmap`` work; reverse mode does not (the trip count is unknown
    before running): use ``scan`` or ``fori_loop`` with static bounds.

    >>> import fntorch as ft
    >>> ft.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))[1].item()
    32.0
    """
    return _while_loop(cond_fun, body_fun, init_val)


def _with_weak(weak, weak_leaves):
    return [w or k in weak_leaves for k, w in enumerate(weak)]


def _while_loop(cond_fun, body_fun, init_val, weak_leaves=()):
    """``while_loop``, with the carry leaves at ``weak_leaves`` weakly typed as if they
    were Python numbers (``fori_loop``'s counter: a concrete tensor never is weak)."""
    check_callable("while_loop", "cond_fun", cond_fun)
    check_callable("while_loop", "body_fun", body_fun)
    init, tree, weak = _flatten(init_val, "while_loop")
    weak = _with_weak(weak, weak_leaves)
    in_tree = tree_util.structure((init_val,))
    for attempt in range(2):
        avals = _weak_avals(init, weak)
        cg, cc, _ = _stage(cond_fun, in_tree, avals, "while_loop")
        outs = cg.out_avals
        if len(outs) != 1 or tuple(outs[0].shape) != () or outs[0].dtype != dt.bool_:
            raise TypeError(
                f"while_loop: cond_fun must return a bool scalar, got {pc.avals_str(outs)}"
            )
        bg, bc, btree = _stage(body_fun, in_tree, avals, "while_loop")
        if btree == tree and pc.same_types(bg.out_avals, avals):
            break
        promoted = _promote_weak(init, weak, bg.out_avals) if btree == tree else None
        if attempt or promoted is None:
            raise pc.carry_mismatch(
                "while_loop", "body_fun", _describe(tree, avals), _describe(btree, bg.out_avals)
            )
        weak = [w and p is x for w, p, x in zip(weak, promoted, init)]
        init = promoted
    outs = pc.while_p.bind(
        *cc,
        *bc,
        *init,
        cond_graph=cg,
        body_graph=bg,
        cond_nconsts=len(cc),
        body_nconsts=len(bc),
    )
    return tree_util.unflatten(tree, outs)


def _static_int(x) -> bool:
    if type(x) is int or isinstance(x, np.integer):
        return True
    return (
        isinstance(x, Tensor)
        and not isinstance(x, Tracer)
        and x.shape == ()
        and dt.is_integer(x.dtype)
    )


def _checked_body(body_fun):
    """``body_fun`` with its carry checked as ``fori_loop``'s own: the loop it lowers to
    carries the counter too, and its errors would name that loop and show the counter.
    A weakly typed (Python number) carry may change dtype: the loop promotes it."""

    def body(i, x):
        out = body_fun(i, x)
        ins, in_tree = tree_util.flatten(x)
        outs, out_tree = tree_util.flatten(out)
        in_avals = [get_aval(v) for v in ins]
        out_avals = [get_aval(_as_tensor(o, "fori_loop")) for o in outs]
        if out_tree != in_tree or any(
            tuple(a.shape) != tuple(b.shape) or (a.dtype != b.dtype and not a.weak_type)
            for a, b in zip(in_avals, out_avals)
        ):
            raise pc.carry_mismatch(
                "fori_loop",
                "body_fun",
                _describe(in_tree, in_avals),
                _describe(out_tree, out_avals),
            )
        return out

    return body


def _next(i):
    # ``i + 1`` of two weak ints would take the default int dtype, not the counter's.
    return i + lax.full((), 1, i.dtype)


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.

    With static bounds (Python ints, concrete tensors) this is a ``scan``, so it is
    reverse-differentiable; with traced bounds it is a ``while_loop``.

    >>> import fntorch as ft
    >>> ft.fori_loop(0, 4, lambda i, x: x + i, ft.asarray(0.0)).item()
    6.0
    >>> float(ft.grad(lambda x: ft.fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0))
    12.0
    """
    check_callable("fori_loop", "body_fun", body_fun)
    body_fun = _checked_body(body_fun)
    if _static_int(lower) and _static_int(upper):
        lo, hi = int(lower), int(upper)
        d = dt.result_type(*[x.dtype if isinstance(x, Tensor) else x for x in (lower, upper)])

        def step(carry, _):
            i, x = carry
            return (_next(i), body_fun(i, x)), None

        # As in JAX, the counter is weak (JAX makes static bounds Python ints): an int8
        # carry may add it and stay int8.
        i0 = Tensor(np.asarray(lo, d)[()])  # a host scalar: of no device
        n = max(hi - lo, 0)
        (_, out), _ = _scan(step, (i0, init_val), None, length=n, weak_leaves=(0,))
        return out
    lo, hi = _as_tensor(lower, "fori_loop"), _as_tensor(upper, "fori_loop")
    for name, b in (("lower", lo), ("upper", hi)):
        if b.shape != () or not dt.is_integer(b.dtype):
            raise TypeError(f"fori_loop: {name} must be an integer scalar, got {get_aval(b)}")
    # A Python int bound is weak: ``fori_loop(0, n)`` counts in ``n``'s dtype, as in JAX.
    d = dt.result_type(*[x if type(x) is int else b.dtype for x, b in ((lower, lo), (upper, hi))])
    lo, hi = lax.convert_element_type(lo, d), lax.convert_element_type(hi, d)
    # The counter starts at ``lower``, and is weak where ``lower`` is, as in JAX.
    weak_lower = type(lower) is int or bool(getattr(lower, "weak_type", False))

    def body(c):
        i, u, x = c
        return _next(i), u, body_fun(i, x)

    weak_leaves = (0,) if weak_lower else ()
    _, _, out = _while_loop(lambda c: c[0] < c[1], body, (lo, hi, init_val), weak_leaves)
    return out


# ------------------------------------------------------------------------------ scan


def scan(f, init, xs=None, length=None, reverse=False):
    """Loops ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the ``y``s stacked (JAX's ``lax.scan``). ``xs`` and ``y`` may be any pytree
    (or None, with ``length`` given); ``reverse`` runs from the end.

    >>> import fntorch as ft
    >>> carry, ys = ft.scan(lambda c, x: (c + x, c * x), 0.0, ft.asarray([1.0, 2.0, 3.0]))
    >>> carry.item(), ys.tolist()
    (6.0, [0.0, 2.0, 9.0])
    """
    return _scan(f, init, xs, length, reverse)


def _scan(f, init, xs=None, length=None, reverse=False, weak_leaves=()):
    """``scan``, with the carry leaves at ``weak_leaves`` weak (see ``_while_loop``)."""
    check_callable("scan", "f", f)
    carry, c_tree, weak = _flatten(init, "scan")
    weak = _with_weak(weak, weak_leaves)
    x_leaves, _, _ = _flatten(xs, "scan")
    lengths = set()
    for x in x_leaves:
        if x.ndim == 0:
            raise ValueError(
                "scan: every leaf of xs needs a leading axis to scan over, got a 0-d one"
            )
        lengths.add(x.shape[0])
    if length is not None:
        if int(length) < 0:
            raise ValueError(f"scan: length must be a non-negative integer, got {length}")
        lengths.add(int(length))
    if len(lengths) != 1:
        got = sorted(lengths)
        raise ValueError(
            "scan: length must be given when xs is None or has no leaves"
            if not got
            else f"scan: the leaves of xs (and length={length}) disagree on the scan length: {got}"
        )
    n = lengths.pop()
    in_tree = tree_util.structure((init, xs))
    x_avals = [ShapedArray(x.shape[1:], get_aval(x).dtype) for x in x_leaves]
    for attempt in range(2):
        avals = _weak_avals(carry, weak)
        g, consts, (out_c_tree, y_tree, nc) = _stage(f, in_tree, avals + x_avals, "scan", True)
        outs = g.out_avals[:nc]
        if out_c_tree == c_tree and pc.same_types(outs, avals):
            break
        promoted = _promote_weak(carry, weak, outs) if out_c_tree == c_tree else None
        if attempt or promoted is None:
            raise pc.carry_mismatch(
                "scan", "f", _describe(c_tree, avals), _describe(out_c_tree, outs)
            )
        weak = [w and p is x for w, p, x in zip(weak, promoted, carry)]
        carry = promoted
    res = pc.scan_p.bind(
        *consts,
        *carry,
        *x_leaves,
        body=g,
        num_consts=len(consts),
        num_carry=len(carry),
        length=n,
        reverse=bool(reverse),
    )
    return tree_util.unflatten(c_tree, res[:nc]), tree_util.unflatten(y_tree, res[nc:])
