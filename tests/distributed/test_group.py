"""The default process group in one process (a group of one, no engine): PyTorch's calls,
DDP, shard_map's specs, DistributedSampler against PyTorch's, and the errors."""

import subprocess
import sys

import numpy as np
import pytest

import fntorch as ft
from fntorch.distributed import DistributedError, P

from .mpi_helpers import ROOT, env


@pytest.fixture
def group(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(k, raising=False)
    ft.distributed.init_process_group()
    yield
    ft.distributed.destroy_process_group()


def test_calls_on_a_group_of_one(group):
    assert (ft.distributed.get_rank(), ft.distributed.get_world_size()) == (0, 1)
    assert ft.distributed.get_backend() == "local"
    buf = ft.nn.Buffer(ft.asarray([1.0, 2.0]))
    out = ft.distributed.all_reduce(buf, ft.distributed.ReduceOp.AVG)
    assert out.tolist() == buf.tolist() == [1.0, 2.0]
    assert ft.distributed.broadcast(ft.arange(3), 0).tolist() == [0, 1, 2]
    assert ft.distributed.all_gather([None], ft.ones(2))[0].tolist() == [1.0, 1.0]
    ft.distributed.barrier()


def test_all_reduce_compiles_into_a_jit(group):
    f = ft.jit(lambda x: ft.distributed.all_reduce(x * 2.0))
    assert f(ft.ones(3)).tolist() == [2.0, 2.0, 2.0]
    eqns = ft.make_graph(lambda x: ft.distributed.all_reduce(x))(ft.ones(2)).eqns
    assert [e.primitive.name for e in eqns] == ["psum"]


def test_ddp_on_a_group_of_one_leaves_gradients_as_they_are(group):
    ft.manual_seed(0)
    lin = ft.nn.Linear(3, 2)
    model = ft.nn.parallel.DistributedDataParallel(lin, device_ids=[0])
    assert model.module is lin and list(model.state_dict())[0] == "module.weight"
    x = ft.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    model(x).sum().backward()
    np.testing.assert_allclose(np.asarray(lin.weight.grad), np.tile(x.sum(0), (2, 1)))


def test_errors_name_the_call_and_the_fix(monkeypatch):
    with pytest.raises(DistributedError, match="all_reduce: the default process group is not"):
        ft.distributed.all_reduce(ft.ones(1))
    with pytest.raises(DistributedError, match="DistributedDataParallel: the default process"):
        ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(1, 1))
    with pytest.raises(ValueError, match="backend must be one of"):
        ft.distributed.init_process_group("tpu")
    with pytest.raises(ValueError, match="init_method must be None, 'env://' or 'tcp://"):
        ft.distributed.init_process_group(init_method="file:///tmp/x")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    ft.distributed.init_process_group()
    try:
        with pytest.raises(DistributedError, match="already initialized"):
            ft.distributed.init_process_group()
        with pytest.raises(ValueError, match="src must be a rank in"):
            ft.distributed.broadcast(ft.ones(1), src=3)
        with pytest.raises(ValueError, match="Mesh: with 2 axis names, pass devices"):
            ft.distributed.Mesh(("a", "b"))
        with pytest.raises(ValueError, match=r"one dim per axis name \(2\), got shape \(1,\)"):
            ft.distributed.Mesh([0], ("a", "b"))
        with pytest.raises(ValueError, match="each rank 0..0 of the default group once"):
            ft.distributed.Mesh([[0, 1]], ("a", "b"))
        with pytest.raises(TypeError, match="Mesh: axis_names must be distinct strs"):
            ft.distributed.Mesh([[0]], ("a", "a"))
        with pytest.raises(ValueError, match=r"make_mesh: axis_shapes \(2, 1\) must multiply"):
            ft.distributed.make_mesh((2, 1), ("a", "b"))
        with pytest.raises(ValueError, match="P: an axis name may split one dim only"):
            P("a", ("b", "a"))
        mesh = ft.distributed.Mesh(("data",))
        f = ft.shard_map(lambda x: x, mesh, in_specs=P("model"), out_specs=P())
        with pytest.raises(ValueError, match=r"in_specs names axis \['model'\]"):
            f(ft.ones(2))
    finally:
        ft.distributed.destroy_process_group()
    assert not ft.distributed.is_initialized()


