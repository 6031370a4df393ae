"""`python -m fntorch.distributed.run`: torchrun's environment, and a failing rank
named with the job's exit code; a hang ended by the collective timeout."""

import sys

import pytest

from .mpi_helpers import SCRIPTS, mpiexec, run

TARGET = str(SCRIPTS / "launch_target.py")


def launch(*args, timeout=120, **env):
    mpiexec()  # skips without MPI
    cmd = [sys.executable, "-m", "fntorch.distributed.run", "--nproc-per-node", "2", TARGET]
    return run([*cmd, *args], timeout=timeout, **env)


def test_launcher_sets_torchrun_environment():
    r = launch("ok", "extra")
    assert r.returncode == 0, r.stdout
    assert "OK rank 0 0 2 0 127.0.0.1 29500 3.0 ['extra']" in r.stdout
    assert "OK rank 1 1 2 1 127.0.0.1 29500 3.0 ['extra']" in r.stdout


@pytest.mark.parametrize(
    "mode, code, says",
    [
        ("raise", 1, "rank 1 failed with exit code 1"),
        ("exit", 3, "rank 1 failed with exit code 3"),
        ("kill", 137, "rank 1 (pid"),
    ],
)
def test_failing_rank_is_named_and_sets_the_exit_code(mode, code, says):
    r = launch(mode)
    assert r.returncode == code, r.stdout
    assert says in r.stdout and "the other ranks were ended" in r.stdout, r.stdout
    assert "OK rank 0" not in r.stdout


def test_hung_collective_ends_the_job_naming_the_waiting_rank():
    r = launch("hang", FNTORCH_DIST_TIMEOUT="2")
    assert r.returncode == 3, r.stdout
    assert "rank 0 waited more than 2 s in allreduce" in r.stdout, r.stdout


def test_mpiexec_directly_gives_the_same_environment():
    r = run([mpiexec(), "-n", "2", sys.executable, TARGET, "ok"], timeout=120)
    assert r.returncode == 0, r.stdout
    assert "OK rank 1" in r.stdout and "OK rank 0" in r.stdout
