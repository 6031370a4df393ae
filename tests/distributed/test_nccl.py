"""NCCL: one rank on one GPU (every collective, a DDP step), and two ranks on two GPUs
through the launcher. Need CuPy with NCCL and GPUs: skip without. The rendezvous that
hands NCCL's unique id around runs on the CPU and is tested in test_rendezvous.py."""

import numpy as np
import pytest

cp = pytest.importorskip("cupy")

import fntorch as ft  # noqa: E402
from fntorch.distributed import P  # noqa: E402

from .mpi_helpers import SCRIPTS, run  # noqa: E402


def _gpus() -> int:
    try:
        return cp.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no driver, no device: the same answer
        return 0


@pytest.fixture
def nccl_group(monkeypatch):
    if _gpus() < 1:
        pytest.skip("no CUDA device")
    try:  # a CuPy built without NCCL, or an NCCL library it cannot load
        from cupy.cuda import nccl

        nccl.get_version()
    except Exception as e:  # noqa: BLE001 - whatever the reason, NCCL is not usable here
        pytest.skip(f"CuPy's NCCL is not usable here: {type(e).__name__}: {e}")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(k, raising=False)
    ft.distributed.init_process_group("nccl")
    yield
    ft.distributed.destroy_process_group()


@pytest.mark.cuda
def test_one_rank_nccl_collectives_and_ddp_step(nccl_group):
    mesh = ft.distributed.Mesh(("d",))
    x = ft.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)).to("cuda")
    for f, want in [
        (lambda v: ft.psum(v, "d"), np.asarray(x.cpu())),
        (lambda v: ft.pmax(v, "d"), np.asarray(x.cpu())),
        (lambda v: ft.pmin(v, "d"), np.asarray(x.cpu())),
        (lambda v: ft.pmean(v, "d"), np.asarray(x.cpu())),
        (lambda v: ft.psum_scatter(v, "d", tiled=True), np.asarray(x.cpu())),
        (lambda v: v + ft.axis_index("d").astype(v.dtype), np.asarray(x.cpu())),
        (lambda v: ft.all_gather(v, "d"), np.asarray(x.cpu())[None]),
        (lambda v: ft.all_to_all(v[None], "d", 0, 0), np.asarray(x.cpu())[None]),
        (lambda v: ft.ppermute(v, "d", [(0, 0)]), np.asarray(x.cpu())),
    ]:
        for g in (f, ft.jit(f)):
            with ft.default_device("cuda"):  # where axis_index, of no operands, is made
                got = g(x)
            assert got.device.platform == "cuda"
            np.testing.assert_allclose(np.asarray(got.cpu()), want)
    loss = ft.shard_map(lambda w, b: ft.pmean((b * w).sum(), "d"), mesh, (P(), P("d")), P())
    assert float(ft.grad(loss)(ft.asarray(2.0).to("cuda"), x)) == 15.0
    model = ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(3, 1).cuda())
    opt = ft.optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    opt.step()
    assert model.module.weight.device.platform == "cuda"


@pytest.mark.multigpu
def test_two_ranks_nccl_ddp_through_the_launcher():
    if _gpus() < 2:
        pytest.skip("needs two GPUs")
    import sys

    r = run([sys.executable, "-m", "fntorch.distributed.run", "--nproc-per-node", "2",
             str(SCRIPTS / "nccl_target.py")], timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout
    assert "OK rank 0" in r.stdout and "OK rank 1" in r.stdout