def test_a_two_axis_mesh_in_one_process(group):
    mesh = ft.distributed.Mesh([[0]], ("dp", "tp"))
    assert mesh.shape == {"dp": 1, "tp": 1} and mesh.size == 1 and mesh.devices.shape == (1, 1)
    x = ft.asarray([[1.0, 2.0], [3.0, 4.0]])

    def f(w, xb):
        return ft.pmean(ft.sum(xb @ w), ("dp", "tp")) + ft.psum(ft.axis_index(("tp", "dp")), "tp")

    g = ft.shard_map(f, mesh, in_specs=(P(), P(("dp", "tp"))), out_specs=P())
    assert float(g(ft.ones(2), x)) == 10.0
    np.testing.assert_allclose(np.asarray(ft.jit(ft.grad(g))(ft.ones(2), x)), [4.0, 6.0])
    other = ft.distributed.Mesh(("data",))
    h = ft.shard_map(lambda v: ft.psum(v, ("dp", "data")), other, in_specs=P(), out_specs=P())
    with pytest.raises(ValueError, match=r"psum: axis names \('dp', 'data'\) belong to differ"):
        h(ft.ones(1))


def test_mpi_backend_without_mpiexec_says_how_to_launch():
    pytest.importorskip("mpi4py")
    code = "import fntorch as ft; ft.distributed.init_process_group('mpi')"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(WORLD_SIZE="2", RANK="0"),
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode != 0
    assert "WORLD_SIZE is 2 but MPI sees 1 process" in r.stderr, r.stderr[-2000:]


def test_distributed_sampler_is_pytorchs():
    torch_dist = pytest.importorskip("torch.utils.data.distributed")
    from fntorch.utils.data.distributed import DistributedSampler

    for n, replicas, seed, epoch, drop_last, shuffle in [
        (11, 2, 5, 0, False, True),
        (11, 3, 7, 2, True, True),
        (100, 4, 0, 1, False, True),
        (3, 5, 1, 0, False, True),
        (10, 3, 0, 0, False, False),
    ]:
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, shuffle, seed, drop_last)
            theirs = torch_dist.DistributedSampler(
                range(n), replicas, rank, shuffle, seed, drop_last
            )
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="invalid rank 2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)


def test_destroying_the_group_keeps_axes_bound_to_their_own_communicators(monkeypatch):
    from fntorch.distributed.comm import LocalCommunicator
    from fntorch.fx.axes import bind_process_axis, process_axes, unbind_process_axis

    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(k, raising=False)
    bind_process_axis("own_axis", LocalCommunicator())
    try:
        ft.distributed.init_process_group()
        ft.distributed.Mesh([[0]], ("dp", "tp"))
        ft.distributed.destroy_process_group()
        assert "own_axis" in process_axes  # not the group's: it stays bound
        assert not {"dp", "tp"} & set(process_axes)  # the mesh's axes end with the group
        assert float(ft.psum(ft.asarray(2.0), "own_axis")) == 2.0
    finally:
        unbind_process_axis("own_axis")


@pytest.fixture
def fake():
    from tests.devices.fake import fake_device

    yield from fake_device()


def test_every_collective_and_a_ddp_step_on_a_second_device(group, fake):
    # The one-rank NCCL test's body, with the local group and the fake device: results
    # stay on the operands' device.
    mesh = ft.distributed.Mesh(("d",))
    x = ft.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3), device=fake)
    want = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for f, w in [
        (lambda v: ft.psum(v, "d"), want),
        (lambda v: ft.pmax(v, "d"), want),
        (lambda v: ft.pmin(v, "d"), want),
        (lambda v: ft.pmean(v, "d"), want),
        (lambda v: ft.psum_scatter(v, "d", tiled=True), want),
        (lambda v: v + ft.axis_index("d").astype(v.dtype), want),
        (lambda v: ft.all_gather(v, "d"), want[None]),
        (lambda v: ft.all_to_all(v[None], "d", 0, 0), want[None]),
        (lambda v: ft.ppermute(v, "d", [(0, 0)]), want),
    ]:
        for g in (f, ft.jit(f)):
            with ft.default_device(fake):  # where axis_index, of no operands, is made
                got = g(x)
            assert got.device is fake
            np.testing.assert_allclose(np.asarray(got.to("cpu")), w)
    loss = ft.shard_map(lambda w, b: ft.pmean((b * w).sum(), "d"), mesh, (P(), P("d")), P())
    assert float(ft.grad(loss)(ft.asarray(2.0, device=fake), x).to("cpu")) == 15.0
    model = ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(3, 1).to(fake))
    opt = ft.optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    opt.step()
    assert model.module.weight.device is fake
