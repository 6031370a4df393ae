"""Compiled kernels against the numpy interpreter of their spec (``interpret.run_spec``).

To keep the suite fast, each dtype's elementwise primitives are fused into *one*
many-output kernel (one LLVM compile per dtype), then every output is compared.
"""

import os
import subprocess
import sys
import time

import ml_dtypes
import numpy as np
import pytest

from fntorch.devices import cpu_threads
from fntorch.lowering import kernels as K
from fntorch.lowering.interpret import run_spec
from fntorch.lowering.rules import KERNEL_PRIMITIVES
from fntorch.lowering.spec import KernelSpec, KOp, stash_plan

F16, BF16 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I8, I32, I64 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)
U8, U32, BOOL = np.dtype(np.uint8), np.dtype(np.uint32), np.dtype(np.bool_)

FLOAT_UNARY = [
    "neg",
    "sign",
    "floor",
    "ceil",
    "round",
    "is_finite",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "tanh",
    "logistic",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "abs",
    "erf",
    "erf_inv",
    "square",
    "copy",
    "stop_gradient",
]
FLOAT_BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "pow",
    "atan2",
    "max",
    "min",
    "nextafter",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
INT_UNARY = ["neg", "sign", "abs", "not", "square", "copy"]
INT_BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "pow",
    "max",
    "min",
    "and",
    "or",
    "xor",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
BOOL_UNARY = ["not", "copy"]
BOOL_BINARY = ["and", "or", "xor", "max", "min", "eq", "ne", "lt", "le", "gt", "ge"]
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "is_finite"}


def _out_dtype(prim, dtype):
    return BOOL if prim in COMPARE else dtype


def big_spec(dtype):
    """One elementwise kernel of every primitive that accepts ``dtype``."""
    x, y, z = ("in", 0), ("in", 1), ("in", 2)
    ops, names = [], []

    def add(prim, args, params=(), out=None):
        ops.append(KOp(prim, args, params, out or _out_dtype(prim, dtype)))
        names.append(prim + (str(dict(params)) if params else ""))

    if dtype.kind == "f" or dtype == BF16:
        unary, binary = FLOAT_UNARY, FLOAT_BINARY
    elif dtype == BOOL:
        unary, binary = BOOL_UNARY, BOOL_BINARY
    else:
        unary, binary = INT_UNARY, INT_BINARY
    for p in unary:
        add(p, (x,))
    for p in binary:
        add(p, (x, y))
    if dtype != BOOL:
        add("integer_pow", (x,), (("y", 3),))
        add("clamp", (z, x, y))
        add("add", (x, ("lit", np.asarray(2, dtype)[()])))
        if dtype.kind == "f" or dtype == BF16:
            add("integer_pow", (x,), (("y", -2),))
    cmp = len(ops)
    add("lt", (x, y))
    add("select_n", (("op", cmp), x, y), out=dtype)
    targets = [F32, F64, I32, U8, BOOL, F16, BF16, I8]
    for t in targets:
        if t != dtype:
            add("convert_element_type", (x,), (("new_dtype", t),), out=t)
    spec = KernelSpec(
        1,
        0,
        (dtype, dtype, dtype),
        tuple(ops),
        tuple(("op", j) for j in range(len(ops))),
        (False,) * len(ops),
    )
    return spec, names


