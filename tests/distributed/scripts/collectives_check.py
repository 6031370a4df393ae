"""Run by tests/distributed/test_mpi.py under `mpiexec -n 2`: every collective over a
process axis against numpy, eagerly and under jit, and shard_map's grad against the
single-process grad of the whole batch."""

import numpy as np

import fntorch as ft
from fntorch.distributed import P

ft.distributed.init_process_group("mpi")
rank, n = ft.distributed.get_rank(), ft.distributed.get_world_size()
assert n == 2, n
mesh = ft.distributed.Mesh(("d",))


def data(r, shape=(2, 3)):
    return np.random.default_rng(10 + r).standard_normal(shape)


xs = [data(r) for r in range(n)]
x = ft.asarray(xs[rank])
sq = [data(r, (n, 3)) for r in range(n)]  # dim 0 of the axis size
cases = {
    "psum": (lambda v: ft.psum(v, "d"), x, sum(xs)),
    "pmean": (lambda v: ft.pmean(v, "d"), x, sum(xs) / n),
    "pmax": (lambda v: ft.pmax(v, "d"), x, np.maximum(*xs)),
    "pmin": (lambda v: ft.pmin(v, "d"), x, np.minimum(*xs)),
    "all_gather": (lambda v: ft.all_gather(v, "d"), x, np.stack(xs)),
    "all_gather axis=1": (lambda v: ft.all_gather(v, "d", axis=1), x, np.stack(xs, 1)),
    "all_gather tiled": (lambda v: ft.all_gather(v, "d", tiled=True), x, np.concatenate(xs)),
    "psum_scatter": (lambda v: ft.psum_scatter(v, "d"), ft.asarray(sq[rank]), sum(sq)[rank]),
    "psum_scatter tiled": (
        lambda v: ft.psum_scatter(v, "d", scatter_dimension=1, tiled=False),
        ft.asarray(np.moveaxis(sq[rank], 0, 1).copy()),
        sum(sq)[rank],
    ),
    "all_to_all": (
        lambda v: ft.all_to_all(v, "d", 0, 0),
        ft.asarray(sq[rank]),
        np.stack([sq[r][rank] for r in range(n)]),
    ),
    "ppermute": (lambda v: ft.ppermute(v, "d", [(0, 1), (1, 0)]), x, xs[1 - rank]),
    "ppermute partial": (
        lambda v: ft.ppermute(v, "d", [(0, 1)]),
        x,
        xs[0] if rank == 1 else np.zeros_like(xs[0]),
    ),
    "axis_index": (lambda v: v * ft.axis_index("d"), x, xs[rank] * rank),
}
for name, (f, arg, want) in cases.items():
    for mode, g in (("eager", f), ("jit", ft.jit(f))):
        got = np.asarray(g(arg))
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{name} {mode} rank {rank}")

# grads through the collectives whose result differs per process: each process' grad
# is its block of the grad of the sum of every process' loss, which a named vmap over
# the stacked blocks computes in one process.
cts = [data(20 + r, (n, 2, 3)) for r in range(n)]
flows = {
    "all_gather": lambda v: ft.all_gather(v, "d"),
    "ppermute": lambda v: ft.ppermute(v, "d", [(0, 1), (1, 0)]),
    "all_to_all": lambda v: ft.all_to_all(v.reshape(n, 3), "d", 0, 0).reshape(n, 3),
    "psum_scatter": lambda v: ft.psum_scatter(ft.stack([v, 2 * v]), "d"),
}
for name, f in flows.items():

    def loss(v, c, f=f):
        out = f(v)
        return (out * c.reshape(-1)[: out.size].reshape(out.shape)).sum()

    c_mine = ft.asarray(cts[rank])
    for mode, g in (("eager", ft.grad(loss)), ("jit", ft.jit(ft.grad(loss)))):
        got = g(x, c_mine)
        stacked = ft.grad(
            lambda X: ft.vmap(loss, axis_name="d")(X, ft.asarray(np.stack(cts))).sum()
        )
        want = stacked(ft.asarray(np.stack(xs)))[rank]
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(want), rtol=1e-12, err_msg=f"{name} grad {mode}"
        )

# torch.distributed's calls on the default group
t = ft.asarray(xs[rank])
np.testing.assert_allclose(np.asarray(ft.distributed.all_reduce(t)), sum(xs))
op = ft.distributed.ReduceOp
np.testing.assert_allclose(np.asarray(ft.distributed.all_reduce(t, op.AVG)), sum(xs) / n)
np.testing.assert_allclose(np.asarray(ft.distributed.all_reduce(t, op.MAX)), np.maximum(*xs))
cell = ft.nn.Buffer(ft.asarray(xs[rank]))
ft.distributed.all_reduce(cell)
np.testing.assert_allclose(np.asarray(cell), sum(xs))
np.testing.assert_allclose(np.asarray(ft.distributed.broadcast(t, src=1)), xs[1])
got = ft.distributed.all_gather([None] * n, t)
np.testing.assert_allclose(np.stack([np.asarray(g) for g in got]), np.stack(xs))
ft.distributed.barrier()

# shard_map: the grad of the mean loss over both processes' blocks is the grad of the
# whole batch, on every process; eager and jit.
w0 = np.random.default_rng(0).standard_normal((3, 2))
batches = [data(r, (4, 3)) for r in range(n)]


def loss(w, xb):
    return ft.pmean(ft.mean(ft.tanh(xb @ w) ** 2), "d")


sharded = ft.shard_map(loss, mesh, in_specs=(P(), P("d")), out_specs=P())
whole = ft.grad(lambda w, xb: ft.mean(ft.tanh(xb @ w) ** 2))(
    ft.asarray(w0), ft.asarray(np.concatenate(batches))
)
for mode, g in (("eager", ft.grad(sharded)), ("jit", ft.jit(ft.grad(sharded)))):
    got = g(ft.asarray(w0), ft.asarray(batches[rank]))
    np.testing.assert_allclose(np.asarray(got), np.asarray(whole), rtol=1e-12, err_msg=mode)
value = sharded(ft.asarray(w0), ft.asarray(batches[rank]))
ref = np.mean(np.tanh(np.concatenate(batches) @ w0) ** 2)
np.testing.assert_allclose(float(value), ref, rtol=1e-12)

ft.distributed.destroy_process_group()
print(f"OK rank {rank}", flush=True)
