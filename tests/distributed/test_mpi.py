"""Two MPI processes on the CPU: every collective against numpy (eager and jit),
shard_map's grad against the single-process grad (1-d and two-axis meshes), DDP
training of the digits CNN against single-process training on the whole batch (eager
and compiled), and DDP's bucket all-reduces overlapping the backward (an event log;
unused parameters)."""

import pytest

from .mpi_helpers import run_mpi


def _ok(result, n=2):
    assert result.returncode == 0, result.stdout[-4000:]
    for r in range(n):
        assert f"OK rank {r}" in result.stdout, result.stdout[-4000:]


def test_collectives_and_shard_map_grad_over_two_processes():
    _ok(run_mpi("collectives_check.py"))


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_ddp_digits_cnn_equals_whole_batch_training(mode):
    _ok(run_mpi("ddp_check.py", mode))


def test_ddp_buckets_reduce_during_the_backward_and_equal_whole_batch_training():
    _ok(run_mpi("ddp_overlap_check.py"))


def test_two_axis_meshes_collectives_and_shard_map_grads():
    _ok(run_mpi("mesh_check.py"))
