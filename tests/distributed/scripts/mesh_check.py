"""Run by tests/distributed/test_mpi.py under `mpiexec -n 2`: two-axis meshes (2, 1) and
(1, 2) named ("dp", "tp"), and one whose ranks are reversed (a real Comm_split):
collectives over each axis and over both, eager and jit; shard_map's grad with the
batch split over both axes, and with a weight split over "tp" (tensor parallel),
against the single-process grad."""

import numpy as np

import fntorch as ft
from fntorch.distributed import Mesh, P, make_mesh

ft.distributed.init_process_group("mpi")
rank, n = ft.distributed.get_rank(), ft.distributed.get_world_size()
assert n == 2, n
xs = [np.random.default_rng(10 + r).standard_normal((2, 3)) for r in range(n)]
x = ft.asarray(xs[rank])


def check(mesh, name, want_sum, want_index, want_gather):
    cases = {
        "psum": (lambda v: ft.psum(v, name), want_sum),
        "pmean": (lambda v: ft.pmean(v, name), want_sum / (2 if want_gather.shape[0] == 2 else 1)),
        "axis_index": (lambda v: v * 0 + ft.axis_index(name), np.full((2, 3), want_index)),
        "all_gather": (lambda v: ft.all_gather(v, name), want_gather),
    }
    for what, (f, want) in cases.items():
        g = ft.shard_map(f, mesh, in_specs=P(*mesh.axis_names), out_specs=P())
        for mode, h in (("eager", g), ("jit", ft.jit(g))):
            np.testing.assert_allclose(
                np.asarray(h(x)), want, rtol=1e-12, err_msg=f"{mesh} {name} {what} {mode}"
            )


both, mine = xs[0] + xs[1], xs[rank]
for mesh in (Mesh(np.arange(2).reshape(2, 1), ("dp", "tp")), make_mesh((1, 2), ("dp", "tp"))):
    split = "dp" if mesh.shape["dp"] == 2 else "tp"  # the axis of size 2
    other = "tp" if split == "dp" else "dp"
    check(mesh, split, both, rank, np.stack(xs))
    check(mesh, other, mine, 0, mine[None])
    for name in (("dp", "tp"), ("tp", "dp")):
        check(mesh, name, both, rank, np.stack(xs))

# ranks laid out in reverse: "dp" is a split communicator whose rank 0 is process 1
rev = Mesh([[1], [0]], ("dp", "tp"))
assert rev.shape == {"dp": 2, "tp": 1} and rev.communicator(("dp",)).rank == 1 - rank
check(rev, "dp", both, 1 - rank, np.stack(xs[::-1]))
check(rev, ("tp", "dp"), both, 1 - rank, np.stack(xs[::-1]))

# data parallel over both axes: the batch's dim 0 split over ("dp", "tp")
w0 = np.random.default_rng(0).standard_normal((3, 4))
batches = [np.random.default_rng(20 + r).standard_normal((4, 3)) for r in range(n)]
whole_x = ft.asarray(np.concatenate(batches))


def loss(w, xb):
    return ft.mean(ft.tanh(xb @ w) ** 2)


want = ft.grad(loss)(ft.asarray(w0), whole_x)
for mesh in (make_mesh((2, 1), ("dp", "tp")), make_mesh((1, 2), ("dp", "tp"))):
    sharded = ft.shard_map(
        lambda w, xb: ft.pmean(loss(w, xb), ("dp", "tp")),
        mesh, in_specs=(P(), P(("dp", "tp"))), out_specs=P(),
    )  # fmt: skip
    for mode, g in (("eager", ft.grad(sharded)), ("jit", ft.jit(ft.grad(sharded)))):
        got = g(ft.asarray(w0), ft.asarray(batches[rank]))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, err_msg=mode)

# tensor parallel on the (1, 2) mesh: w's columns split over "tp", x replicated
mesh = make_mesh((1, 2), ("dp", "tp"))
want_w, want_x = ft.grad(loss, argnums=(0, 1))(ft.asarray(w0), whole_x)
cols = slice(2 * rank, 2 * rank + 2)


def tp_loss(w_block, xb):
    return ft.psum(ft.sum(ft.tanh(xb @ w_block) ** 2), "tp") / (8 * 4)


tp = ft.shard_map(tp_loss, mesh, in_specs=(P(None, "tp"), P()), out_specs=P())
for mode, g in (("eager", ft.grad(tp, (0, 1))), ("jit", ft.jit(ft.grad(tp, (0, 1))))):
    gw, gx = g(ft.asarray(w0[:, cols]), whole_x)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(want_w)[:, cols], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(want_x), rtol=1e-12, err_msg=mode)

ft.distributed.destroy_process_group()
print(f"OK rank {rank}", flush=True)
