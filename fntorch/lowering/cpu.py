"""The CPU backend: llvmlite IR text -> optimized object code -> MCJIT -> addresses.

- One ``TargetMachine`` per use: ``create_mcjit_compiler`` takes ownership of the TM it
  is given and frees it with the engine, so a shared TM crashes the process once the
  first engine is collected (LOWERING-NOTES §7.1). TMs cost ~0.2 ms to make.
- Host CPU name and features in every TM: without them LLVM targets generic x86-64
  and vectorizes with SSE only (2.7x slower GELU, §2.3).
- The new pass manager's O3 pipeline (``create_pass_builder``) is run explicitly:
  MCJIT alone only does codegen and nothing gets vectorized (§2.3).
- Compilation always goes through object code (``emit_object``), which is then loaded
  into a fresh engine: the bytes are what the disk cache stores, so a cached kernel and
  a fresh one run the very same code.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host() -> tuple[str, str, str]:
    """(triple, cpu name, features) of this machine, as LLVM names them."""
    _init()
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
    )


def target_id() -> str:
    """A string naming the code this machine runs (part of every cache key).

    >>> target_id().startswith("cpu:")
    True
    """
    triple, cpu, features = host()
    return f"cpu:{triple}:{cpu}:{features}"


def new_target_machine():
    triple, cpu, features = host()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=3, codemodel="jitdefault")


def compile_object(ir_text: str) -> bytes:
    """Parses, verifies and O3-optimizes ``ir_text``; returns host object code."""
    _init()
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    tm = new_target_machine()
    triple, _, _ = host()
    mod.triple = triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_object(mod)


def optimized_ir(ir_text: str) -> str:
    """The O3-optimized LLVM IR of ``ir_text`` (for inspecting vectorization)."""
    _init()
    mod = llvm.parse_assembly(ir_text)
    tm = new_target_machine()
    mod.triple = host()[0]
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return str(mod)


class LoadedObject:
    """Object code loaded into its own MCJIT engine (which owns its own TM).

    Keep it alive as long as any address taken from it is called.
    """

    def __init__(self, obj: bytes):
        _init()
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine())
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"compiled object has no function {name!r}")
        return addr
