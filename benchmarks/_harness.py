"""The benchmark harness: a workload registry, an interleaved timer and the ratio table.

A workload is registered once, in its own file under ``benchmarks/workloads/``, with
one implementation per framework. An implementation is a *builder*: it takes the
workload's inputs (numpy arrays made from fixed seeds, shared by every framework)
and returns a zero-argument thunk that does one call of the workload and returns its
result. Framework imports happen inside the builders, so a framework that is not
installed is simply skipped.

>>> from benchmarks import _harness as h
>>> w = h.Workload("WX", "add one", make_inputs=lambda: {"x": np.ones(3, np.float32)})
>>> @w.impl("numpy")
... def _(inputs):
...     return lambda: inputs["x"] + 1
>>> [r.framework for r in h.run_workload(w, settings=h.Settings(min_runs=2, min_time=0))]
['numpy']
"""

from __future__ import annotations

import gc
import importlib.util
import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX
    resource = None

FRAMEWORKS = ("fntorch", "numpy", "torch", "jax", "autograd")
REFERENCES = FRAMEWORKS[1:]
# Which importable module a framework needs (HIPS autograd installs as `autograd`).
_MODULE = {
    "fntorch": "fntorch",
    "numpy": "numpy",
    "torch": "torch",
    "jax": "jax",
    "autograd": "autograd",
}

# The allocator setting that BENCHMARKS.md asks the references to be run under as well.
MALLOC_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_THRESHOLD_": "33554432",
    "MALLOC_TRIM_THRESHOLD_": "4294967296",
}


# Where the workloads run: "cpu", or "cuda" under ``python -m benchmarks --device cuda``.
# The builders place their inputs with ``fntorch_array``/``torch_array``/``jax_array``,
# which read it, so one workload file serves both devices.
DEVICE = "cpu"

# The frameworks that have a GPU form; numpy (and HIPS autograd) measure nothing there.
GPU_FRAMEWORKS = ("fntorch", "torch", "jax")


def set_device(device: str) -> None:
    """Run the workloads on ``device`` ("cpu" or "cuda") from now on.

    >>> set_device("cpu"); DEVICE
    'cpu'
    """
    if device not in ("cpu", "cuda"):
        raise ValueError(f"set_device: device must be 'cpu' or 'cuda', got {device!r}")
    global DEVICE
    DEVICE = device


def on_gpu() -> bool:
    """Whether this run measures the GPU (``--device cuda``).

    >>> on_gpu()
    False
    """
    return DEVICE == "cuda"


def sized(cpu, gpu):
    """The workload's size on this run's device: GPU sizes fill the device.

    >>> sized(4096, 2**28)
    4096
    """
    return gpu if on_gpu() else cpu


def row_shape() -> tuple:
    """W3's and W4's (rows, row length): 16 MiB of float32 on the CPU, 256 MiB (enough
    rows to fill every multiprocessor many times) on the GPU.

    >>> row_shape()
    (4096, 1024)
    """
    return sized((4096, 1024), (65536, 1024))


def fntorch_array(x):
    """``x`` (numpy) as an fntorch tensor on the run's device.

    >>> fntorch_array(np.ones(2, np.float32)).device.type
    'cpu'
    """
    import fntorch as ft

    return ft.asarray(x, device=ft.device(DEVICE) if on_gpu() else None)


def torch_array(x):
    """``x`` (numpy) as a torch tensor on the run's device (shared memory on the CPU)."""
    import torch

    t = torch.from_numpy(x)
    return t.to("cuda") if on_gpu() else t


def jax_array(x):
    """``x`` (numpy) as a JAX array on the run's device."""
    import jax
    import jax.numpy as jnp

    return jax.device_put(jnp.asarray(x), jax.devices("gpu" if on_gpu() else "cpu")[0])


def on_run_device(module):
    """``module`` (a PyTorch or fntorch ``nn.Module``) with its parameters and buffers
    moved to the run's device, in place: unchanged on the CPU.

    >>> import fntorch as ft
    >>> on_run_device(ft.nn.Linear(2, 3)).weight.device.type
    'cpu'
    """
    return module.to(DEVICE) if on_gpu() else module


def available(framework: str) -> bool:
    """Whether ``framework`` can be imported here (without importing it)."""
    return importlib.util.find_spec(_MODULE[framework]) is not None


# ------------------------------------------------------------------------------ registry


@dataclass(frozen=True)
class Impl:
    """One framework's version of a workload.

    ``mode`` is ``"eager"`` or ``"jit"``: a jit variant also reports its first call
    (trace + compile) as its own row, and is compared with fntorch's variant of the
    same mode.
    """

    framework: str
    build: Callable[[dict], Callable[[], Any]]
    mode: str = "eager"
    label: str = ""  # shown after the framework name, e.g. "no jit", "by hand"
    slow: str = ""  # why its first call is slow (torch.compile): skipped by --quick
    gpu: bool = False  # it places its inputs with fntorch_array & co.: runs on --device cuda
    gpu_only: bool = False  # a GPU-only row (the device's copy ceiling)

    @property
    def name(self) -> str:
        return f"{self.framework} ({self.label})" if self.label else self.framework