def sample(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -40), min(info.max, 40), n // 2)
        v[: n // 2] = small.astype(dtype)
        v[:8] = np.array([0, 1, 2, -1, info.min, info.max, 3, 0]).astype(dtype)
        return v
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-3, 30.0]
    v = np.concatenate(
        [special, rng.standard_normal(n // 2) * 3, rng.uniform(-1, 1, n - n // 2 - len(special))]
    )
    return v.astype(dtype)


TOL = {F64: 5e-14, F32: 4e-6, F16: 2e-3, BF16: 1.6e-2}


def assert_close(got, want, name, dtype):
    assert got.dtype == want.dtype, name
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    same_nan = np.isnan(g) == np.isnan(w)
    assert same_nan.all(), f"{name}: NaN mismatch at {np.nonzero(~same_nan)[0][:5]}"
    ok = np.isnan(w) | (g == w)
    tol = TOL.get(got.dtype, TOL.get(dtype, 4e-6))
    if name.startswith(("pow", "sinh", "cosh")) and got.dtype == F64:
        tol = 1e-12  # exp(y log x) carries |y log x| times log's error
    fin = np.isfinite(w) & ~ok
    err = np.abs(g[fin] - w[fin]) / np.maximum(np.abs(w[fin]), 1e-30 if got.dtype == F64 else 1e-6)
    assert (np.isfinite(g) == np.isfinite(w))[~np.isnan(w)].all(), f"{name}: inf mismatch"
    assert err.size == 0 or err.max() <= tol, (
        f"{name}: max rel err {err.max():.3g} > {tol:g} at x={fin.nonzero()[0][err.argmax()]}"
    )


DTYPES = [F32, F64, F16, BF16, I8, I32, I64, U8, U32, BOOL]


@pytest.fixture(scope="module", params=DTYPES, ids=str)
def compiled(request):
    dtype = request.param
    spec, names = big_spec(dtype)
    return dtype, spec, names, K.compile_kernel(spec)


def test_every_elementwise_primitive_matches_the_interpreter(compiled):
    dtype, spec, names, kern = compiled
    n = 3000
    ins = [sample(dtype, n, s) for s in (1, 2, 3)]
    if dtype.kind in "iu":
        ins[1][::7] = 0  # division by zero
        ins[1][1::7] = np.array(-1).astype(dtype)
        ins[1][2::7] = np.arange(len(ins[1][2::7])) % 70 - 3  # shift amounts in and out
    got = [np.empty(n, op.dtype) for op in spec.ops]
    want = [np.empty(n, op.dtype) for op in spec.ops]
    kern(ins, got, check=True)
    run_spec(spec, ins, want)
    for g, w, name in zip(got, want, names):
        if (
            name.startswith("convert")
            and g.dtype.kind in "iu"
            and (dtype.kind == "f" or dtype == BF16)
        ):
            # Non-finite or out-of-range floats to integers are unspecified (docs).
            x = ins[0].astype(np.float64)
            ok = np.isfinite(x) & (np.abs(x) < 100) & ((x > -1) | (g.dtype.kind == "i"))
            g, w = g[ok], w[ok]
        assert_close(g, w, name, dtype)


@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_layouts_strided_broadcast_reversed(dtype):
    """Every input layout: transposed, broadcast (stride 0), reversed, sliced."""
    spec = KernelSpec(
        2,
        0,
        (dtype,) * 3,
        (
            KOp("mul", (("in", 0), ("in", 1)), (), dtype),
            KOp("add", (("op", 0), ("in", 2)), (), dtype),
            KOp("max", (("op", 1), ("in", 0)), (), dtype),
        ),
        (("op", 2), ("op", 0)),
        (False, False),
    )
    kern = K.compile_kernel(spec)
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((37, 53)) * 10).astype(dtype)
    cases = [
        (base, base, base),
        (base.T.copy().T, np.broadcast_to(base[:, :1], base.shape), base[::-1, ::-1]),
        (np.broadcast_to(base[0], base.shape), base[:, ::-1], np.asfortranarray(base)),
        (np.broadcast_to(np.asarray(3, dtype), base.shape), base, base[::1, :]),
    ]
    big = (rng.standard_normal((80, 120)) * 10).astype(dtype)
    cases.append((big[::2, ::2][:37, :53], big[1::2, 1::2][:37, :53], base))
    for ins in cases:
        got = [np.empty(base.shape, dtype), np.empty(base.shape, dtype)]
        want = [np.empty(base.shape, dtype), np.empty(base.shape, dtype)]
        kern(list(ins), got, check=True)
        run_spec(spec, list(ins), want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def _softmax_spec(dtype=F32):
    return KernelSpec(
        2,
        1,
        (dtype,),
        (
            KOp("reduce_max", (("in", 0),), (("axes", (1,)),), dtype),
            KOp("sub", (("in", 0), ("op", 0)), (), dtype),
            KOp("exp", (("op", 1),), (), dtype),
            KOp("reduce_sum", (("op", 2),), (("axes", (1,)),), dtype),
            KOp("div", (("op", 2), ("op", 3)), (), dtype),
        ),
        (("op", 4),),
        (False,),
    )


def _layernorm_spec(n, dtype=F32):
    """(x - mean) * rsqrt(var + eps) * w + b over rows of n; mean and rstd per row too."""
    lit = lambda v: ("lit", np.asarray(v, dtype)[()])  # noqa: E731
    return KernelSpec(
        2,
        1,
        (dtype, dtype, dtype),
        (
            KOp("reduce_sum", (("in", 0),), (("axes", (1,)),), dtype),  # 0
            KOp("mul", (("op", 0), lit(1 / n)), (), dtype),  # 1 mean
            KOp("sub", (("in", 0), ("op", 1)), (), dtype),  # 2
            KOp("square", (("op", 2),), (), dtype),  # 3
            KOp("reduce_sum", (("op", 3),), (("axes", (1,)),), dtype),  # 4
            KOp("mul", (("op", 4), lit(1 / n)), (), dtype),  # 5 var
            KOp("add", (("op", 5), lit(1e-5)), (), dtype),  # 6
            KOp("rsqrt", (("op", 6),), (), dtype),  # 7 rstd
            KOp("mul", (("op", 2), ("op", 7)), (), dtype),  # 8
            KOp("mul", (("op", 8), ("in", 1)), (), dtype),  # 9
            KOp("add", (("op", 9), ("in", 2)), (), dtype),  # 10
        ),
        (("op", 10), ("op", 1), ("op", 7)),
        (False, True, True),
    )


@pytest.fixture(scope="module")
def softmax():
    return K.compile_kernel(_softmax_spec())


def test_softmax_row_kernel(softmax):
    rng = np.random.default_rng(0)
    for shape in [(7, 33), (1, 1), (5, 0), (0, 4), (300, 1025)]:
        x = (rng.standard_normal(shape) * 4).astype(F32)
        got, want = np.empty(shape, F32), np.empty(shape, F32)
        softmax([x], [got], check=True)
        run_spec(softmax.spec, [x], [want])
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)
    # A transposed input (rows are strided) and a broadcast one.
    x = (rng.standard_normal((64, 48)) * 4).astype(F32).T
    got, want = np.empty(x.shape, F32), np.empty(x.shape, F32)
    softmax([x], [got])
    run_spec(softmax.spec, [x], [want])
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_layernorm_row_kernel_with_row_outputs():
    rng = np.random.default_rng(1)
    for shape in [(9, 17), (3, 1), (200, 384)]:
        spec = _layernorm_spec(shape[1])
        kern = K.compile_kernel(spec)
        x = rng.standard_normal(shape).astype(F32) * 2 + 1
        w = np.broadcast_to(rng.standard_normal(shape[1]).astype(F32), shape)
        b = np.broadcast_to(rng.standard_normal(shape[1]).astype(F32), shape)
        ins = [x, w, b]
        got = [np.empty(shape, F32), np.empty(shape[:1], F32), np.empty(shape[:1], F32)]
        want = [np.empty(shape, F32), np.empty(shape[:1], F32), np.empty(shape[:1], F32)]
        kern(ins, got, check=True)
        run_spec(spec, ins, want)
        for g, wv in zip(got, want):
            np.testing.assert_allclose(g, wv, rtol=2e-5, atol=2e-6)


def test_stash_plan_keeps_only_expensive_values_needed_twice():
    assert stash_plan(_softmax_spec()) == {2: (0, 1)}  # exp, in output 0, from pass 1
    assert stash_plan(_layernorm_spec(8)) == {}  # x - mean is cheaper to recompute
    assert stash_plan(_softmax_spec(F16)) == {2: (0, 1)}


def _two_sums_spec():
    """z = tanh(x) * 2; out0 = z * sum(z) + sum(z * x); out1 = z > 0 (bool); out2 = z."""
    return KernelSpec(
        2,
        1,
        (F32,),
        (
            KOp("tanh", (("in", 0),), (), F32),  # 0
            KOp("mul", (("op", 0), ("lit", np.float32(2))), (), F32),  # 1 z
            KOp("reduce_sum", (("op", 1),), (("axes", (1,)),), F32),  # 2
            KOp("mul", (("op", 1), ("in", 0)), (), F32),  # 3
            KOp("reduce_sum", (("op", 3),), (("axes", (1,)),), F32),  # 4
            KOp("mul", (("op", 1), ("op", 2)), (), F32),  # 5
            KOp("add", (("op", 5), ("op", 4)), (), F32),  # 6
            KOp("gt", (("op", 1), ("lit", np.float32(0))), (), BOOL),  # 7
        ),
        (("op", 7), ("op", 6), ("op", 1)),
        (False, False, False),
    )


def test_stashed_values_are_reused_by_every_later_pass():
    spec = _two_sums_spec()
    # z, the outermost expensive value, goes to the first float32 output, from pass 0;
    # pass 1 (the second sum) and the write pass load it back.
    assert stash_plan(spec) == {1: (1, 0)}
    kern = K.compile_kernel(spec)
    rng = np.random.default_rng(5)
    for shape in [(6, 40), (3, 1), (4, 0), (0, 3), (700, 1000)]:  # the last splits
        x = rng.standard_normal(shape).astype(F32)
        got = [np.empty(shape, BOOL), np.empty(shape, F32), np.empty(shape, F32)]
        want = [np.empty(shape, BOOL), np.empty(shape, F32), np.empty(shape, F32)]
        kern([x], got, check=True)
        run_spec(spec, [x], want)
        np.testing.assert_array_equal(got[0], want[0])
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w, rtol=3e-6, atol=1e-3 * shape[-1] * 1e-4)


