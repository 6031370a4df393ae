"""Running a script in N MPI processes from a test: bounded in time, skipped cleanly
where MPI is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"


def mpiexec() -> str:
    """The mpiexec next to this Python (the mpich wheel's), else on PATH; skips without."""
    pytest.importorskip("mpi4py")
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("mpiexec is not installed (pip install 'fntorch[distributed]')")
    return found


def env(**extra) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), e.get("PYTHONPATH")]))
    e.setdefault("FNTORCH_DIST_TIMEOUT", "60")
    e.update(extra)
    return e


def run(cmd: list, timeout: float = 240, **extra) -> subprocess.CompletedProcess:
    """Runs ``cmd``; a hang past ``timeout`` kills the process group and fails the test."""
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env(**extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        pytest.fail(f"{cmd} did not finish in {timeout} s:\n{out[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, None)


def run_mpi(script: str, *args, n: int = 2, timeout: float = 240, **extra):
    """``mpiexec -n N python scripts/<script> args``."""
    return run([mpiexec(), "-n", str(n), sys.executable, str(SCRIPTS / script), *args],
               timeout=timeout, **extra)  # fmt: skip
