"""Object code in an MCJIT engine of its own, for tests that build functions with plain
names (the process's shared engine keeps kernels, named by their digests)."""

import llvmlite.binding as llvm

from fntorch.devices import cpu_llvm as cpu


class Loaded:
    def __init__(self, obj: bytes):
        cpu._init()
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), cpu.new_target_machine())
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)
