"""Kernel specs: the target-neutral description of one fused kernel.

The fusion pass (``fusion.py``) turns groups of graph equations into ``KernelSpec``s;
the kernel compiler (``kernels.py`` with ``builder.py``, ``mathlib.py``, ``emit.py``, and
a target's ``compile_object``) turns a spec into native code. A spec holds no sizes and
no strides: those are run-time arguments, so one compiled kernel serves every shape of
its rank and every layout of its inputs (broadcasts, transposes, slices and reversals
are strides and offsets, not copies).

Iteration space: ``rank`` dims with run-time sizes. Every input is read through
run-time *element* strides, one per iteration dim (0 for a broadcast dim, negative for a
reversed one; the pointer passed is that of the element at index 0). Outputs are
written C-contiguously.

Kinds:
- ``reduce_rank == 0``: an elementwise kernel. Every op is computed per element;
  ``outputs`` are full-shape values.
- ``reduce_rank == k > 0``: a *row* kernel. The first ``rank - k`` dims index rows, the
  last ``k`` dims a row's elements. Ops whose primitive is a reduction (``reduce_sum``,
  ``reduce_max``, ``reduce_min``, ``reduce_prod``, ``reduce_and``, ``reduce_or``,
  ``argmax``, ``argmin``) reduce their operand over a row and give a per-row value
  usable by later ops (broadcast along the row). The compiled kernel makes one pass over
  each row per reduction, in order, recomputing the cheap elementwise ops it needs
  (softmax: max, sum of exp, then the normalized write: three passes, one kernel), then
  a last pass writing full-shape outputs. Expensive values needed by two passes (the
  exp) are kept in an output's buffer between them (``stash_plan``). Per-row
  outputs have shape ``sizes[:rank - k]``.

Op arguments are references: ``("in", i)`` the i-th input at the current index,
``("op", j)`` the result of op j, ``("lit", value)`` a scalar constant of the op's
operand dtype, ``("index", d)`` the current index along iteration dim d (int64; how
``iota`` lowers).

The analyses at the end (which ops are per-row values, the cone of a value, which
values wait between passes) are what the code generator asks of a spec; they depend
on the spec alone.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

REDUCTIONS = frozenset(
    {
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_and",
        "reduce_or",
        "argmax",
        "argmin",
    }
)

# The name of the one function every compiled kernel exports (its entry: see
# ``target.Target.entry_abi``).
FUNCTION_NAME = "fntorch_kernel"


class KOp(NamedTuple):
    """One scalar operation: ``prim`` (a primitive name) applied to ``args``."""

    prim: str
    args: tuple  # of refs, see the module docstring
    params: tuple  # sorted (name, value) pairs of the primitive's params that matter
    dtype: np.dtype  # the result's dtype

    def param(self, name, default=None):
        for k, v in self.params:
            if k == name:
                return v
        return default


class KernelSpec(NamedTuple):
    """A fused kernel: what to compute, independent of sizes, layout and target."""

    rank: int
    reduce_rank: int
    input_dtypes: tuple  # of np.dtype
    ops: tuple  # of KOp, in dependency order
    outputs: tuple  # of ("op", j) / ("in", i) refs written out
    output_is_row: tuple  # per output: True for a per-row value (row kernels only)

    @property
    def is_row_kernel(self) -> bool:
        return self.reduce_rank > 0

    def key(self) -> str:
        """A stable text key of the spec (for the compiled-kernel caches)."""
        parts = [
            f"r{self.rank}k{self.reduce_rank}",
            "in:" + ",".join(str(d) for d in self.input_dtypes),
        ]
        for op in self.ops:
            args = ",".join(_arg_key(a) for a in op.args)
            parts.append(f"{op.prim}({args}){op.params!r}:{op.dtype}")
        parts.append(f"out:{self.outputs!r}{self.output_is_row!r}")
        return "|".join(parts)


def _arg_key(arg) -> str:
    """An operand's key text; a literal by its dtype and bytes: every NaN prints as nan,
    whatever its payload, and a kernel keyed by that text would be shared.

    >>> _arg_key(("lit", np.float32(-0.0))), _arg_key(("in", 1))
    ('lit:float32:00000080', "('in', 1)")
    """
    if arg[0] == "lit":
        v = np.asarray(arg[1])
        return f"lit:{v.dtype}:{v.tobytes().hex()}"
    return repr(arg)


# ---------------------------------------------------------------------- analysis
def _operand_dtype(spec: KernelSpec, op) -> np.dtype:
    """The dtype of ``op``'s (non-selector) operands: ``("lit", v)`` takes it."""
    if op.prim == "select_n":
        return np.dtype(op.dtype)
    for a in op.args:
        if a[0] == "in":
            return np.dtype(spec.input_dtypes[a[1]])
        if a[0] == "op":
            return np.dtype(spec.ops[a[1]].dtype)
        if a[0] == "index":
            return np.dtype(np.int64)
    for a in op.args:
        if hasattr(a[1], "dtype"):
            return np.dtype(a[1].dtype)
    return np.dtype(op.dtype)


