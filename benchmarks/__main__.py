"""``python -m benchmarks``: run the workloads of BENCHMARKS.md and print one ratio table.

    python -m benchmarks                  # every workload, full length
    python -m benchmarks --quick          # short runs
    python -m benchmarks --only W1,W9     # some workloads
    python -m benchmarks --frameworks fntorch,numpy
    python -m benchmarks --no-malloc-env  # skip the second run of the references
    python -m benchmarks --device cuda    # W1-W11 on the GPU (W1-W9 at sizes that fill it)

On the GPU (``--device cuda``) fntorch, PyTorch and JAX run on the first CUDA device;
numpy does not run, PyTorch's output is the correctness reference, and W9.copy is the
device's copy bandwidth (PyTorch's device-to-device copy of 1 GiB), the ceiling for
W2-W4. The malloc-env re-run is CPU-only.

After the in-process measurements, the same workloads run once more in a subprocess
under ``MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432
MALLOC_TRIM_THRESHOLD_=4294967296`` (rows marked ``[malloc env]``). fntorch runs there
too, so that every ratio compares two frameworks measured in the same process.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys

from . import _harness as h
from . import _report

# PyTorch's OpenMP (libgomp) keeps its worker thread spinning on a core for several
# milliseconds after each parallel op, waiting for the next one. In the interleaved loop
# the next call is always another framework's, which then runs on one free core out of
# two: measured on W3, fntorch's median went from 4.8 to 8.9 ms and jax.jit's from 4.2 to
# 7.2 ms beside torch, while torch's own median was 4.05 ms with the spinning and without.
# OMP_WAIT_POLICY=passive makes the idle OpenMP threads sleep, which removes that
# cross-framework interference without slowing torch here; an explicit
# OMP_WAIT_POLICY in the environment is kept.
_OMP_NOTE = "OMP_WAIT_POLICY=passive: idle OpenMP threads sleep instead of spinning"


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="short runs (5 calls / 0.25 s each)")
    p.add_argument("--only", default="", help="comma-separated workload ids, e.g. W1,W9")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument(
        "--frameworks",
        default=",".join(h.FRAMEWORKS),
        help=f"comma-separated subset of {','.join(h.FRAMEWORKS)}",
    )
    p.add_argument(
        "--no-malloc-env",
        action="store_true",
        help="do not re-run under the single-arena malloc settings",
    )
    p.add_argument(
        "--omp-wait-policy",
        choices=("passive", "default"),
        default="passive",
        help="OMP_WAIT_POLICY for the run (see _OMP_NOTE); 'default' leaves it unset",
    )
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # JSON to stdout
    return p.parse_args(argv)


def _select(only: str) -> list[h.Workload]:
    every = h.all_workloads()
    if not only:
        return list(every.values())
    wanted = {w.strip().upper() for w in only.split(",") if w.strip()}
    unknown = wanted - {wid.upper() for wid in every}
    if unknown:
        sys.exit(f"unknown workload(s) {','.join(sorted(unknown))}; known: {','.join(every)}")
    # A workload's companion rows (W9 and W9.copy) come with it.
    return [w for wid, w in every.items() if {wid.upper(), wid.split(".")[0]} & wanted]


def _versions(frameworks) -> str:
    import importlib.metadata as md

    names = {
        "fntorch": "fntorch",
        "numpy": "numpy",
        "torch": "torch",
        "jax": "jax",
        "autograd": "autograd",
    }
    parts = [f"python {platform.python_version()}"]
    for f in frameworks:
        if h.available(f):
            try:
                parts.append(f"{f} {md.version(names[f])}")
            except md.PackageNotFoundError:
                parts.append(f"{f} (source tree)")
        else:
            parts.append(f"{f} not installed")
    return ", ".join(parts)


def _run_child(argv_workloads: str, frameworks: str, quick: bool) -> list[h.Result]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks",
        "--child",
        "--only",
        argv_workloads,
        "--frameworks",
        frameworks,
    ] + (["--quick"] if quick else [])
    env = {**os.environ, **h.MALLOC_ENV}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"malloc-env run failed ({proc.returncode}):\n{proc.stderr[-2000:]}", file=sys.stderr)
        return []
    return _report.loads(proc.stdout.strip().splitlines()[-1])


def _gpu_name() -> str:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as e:  # the table still prints without the name
        return f"a GPU ({type(e).__name__})"


def main(argv=None) -> int:
    args = _parse(argv)
    h.set_device(args.device)
    if h.on_gpu():
        import fntorch as ft

        try:
            ft.device("cuda")
        except RuntimeError as e:
            sys.exit(f"python -m benchmarks --device cuda: {e}")
    if args.device == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if args.omp_wait_policy == "passive":
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch is imported
    frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    bad = [f for f in frameworks if f not in h.FRAMEWORKS]
    if bad:
        sys.exit(f"unknown framework(s) {bad}; known: {','.join(h.FRAMEWORKS)}")
    if "fntorch" not in frameworks:
        frameworks.insert(0, "fntorch")  # every ratio needs it
    settings = h.QUICK if args.quick else h.Settings()
    chosen = _select(args.only)
    if h.on_gpu():
        chosen = [w for w in chosen if w.gpu]

    results: dict[str, list[h.Result]] = {}
    for w in chosen:
        if w.pending:
            continue
        if not args.child:
            print(f"{w.id}: {w.title} ...", file=sys.stderr, flush=True)
        results[w.id] = h.run_workload(w, frameworks, settings)
        if w.extra is not None and not args.child and not h.on_gpu():
            results[w.id] += w.extra(settings, tuple(frameworks))

    if args.child:
        print(_report.dumps([r for rs in results.values() for r in rs]))
        return 0

    references = [f for f in frameworks if f != "fntorch" and h.available(f)]
    measured = [w.id for w in chosen if not w.pending]
    if not args.no_malloc_env and references and measured and not h.on_gpu():
        print("re-running under the single-arena malloc settings ...", file=sys.stderr, flush=True)
        for r in _run_child(",".join(measured), ",".join(frameworks), args.quick):
            results[r.workload].append(r)

    table = [row for w in chosen for row in _report.rows(w, results.get(w.id, []))]
    print(
        _versions(frameworks)
        + f"; {os.cpu_count()} CPUs; "
        + ("quick" if args.quick else "full")
        + " run"
        + (f"; on {_gpu_name()}" if h.on_gpu() else "")
    )
    print(_report.format_table(table))
    print()
    print(
        "median/min/max: ms per call (W1: microseconds per elementwise op). "
        "faults/call: minor page faults (getrusage) per call."
    )
    print(
        "ratio = that row's median / fntorch's median measured in the same process "
        "(above 1: fntorch is faster)."
    )
    print(
        f"[malloc env]: measured in a subprocess under "
        f"{' '.join(f'{k}={v}' for k, v in h.MALLOC_ENV.items())}."
    )
    policy = os.environ.get("OMP_WAIT_POLICY")
    print(
        _OMP_NOTE
        if policy == "passive"
        else f"OMP_WAIT_POLICY={policy or 'unset'}: idle OpenMP threads may spin on a core"
    )
    print(
        "Calls are interleaved, one per implementation in turn, each round starting one "
        "place later (every implementation follows every other equally often)."
    )
    print("Machines are noisy: compare ratios within one run, not times across runs.")
    goal_lines = _report.goals(results, args.device)
    if goal_lines:
        print()
        print("Goals (in-process rows of this run):")
        for line in goal_lines:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
