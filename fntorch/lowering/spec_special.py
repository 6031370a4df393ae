"""Specs of the non-fused kernel templates: gather, scatter, scans, window reductions and
the LU factorization and solve.

``spec.KernelSpec`` describes fused elementwise/row kernels; these small named tuples
(frozen, hashable and cheap to define at import) describe the other compiled kernels,
one primitive each, built by ``templates.py``. Like a ``KernelSpec`` they hold no sizes
(run-time arguments, so one kernel serves every shape of its ranks) and every input is
read through run-time byte strides. Static params that shape the loop nest (window
sizes, strides, padding, dilations; the scan axis and direction) are part of the spec:
they are few and LLVM unrolls and simplifies loops with constant bounds.

``spec_for(eqn)`` maps a graph equation to its spec, or None when the template does not
handle the equation's dtypes (the front end then keeps the numpy library call). Nothing
here imports xDSL.

>>> import numpy as np
>>> s = ScanSpec("cumsum", np.dtype("float32"), rank=2, axis=1, reverse=False)
>>> s.key()
'scan|cumsum|float32|r2|a1|rev0'
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

GATHER, SCATTER = "gather", ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
SCANS = ("cumsum", "cumprod", "cummax", "cummin")
WINDOWS = ("reduce_window_sum", "reduce_window_max", "reduce_window_min")
LU, LU_SOLVE = "lu", "lu_solve"
TEMPLATE_PRIMITIVES = frozenset((GATHER, *SCATTER, *SCANS, *WINDOWS, LU, LU_SOLVE))
"""Primitives computed by a template kernel (for the dtypes ``spec_for`` accepts)."""

# The LU templates serve small matrices, where LAPACK's per-call costs dominate; past
# these sizes its blocked (and threaded) routines win. Measured on one thread, template
# time / LAPACK time: lu 0.4 up to 256 x 256, 0.8 at 512, 1.4 at 1024; lu_solve with
# one right-hand side 0.2-0.5 up to 256, with n of them 0.4-0.5 up to n = 96 and
# 0.8-1.2 from 128.
LU_MAX_SIDE = 256
LU_SOLVE_MAX_COLUMNS = 96

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
# Gather and plain scatter move bits: every dtype the kernel builder knows.
_ANY = (*_INTS, *_FLOATS, "bool")
# Arithmetic combiners: narrow floats compute in float32, rounded after each step (as
# numpy's float16/bfloat16 ufuncs do); bool has no kernel arithmetic here.
_NUMERIC = (*_INTS, *_FLOATS)


def _name(dtype) -> str:
    return np.dtype(dtype).name


class GatherSpec(NamedTuple):
    """``out[b, r] = x[clamp(idx_0[b]), ..., clamp(idx_{k-1}[b]), r]``.

    The kernel sees the operand with its indexed axes moved to the front (a view) and
    the index tensors broadcast to the batch shape ``B`` (rank ``batch_rank``);
    ``rest_rank`` operand dims follow. The output is C-contiguous ``B + rest``.
    """

    dtype: np.dtype
    index_dtypes: tuple
    batch_rank: int
    rest_rank: int

    def key(self) -> str:
        idx = ",".join(_name(d) for d in self.index_dtypes)
        return f"gather|{_name(self.dtype)}|idx:{idx}|b{self.batch_rank}|r{self.rest_rank}"


class ScatterSpec(NamedTuple):
    """``out[idx[b], r] = combine(out[idx[b], r], upd[b, r])`` for each batch position
    ``b`` in C order, skipping any ``b`` with an index out of range (after the operand
    was copied to ``out``). ``kind`` is the primitive name."""

    kind: str
    dtype: np.dtype
    index_dtypes: tuple
    batch_rank: int
    rest_rank: int

    def key(self) -> str:
        idx = ",".join(_name(d) for d in self.index_dtypes)
        return (
            f"scatter|{self.kind}|{_name(self.dtype)}|idx:{idx}|b{self.batch_rank}"
            f"|r{self.rest_rank}"
        )


class ScanSpec(NamedTuple):
    """An inclusive scan (``kind`` in cumsum/cumprod/cummax/cummin) along ``axis`` of a
    rank-``rank`` array; ``reverse`` scans from the end."""

    kind: str
    dtype: np.dtype
    rank: int
    axis: int
    reverse: bool

    def key(self) -> str:
        return (
            f"scan|{self.kind}|{_name(self.dtype)}|r{self.rank}|a{self.axis}|rev{int(self.reverse)}"
        )


class WindowSpec(NamedTuple):
    """``reduce_window_{sum,max,min}`` (``kind`` is the primitive name) with lax's params
    over every dim; padding and base-dilation holes read the reduction's identity."""

    kind: str
    dtype: np.dtype
    window_dimensions: tuple
    window_strides: tuple
    padding: tuple
    base_dilation: tuple
    window_dilation: tuple

    @property
    def rank(self) -> int:
        return len(self.window_dimensions)

    def key(self) -> str:
        return (
            f"window|{self.kind}|{_name(self.dtype)}|w{self.window_dimensions}"
            f"|s{self.window_strides}|p{self.padding}|bd{self.base_dilation}"
            f"|wd{self.window_dilation}"
        )


