"""The CUDA target's kernels are produced and well-formed without a GPU: every kernel
template's GPU form (elementwise grid-stride, warp-per-row reductions), for every
primitive the kernels compute, is emitted as PTX by llvmlite's NVPTX backend.

PTX is compiled in a subprocess: an intrinsic NVPTX cannot select aborts the process
inside LLVM (LOWERING-NOTES §2.2), which must fail one test, not kill the run.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("xdsl")
llvm = pytest.importorskip("llvmlite.binding")

import fntorch as ft  # noqa: E402
from fntorch.devices import cuda_codegen as cg  # noqa: E402
from fntorch.devices.cuda_target import CudaTarget  # noqa: E402
from fntorch.fx.core import Tensor  # noqa: E402
from fntorch.lowering import plan_graph  # noqa: E402
from fntorch.lowering.spec import KernelSpec, KOp  # noqa: E402
from fntorch.lowering.table import lowering_table  # noqa: E402
from tests.cases import all_cases  # noqa: E402

F32 = np.dtype("float32")

_SCRIPT = r"""
import json, sys
from fntorch.devices.cuda_nvptx import compile_ptx
jobs = json.load(open(sys.argv[1]))
for i, (ir, cc) in enumerate(jobs):
    print(json.dumps({"start": i}), flush=True)
    try:
        ptx = compile_ptx(ir, cc)
    except Exception as e:
        print(json.dumps({"i": i, "error": f"{type(e).__name__}: {e}"}), flush=True)
        continue
    print(json.dumps({"i": i, "ptx": ptx}), flush=True)
