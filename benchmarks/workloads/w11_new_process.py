"""W11's measurements that need a process of their own: the compiled step's first call
in a new interpreter (with the disk cache as found, then warm), and each step's peak
memory, the RSS high-water mark of a process that imports its library, builds the
model and takes four steps (so it counts what importing the library costs too).

The child imports nothing but its own library: the inputs come from the parent as an
``.npz`` file, and the benchmarks package's ``__init__`` modules (which import every
workload, fntorch among them) are skipped by registering bare package objects.
"""

from __future__ import annotations

import json
import os
import tempfile
import time

import numpy as np

from .._harness import Result, Settings
from . import w11_gpt_step as w11
from ._process import run_python

# name in the table, bare framework, mode, the W11 builder the child runs
_RUNS = {
    "compile": ("fntorch ft.compile step", "fntorch", w11._fntorch_compiled),
    "tape": ("fntorch step on the tape", "fntorch", w11._fntorch_eager),
    "functional": ("fntorch functional jit step", "fntorch", w11._fntorch_functional),
    "torch": ("torch eager step", "torch", w11._torch_eager),
    "jax": ("jax.jit step", "jax", w11._jax),
}


def _save_inputs(path: str) -> None:
    inputs = w11.make_inputs()
    np.savez(path, idx=inputs["idx"], targets=inputs["targets"],
             **{"w:" + k: v for k, v in inputs["weights"].items()})  # fmt: skip


def _load_inputs(path: str) -> dict:
    with np.load(path) as f:
        weights = {k[2:]: f[k] for k in f.files if k.startswith("w:")}
        return {"weights": weights, "idx": f["idx"], "targets": f["targets"]}


def _peak_rss_mb() -> float:
    # VmHWM belongs to this process image; getrusage's ru_maxrss would carry over the
    # parent's high-water mark across fork and exec.
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _child(run: str, inputs_path: str) -> None:
    """In a fresh interpreter: build, time the first call, take three more steps; print
    the first call's seconds and the peak RSS as JSON."""
    name, framework, build = _RUNS[run]
    t0 = time.perf_counter()
    __import__(framework)
    t1 = time.perf_counter()
    step = build(_load_inputs(inputs_path))
    t2 = time.perf_counter()
    step()
    t3 = time.perf_counter()
    for _ in range(3):
        step()
    print(json.dumps({"import_s": t1 - t0, "first_call_s": t3 - t2, "peak_mb": _peak_rss_mb()}))


_CHILD = """
import sys, types
for name, path in (("benchmarks", "benchmarks"), ("benchmarks.workloads", "benchmarks/workloads")):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = [path]
from benchmarks.workloads.w11_new_process import _child
_child({run!r}, {path!r})
"""


def _new_process(run: str, inputs_path: str) -> dict:
    return run_python(_CHILD.format(run=run, path=inputs_path))


def new_process_rows(settings: Settings, frameworks) -> list[Result]:
    """The table's rows: first call and peak RSS, one new process each."""
    import importlib.util

    plan = [("compile", "new process (1st)", "disk cache as found")]
    plan += [("compile", "new process", "warm disk cache"), ("tape", "new process", "")]
    plan += [("functional", "new process", ""), ("torch", "new process", "")]
    if not settings.skip_slow:
        plan.append(("jax", "new process", ""))
    out = []
    tmp = tempfile.TemporaryDirectory()
    inputs_path = os.path.join(tmp.name, "w11_inputs.npz")
    _save_inputs(inputs_path)
    for run, mode, what in plan:
        name, framework, _ = _RUNS[run]
        if framework not in frameworks or importlib.util.find_spec(framework) is None:
            continue
        r = _new_process(run, inputs_path)
        res = Result("W11", f"{name}, {what}" if what else name, framework, mode, [], [], 0.0)
        if "error" in r:
            res.error = r["error"]
        else:
            res.times, res.faults = [r["first_call_s"]], [0]
            res.note = (
                f"first call; peak RSS {r['peak_mb']:.0f} MB after 4 steps "
                f"(import {r['import_s'] * 1e3:.0f} ms before it)"
            )
        out.append(res)
    tmp.cleanup()
    return out


w11.W11.extra = new_process_rows
