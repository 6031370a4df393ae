"""LLVM IR text -> PTX text, with llvmlite's NVPTX backend (no CUDA toolkit needed).

The CUDA target's ``compile_object``: the IR that ``cuda_codegen`` builds (xDSL's
``llvm`` dialect, emitted by ``lowering.emit``) is parsed, given the NVPTX triple and
data layout, optimized with the O3 pipeline for the device's compute capability
(``sm_XY``) and printed as PTX, which CuPy loads (``cuda_target``). This runs on a
machine without a GPU: the CPU-side tests emit every template's PTX in CI.

LOWERING-NOTES §5.3: a launchable kernel is a function with the ``ptx_kernel`` calling
convention (else it is a ``.func``), and an intrinsic NVPTX cannot select kills the
process inside ``emit_assembly`` (§2.2): the templates emit only fntorch's own math
expansions, and the tests compile each primitive in a subprocess first.

>>> ptx = compile_ptx("define ptx_kernel void @k(ptr %p) {\\n  store float 1.0, ptr %p\\n"
...                   "  ret void\\n}\\n", "sm_90")
>>> ".visible .entry k" in ptx and ".target sm_90" in ptx
True
"""

from __future__ import annotations

import functools
import threading

TRIPLE = "nvptx64-nvidia-cuda"
# PTX ISA 7.8 is what llvmlite's LLVM prints by default for sm_90 and what CuPy 14's
# driver (580) loads (LOWERING-NOTES §5.4); older capabilities get LLVM's own default.
_lock = threading.Lock()


@functools.cache
def _init() -> None:
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def arch(compute_capability: str | int) -> str:
    """The LLVM CPU name of a compute capability (``"90"`` -> ``"sm_90"``).

    >>> arch("90"), arch(80), arch("sm_86")
    ('sm_90', 'sm_80', 'sm_86')
    """
    text = str(compute_capability)
    if text.startswith("sm_"):
        return text
    if not text.isdigit():
        raise ValueError(
            f"cuda_nvptx.arch: expected a compute capability such as '90' or 'sm_90', got {text!r}"
        )
    return f"sm_{text}"


def compile_ptx(ir_text: str, compute_capability: str | int = "90") -> str:
    """PTX for the kernels of ``ir_text`` (LLVM IR), O3-optimized for ``sm_XY``.

    Functions defined with the ``ptx_kernel`` calling convention become launchable
    ``.entry`` points; the rest are device functions.

    >>> ptx = compile_ptx("define void @f(ptr %p) {\\n  ret void\\n}\\n", 80)
    >>> ".visible .func f" in ptx, ".target sm_80" in ptx
    (True, True)
    """
    import llvmlite.binding as llvm

    _init()
    cpu = arch(compute_capability)
    mod = llvm.parse_assembly(ir_text, context=llvm.create_context())
    target = llvm.Target.from_triple(TRIPLE)
    tm = target.create_target_machine(cpu=cpu, opt=3)
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    with _lock:  # one NVPTX compile at a time: LLVM's option state is process-global
        pb.getModulePassManager().run(mod, pb)
        return tm.emit_assembly(mod)


def target_id(compute_capability: str | int) -> str:
    """The string naming code built for ``sm_XY`` (part of every PTX cache key).

    >>> target_id(90)
    'cuda:nvptx64-nvidia-cuda:sm_90'
    """
    return f"cuda:{TRIPLE}:{arch(compute_capability)}"
