"""``python -m fntorch.distributed.run --nproc-per-node N script.py [args]``: torchrun's
launcher shape on MPI's process manager.

It starts ``N`` processes with ``mpiexec`` (the mpich wheel's), each running
``script.py`` with torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``; and, unless set, each process'
share of the cores as ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``FNTORCH_NUM_THREADS``), and waits. When a rank fails
(an exception, a nonzero exit, a signal), MPI's process manager ends the other ranks at
once, and the launcher prints which rank failed and how, and exits with that rank's
exit code (128 + the signal for a killed one, as a shell reports it). ``--timeout S``
ends a job that runs longer than ``S`` seconds, naming the ranks still running; inside
the job, a collective that waits more than ``FNTORCH_DIST_TIMEOUT`` seconds (default
300) for the other ranks aborts the job, naming the rank that waited.

``MASTER_ADDR`` (default 127.0.0.1, never all interfaces) and ``MASTER_PORT`` are
where the NCCL rendezvous binds; the MPI backend does not use them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_BAD_PID = re.compile(r"PID (\d+) RUNNING AT")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fntorch.distributed.run",
        description="Launch N processes of a script with torchrun's environment over MPI.",
    )
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc")
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--master-addr", "--master_addr", default=None, dest="master_addr")
    p.add_argument("--master-port", "--master_port", type=int, default=None, dest="master_port")
    p.add_argument("--timeout", type=float, default=None, help="seconds before the job is ended")
    p.add_argument("--standalone", action="store_true", help="accepted, as torchrun's")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    return p


def find_mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH.

    >>> isinstance(find_mpiexec(), str) or True
    True
    """
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        raise SystemExit(
            "fntorch.distributed.run: mpiexec was not found; install MPI with "
            "pip install 'fntorch[distributed]'"
        )
    return found


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def main(argv=None) -> int:
    """Runs the launcher; returns the job's exit code (see the module docstring)."""
    a = _parser().parse_args(argv)
    if a.nproc < 1:
        raise SystemExit(f"fntorch.distributed.run: --nproc-per-node must be >= 1, got {a.nproc}")
    if a.nnodes != 1:
        raise SystemExit(
            "fntorch.distributed.run: only --nnodes 1 is supported (use mpiexec with a host file)"
        )
    run_dir = tempfile.mkdtemp(prefix="fntorch-run-")
    env = dict(os.environ)
    env["MASTER_ADDR"] = a.master_addr or env.get("MASTER_ADDR", "127.0.0.1")
    env["MASTER_PORT"] = str(a.master_port or env.get("MASTER_PORT", "29500"))
    env["FNTORCH_RUN_DIR"] = run_dir
    # As torchrun does for OpenMP: N processes share the cores, so each gets its share of
    # threads unless told otherwise (OpenBLAS's idle threads spin, and N processes' worth
    # of them starve the others).
    share = str(max(1, _cores() // a.nproc))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "FNTORCH_NUM_THREADS"):
        env.setdefault(var, share)
    cmd = [find_mpiexec(), "-n", str(a.nproc), sys.executable, "-m",
           "fntorch.distributed._worker", a.script, *a.args]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    bad_pids: list = []
    pump = threading.Thread(target=_forward, args=(proc.stdout, bad_pids), daemon=True)
    pump.start()
    try:
        rc = proc.wait(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        running = _running_ranks(run_dir, a.nproc)
        os.killpg(proc.pid, 9)
        proc.wait()
        pump.join(5)
        _say(f"the job ran longer than --timeout {a.timeout:g} s and was ended; ranks still "
             f"running: {running}")  # fmt: skip
        shutil.rmtree(run_dir, ignore_errors=True)
        return 124
    except KeyboardInterrupt:
        os.killpg(proc.pid, 2)
        proc.wait()
        return 130
    pump.join(5)
    if rc != 0:
        rc = _report_failure(run_dir, a.nproc, rc, bad_pids)
    shutil.rmtree(run_dir, ignore_errors=True)
    return rc


def _forward(stream, bad_pids):
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        m = _BAD_PID.search(line)
        if m:
            bad_pids.append(int(m.group(1)))
        sys.stdout.write(line)
        sys.stdout.flush()


def _say(msg: str) -> None:
    print(f"fntorch.distributed.run: {msg}", file=sys.stderr, flush=True)


def _read(path: Path):
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _running_ranks(run_dir, n) -> list:
    d = Path(run_dir)
    return [r for r in range(n) if _read(d / f"rank{r}.pid") and _read(d / f"rank{r}.exit") is None]


def _report_failure(run_dir, n, rc, bad_pids) -> int:
    """Names the rank that failed first: one that exited with an error code of its own,
    else the one MPI's process manager reported (killed by a signal)."""
    d = Path(run_dir)
    for r in range(n):
        code = _read(d / f"rank{r}.exit")
        if code not in (None, "0"):
            _say(f"rank {r} failed with exit code {code}; the other ranks were ended")
            return int(code)
    pids = {_read(d / f"rank{r}.pid"): r for r in range(n)}
    for pid in bad_pids:
        r = pids.get(str(pid))
        if r is not None:
            # A rank that exits on its own writes its code; this one did not: MPI's process
            # manager reports the signal that ended it as the job's exit code.
            _say(f"rank {r} (pid {pid}) was killed (signal {rc}) before finishing; the other "
                 "ranks were ended")  # fmt: skip
            return 128 + rc if rc < 128 else rc
    _say(f"the job failed with exit code {rc} (no rank reported why)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