"""


def compile_all(irs, tmp_path, cc="90"):
    """PTX of each IR text (compiled in one subprocess); raises naming a crash."""
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([(ir, cc) for ir in irs]))
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(jobs)], capture_output=True, text=True, timeout=900
    )
    out, started = {}, None
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        if "start" in rec:
            started = rec["start"]
        else:
            out[rec["i"]] = rec.get("ptx") or AssertionError(rec["error"])
    if proc.returncode != 0:
        raise AssertionError(
            f"the PTX compile crashed (exit {proc.returncode}) on IR #{started}:\n"
            f"{irs[started][:3000]}\n{proc.stderr[-2000:]}"
        )
    return [out[i] for i in range(len(irs))]


def well_formed(ptx: str, row: bool = False) -> None:
    assert isinstance(ptx, str), ptx
    assert ".target sm_90" in ptx and ".visible .entry fntorch_kernel(" in ptx
    assert ".extern" not in ptx  # no call to a function PTX cannot resolve (libm)
    assert "%tid.x" in ptx
    if row:
        assert "shfl.sync.bfly.b32" in ptx


def _specs_of(fn, *args):
    plan = plan_graph(ft.make_graph(fn)(*args))
    return [s.spec for s in plan.kernels]


def test_elementwise_and_row_templates_emit_ptx(tmp_path):
    x = ft.ones((4, 8))
    cases = [
        (_specs_of(lambda a: ft.tanh(a) * 2.0 + ft.exp(-a), x), False),
        (_specs_of(lambda a: ft.softmax(a, axis=-1), x), True),
        (_specs_of(lambda a: ft.sum(a * a), x), True),  # a reduction over every axis
        (_specs_of(lambda a: ft.max(a, axis=0), x), True),  # a non-last axis (permuted)
        (
            _specs_of(
                lambda a: (
                    (a - a.mean(-1, keepdims=True)) / ft.sqrt(a.var(-1, keepdims=True) + 1e-5)
                ),
                x,
            ),
            True,
        ),  # noqa: E501
        (_specs_of(lambda a: ft.sum(a.astype(ft.float64), axis=-1), x), True),  # 64-bit shuffles
        (_specs_of(lambda a: ft.any(a > 0.5, axis=-1), x), True),  # bool reduction
        (_specs_of(lambda a: ft.sum(a.astype(ft.int32) + 1, axis=-1), x), True),
        (_specs_of(lambda a: ft.argmax(a * 2.0, axis=-1), x), True),  # (value, index) pairs
        (_specs_of(lambda a: ft.argmin(a.astype(ft.int8), axis=0), x), True),
    ]
    irs, rows = [], []
    for specs, row in cases:
        assert specs
        for spec in specs:
            n = len(spec.input_dtypes)
            for variant in {"v" * n, "c" * n, "g" * n, "s" * n}:
                irs.append(cg.kernel_ir(spec, variant))
                rows.append(row and spec.reduce_rank > 0)
    for ptx, row in zip(compile_all(irs, tmp_path), rows):
        well_formed(ptx, row)


def test_elementwise_kernel_has_several_elements_per_thread(tmp_path):
    spec = KernelSpec(1, 0, (F32,), (KOp("exp", (("in", 0),), (), F32),), (("op", 0),), (False,))
    f16 = np.dtype("float16")
    spec16 = KernelSpec(1, 0, (f16,), (KOp("exp", (("in", 0),), (), f16),), (("op", 0),), (False,))
    irs = [cg.kernel_ir(spec, "c"), cg.kernel_ir(spec, "v"), cg.kernel_ir(spec16, "v")]
    unaligned, aligned, half = compile_all(irs, tmp_path)
    for ptx in (unaligned, aligned, half):
        well_formed(ptx)
    # UNROLL global stores per grid-stride step
    assert unaligned.count("st.global") >= cg.UNROLL and "v4" not in unaligned
    # aligned inputs: 16-byte vector loads and stores of VEC consecutive elements
    assert "ld.global.v4.b32" in aligned and "st.global.v4.b32" in aligned
    assert "ld.global.v4.b16" in half or "ld.global.v2.b32" in half or "ld.global.b64" in half


def test_tanh_divides_approximately_and_a_user_division_exactly(tmp_path):
    # float32 tanh's internal quotient is div.approx (mathlib's _APPROX_QUOTIENT); the
    # division a program asks for stays correctly rounded, as eager CuPy's.
    def kernel(prim):
        ops = (KOp(prim, (("in", 0), ("in", 1)) if prim == "div" else (("in", 0),), (), F32),)
        return KernelSpec(1, 0, (F32,) * (2 if prim == "div" else 1), ops, (("op", 0),), (False,))

    tanh, div = compile_all(
        [cg.kernel_ir(kernel("tanh"), "v"), cg.kernel_ir(kernel("div"), "vv")], tmp_path
    )
    assert "div.approx.f32" in tanh and "div.rn.f32" not in tanh
    assert "div.rn.f32" in div and "div.approx" not in div


def test_row_kernels_read_and_write_aligned_rows_in_16_byte_groups(tmp_path):
    # softmax: the max pass, the sum pass and the write pass each read the row; with a
    # ``v`` input (rows of a length divisible by VEC) each is a 16-byte vector load per
    # group, and the output a 16-byte store
    (spec,) = [
        s for s in _specs_of(lambda a: ft.softmax(a, axis=-1), ft.ones((4, 8))) if s.reduce_rank
    ]
    aligned, unaligned = compile_all([cg.kernel_ir(spec, "v"), cg.kernel_ir(spec, "c")], tmp_path)
    well_formed(aligned, row=True)
    well_formed(unaligned, row=True)
    assert aligned.count("ld.global.v4.f32") + aligned.count("ld.global.v4.b32") >= 3
    assert "st.global.v4" in aligned
    assert "v4" not in unaligned
    assert cg.row_variant("vg", 1028) == "vg" and cg.row_variant("vg", 1022) == "cg"


def test_rows_of_whole_groups_are_read_once_into_registers(tmp_path):
    # A row of G groups of VEC per lane (G <= REGISTER_GROUPS): each lane loads its G
    # groups once, and the passes (max, sum, write) read the registers: softmax's PTX
    # has G vector loads of the input, where the streaming form loads once per pass.
    (spec,) = [
        s for s in _specs_of(lambda a: ft.softmax(a, axis=-1), ft.ones((4, 1024))) if s.reduce_rank
    ]
    assert cg.row_variant("v", 1024) == "vr8" and cg.row_variant("c", 4096) == "c"
    held, held_c, streamed = compile_all(
        [cg.kernel_ir(spec, "vr8"), cg.kernel_ir(spec, "cr2"), cg.kernel_ir(spec, "v")], tmp_path
    )
    for ptx in (held, held_c, streamed):
        well_formed(ptx, row=True)
    vector_loads = held.count("ld.global.v4.f32") + held.count("ld.global.v4.b32")
    assert vector_loads == 8 and held.count("st.global.v4") == 8
    assert held_c.count("ld.global") == 2 * cg.VEC and "v4" not in held_c
    # the streaming form: a loop per pass, each with its own load of the row
    assert streamed.count("ld.global.v4") == 3
    with pytest.raises(ValueError, match="r<groups>"):
        cg.kernel_module(spec, "vr9")
    (ew,) = _specs_of(lambda a: a * 2.0, ft.ones(4))
    with pytest.raises(ValueError, match="no reduction"):
        cg.kernel_module(ew, "vr1")


def test_a_row_read_by_every_row_is_loaded_in_16_byte_groups(tmp_path):
    # layer norm's weight and bias: broadcast over the rows, contiguous within one (``w``);
    # read by position in the row, 16-byte vector loads like the row's own, where the
    # general form (``g``) loads them one element at a time
    def layernorm(v, w, b):
        mu = ft.mean(v, axis=-1, keepdims=True)
        d = v - mu
        return d * ft.rsqrt(ft.mean(d * d, axis=-1, keepdims=True) + 1e-5) * w + b

    x, w = np.ones((4, 1024), np.float32), np.ones(1024, np.float32)
    (spec,) = [s for s in _specs_of(layernorm, x, w, w) if s.reduce_rank]
    wb = np.broadcast_to(w, x.shape)
    assert cg.variant_of([x, wb, wb[:, 1:]], 3, row_dims=1) == "vwu"
    assert cg.variant_of([x, wb], 2) == "vg"  # an elementwise kernel has no rows
    assert cg.row_variant("vww", 1024) == "vwwr8"
    rows, general = compile_all(
        [cg.kernel_ir(spec, "vwwr8"), cg.kernel_ir(spec, "vggr8")], tmp_path
    )
    well_formed(rows, row=True)
    assert rows.count("ld.global.v4") == 3 * 8 and rows.count("ld.global") == 3 * 8
    assert general.count("ld.global.v4") == 8 and general.count("ld.global") == 8 + 2 * 32
    (ew,) = _specs_of(lambda a: a * 2.0, ft.ones(4))
    with pytest.raises(ValueError, match="no reduction"):
        cg.kernel_module(ew, "w")


_CASES = {}
for _c in all_cases():
    _CASES.setdefault(_c.prim, _c)
KERNEL_PRIMS = sorted(
    (p for p, e in lowering_table.items() if e.kind in ("elementwise", "reduction")),
    key=lambda p: p.name,
)


@settings(max_examples=1, deadline=None, database=None, derandomize=True)
@given(data=st.data())
def test_every_kernel_primitive_emits_ptx(data, tmp_path_factory):
    """Each primitive a kernel computes, at every dtype its case draws, as PTX."""
    irs, names = [], []
    for prim in KERNEL_PRIMS:
        case = _CASES[prim]
        for dtype in case.dtypes:
            args, params = case.draw(data, dtype)
            args = [np.asarray(a) for a in args]
            if any(0 in a.shape for a in args):
                continue
            graph = ft.make_graph(lambda *xs, p=prim, kw=params: p.bind(*xs, **kw))(
                *[Tensor(a) for a in args]
            )
            for spec in [s.spec for s in plan_graph(graph).kernels]:
                if not cg.supports(spec):
                    continue
                n = len(spec.input_dtypes)
                held = ("v" * n + "r1",) if spec.reduce_rank else ()  # registers
                for variant in ("v" * n, "g" * n, *held):
                    irs.append(cg.kernel_ir(spec, variant))
                    names.append(f"{prim.name}[{np.dtype(dtype).name},{variant}]")
    assert len({n.split("[")[0] for n in names}) >= 0.8 * len(KERNEL_PRIMS)
    results = compile_all(irs, tmp_path_factory.mktemp("ptx"))
    bad = [f"{n}: {r}" for n, r in zip(names, results) if not isinstance(r, str)]
    assert not bad, "\n".join(bad)
    for r in results:
        well_formed(r)


def test_kernels_without_a_gpu_form_are_refused_by_name():
    spec = KernelSpec(1, 0, (F32,), (KOp("sort", (("in", 0),), (), F32),), (("op", 0),), (False,))
    assert not cg.supports(spec)
    with pytest.raises(NotImplementedError, match="no GPU form.*sort"):
        cg.kernel_module(spec, "c")
    op = KOp("argmax", (("in", 0),), (("index_dtype", "int32"),), np.dtype("int32"))
    spec = KernelSpec(2, 1, (F32,), (op,), (("op", 0),), (True,))
    assert cg.supports(spec)
    with pytest.raises(ValueError, match="variant"):
        cg.kernel_module(spec, "x")


def test_a_scalar_passed_by_value_is_a_typed_parameter(tmp_path):
    # the eager fast path's kernels (cuda_eager): ``x * 2.0`` with 2.0 a parameter
    irs, names = [], []
    for dtype, param in [("float32", ".param .f32"), ("float64", ".param .f64"),
                         ("float16", ".param .align 2 .b8")]:  # fmt: skip
        d = np.dtype(dtype)
        spec = KernelSpec(1, 0, (d, d), (KOp("mul", (("in", 0), ("in", 1)), (), d),),
                          (("op", 0),), (False,))  # fmt: skip
        for variant in ("vk", "kc"):
            irs.append(cg.kernel_ir(spec, variant))
            names.append((dtype, param, variant))
    for ptx, (dtype, param, variant) in zip(compile_all(irs, tmp_path), names):
        well_formed(ptx)
        entry = ptx[ptx.index(".entry") : ptx.index(")")]
        k = variant.index("k")
        assert f"{param} fntorch_kernel_param_{k}" in entry, (dtype, variant, entry)
        assert ("ld.global.v" in ptx) == (variant == "vk"), (dtype, variant)
    # only float elementwise kernels take one
    i32 = np.dtype("int32")
    spec = KernelSpec(1, 0, (i32, i32), (KOp("add", (("in", 0), ("in", 1)), (), i32),),
                      (("op", 0),), (False,))  # fmt: skip
    with pytest.raises(ValueError, match="'k' input"):
        cg.kernel_module(spec, "vk")
    op = KOp("reduce_sum", (("in", 0),), (), F32)
    with pytest.raises(ValueError, match="'k' input"):
        cg.kernel_module(KernelSpec(2, 1, (F32,), (op,), (("op", 0),), (True,)), "k")


def test_ptx_cache_key_and_code_name_the_compute_capability():
    a = CudaTarget({}, 0, compute_capability="80")
    b = CudaTarget({}, 0, compute_capability="90")
    assert "sm_80" in a.cache_id() and "sm_90" in b.cache_id()
    spec = KernelSpec(1, 0, (F32,), (KOp("neg", (("in", 0),), (), F32),), (("op", 0),), (False,))
    ptx = a.compile_object(cg.kernel_ir(spec, "c")).decode()
    assert ".target sm_80" in ptx


def test_ptx_goes_through_the_disk_cache(tmp_path, monkeypatch):
    from fntorch.lowering import cache

    monkeypatch.setenv("FNTORCH_CACHE_DIR", str(tmp_path))
    loads = []

    class Offline(CudaTarget):
        def load(self, code, name):  # no GPU: the "function" is its PTX
            loads.append(name)
            return code.decode()

    t = Offline({}, 0, compute_capability="90")
    spec = KernelSpec(1, 0, (F32,), (KOp("sqrt", (("in", 0),), (), F32),), (("op", 0),), (False,))
    before = cache.stats["compiles"]
    ptx = t.kernel_function(spec, "c")
    assert ".entry fntorch_" in ptx and cache.stats["compiles"] == before + 1
    assert list(tmp_path.glob("kernels/*.o"))
    cache.clear_memory()
    assert t.kernel_function(spec, "c") == ptx and cache.stats["compiles"] == before + 1