@pytest.mark.parametrize("dtype", [F32, F64, I32, U8, BOOL, F16], ids=str)
def test_reductions_nan_first_index_and_empty_rows(dtype):
    prims = ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin"]
    if dtype == BOOL:
        prims = ["reduce_and", "reduce_or", "reduce_max", "reduce_min", "argmax", "argmin"]
    ops = tuple(
        KOp(
            p,
            (("in", 0),),
            (("axes", (1,)), ("index_dtype", I32)) if p.startswith("arg") else (("axes", (1,)),),
            I32 if p.startswith("arg") else dtype,
        )
        for p in prims
    )
    spec = KernelSpec(
        2, 1, (dtype,), ops, tuple(("op", j) for j in range(len(ops))), (True,) * len(ops)
    )
    kern = K.compile_kernel(spec)
    x = sample(dtype, 12 * 40, 5).reshape(12, 40)
    if dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            x = np.where(np.isfinite(x), np.abs(x) % 3, x)  # keep products finite
        x[2, 5] = x[2, 9] = np.nan
        x[3, :] = -np.inf
        x[4, 7] = np.inf
        x[5, :] = x[5, 0]  # ties: the first index wins
    elif dtype.kind in "iu":
        x[5, :] = x[5, 0]
        x[6, 3] = x[6, 30] = np.iinfo(dtype).max
    for arr in (x, x[:, :0].copy() if dtype.kind == "f" else x):
        rows = arr.shape[:1]
        got = [np.empty(rows, op.dtype) for op in ops]
        want = [np.empty(rows, op.dtype) for op in ops]
        kern([arr], got)
        if arr.shape[1] == 0:  # argmax of an empty row is an error in eager
            run_spec(
                KernelSpec(
                    2, 1, (dtype,), ops[:4], tuple(("op", j) for j in range(4)), (True,) * 4
                ),
                [arr],
                want[:4],
            )
            got, want = got[:4], want[:4]
        else:
            run_spec(spec, [arr], want)
        for g, w, p in zip(got, want, prims):
            if dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=1e-2 if dtype == F16 else 1e-5, err_msg=p)
            else:
                np.testing.assert_array_equal(g, w, err_msg=p)


