"""The CPU backend: llvmlite IR text -> optimized object code -> MCJIT -> addresses.

- One ``TargetMachine`` per use: ``create_mcjit_compiler`` takes ownership of the TM it
  is given and frees it with the engine, so a shared TM crashes the process once the
  first engine is collected (LOWERING-NOTES §7.1). TMs cost ~0.2 ms to make.
- Host CPU name and features in every TM: without them LLVM targets generic x86-64
  and vectorizes with SSE only (2.7x slower GELU, §2.3).
- The new pass manager's O3 pipeline (``create_pass_builder``) is run explicitly:
  MCJIT alone only does codegen and nothing gets vectorized (§2.3).
- Compilation always goes through object code (``emit_object``), which is then loaded
  into the process's one engine (``load``): the bytes are what the disk cache stores, so
  a cached kernel and a fresh one run the very same code.
"""

from __future__ import annotations

import functools
import threading

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


# Serializes compiles: the epilogue option below is process-global LLVM state.
_compile_lock = threading.Lock()


def _optimized(ir_text: str, small: bool):
    """(module, target machine): ``ir_text`` parsed, verified and optimized."""
    _init()
    # A context of its own: jit'ed functions may be called (and compile) from several
    # threads, and LLVM's global context is not thread-safe.
    mod = llvm.parse_assembly(ir_text, context=llvm.create_context())
    mod.verify()
    tm = new_target_machine()
    mod.triple = host()[0]
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=2 if small else 3)
    if small:
        pto.loop_unrolling = False
        pto.loop_interleaving = False
    pb = llvm.create_pass_builder(tm, pto)
    with _compile_lock:
        # No per-module or per-function switch exists for epilogue vectorization.
        llvm.set_option("fntorch", f"-enable-epilogue-vectorization={str(not small).lower()}")
        pb.getModulePassManager().run(mod, pb)
    return mod, tm


def compile_object(ir_text: str, small: bool = False) -> bytes:
    """Parses, verifies and O3-optimizes ``ir_text``; returns host object code.

    ``small``: code for short calls (``kernels.SMALL_TUNING``): the O2 pipeline without
    loop unrolling, interleaving or a vectorized epilogue. Those multiply the code LLVM
    optimizes and emits and pay off only over long loops: on W5's ten kernels the
    epilogue alone was ~15% of LLVM's time and O2 another ~7%, with the same vector body.
    """
    mod, tm = _optimized(ir_text, small)
    return tm.emit_object(mod)


def optimized_ir(ir_text: str, small: bool = False) -> str:
    """The optimized LLVM IR of ``ir_text``, as ``compile_object`` makes it (for
    inspecting vectorization).

    >>> ir = ("define void @f(ptr %p, i64 %n) {\\nentry:\\n  br label %loop\\nloop:\\n"
    ...       "  %i = phi i64 [0, %entry], [%j, %loop]\\n"
    ...       "  %q = getelementptr float, ptr %p, i64 %i\\n  %x = load float, ptr %q\\n"
    ...       "  %y = fmul float %x, 2.0\\n  store float %y, ptr %q\\n  %j = add i64 %i, 1\\n"
    ...       "  %c = icmp slt i64 %j, %n\\n  br i1 %c, label %loop, label %done\\n"
    ...       "done:\\n  ret void\\n}\\n")
    >>> "vec.epilog" in optimized_ir(ir), "vec.epilog" in optimized_ir(ir, small=True)
    (True, False)
    """
    return str(_optimized(ir_text, small)[0])


class _Engine:
    """The process's one MCJIT engine: every kernel's object code is added to it.

    An engine per object cost ~1.9 ms to create and finalize (12 kernels: 22.6 ms against
    2.1 ms for one engine), which a first call from a warm disk cache pays per kernel.
    Objects are only ever added (kernels live as long as the process), each function
    under its own name (``cache.symbol``), and ``finalize_object`` after each addition
    resolves the new object's relocations; a lock serializes additions.
    """

    def __init__(self):
        _init()
        self._lock = threading.Lock()
        self._ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_target_machine())
        self._loaded: dict[str, int] = {}  # a name is loaded once: same name, same code

    def load(self, obj: bytes, name: str) -> int:
        """Adds object code ``obj`` and returns the address of its function ``name``."""
        # Checked before it joins the shared engine: one without the function is
        # refused. (LLVM does not validate object bytes, and reading garbage crashes
        # the process: only checksummed payloads of our own compiles get here.)
        ref = llvm.ObjectFileRef.from_data(obj)
        want = name.encode()
        if not any(want in sec.data() for sec in ref.sections() if sec.name() == b".strtab"):
            raise KeyError(f"compiled object has no function {name!r}")
        with self._lock:
            addr = self._loaded.get(name)
            if addr is None:
                self._ee.add_object_file(ref)
                self._ee.finalize_object()
                addr = self._ee.get_function_address(name)
                if not addr:
                    raise KeyError(f"compiled object has no function {name!r}")
                self._loaded[name] = addr
        return addr


@functools.cache
def _engine() -> _Engine:
    return _Engine()


def load(obj: bytes, name: str) -> int:
    """The address of function ``name`` of object code ``obj``, loaded into the
    process's engine (where it stays: keep nothing alive to call it).

    >>> import ctypes
    >>> obj = compile_object("define i64 @fntorch_doc_inc(i64 %x) {\\n"
    ...                      "  %y = add i64 %x, 1\\n  ret i64 %y\\n}\\n")
    >>> inc = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(load(obj, "fntorch_doc_inc"))
    >>> inc(41)
    42
    """
    return _engine().load(obj, name)
