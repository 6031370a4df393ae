"""Graph passes run before fusion: algebraic cleanups, constant folding, CSE and DCE.

Every pass takes a ``Graph`` and returns a new one (the input is never changed); all
but ``transposed_dots`` keep the graph's meaning *exactly* (bit for bit): ``x * 1``
goes, ``x + 0.0`` stays, because it turns ``-0.0`` into ``0.0``.

>>> import fntorch as ft
>>> g = ft.make_graph(lambda x: ft.sin(x) * 1.0 + ft.sin(x))(ft.ones(3))
>>> [e.primitive.name for e in simplify(g).eqns]
['sin', 'add']
"""

from __future__ import annotations

import numpy as np

from ..fx.core import Tensor
from ..fx.device import host_device
from ..fx.graph import Eqn, Graph, Literal, Var
from .table import lowering_table

# Constant folding materializes results up to this many elements; larger results are
# folded only when they are views of an input (broadcasts), which cost no memory, and
# are not even computed otherwise.
FOLD_LIMIT = 4096


def _value(x):
    return x._value if isinstance(x, Tensor) else x


def algebraic_alias(eqn: Eqn, inputs):
    """The input an equation's single output equals exactly, or None: an erased
    primitive's operand, else what the entry's identity rule (``identities.py``) finds."""
    if len(eqn.outputs) != 1:
        return None
    entry = lowering_table[eqn.primitive]
    if entry.kind == "erased":
        return inputs[0] if inputs else None
    rule = entry.identity
    return None if rule is None else rule(eqn.params, inputs, eqn.outputs[0])


def _in_key(v):
    if isinstance(v, Literal):
        a = np.asarray(v.value)
        return ("lit", str(a.dtype), a.tobytes(), v.aval.weak_type)
    return ("var", v.id)


def _param_key(v):
    """``v`` as a key equal to another only when the two are the same bits of the same
    type: ``==`` makes ``0.0`` and ``-0.0`` equal, and ``1``, ``1.0`` and ``True``."""
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_param_key(x) for x in v))
    if isinstance(v, (float, complex, np.generic)):
        return (type(v), np.asarray(v).tobytes())
    return (type(v), v)


def simplify(graph: Graph, *, fold_limit: int = FOLD_LIMIT) -> Graph:
    """Algebraic cleanups, constant folding and CSE in one forward walk, then DCE.

    Constant folding evaluates, with the CPU impl, every equation whose inputs are all
    literals or closed-over constants, when its result has at most ``fold_limit``
    elements (or is a view of an input).
    """
    subst: dict[int, object] = {}
    consts: dict[int, object] = {v.id: _value(c) for v, c in zip(graph.constvars, graph.consts)}
    constvars = list(graph.constvars)
    const_vals = [_value(c) for c in graph.consts]
    seen: dict = {}
    eqns = []

    def resolve(v):
        if isinstance(v, Literal):
            return v
        while v.id in subst:
            v = subst[v.id]
            if isinstance(v, Literal):
                break
        return v

    transposes: dict[int, tuple] = {}  # output id -> (operand, permutation)
    for e in graph.eqns:
        ins = [resolve(v) for v in e.inputs]
        is_transpose = lowering_table[e.primitive].view == "transpose"
        if is_transpose and isinstance(ins[0], Var) and ins[0].id in transposes:
            # transpose(transpose(x, p1), p2) is transpose(x, p1[p2]): reverse mode makes
            # these, and a pair that cancels leaves the product it wraps uncopied.
            src, p1 = transposes[ins[0].id]
            perm = tuple(p1[i] for i in e.params["permutation"])
            e = Eqn(e.primitive, [src], list(e.outputs), {"permutation": perm}, e.source)
            ins = [src]
        if is_transpose and isinstance(ins[0], Var):
            transposes[e.outputs[0].id] = (ins[0], tuple(e.params["permutation"]))
        alias = algebraic_alias(e, ins) if not e.primitive.multiple_results else None
        if alias is not None:
            subst[e.outputs[0].id] = alias
            continue
        effects = lowering_table[e.primitive].effects
        if not effects and _foldable(e, ins, consts):
            folded = _fold(e, ins, consts, fold_limit)
            if folded is not None:
                for v, r in zip(e.outputs, folded):
                    if r.ndim == 0:
                        subst[v.id] = Literal(r[()], v.aval)
                    else:
                        nv = Var(v.aval.strong())
                        constvars.append(nv)
                        const_vals.append(r)
                        consts[nv.id] = r
                        subst[v.id] = nv
                continue
        try:
            params = tuple((k, _param_key(p)) for k, p in sorted(e.params.items()))
            key = None if effects else (e.primitive, tuple(_in_key(v) for v in ins), params)
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in seen:
            for v, w in zip(e.outputs, seen[key]):
                subst[v.id] = w
            continue
        if key is not None:
            seen[key] = e.outputs
        eqns.append(Eqn(e.primitive, ins, list(e.outputs), e.params, e.source))
    outvars = [resolve(v) for v in graph.outvars]
    g = Graph(list(graph.invars), outvars, eqns, constvars, const_vals)
    return dce(g)