@pytest.mark.parametrize("n", [0, 1, 3, 511, 512, 513, 1537, (1 << 18) + 5])
@pytest.mark.parametrize("prim", ["reduce_sum", "reduce_prod"])
def test_long_float_sums_are_blocked_and_every_element_counted_once(prim, n):
    # Large calls sum float rows in a cascade of blocks (codegen.ACCUMULATE_BLOCKS):
    # rows on each side of the block sizes, of small integers (exact sums in any order)
    # or signs (exact products), must come out exact.
    op = KOp(prim, (("in", 0),), (("axes", (1,)),), F32)
    kern = K.compile_kernel(KernelSpec(2, 1, (F32,), (op,), (("op", 0),), (True,)))
    rows = max(2, (K.PARALLEL_THRESHOLD >> 1) // max(n, 1) + 1)  # a large call
    x = np.random.default_rng(n).integers(-3, 4, (rows, n)).astype(F32)
    if prim == "reduce_prod":
        x = np.where(x < 0, -1.0, 1.0).astype(F32)
    got = np.empty(rows, F32)
    kern([x], [got])
    want = x.sum(1, dtype=np.float64) if prim == "reduce_sum" else x.prod(1, dtype=np.float64)
    np.testing.assert_array_equal(got, want)


def test_a_long_float32_sum_keeps_its_accuracy():
    # One running sum per vector lane was off by ~1e-5 relative here (numpy: ~1e-9).
    x = np.random.default_rng(0).standard_normal(1 << 22).astype(F32)
    kern = K.compile_kernel(
        KernelSpec(1, 1, (F32,), (KOp("reduce_sum", (("in", 0),), (("axes", (0,)),), F32),),
                   (("op", 0),), (True,))
    )  # fmt: skip
    got = np.empty((), F32)
    kern([x * x], [got])
    want = np.sum(np.square(x, dtype=np.float64))
    assert abs(float(got) - want) / want < 1e-6


def test_multi_dim_rows_and_elementwise_row_outputs():
    # Reduce the last two dims of a rank-3 iteration space; a full-shape value used as a
    # per-row output is read at the row's first element (as the interpreter does).
    spec = KernelSpec(
        3,
        2,
        (F32, F32),
        (
            KOp("reduce_max", (("in", 0),), (("axes", (1, 2)),), F32),
            KOp("reduce_sum", (("in", 0),), (("axes", (1, 2)),), F32),
            KOp("mul", (("in", 1), ("op", 1)), (), F32),
            KOp("add", (("in", 0), ("op", 0)), (), F32),
        ),
        (("op", 1), ("op", 2), ("op", 3), ("in", 1)),
        (True, False, False, True),
    )
    kern = K.compile_kernel(spec)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 6)).astype(F32)
    y = np.broadcast_to(rng.standard_normal((4, 1, 1)).astype(F32), x.shape)
    got = [np.empty(4, F32), np.empty(x.shape, F32), np.empty(x.shape, F32), np.empty(4, F32)]
    want = [np.empty_like(g) for g in got]
    kern([x, y], got, check=True)
    inner = KernelSpec(3, 2, spec.input_dtypes, spec.ops, spec.outputs[:3], spec.output_is_row[:3])
    run_spec(inner, [x, y], want[:3])  # the interpreter needs per-row values for rows
    want[3] = y[:, 0, 0]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_iota_index_and_scalar_rank0():
    spec = KernelSpec(
        2,
        0,
        (F32,),
        (
            KOp("convert_element_type", (("index", 1),), (("new_dtype", F32),), F32),
            KOp("add", (("in", 0), ("op", 0)), (), F32),
            KOp("iota", (), (("dimension", 0), ("dtype", I32)), I32),
        ),
        (("op", 1), ("op", 2)),
        (False, False),
    )
    kern = K.compile_kernel(spec)
    x = np.ones((3, 4), F32)
    got = [np.empty((3, 4), F32), np.empty((3, 4), I32)]
    kern([x], got)
    np.testing.assert_array_equal(got[0], 1 + np.arange(4, dtype=F32)[None, :] + 0 * x)
    np.testing.assert_array_equal(got[1], np.arange(3)[:, None] + 0 * got[1])
    spec0 = KernelSpec(
        0, 0, (F64, F64), (KOp("atan2", (("in", 0), ("in", 1)), (), F64),), (("op", 0),), (False,)
    )
    out = np.empty((), F64)
    K.compile_kernel(spec0)([np.asarray(1.0), np.asarray(-1.0)], [out])
    assert out == np.arctan2(1.0, -1.0)


