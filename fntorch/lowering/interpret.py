"""A numpy interpreter of ``KernelSpec``: the reference semantics of a spec.

It computes what a compiled kernel must compute, with the eager CPU impls, so it is the
oracle for the kernel compiler's tests and a debugging fallback for ``jit``
(``ft.config.update("kernel_backend", "interpret")``).

Semantics (see ``spec.py``): every input is an array shaped as the iteration space
``S`` (strided and broadcast views allowed). In a row kernel (``reduce_rank == k``) a
reduction reduces its operand over the last ``k`` dims; its result, and every op whose
arguments are only such per-row values and literals, is a *per-row* value, broadcast
along the row where a full-shape op uses it. An op with any ``("in", i)`` or
``("index", d)`` argument, or any full-shape ``("op", j)`` argument, is full-shape.
Per-row outputs have shape ``S[:rank - k]``; full outputs shape ``S``; both are written
into the C-contiguous arrays passed as ``outputs``.

>>> import numpy as np
>>> from fntorch.lowering.spec import KernelSpec, KOp
>>> f32 = np.dtype("float32")
>>> spec = KernelSpec(rank=1, reduce_rank=0, input_dtypes=(f32,),
...     ops=(KOp("exp", (("in", 0),), (), f32),), outputs=(("op", 0),), output_is_row=(False,))
>>> out = np.empty(2, f32)
>>> run_spec(spec, [np.zeros(2, f32)], [out]); out.tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from ..fx.core import primitives as _PRIMS
from ..fx.device import host_device
from .spec import KernelSpec
from .table import lowering_table


def _iteration_shape(spec: KernelSpec, inputs, outputs) -> tuple:
    if inputs:
        return tuple(inputs[0].shape)
    for o, row in zip(outputs, spec.output_is_row):
        if not row:
            return tuple(o.shape)
    raise ValueError("run_spec: a kernel without inputs or full-shape outputs has no sizes")


def run_spec(spec: KernelSpec, inputs, outputs) -> None:
    """Computes ``spec`` on numpy ``inputs`` (each shaped as the iteration space) and
    writes its ``outputs`` (C-contiguous arrays)."""
    shape = _iteration_shape(spec, inputs, outputs)
    k = spec.reduce_rank
    rank = spec.rank
    if len(shape) != rank:
        raise ValueError(f"run_spec: the spec has rank {rank}, the inputs shape {shape}")
    rows = shape[: rank - k]
    keep = rows + (1,) * k  # per-row values keep the reduced dims as size 1
    red_axes = tuple(range(rank - k, rank))
    vals: list = []

    def read(ref):
        kind, x = ref
        if kind == "in":
            return inputs[x]
        if kind == "op":
            return vals[x]
        if kind == "lit":
            return x
        if kind == "index":
            n = shape[x]
            return np.arange(n, dtype=np.int64).reshape((1,) * x + (n,) + (1,) * (rank - x - 1))
        raise ValueError(f"run_spec: unknown reference {ref!r}")

    impls = host_device().impls
    with np.errstate(all="ignore"):
        for op in spec.ops:
            prim = _PRIMS[op.prim]
            args = [read(a) for a in op.args]
            params = dict(op.params)
            if lowering_table[prim].kind == "reduction":
                x = np.broadcast_to(args[0], shape)
                if op.prim in ("argmax", "argmin"):
                    params["axes"] = (rank - 1,)
                else:
                    params["axes"] = red_axes
                r = np.asarray(impls[prim](x, **params)).reshape(keep)
            else:
                r = np.asarray(impls[prim](*args, **params))
            if r.dtype != op.dtype:
                r = r.astype(op.dtype)
            vals.append(r)
        for out, ref, is_row in zip(outputs, spec.outputs, spec.output_is_row):
            v = read(ref)
            if is_row:
                v = np.broadcast_to(v, keep)
                v = v[(Ellipsis,) + (0,) * k] if k else v
            out[...] = v


class InterpretedKernel:
    """A ``Kernel`` stand-in: ``kernel(inputs, outputs)`` runs the spec with numpy."""

    __slots__ = ("spec",)

    def __init__(self, spec: KernelSpec):
        self.spec = spec

    def __call__(self, inputs, outputs) -> None:
        run_spec(self.spec, inputs, outputs)

    def as_text(self) -> str:
        """A readable listing of the spec (the compiled kernels print xDSL IR instead)."""
        return format_spec(self.spec)


def compile_kernel(spec: KernelSpec, target=None) -> InterpretedKernel:
    """The interpreter's ``compile_kernel``: no compilation, the spec runs in numpy on
    any target whose buffers are numpy arrays."""
    return InterpretedKernel(spec)


def _fmt_ref(ref) -> str:
    kind, x = ref
    if kind == "in":
        return f"in{x}"
    if kind == "op":
        return f"%{x}"
    if kind == "lit":
        return repr(x.item() if hasattr(x, "item") else x)
    return f"index{x}"


def format_spec(spec: KernelSpec) -> str:
    """The spec as text, one op per line.

    >>> from fntorch.lowering.spec import KernelSpec, KOp
    >>> f32 = np.dtype("float32")
    >>> print(format_spec(KernelSpec(1, 0, (f32,), (KOp("neg", (("in", 0),), (), f32),),
    ...                              (("op", 0),), (False,))))
    kernel rank=1 reduce_rank=0 (in0: float32) {
      %0: float32 = neg in0
      out0 = %0
    }
    """
    ins = ", ".join(f"in{i}: {d}" for i, d in enumerate(spec.input_dtypes))
    lines = [f"kernel rank={spec.rank} reduce_rank={spec.reduce_rank} ({ins}) {{"]
    for j, op in enumerate(spec.ops):
        params = " ".join(f"{k}={v}" for k, v in op.params)
        params = f"[{params}]" if params else ""
        args = " ".join(_fmt_ref(a) for a in op.args)
        lines.append(f"  %{j}: {op.dtype} = {op.prim}{params} {args}")
    for i, (ref, row) in enumerate(zip(spec.outputs, spec.output_is_row)):
        lines.append(f"  out{i}{' (per row)' if row else ''} = {_fmt_ref(ref)}")
    lines.append("}")
    return "\n".join(lines)
