"""Kernel specs: the target-neutral description of one fused kernel.

The fusion pass (``fusion.py``) turns groups of graph equations into ``KernelSpec``s;
the kernel compiler (``kernels.py`` with ``builder.py``, ``mathlib.py``, ``emit.py``,
``cpu.py``) turns a spec into native code. A spec holds no sizes and no strides: those
are run-time arguments, so one compiled kernel serves every shape of its rank and every
layout of its inputs (broadcasts, transposes, slices and reversals are strides and
offsets, not copies).

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
  exp) are kept in an output's buffer between them (``codegen.stash_plan``). Per-row
  outputs have shape ``sizes[:rank - k]``.

Op arguments are references: ``("in", i)`` the i-th input at the current index,
``("op", j)`` the result of op j, ``("lit", value)`` a scalar constant of the op's
operand dtype, ``("index", d)`` the current index along iteration dim d (int64; how
``iota`` lowers).
"""

from __future__ import annotations

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
            parts.append(f"{op.prim}{op.args!r}{op.params!r}:{op.dtype}")
        parts.append(f"out:{self.outputs!r}{self.output_is_row!r}")
        return "|".join(parts)