def test_in_place_output_aliasing_an_input(softmax):
    x = np.random.default_rng(0).standard_normal((64, 100)).astype(F32)
    want = np.empty_like(x)
    run_spec(softmax.spec, [x], [want])
    softmax([x], [x])  # donated: the output is the input's buffer
    np.testing.assert_allclose(x, want, rtol=2e-6)


def test_threads_split_large_calls_identically(softmax):
    x = np.random.default_rng(2).standard_normal((1024, 300)).astype(F32)  # > PARALLEL_THRESHOLD
    outs = []
    for n in (1, 2):
        cpu_threads.set_num_threads(n)
        o = np.empty_like(x)
        softmax([x], [o])
        outs.append(o)
    cpu_threads.set_num_threads(cpu_threads._default_threads())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_as_text_is_verified_xdsl_ir(softmax):
    mod = softmax.module()
    mod.verify()
    text = softmax.as_text()
    assert text.startswith("builtin.module") and "llvm.func @fntorch_kernel" in text
    assert "reassoc" in text and "llvm.intr" not in text.replace("call_intrinsic", "")
    # No libm intrinsic may reach a kernel (scalar calls on CPU, fatal on NVPTX).
    for bad in ("llvm.exp.", "llvm.log.", "llvm.sin.", "llvm.tanh.", "llvm.pow."):
        assert bad not in text