class LuSpec(NamedTuple):
    """``lu`` of a stack of float32/float64 matrices: partial pivoting, LAPACK getrf's
    choices (the first largest ``|pivot|``; a zero column is not divided); outputs the
    packed factors, the 0-based pivots and the row permutation (int32)."""

    dtype: np.dtype

    def key(self) -> str:
        return f"lu|{_name(self.dtype)}"


class LuSolveSpec(NamedTuple):
    """``lu_solve`` with float32/float64 factors: ``vector`` for one right-hand side
    (``k == 1``), whose loops run along the matrices' rows instead of the columns of
    ``b``."""

    dtype: np.dtype
    transpose_a: bool
    vector: bool

    def key(self) -> str:
        return f"lu_solve|{_name(self.dtype)}|t{int(self.transpose_a)}|v{int(self.vector)}"


TemplateSpec = GatherSpec | ScatterSpec | ScanSpec | WindowSpec | LuSpec | LuSolveSpec


def _int_dtypes(avals) -> tuple | None:
    out = tuple(np.dtype(a.dtype) for a in avals)
    return out if all(_name(d) in _INTS for d in out) else None


def spec_for(prim: str, in_avals, params: dict):
    """The template spec computing ``prim`` on operands of ``in_avals`` (objects with
    ``shape`` and ``dtype``), or None when no template handles it.

    >>> from types import SimpleNamespace as A
    >>> f32, i64 = np.dtype("float32"), np.dtype("int64")
    >>> spec_for("gather", [A(shape=(4, 3), dtype=f32), A(shape=(5,), dtype=i64)],
    ...          {"axes": (0,)})
    GatherSpec(dtype=dtype('float32'), index_dtypes=(dtype('int64'),), batch_rank=1, rest_rank=1)
    >>> spec_for("cumsum", [A(shape=(3,), dtype=np.dtype("bool"))], {"axis": 0, "reverse": False})
    """
    x = in_avals[0]
    dtype = np.dtype(x.dtype)
    name = _name(dtype)
    if prim == GATHER or prim in SCATTER:
        axes = tuple(params["axes"])
        if not axes:
            return None  # a plain copy / elementwise update: numpy does it
        k = len(axes)
        idx = in_avals[1 : 1 + k]
        index_dtypes = _int_dtypes(idx)
        if index_dtypes is None:
            return None
        batch = np.broadcast_shapes(*(tuple(a.shape) for a in idx))
        rest = len(x.shape) - k
        if prim == GATHER:
            return GatherSpec(dtype, index_dtypes, len(batch), rest) if name in _ANY else None
        ok = _ANY if prim == "scatter" else _NUMERIC
        return ScatterSpec(prim, dtype, index_dtypes, len(batch), rest) if name in ok else None
    if prim in SCANS:
        if name not in _NUMERIC:
            return None
        return ScanSpec(prim, dtype, len(x.shape), int(params["axis"]), bool(params["reverse"]))
    if prim in (LU, LU_SOLVE):
        if name not in ("float32", "float64") or max(x.shape[-2:]) > LU_MAX_SIDE:
            return None
        if prim == LU:
            return LuSpec(dtype)
        b = in_avals[2]
        if np.dtype(b.dtype) != dtype or b.shape[-1] > LU_SOLVE_MAX_COLUMNS:
            return None
        return LuSolveSpec(dtype, bool(params["transpose_a"]), b.shape[-1] == 1)
    if prim in WINDOWS:
        if name not in _NUMERIC:
            return None
        return WindowSpec(
            prim, dtype,
            tuple(params["window_dimensions"]), tuple(params["window_strides"]),
            tuple(tuple(p) for p in params["padding"]), tuple(params["base_dilation"]),
            tuple(params["window_dilation"]),
        )  # fmt: skip
    return None
