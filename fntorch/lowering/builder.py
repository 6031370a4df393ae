"""``KernelBuilder``: writes kernels directly in xDSL's ``llvm`` dialect.

No func/arith/scf/memref level and no xDSL rewrite passes: those cost 5x in compile
latency and xDSL's ``ptradd`` lowering blocks vectorization (LOWERING-NOTES §1.2). The
builder makes functions, blocks, loops whose carried values are block arguments, typed
GEP addressing, constants (cached per function, hoisted to the entry block), int/float
ops with per-op fast-math flags, compares, selects, casts and ``llvm.call_intrinsic``.

Importing this module imports xDSL (~0.4 s): only ``kernels.compile_kernel`` does, on the
first compile, so ``import fntorch`` stays light.

Values are plain xDSL ``SSAValue``s; their LLVM type is ``value.type``. Narrow floats
(float16, bfloat16) live in registers as float32 values (see ``kernels.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import irdl_op_definition

PTR = llvm.LLVMPointerType()

# Flags for reductions' accumulating ops: reassoc lets LLVM vectorize the loop-carried
# sum; nnan/ninf ("fast") are excluded because they turn overflowing exp into NaN.
REDUCE_FLAGS = (
    FastMathFlag.REASSOC,
    FastMathFlag.ALLOW_CONTRACT,
    FastMathFlag.NO_SIGNED_ZEROS,
    FastMathFlag.ALLOW_RECIP,
    FastMathFlag.APPROX_FUNC,
)

# float32 tanh's P/Q (``mathlib.tanh``): ``afn`` makes it NVPTX's ``div.approx.f32`` (a
# reciprocal and a product, within 2 ulp for Q's range there) instead of the correctly
# rounded division's dozen instructions and slow path. The rational is an approximation
# itself: the GPU's tanh stays within 3.2e-7 relative (2.7e-7 before; H100, 6 million
# points). x86 ignores ``afn`` on ``fdiv``, so the CPU's kernels are unchanged, bit for
# bit. (W2's GELU kernel on an H100: 740.7 -> 736.6 us, memory-bound.)
APPROX_QUOTIENT = (FastMathFlag.APPROX_FUNC,)


# ---------------------------------------------------------------- ops xDSL 0.75 lacks
@irdl_op_definition
class FPToSIOp(llvm.GenericCastOp):
    """``llvm.fptosi`` (missing from xDSL 0.75's llvm dialect)."""

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(llvm.GenericCastOp):
    """``llvm.fptoui`` (missing from xDSL 0.75's llvm dialect)."""

    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(llvm.GenericCastOp):
    """``llvm.uitofp`` (missing from xDSL 0.75's llvm dialect)."""

    name = "llvm.uitofp"


_ICMP = {p.value: i for i, p in enumerate(llvm.ICmpPredicateFlag)}

# numpy dtype -> (register type, memory type); narrow floats compute in float32; a
# complex value is a pair of its parts' floats in registers (``mathlib_complex.Cx``), an
# interleaved (re, im) array of two in memory.
_DTYPE_TYPES = {
    "bool": (i1, i8),
    "int8": (i8, i8),
    "uint8": (i8, i8),
    "int16": (i16, i16),
    "uint16": (i16, i16),
    "int32": (i32, i32),
    "uint32": (i32, i32),
    "int64": (i64, i64),
    "uint64": (i64, i64),
    "float16": (f32, f16),
    "bfloat16": (f32, i16),
    "float32": (f32, f32),
    "float64": (f64, f64),
    "complex64": (f32, llvm.LLVMArrayType(2, f32)),
    "complex128": (f64, llvm.LLVMArrayType(2, f64)),
}


def reg_type(dtype):
    """The LLVM type a value of numpy ``dtype`` has in registers (float16 -> f32; a
    complex64 value is two f32)."""
    return _DTYPE_TYPES[np.dtype(dtype).name][0]


def mem_type(dtype):
    """The LLVM type of one element of ``dtype`` in memory (bool -> i8, bfloat16 -> i16,
    complex64 -> [2 x f32])."""
    return _DTYPE_TYPES[np.dtype(dtype).name][1]


def is_float_type(t) -> bool:
    return t in (f16, f32, f64)


def width(t) -> int:
    """Bit width of an integer or float type."""
    if isinstance(t, IntegerType):
        return t.width.data
    return {f16: 16, f32: 32, f64: 64}[t]


def int_type(bits: int):
    return IntegerType(bits)


def _fm(flags):
    if not flags:
        return llvm.FastMathAttr(None)
    return llvm.FastMathAttr(list(flags))


class KernelBuilder:
    """Builds one xDSL ``builtin.module`` of ``llvm.func``s, op by op.

    >>> b = KernelBuilder()
    >>> x, = b.function("twice", [f32], ret=f32)
    >>> b.ret(b.fmul(x, b.const(2.0, f32)))
    >>> b.module.verify()
    >>> "llvm.fmul" in str(b.module)
    True
    """

    def __init__(self):
        self.module = ModuleOp([])
        self.block: Block | None = None
        self._region: Region | None = None
        self._entry: Block | None = None
        self._consts: dict = {}

    # ------------------------------------------------------------ functions and blocks
    def function(self, name: str, arg_types: Sequence, ret=None) -> list[SSAValue]:
        """Starts an exported function; returns its arguments (insertion at its entry)."""
        ftype = llvm.LLVMFunctionType(list(arg_types), ret)
        self._entry = Block(arg_types=list(arg_types))
        self._region = Region([self._entry])
        fn = llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"), body=self._region)
        self.module.body.block.add_op(fn)
        self.block = self._entry
        self._consts = {}
        return list(self._entry.args)

    def new_block(self, arg_types: Sequence = ()) -> Block:
        """A new block of the current function (not the insertion point yet)."""
        blk = Block(arg_types=list(arg_types))
        self._region.add_block(blk)
        return blk

    def set_block(self, block: Block) -> None:
        self.block = block

    def _add(self, op):
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def ret(self, value: SSAValue | None = None) -> None:
        self._add(llvm.ReturnOp(value))

    def br(self, dest: Block, *args: SSAValue) -> None:
        self._add(llvm.BrOp(dest, *args))

    def cond_br(self, cond, then: Block, then_args, other: Block, other_args) -> None:
        self._add(llvm.CondBrOp(cond, then, list(then_args), other, list(other_args)))

    def loop(
        self,
        lo: SSAValue,
        hi: SSAValue,
        carried: Sequence[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], Sequence[SSAValue]],
    ) -> list[SSAValue]:
        """``for i in [lo, hi): carried = body(i, carried)``; returns the final carried.

        The loop is a header block ``(i, *carried)`` testing ``i < hi``, a body block and
        an exit block whose arguments are the carried values (phis in LLVM).
        """
        types = [v.type for v in carried]
        header = self.new_block([i64, *types])
        loop_body = self.new_block()
        exit_ = self.new_block(types)
        self.br(header, lo, *carried)
        self.set_block(header)
        i, *cur = header.args
        self.cond_br(self.icmp("slt", i, hi), loop_body, [], exit_, cur)
        self.set_block(loop_body)
        new = list(body(i, list(cur)))
        self.br(header, self.add(i, self.const(1, i64)), *new)
        self.set_block(exit_)
        return list(exit_.args)

    # -------------------------------------------------------------------- constants
    def const(self, value, t) -> SSAValue:
        """A constant of type ``t`` (cached per function, placed in the entry block)."""
        if is_float_type(t):
            v = float(value)
            if t == f32:
                v = float(np.float32(v))
            key = (struct.pack("<d", v), t)
            attr = FloatAttr(v, t)
        else:
            bits = width(t)
            v = int(value) & ((1 << bits) - 1)
            if bits > 1 and v >= 1 << (bits - 1):
                v -= 1 << bits  # signless: store the two's complement value
            if bits == 1:
                v = -v  # i1 true is -1 as a signed 1-bit value
            key = (v, t)
            attr = IntegerAttr(v, t)
        hit = self._consts.get(key)
        if hit is not None:
            return hit
        op = llvm.ConstantOp(attr, t)
        first = self._entry.first_op
        if first is None:
            self._entry.add_op(op)
        else:
            self._entry.insert_op_before(op, first)
        self._consts[key] = op.result
        return op.result

    def const_like(self, value, like: SSAValue) -> SSAValue:
        return self.const(value, like.type)

    def true(self) -> SSAValue:
        return self.const(1, i1)

    def false(self) -> SSAValue:
        return self.const(0, i1)

    # --------------------------------------------------------------- integer ops
    def add(self, x, y):
        return self._add(llvm.AddOp(x, y))

    def sub(self, x, y):
        return self._add(llvm.SubOp(x, y))

    def mul(self, x, y):
        return self._add(llvm.MulOp(x, y))

    def sdiv(self, x, y):
        return self._add(llvm.SDivOp(x, y))

    def udiv(self, x, y):
        return self._add(llvm.UDivOp(x, y))

    def srem(self, x, y):
        return self._add(llvm.SRemOp(x, y))

    def urem(self, x, y):
        return self._add(llvm.URemOp(x, y))

    def and_(self, x, y):
        return self._add(llvm.AndOp(x, y))

    def or_(self, x, y):
        return self._add(llvm.OrOp(x, y))

    def xor(self, x, y):
        return self._add(llvm.XOrOp(x, y))

    def shl(self, x, y):
        return self._add(llvm.ShlOp(x, y))

    def lshr(self, x, y):
        return self._add(llvm.LShrOp(x, y))

    def ashr(self, x, y):
        return self._add(llvm.AShrOp(x, y))

    def icmp(self, pred: str, x, y):
        """Integer compare; ``pred`` one of eq ne slt sle sgt sge ult ule ugt uge."""
        return self._add(llvm.ICmpOp(x, y, IntegerAttr(_ICMP[pred], i64)))

    # ----------------------------------------------------------------- float ops
    def fadd(self, x, y, flags=()):
        return self._add(llvm.FAddOp(x, y, _fm(flags)))

    def fsub(self, x, y, flags=()):
        return self._add(llvm.FSubOp(x, y, _fm(flags)))

    def fmul(self, x, y, flags=()):
        return self._add(llvm.FMulOp(x, y, _fm(flags)))

    def fdiv(self, x, y, flags=()):
        return self._add(llvm.FDivOp(x, y, _fm(flags)))

    def frem(self, x, y):
        return self._add(llvm.FRemOp(x, y))

    def fneg(self, x):
        return self._add(llvm.FNegOp(x))

    def fcmp(self, pred: str, x, y):
        """Float compare; ``pred`` an LLVM predicate (oeq, olt, une, uno, ord, ...)."""
        return self._add(llvm.FCmpOp(x, y, pred))

    def select(self, cond, x, y):
        return self._add(llvm.SelectOp(cond, x, y))

    # --------------------------------------------------------------------- casts
    def trunc(self, x, t):
        return self._add(llvm.TruncOp(x, t))

    def zext(self, x, t):
        return self._add(llvm.ZExtOp(x, t))

    def sext(self, x, t):
        return self._add(llvm.SExtOp(x, t))

    def sitofp(self, x, t):
        return self._add(llvm.SIToFPOp(x, t))

    def uitofp(self, x, t):
        return self._add(UIToFPOp(x, t))

    def fptosi(self, x, t):
        return self._add(FPToSIOp(x, t))

    def fptoui(self, x, t):
        return self._add(FPToUIOp(x, t))

    def fpext(self, x, t):
        return self._add(llvm.FPExtOp(x, t))

    def fptrunc(self, x, t):
        return self._add(llvm.FPTruncOp(x, t))

    def bitcast(self, x, t):
        return self._add(llvm.BitcastOp(x, t))

    def int_resize(self, x, t, signed: bool):
        """Truncates or extends integer ``x`` to type ``t``."""
        a, b = width(x.type), width(t)
        if a == b:
            return x
        if a > b:
            return self.trunc(x, t)
        return self.sext(x, t) if signed else self.zext(x, t)

    # ---------------------------------------------------------------- intrinsics
    def intrinsic(self, name: str, args: Sequence[SSAValue], ret, flags=()):
        """``llvm.call_intrinsic`` of the fully mangled ``name`` (e.g. llvm.fabs.f32).

        Only intrinsics that every target selects inline belong here: libm ones
        (llvm.exp/sin/tanh...) become scalar calls on CPU and abort NVPTX codegen.
        """
        op = llvm.CallIntrinsicOp(name, list(args), [ret])
        if flags:
            op.properties["fastmathFlags"] = _fm(flags)
        return self._add(op)

    def _float_intrinsic(self, base, *args, flags=()):
        t = args[0].type
        return self.intrinsic(f"llvm.{base}.{_SUFFIX[t]}", args, t, flags)

    def fabs(self, x):
        return self._float_intrinsic("fabs", x)

    def sqrt(self, x):
        return self._float_intrinsic("sqrt", x)

    def floor(self, x):
        return self._float_intrinsic("floor", x)

    def ceil(self, x):
        return self._float_intrinsic("ceil", x)

    def rint(self, x):
        """Round to nearest integer, ties to even (the default rounding mode)."""
        return self._float_intrinsic("rint", x)

    def trunc_f(self, x):
        """Round toward zero, as a float."""
        return self._float_intrinsic("trunc", x)

    def maxnum(self, x, y, flags=()):
        return self._float_intrinsic("maxnum", x, y, flags=flags)

    def minnum(self, x, y, flags=()):
        return self._float_intrinsic("minnum", x, y, flags=flags)

    def maximum(self, x, y):
        """IEEE-754 2019 maximum: NaN-propagating (unlike maxnum); vectorizes as a
        reduction (``llvm.vector.reduce.fmaximum``), where maxnum plus a NaN flag does not."""
        return self._float_intrinsic("maximum", x, y)

    def minimum(self, x, y):
        """NaN-propagating minimum (see ``maximum``)."""
        return self._float_intrinsic("minimum", x, y)

    def copysign(self, x, y):
        return self._float_intrinsic("copysign", x, y)

    def fma(self, x, y, z):
        """``x * y + z`` with one rounding (exact products for error-free transforms)."""
        return self._float_intrinsic("fma", x, y, z)

    def fmuladd(self, x, y, z):
        """``x * y + z``, fused where the target has FMA (Horner steps)."""
        return self._float_intrinsic("fmuladd", x, y, z)

    # ------------------------------------------------------------------- memory
    def gep(self, ptr, index, elem_type):
        """``&ptr[index]`` in elements of ``elem_type`` (a typed, inbounds GEP)."""
        return self._add(
            llvm.GEPOp(ptr, [llvm.GEP_USE_SSA_VAL], elem_type, ssa_indices=[index], inbounds=True)
        )

    def gep_const(self, ptr, offset: int, elem_type=i8):
        """``&ptr[offset]`` for a constant offset."""
        return self._add(llvm.GEPOp(ptr, [offset], elem_type, inbounds=True))

    def load(self, ptr, t):
        return self._add(llvm.LoadOp(ptr, t))

    def store(self, value, ptr) -> None:
        self._add(llvm.StoreOp(value, ptr))


_SUFFIX = {f16: "f16", f32: "f32", f64: "f64"}

__all__ = [
    "PTR",
    "APPROX_QUOTIENT",
    "REDUCE_FLAGS",
    "FPToSIOp",
    "FPToUIOp",
    "KernelBuilder",
    "UIToFPOp",
    "builtin",
    "f16",
    "f32",
    "f64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "int_type",
    "is_float_type",
    "mem_type",
    "reg_type",
    "width",
]