def _foldable(e: Eqn, ins, consts) -> bool:
    if not lowering_table[e.primitive].foldable:
        return False
    return all(isinstance(v, Literal) or v.id in consts for v in ins)


def _fold(e: Eqn, ins, consts, limit):
    vals = [np.asarray(v.value) if isinstance(v, Literal) else consts[v.id] for v in ins]
    size = sum(int(np.prod(v.aval.shape, dtype=np.int64)) for v in e.outputs)
    if size > limit and lowering_table[e.primitive].kind != "view":
        return None  # not a view: it would be computed only to be thrown away below
    try:
        with np.errstate(all="ignore"):
            out = host_device().impls[e.primitive](*vals, **e.params)
    except Exception:  # noqa: BLE001 - leave it to run time, where the error is raised
        return None
    outs = list(out) if e.primitive.multiple_results else [out]
    outs = [np.asarray(o) for o in outs]
    if size > limit and not all(
        any(isinstance(v, np.ndarray) and np.may_share_memory(o, v) for v in vals) for o in outs
    ):
        return None
    return outs


def dce(graph: Graph) -> Graph:
    """Drops equations (and constants) whose results are never used; an equation with
    effects (``Lowering.effects``: ``debug_callback``) always stays."""
    return graph.live(keep=lambda e: lowering_table[e.primitive].effects)


def outer_products(graph: Graph) -> Graph:
    """Rewrites each ``dot_general`` whose contracting dims all have size 1 (an outer
    product: per-example weight gradients) as a broadcast multiply.

    BLAS gains nothing from a contraction of size 1, and numpy's batched matmul runs it
    through a slow loop; as ``mul`` of two broadcast views it fuses with its operands'
    elementwise work and streams through a threaded kernel. ``a * b`` is exactly the
    one-term dot product, so the graph's meaning is unchanged.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda a, b: a[:, None] @ b[None, :])(ft.ones(3), ft.ones(4))
    >>> [e.primitive.name for e in outer_products(g).eqns][2:]
    ['squeeze', 'broadcast_in_dim', 'squeeze', 'broadcast_in_dim', 'mul']
    """
    from ..ops._prims_elementwise import mul_p
    from ..ops._prims_structural import broadcast_in_dim_p, squeeze_p, transpose_p

    eqns: list = []

    def emit(prim, x, **params):
        v = Var(prim.abstract_eval(x.aval, **params))
        eqns.append(Eqn(prim, [x], [v], params))
        return v

    def operand(x, contract, batch, out_dims, shape):
        """``x`` without its contracting dims, batch dims first, broadcast to ``shape``."""
        if contract:
            x = emit(squeeze_p, x, dimensions=tuple(contract))
        kept = [d for d in range(len(x.aval.shape) + len(contract)) if d not in contract]
        free = [d for d in kept if d not in batch]
        order = [kept.index(d) for d in (*batch, *free)]
        if order != sorted(order):
            x = emit(transpose_p, x, permutation=tuple(order))
        return emit(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=tuple(out_dims))

    changed = False
    for e in graph.eqns:
        lhs, rhs = e.inputs if lowering_table[e.primitive].matmul else (None, None)
        if lhs is None or isinstance(lhs, Literal) or isinstance(rhs, Literal):
            eqns.append(e)
            continue
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        out = e.outputs[0]
        dtypes = {np.dtype(v.aval.dtype) for v in (lhs, rhs, out)}
        if any(lhs.aval.shape[d] != 1 for d in lc) or len(dtypes) != 1:
            eqns.append(e)
            continue
        shape = tuple(out.aval.shape)
        nb, nl = len(lb), len(lhs.aval.shape) - len(lb) - len(lc)
        a = operand(lhs, lc, lb, range(nb + nl), shape)
        b = operand(rhs, rc, rb, [*range(nb), *range(nb + nl, len(shape))], shape)
        eqns.append(Eqn(mul_p, [a, b], [out], {}, e.source))
        changed = True
    if not changed:
        return graph
    return Graph(list(graph.invars), list(graph.outvars), eqns, graph.constvars, graph.consts)


