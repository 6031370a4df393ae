"""The emitter: a ``KernelBuilder`` module (xDSL ``llvm`` dialect) -> llvmlite IR.

Module and function level are done here (xDSL's ``convert_module`` drops linkage and
calling conventions, LOWERING-NOTES §1.3); each op goes through xDSL's
``convert_op`` except the cases it gets wrong or lacks:

- ``llvm.getelementptr``: xDSL bitcasts the base to an address-space-0 typed pointer,
  which LLVM rejects for ``ptr addrspace(N)``; here the GEP keeps the base's type.
- ``llvm.fptosi`` / ``fptoui`` / ``uitofp``: ops xDSL 0.75 lacks (``builder.py``).
- ``llvm.call_intrinsic``: xDSL raises on fast-math flags; here they are passed on.
- ``llvm.fcmp``: xDSL drops its fast-math flags (kept here; the builder sets none).
- ``llvm.mlir.constant`` of ``i1``: printed as true/false.

Functions are emitted without ``noalias`` on their pointer arguments: a kernel may be
called in place (an output that is also an input), so LLVM must keep its run-time
overlap checks (they cost nothing measurable, LOWERING-NOTES §2.3).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp

from .builder import FPToSIOp, FPToUIOp, UIToFPOp

_OWN_CASTS = {FPToSIOp: "fptosi", FPToUIOp: "fptoui", UIToFPOp: "uitofp"}


def _flags(op) -> list[str]:
    fm = op.properties.get("fastmathFlags")
    if fm is None:
        return []
    return [f.value for f in fm.data]


def _gep(op, builder, vals):
    idx = iter(op.ssa_indices)
    indices = [
        vals[next(idx)] if i == llvm.GEP_USE_SSA_VAL else ir.Constant(ir.IntType(32), i)
        for i in op.rawConstantIndices.iter_values()
    ]
    vals[op.results[0]] = builder.gep(
        vals[op.ptr],
        indices,
        inbounds=op.inbounds is not None,
        source_etype=convert_type(op.elem_type),
    )


def _call_intrinsic(op, builder, vals):
    args = [vals[a] for a in op.args]
    ret = convert_type(op.ress.type) if op.ress is not None else ir.VoidType()
    name = op.intrin.data
    module = builder.module
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, [a.type for a in args]), name=name)
    res = builder.call(fn, args, fastmath=_flags(op))
    if op.ress is not None:
        vals[op.ress] = res


def _fcmp(op, builder, vals):
    pred = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
    ordered = pred[0] == "o"
    cmp = {"eq": "==", "gt": ">", "ge": ">=", "lt": "<", "le": "<=", "ne": "!="}.get(pred[1:], pred)
    fn = builder.fcmp_ordered if ordered else builder.fcmp_unordered
    vals[op.res] = fn(cmp, vals[op.lhs], vals[op.rhs], flags=_flags(op))


def _constant(op, builder, vals):
    t = op.result.type
    if isinstance(t, IntegerType) and t.width.data == 1:
        assert isinstance(op.value, IntegerAttr)
        vals[op.result] = ir.Constant(ir.IntType(1), 1 if op.value.value.data else 0)
        return
    convert_op(op, builder, vals)


def _emit_op(op, builder, vals, blocks):
    kind = type(op)
    if kind is llvm.GEPOp:
        _gep(op, builder, vals)
    elif kind in _OWN_CASTS:
        instr = ir.CastInstr(
            builder.block, _OWN_CASTS[kind], vals[op.operands[0]], convert_type(op.results[0].type)
        )
        builder._insert(instr)
        vals[op.results[0]] = instr
    elif kind is llvm.CallIntrinsicOp:
        _call_intrinsic(op, builder, vals)
    elif kind is llvm.FCmpOp:
        _fcmp(op, builder, vals)
    elif kind is llvm.ConstantOp:
        _constant(op, builder, vals)
    else:
        convert_op(op, builder, vals, blocks)


def _emit_func(fn_op: llvm.FuncOp, module: ir.Module) -> None:
    ftype = fn_op.function_type
    fnty = ir.FunctionType(convert_type(ftype.output), [convert_type(t) for t in ftype.inputs.data])
    fn = ir.Function(module, fnty, name=fn_op.sym_name.data)
    fn.linkage = fn_op.linkage.linkage.data
    if fn.linkage == "external":
        fn.linkage = ""  # llvmlite spells external linkage as no keyword
    fn.attributes.add("nounwind")
    blocks, vals = {}, {}
    for i, blk in enumerate(fn_op.body.blocks):
        blocks[blk] = fn.append_basic_block(f"b{i}")
    for i, blk in enumerate(fn_op.body.blocks):
        if i == 0:
            for a, la in zip(blk.args, fn.args):
                vals[a] = la
        elif blk.args:
            pb = ir.IRBuilder(blocks[blk])
            for a in blk.args:
                vals[a] = pb.phi(convert_type(a.type))
    for blk in fn_op.body.blocks:
        builder = ir.IRBuilder(blocks[blk])
        if blocks[blk].instructions:
            builder.position_after(blocks[blk].instructions[-1])
        for op in blk.ops:
            _emit_op(op, builder, vals, blocks)


def emit_module(module: ModuleOp, triple: str = "", data_layout: str = "") -> ir.Module:
    """An llvmlite module of the builder's ``module`` (only ``llvm.func`` ops).

    >>> from fntorch.lowering.builder import KernelBuilder, f32
    >>> b = KernelBuilder()
    >>> x, = b.function("neg", [f32], ret=f32)
    >>> b.ret(b.fneg(x))
    >>> "fneg float" in str(emit_module(b.module))
    True
    """
    out = ir.Module()
    if triple:
        out.triple = triple
    if data_layout:
        out.data_layout = data_layout
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp):
            raise NotImplementedError(f"emit_module: unexpected module-level op {op.name}")
        _emit_func(op, out)
    return out
