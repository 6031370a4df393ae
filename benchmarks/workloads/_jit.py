"""Helpers shared by the jit workloads: fntorch's jit thunk (with a note on what its
first call spent: trace, compile, kernels, disk cache) and torch.compile's."""

from __future__ import annotations

# torch.compile's first call runs Inductor, which writes C++ and calls the C compiler:
# 10-30 s a workload on this machine, so ``--quick`` skips those rows.
TORCH_COMPILE_SLOW = "torch.compile: 10-30 s of Inductor + C compiler per workload"


def _cache_stats() -> dict:
    try:
        from fntorch.lowering import cache
    except ImportError:  # pragma: no cover - older trees
        return {}
    return dict(cache.stats)


def fntorch_jit_thunk(jitted, *args):
    """``lambda: jitted(*args)``, plus ``describe_first_call()`` for the first-call row:
    the trace and compile times of ``jitted``'s cache entry, its fused kernels and library
    calls, and the disk cache hits and fresh compiles of that first call."""
    # The compiler's modules (xDSL's IR and LLVM backend, ~0.3 s to import) load here,
    # before the first call is timed, as ``import jax`` loads XLA before jax.jit's first
    # call: the in-process first-call rows compare trace + compile + run. Which workload
    # ran first no longer decides who pays the import; W5's new-process rows report it.
    from fntorch.lowering import emit, templates  # noqa: F401

    before = _cache_stats()

    def run():
        return jitted(*args)

    def describe() -> str:
        after = _cache_stats()
        entries = list(getattr(jitted, "_cache", {}).values())
        if not entries:
            return "trace + compile + one call"
        e = entries[0]
        kernels, library = len(e.plan.kernels), len(e.plan.library_calls)
        hits = after.get("disk_hits", 0) - before.get("disk_hits", 0)
        built = after.get("compiles", 0) - before.get("compiles", 0)
        return (
            f"trace {e.trace_s * 1e3:.0f} ms + build {e.compile_s * 1e3:.0f} ms + run "
            f"{e.first_run_s * 1e3:.0f} ms (kernels load or compile on first use); "
            f"{kernels} kernels + {library} library calls; disk cache {hits} hits, "
            f"{built} built"
        )

    run.describe_first_call = describe
    return run


def torch_compile(fun):
    import torch

    return torch.compile(fun)
