"""Scan accumulators taken out of the loop: a carry that only sums per-step products.

Reverse mode through ``scan`` accumulates every weight gradient in a carry: the
transposed body of a tanh RNN does ``gw = gw + h_t.T @ dz_t`` and ``gb = gb +
sum(dz_t, 0)`` at each of its steps, a small matmul and a full-size add per step and
weight. When a carry is read by nothing but its own update ``c' = c + t`` and ``t`` is a
``dot_general`` (no batch dims) or a ``reduce_sum`` of per-step values, the sum over the
steps is one larger contraction after the loop::

    sum_t u_t . v_t  ==  dot_general(U, V) contracting the step axis too

so the body only hands ``u_t`` and ``v_t`` out as extra per-step outputs (or they are
already scanned inputs), and the carry leaves the loop. Measured on W8's gradient scan:
per-step work 394 -> 160 us; one (256, 3200) @ (3200, 256) product after the loop
replaces a hundred (256, 32) @ (32, 256) ones. The summation order changes (a
contraction instead of a running sum), within float tolerance.

>>> import fntorch as ft
>>> def f(xs):
...     return ft.scan(lambda c, x: (c + x.T @ ft.tanh(x), None), ft.zeros((4, 4)), xs)[0]
>>> g = ft.make_graph(f)(ft.ones((5, 2, 4)))
>>> body, (acc,), kept = split_accumulators(g.eqns[-1].params["body"], 0, 1)
>>> acc.prim, acc.operands, kept
('dot_general', (('ys', 0), ('ys', 1)), [])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..fx.graph import Graph, Var
from .passes import use_counts
from .table import lowering_table


class Accumulator(NamedTuple):
    """Carry ``carry`` (its position among the carries) ends as ``init + op(*operands)``
    over the stacked steps; an operand is ``("xs", i)`` (a scanned input) or ``("ys",
    i)`` (an extra per-step output of the new body)."""

    carry: int
    prim: str  # "dot_general" or "reduce_sum"
    operands: tuple
    params: dict

    def finish(self, init, stacked):
        """``init`` plus the accumulated sum, from the operands stacked over the steps."""
        from ..fx.device import host_device
        from ..ops._prims_linalg import dot_general_p
        from ..ops._prims_reduce import reduce_sum_p

        impls = host_device().impls
        if self.prim == "dot_general":
            (lc, rc), _ = self.params["dimension_numbers"]
            dn = (((0, *(d + 1 for d in lc)), (0, *(d + 1 for d in rc))), ((), ()))
            t = impls[dot_general_p](*stacked, dimension_numbers=dn,
                                     preferred_element_type=None)  # fmt: skip
        else:
            axes = (0, *(a + 1 for a in self.params["axes"]))
            t = impls[reduce_sum_p](stacked[0], axes=axes)
        return np.add(init, t, dtype=init.dtype)


def split_accumulators(body: Graph, num_consts: int, num_carry: int):
    """``(new_body, accumulators, kept_carries)`` or None when no carry qualifies.

    ``new_body`` takes the consts, the kept carries and the scanned inputs, and returns
    the kept carries, the original per-step outputs, then the accumulators' extra
    per-step operands.
    """
    nc, nk = num_consts, num_carry
    carry_in = body.invars[nc : nc + nk]
    carry_out = body.outvars[:nk]
    xs = {v.id: i for i, v in enumerate(body.invars[nc + nk :])}
    uses = use_counts(body)
    made = {e.outputs[0].id: e for e in body.eqns if len(e.outputs) == 1}

    found = []  # (carry index, add eqn, term eqn)
    for c, (cin, cout) in enumerate(zip(carry_in, carry_out)):
        add = made.get(cout.id) if isinstance(cout, Var) else None
        if add is None or not lowering_table[add.primitive].adds or uses.get(cin.id) != 1:
            continue
        if uses.get(cout.id) != 1 or not any(v is cin for v in add.inputs):
            continue
        term = add.inputs[1] if add.inputs[0] is cin else add.inputs[0]
        t = made.get(term.id) if isinstance(term, Var) else None
        if t is None or uses.get(term.id) != 1 or not _summable(t):
            continue
        if np.dtype(term.aval.dtype) != np.dtype(cin.aval.dtype) or term.aval.shape != (
            cin.aval.shape
        ):
            continue
        # Per-step operands only: scanned inputs or values the body computes.
        if any(not isinstance(v, Var) or (v.id not in xs and v.id not in made) for v in t.inputs):
            continue
        found.append((c, add, t))
    if not found:
        return None

    dropped = {id(e) for _, a, t in found for e in (a, t)}
    eqns = [e for e in body.eqns if id(e) not in dropped]
    gone = {c for c, _, _ in found}
    extra: dict[int, tuple[int, Var]] = {}  # var id -> (position, var)
    accs = []
    for c, _, t in found:
        operands = []
        for v in t.inputs:
            if v.id in xs:
                operands.append(("xs", xs[v.id]))
            else:
                operands.append(("ys", extra.setdefault(v.id, (len(extra), v))[0]))
        params = dict(t.params)
        prim = "dot_general" if lowering_table[t.primitive].matmul else "reduce_sum"
        accs.append(Accumulator(c, prim, tuple(operands), params))
    kept = [c for c in range(nk) if c not in gone]
    invars = [*body.invars[:nc], *(carry_in[c] for c in kept), *body.invars[nc + nk :]]
    outvars = [*(carry_out[c] for c in kept), *body.outvars[nk:], *(v for _, v in extra.values())]
    new = Graph(invars, outvars, eqns, list(body.constvars), list(body.consts))
    return new, accs, kept


def _summable(e) -> bool:
    entry = lowering_table[e.primitive]
    if entry.matmul:
        (_, _), (lb, _) = e.params["dimension_numbers"]
        pet = e.params.get("preferred_element_type")
        return not lb and (pet is None or np.dtype(pet) == np.dtype(e.inputs[0].aval.dtype))
    return entry.sum
