"""KernelBuilder and the emitter: IR shapes, the ops xDSL lacks, flags, address spaces."""

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

from fntorch.devices import cpu_llvm as cpu
from fntorch.lowering.builder import (
    PTR,
    REDUCE_FLAGS,
    KernelBuilder,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from fntorch.lowering.emit import emit_module
from tests.lowering.engine import Loaded


def _compile(b):
    b.module.verify()
    return Loaded(cpu.compile_object(str(emit_module(b.module))))


@pytest.fixture(scope="module")
def small_lib():
    b = KernelBuilder()
    # f64 sum(x) over n, with the carried accumulator as a block argument.
    x, n = b.function("total", [PTR, i64], ret=f64)
    (s,) = b.loop(
        b.const(0, i64),
        n,
        [b.const(0.0, f64)],
        lambda i, c: [b.fadd(c[0], b.load(b.gep(x, i, f64), f64), REDUCE_FLAGS)],
    )
    b.ret(s)
    # The casts xDSL 0.75 lacks.
    (v,) = b.function("casts", [f64], ret=f64)
    a = b.fptosi(v, i32)  # toward zero
    u = b.uitofp(b.fptoui(b.fabs(v), i32), f64)
    b.ret(b.fadd(b.sitofp(a, f64), b.fmul(u, b.const(1000.0, f64))))
    # select/compare/i1 constants and an intrinsic with fast-math flags.
    p, q = b.function("pick", [f32, f32], ret=f32)
    m = b.maxnum(p, q, flags=REDUCE_FLAGS)
    c = b.and_(b.fcmp("ogt", p, q), b.true())
    b.ret(b.select(c, m, b.const(-1.0, f32)))
    return b, _compile(b)


def test_loop_with_carried_values_runs(small_lib):
    _, obj = small_lib
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int64)(obj.address("total"))
    x = np.arange(1000, dtype=np.float64)
    assert f(x.ctypes.data, x.size) == x.sum()
    assert f(x.ctypes.data, 0) == 0.0


def test_own_cast_ops(small_lib):
    b, obj = small_lib
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(obj.address("casts"))
    assert f(-2.7) == -2 + 2000.0
    assert f(3.9) == 3 + 3000.0
    text = str(b.module)
    for name in ("llvm.fptosi", "llvm.fptoui", "llvm.uitofp"):
        assert name in text


def test_flags_and_intrinsics_reach_llvm(small_lib):
    b, obj = small_lib
    ir = str(emit_module(b.module))
    fadd = next(line for line in ir.splitlines() if "fadd" in line)
    assert "reassoc" in fadd and " fast " not in ir  # never nnan/ninf
    call = next(line for line in ir.splitlines() if "call" in line and "maxnum" in line)
    assert "reassoc" in call and "nsz" in call  # xDSL's converter raises on these flags
    assert "noalias" not in ir  # kernels may run in place
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(obj.address("pick"))
    assert f(2.0, 1.0) == 2.0 and f(1.0, 2.0) == -1.0


def test_constants_are_cached_in_the_entry_block():
    b = KernelBuilder()
    (x,) = b.function("f", [f32], ret=f32)
    c1, c2 = b.const(2.0, f32), b.const(2.0, f32)
    assert c1 is c2
    assert b.const(-1, i1) is b.true()
    b.ret(b.fmul(x, c1))
    entry = b.module.body.block.first_op.body.blocks[0]
    assert entry.first_op.name == "llvm.mlir.constant"
    b.module.verify()


def test_gep_keeps_the_address_space():
    from xdsl.dialects import llvm as xllvm
    from xdsl.dialects.builtin import IntAttr

    b = KernelBuilder()
    gptr = xllvm.LLVMPointerType(IntAttr(1))
    p, i = b.function("g", [gptr, i64], ret=f32)
    b.ret(b.load(b.gep(p, i, f32), f32))
    b.module.verify()
    ir = str(emit_module(b.module, triple="nvptx64-nvidia-cuda"))
    assert "ptr addrspace(1)" in ir and "getelementptr inbounds float, ptr addrspace(1)" in ir
    llvm.parse_assembly(ir).verify()  # xDSL's converter produces an invalid cast here


def test_unknown_module_op_is_rejected():
    from xdsl.dialects import llvm as xllvm

    b = KernelBuilder()
    b.module.body.block.add_op(xllvm.GlobalOp(f32, "g", "internal"))
    with pytest.raises(NotImplementedError, match="unexpected module-level op"):
        emit_module(b.module)