def use_counts(graph: Graph) -> dict[int, int]:
    """How many times each var is read: by an equation (once per operand) or as an
    output of ``graph``.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda x: x * x)(ft.ones(2))
    >>> use_counts(g)[g.invars[0].id]
    2
    """
    uses: dict[int, int] = {}
    for v in [*(v for e in graph.eqns for v in e.inputs), *graph.outvars]:
        if isinstance(v, Var):
            uses[v.id] = uses.get(v.id, 0) + 1
    return uses


def transposed_dots(graph: Graph) -> Graph:
    """Rewrites ``transpose(dot_general(a, b))`` that swaps the two free-dim blocks as
    ``dot_general(b, a)``, when nothing else reads the first product.

    Reverse mode makes these (a weight gradient ``(x.T @ g).T``): computed as written,
    the product is a matmul and every later reader walks it down strided columns (a
    gradient accumulation ``acc + k.T`` in a scan body took 110 us where a contiguous
    add takes 10). Swapping the operands gives the transposed product directly: each
    entry is the same dot product, but BLAS may sum it in another order for the swapped
    layout (skinny products differ from eager in the last bits), the one pass here that
    is exact only to rounding.

    >>> import fntorch as ft
    >>> g = ft.make_graph(lambda a, b: (a @ b).T)(ft.ones((2, 3)), ft.ones((3, 4)))
    >>> [e.primitive.name for e in transposed_dots(g).eqns]
    ['dot_general']
    """
    uses = use_counts(graph)
    dots = {e.outputs[0].id: e for e in graph.eqns if lowering_table[e.primitive].matmul}
    swapped: dict[int, Eqn] = {}  # id of a transpose's output -> its replacement
    for e in graph.eqns:
        src = e.inputs[0] if lowering_table[e.primitive].view == "transpose" else None
        d = dots.get(src.id) if isinstance(src, Var) else None
        if d is None or uses[src.id] != 1:
            continue
        lhs, rhs = d.inputs
        (lc, rc), (lb, rb) = d.params["dimension_numbers"]
        nb = len(lb)
        nl = len(lhs.aval.shape) - nb - len(lc)
        nr = len(rhs.aval.shape) - nb - len(rc)
        want = (*range(nb), *range(nb + nl, nb + nl + nr), *range(nb, nb + nl))
        if tuple(e.params["permutation"]) != want or nl == 0 or nr == 0:
            continue
        params = {**d.params, "dimension_numbers": ((rc, lc), (rb, lb))}
        swapped[e.outputs[0].id] = Eqn(d.primitive, [rhs, lhs], list(e.outputs), params, d.source)
    if not swapped:
        return graph
    dropped = {id(dots[e.inputs[0].id]) for e in graph.eqns if e.outputs[0].id in swapped}
    eqns = [swapped.get(e.outputs[0].id, e) for e in graph.eqns if id(e) not in dropped]
    return Graph(list(graph.invars), list(graph.outvars), eqns, graph.constvars, graph.consts)


def run_passes(graph: Graph, *, fold_limit: int = FOLD_LIMIT) -> Graph:
    """The pass pipeline ``jit`` runs: outer products as multiplies, ``simplify``
    (cleanups, folding, CSE, DCE) twice, since folding and aliasing expose new common
    subexpressions, sums of zero pads as concatenations (``passes_pads``), then
    transposed products as swapped ones."""
    from .passes_pads import summed_pads  # it imports this module at its top

    graph = simplify(outer_products(graph), fold_limit=fold_limit)
    graph = summed_pads(simplify(graph, fold_limit=fold_limit))
    # Last: a product counts as read once only after CSE has merged repeated transposes.
    return transposed_dots(graph)