@dataclass
class Workload:
    """A named workload: its inputs, its implementations, how to read its times.

    ``ops_per_call`` turns the time of one call into a time per op (W1 reports
    microseconds per op); ``rate`` optionally turns a median time into a figure for
    the note column (GFLOP/s, GB/s). ``pending`` marks a workload that waits for a
    feature: it prints one 'not yet available' row and measures nothing.
    """

    id: str
    title: str
    make_inputs: Callable[[], dict] = dict
    unit: str = "ms"  # "ms" per call, or "us/op"
    ops_per_call: int = 1
    rtol: float = 1e-4
    atol: float = 1e-5
    reference: str = "numpy"  # whose output the others are checked against
    rate: Callable[[float], str] | None = None
    pending: str | None = None
    gpu: bool = False  # its builders place inputs on the run's device (--device cuda)
    impls: list[Impl] = field(default_factory=list)
    # Measurements outside the interleaved loop (W5's first call in a new process):
    # ``extra(settings, frameworks) -> list[Result]``, run once by ``python -m benchmarks``
    # (not in the malloc-env child).
    extra: Callable[[Settings, tuple], list[Result]] | None = None

    def impl(
        self,
        framework: str,
        mode: str = "eager",
        label: str = "",
        slow: str = "",
        gpu=None,
        gpu_only: bool = False,
    ):
        """Decorator registering a builder for ``framework``; ``gpu`` (default: the
        workload's ``gpu``) says it also runs under ``--device cuda``, ``gpu_only`` that
        it runs only there."""
        if framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {framework!r}; expected one of {FRAMEWORKS}")
        gpu = self.gpu if gpu is None else gpu

        def register(build):
            impl = Impl(framework, build, mode, label, slow, gpu or gpu_only, gpu_only)
            self.impls.append(impl)
            return build

        return register


REGISTRY: dict[str, Workload] = {}


def elementwise_bandwidth(elements: int):
    """The ``rate`` of a float32 elementwise workload: GB/s counting 8 bytes per element
    (one read, one write), as BENCHMARKS.md counts them."""
    return lambda seconds: f"{8 * elements / seconds / 1e9:.1f} GB/s"


def register(workload: Workload) -> Workload:
    """Add ``workload`` to the registry under its id (one id, one workload)."""
    if workload.id in REGISTRY:
        raise ValueError(f"workload {workload.id} is registered twice")
    REGISTRY[workload.id] = workload
    return workload


def all_workloads() -> dict[str, Workload]:
    """Every registered workload, in id order (W1, W2, ..., W10)."""
    from . import workloads  # noqa: F401  - registers them at import

    return dict(sorted(REGISTRY.items(), key=lambda kv: (int(kv[0][1:].split(".")[0]), kv[0])))


# ------------------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Settings:
    """How long to measure: at least ``min_runs`` calls *and* ``min_time`` seconds of
    calls per implementation, after ``warmup`` calls; no more than ``max_runs`` calls,
    and past ``max_time`` seconds of a workload only ``min_runs``."""

    min_runs: int = 20
    min_time: float = 2.0
    max_runs: int = 2000
    max_time: float = 60.0
    warmup: int = 2
    device: str = "cpu"
    skip_slow: bool = False  # skip implementations marked ``slow`` (torch.compile)


QUICK = Settings(min_runs=5, min_time=0.25, max_runs=200, max_time=10.0, warmup=1, skip_slow=True)


@dataclass
class Result:
    workload: str
    framework: str  # the implementation's display name
    base: str  # the bare framework name ("fntorch", "torch", ...)
    mode: str
    times: list[float]  # seconds per call
    faults: list[int]  # minor page faults per call
    first_call: float  # seconds, the first (cold) call
    output: Any = None  # the last call's result, as numpy arrays
    note: str = ""
    first_note: str = ""  # what the first call spent its time on (trace, compile, cache)
    malloc_env: bool = False
    error: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else math.nan

    @property
    def faults_per_call(self) -> float:
        return statistics.fmean(self.faults) if self.faults else math.nan


def _minflt() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def block(framework: str, out: Any) -> None:
    """Wait until ``out`` is computed (asynchronous frameworks return early)."""
    if framework == "jax":
        import jax

        jax.block_until_ready(out)
    elif framework == "torch":
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
    elif framework == "fntorch" and on_gpu():  # eager CPU work is synchronous
        import fntorch as ft

        ft.cuda.synchronize()