def test_small_call_overhead_is_small():
    spec = KernelSpec(1, 0, (F32,), (KOp("neg", (("in", 0),), (), F32),), (("op", 0),), (False,))
    kern = K.compile_kernel(spec)
    x, o = np.ones(16, F32), np.empty(16, F32)
    kern([x], [o])
    best = 1.0
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000):
            kern([x], [o])
        best = min(best, (time.perf_counter() - t) / 2000)
    assert best < 50e-6  # ~1 us unloaded; generous for a busy CI machine
    assert (o == -1).all()


def test_unsupported_primitive_names_the_fix():
    spec = KernelSpec(1, 0, (F32,), (KOp("lgamma", (("in", 0),), (), F32),), (("op", 0),), (False,))
    assert "lgamma" not in KERNEL_PRIMITIVES
    with pytest.raises(NotImplementedError, match="library call"):
        K.compile_kernel(spec)


def test_kernel_primitives_cover_the_elementwise_primitives():
    from fntorch.fx.core import Primitive
    from fntorch.ops import _prims_elementwise as ew

    names = {v.name for v in vars(ew).values() if isinstance(v, Primitive)}
    # The complex parts are kernel ops too (pairs of floats: ``rules_complex``).
    assert names - KERNEL_PRIMITIVES == {"lgamma", "digamma"}
    for extra in (
        "convert_element_type",
        "copy",
        "stop_gradient",
        "iota",
        "reduce_sum",
        "argmax",
        "argmin",
        "reduce_and",
    ):
        assert extra in KERNEL_PRIMITIVES


def test_importing_fntorch_does_not_import_xdsl():
    code = (
        "import sys, fntorch, fntorch.lowering.rules, fntorch.lowering.kernels;"
        "print('xdsl' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_small_and_large_calls_use_their_own_compiles(softmax):
    rng = np.random.default_rng(3)
    for shape in [(8, 40), (1024, 600)]:  # below and above PARALLEL_THRESHOLD
        x = rng.standard_normal(shape).astype(F32)
        got, want = np.empty(shape, F32), np.empty(shape, F32)
        softmax([x], [got])
        run_spec(softmax.spec, [x], [want])
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)
    flavours = {small for _, small in softmax._fns}
    assert flavours == ({True, False} if K.SMALL_TUNING else {False})
    assert softmax._cache_key("c", True) != softmax._cache_key("c", False)


def test_epilogue_vectorization_follows_each_compile_not_the_last_one():
    """The option is process-global LLVM state, set per compile under a lock."""
    from fntorch.devices import cpu_llvm as cpu
    from fntorch.lowering.emit import emit_module

    spec = KernelSpec(1, 0, (F32,), (KOp("exp", (("in", 0),), (), F32),), (("op", 0),), (False,))
    text = str(emit_module(K.Kernel(spec).module()))
    if "vec.epilog" not in cpu.optimized_ir(text, False):
        pytest.skip("this host's LLVM does not vectorize the epilogue of this loop at all")
    flags = ["vec.epilog" in cpu.optimized_ir(text, small) for small in (True, False, True, False)]
    assert flags == [False, True, False, True]