def _row_levels(spec: KernelSpec) -> list[bool]:
    """Per op: is it a per-row value (a reduction, or only per-row args and literals)?"""
    k, rank = spec.reduce_rank, spec.rank
    out = []
    for op in spec.ops:
        if op.prim in REDUCTIONS:
            out.append(True)
            continue
        row = k > 0
        for kind, x in op.args:
            if kind == "in" or (kind == "index" and x >= rank - k) or (kind == "op" and not out[x]):
                row = False
        out.append(row)
    return out


def _cone_of(spec: KernelSpec, refs) -> set[int]:
    """Ops the values ``refs`` depend on (stopping at reductions, which are per row)."""
    seen: set[int] = set()
    stack = [x for kind, x in refs if kind == "op"]
    while stack:
        j = stack.pop()
        if j in seen:
            continue
        seen.add(j)
        if spec.ops[j].prim not in REDUCTIONS:
            stack.extend(x for kind, x in spec.ops[j].args if kind == "op")
    return seen


def _inputs_used(spec: KernelSpec, refs, ops: set[int]) -> set[int]:
    used = {x for kind, x in refs if kind == "in"}
    for j in ops:
        if spec.ops[j].prim not in REDUCTIONS:
            used |= {x for kind, x in spec.ops[j].args if kind == "in"}
    return used


@functools.cache
def _expensive_prims() -> frozenset:
    from . import mathlib

    return frozenset(mathlib.FUNCTIONS) | {"pow", "atan2"}


@functools.cache  # the program's donation check and the code generator both ask
def stash_plan(spec: KernelSpec) -> dict[int, tuple[int, int]]:
    """Row kernels: op -> (output, pass): where the op's values wait between passes.

    An elementwise op with a transcendental in its cone that the first reduction pass
    computes and a later pass needs again (softmax's ``exp``) is stored into a
    full-shape output of its dtype during that pass and loaded back by the later passes,
    which would otherwise recompute it. The row is in L1 by then, so the load is cheaper
    than even ``exp``. The output's real value overwrites it in the last pass. Passes
    are numbered as they run: the reductions in order, then the full-shape write.

    Such a kernel writes an output before it has read all of its inputs, so an input
    must not share that output's buffer (the program's donation checks this). The
    returned dict is shared between callers: read it, do not change it.

    >>> import numpy as np
    >>> f32 = np.dtype("float32")
    >>> softmax = KernelSpec(2, 1, (f32,), (
    ...     KOp("reduce_max", (("in", 0),), (), f32), KOp("sub", (("in", 0), ("op", 0)), (), f32),
    ...     KOp("exp", (("op", 1),), (), f32), KOp("reduce_sum", (("op", 2),), (), f32),
    ...     KOp("div", (("op", 2), ("op", 3)), (), f32)), (("op", 4),), (False,))
    >>> stash_plan(softmax)  # exp (op 2) waits in output 0 from pass 1 on
    {2: (0, 1)}
    """
    if not spec.reduce_rank:
        return {}
    row_level = _row_levels(spec)
    passes = [spec.ops[r].args for r in range(len(spec.ops)) if spec.ops[r].prim in REDUCTIONS]
    passes.append(tuple(ref for ref, row in zip(spec.outputs, spec.output_is_row) if not row))
    needs = [{j for j in _cone_of(spec, refs) if not row_level[j]} for refs in passes]
    free = [
        o
        for o, (ref, row) in enumerate(zip(spec.outputs, spec.output_is_row))
        if not row and ref not in spec.outputs[:o]
    ]
    plan: dict[int, tuple[int, int]] = {}
    expensive = _expensive_prims()
    # Outermost values first: the operands of a stashed op need no stash of their own.
    for j in reversed(range(len(spec.ops))):
        op = spec.ops[j]
        if row_level[j] or sum(j in n for n in needs) < 2:
            continue
        if any(j in _cone_of(spec, [("op", p)]) for p in plan):
            continue
        cone = {i for i in _cone_of(spec, [("op", j)]) if not row_level[i]}
        if not any(spec.ops[i].prim in expensive for i in cone):
            continue
        o = next((o for o in free if _out_dtype(spec, o) == np.dtype(op.dtype)), None)
        if o is None:
            continue
        free.remove(o)
        plan[j] = (o, next(p for p, n in enumerate(needs) if j in n))
    return plan


def _out_dtype(spec: KernelSpec, o: int) -> np.dtype:
    kind, x = spec.outputs[o]
    if kind == "in":
        return np.dtype(spec.input_dtypes[x])
    return np.dtype(spec.ops[x].dtype)