def to_numpy(out: Any) -> list[np.ndarray]:
    """The leaves of a result as float64 numpy arrays, dicts in sorted-key order."""
    if isinstance(out, dict):
        return [a for k in sorted(out) for a in to_numpy(out[k])]
    if isinstance(out, list | tuple):
        return [a for o in out for a in to_numpy(o)]
    if hasattr(out, "detach"):  # torch
        out = out.detach().cpu().numpy()
    return [np.asarray(out, dtype=np.float64)]


def _timed_call(framework: str, thunk, keep: bool = False) -> tuple[float, int, Any]:
    """Seconds and minor page faults of one blocked call; the result only if ``keep``
    (otherwise it is freed before the next call, as in a loop that drops it)."""
    f0 = _minflt()
    t0 = time.perf_counter()
    out = thunk()
    block(framework, out)
    t1 = time.perf_counter()
    faults = _minflt() - f0
    return t1 - t0, faults, (out if keep else None)


def run_workload(
    workload: Workload,
    frameworks: Iterable[str] = FRAMEWORKS,
    settings: Settings = Settings(),
) -> list[Result]:
    """Measure ``workload`` in each available framework of ``frameworks``, interleaved.

    Every implementation is built and warmed up first (its first call is kept apart),
    then the implementations take turns, one call each, until each has
    ``settings.min_runs`` calls and ``settings.min_time`` seconds. Each round starts one
    place later (A B C, B C A, C A B, ...), so every implementation follows every other
    equally often: what a call leaves behind (spinning worker threads, an evicted cache)
    slows the next framework's call, and a fixed order would always hand it to the same
    one. Outputs are checked against the workload's reference framework; a mismatch goes
    into the note.
    """
    wanted = set(frameworks) & (set(GPU_FRAMEWORKS) if on_gpu() else set(FRAMEWORKS))
    impls = [i for i in workload.impls if i.framework in wanted and available(i.framework)]
    impls = [i for i in impls if (i.gpu if on_gpu() else not i.gpu_only)]
    inputs = workload.make_inputs()
    results: list[Result] = []
    thunks = []
    for impl in impls:
        res = Result(workload.id, impl.name, impl.framework, impl.mode, [], [], math.nan)
        results.append(res)
        if impl.slow and settings.skip_slow:
            res.error = f"skipped by --quick ({impl.slow})"
            continue
        try:
            thunk = impl.build(inputs)
            res.first_call, _, out = _timed_call(impl.framework, thunk, keep=True)
            describe = getattr(thunk, "describe_first_call", None)
            if describe is not None:
                res.first_note = describe()
            for _ in range(settings.warmup):
                _timed_call(impl.framework, thunk)
            res.output = to_numpy(out)
            del out
        except Exception as e:  # one framework failing must not hide the others
            res.error = f"{type(e).__name__}: {e}".splitlines()[0][:120]
            continue
        thunks.append((res, impl.framework, thunk))

    gc.collect()
    started = time.perf_counter()
    live = list(thunks)
    rounds = 0
    while live:
        start = rounds % len(live)
        rounds += 1
        for entry in live[start:] + live[:start]:
            res, framework, thunk = entry
            try:
                dt, faults, _ = _timed_call(framework, thunk)
            except Exception as e:  # a later call failing (after another's) hides nothing
                why = f"{type(e).__name__} at call {len(res.times) + 2}: {e}"
                res.error = why.splitlines()[0][:120]
                res.times.clear()
                live.remove(entry)
                continue
            res.times.append(dt)
            res.faults.append(faults)
            n = len(res.times)
            spent = sum(res.times)
            done = n >= settings.max_runs or (n >= settings.min_runs and spent >= settings.min_time)
            # A slow implementation stops at min_runs once the workload has run max_time.
            if done or (
                n >= settings.min_runs and time.perf_counter() - started > settings.max_time
            ):
                live.remove(entry)

    _check_outputs(workload, results)
    for res in results:
        if workload.rate and res.times and not res.note:
            res.note = workload.rate(res.median)
    return results


def _check_outputs(workload: Workload, results: list[Result]) -> None:
    # On the GPU numpy does not run: PyTorch's output is the reference there.
    reference = "torch" if on_gpu() else workload.reference
    ref = next((r for r in results if r.base == reference and r.output), None)
    if ref is None:
        return
    for res in results:
        if res is ref or res.output is None:
            continue
        if len(res.output) != len(ref.output) or any(
            a.shape != b.shape for a, b in zip(res.output, ref.output)
        ):
            res.note = f"MISMATCH: output structure differs from {ref.framework}"
            continue
        err = max(
            (float(np.max(np.abs(a - b), initial=0)) for a, b in zip(res.output, ref.output)),
            default=0.0,
        )
        if not all(
            np.allclose(a, b, rtol=workload.rtol, atol=workload.atol)
            for a, b in zip(res.output, ref.output)
        ):
            res.note = f"MISMATCH vs {ref.framework}: max |diff| {err:.3g}"
