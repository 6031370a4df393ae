"""Run by tests/distributed/test_mpi.py under `mpiexec -n 2`: DDP's bucket all-reduces
start during the backward (an event log shows a bucket started before the first
layer's gradient existed), a backward that raises leaves nothing behind, and training
with several buckets, a parameter only rank 1 uses and one no rank uses equals
single-process training on the whole batch."""

import numpy as np

import fntorch as ft
import fntorch.nn as nn
import fntorch.nn.functional as F

ft.distributed.init_process_group("mpi")
rank, n = ft.distributed.get_rank(), ft.distributed.get_world_size()
assert n == 2, n
TINY = 1e-6  # bucket_cap_mb: every parameter a bucket of its own


# --- overlap: the log of one backward -------------------------------------------------
ft.manual_seed(0)
mlp = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))
model = nn.parallel.DistributedDataParallel(mlp, bucket_cap_mb=TINY)
first = mlp[0].weight
events = []
comm = model._reducer.comm
start = comm.iallreduce


class LoggedWork:
    def __init__(self, work, k):
        self.work, self.k = work, k

    def test(self):
        return self.work.test()

    def wait(self):
        events.append(("wait", self.k))
        return self.work.wait()


def logged_iallreduce(x, op):
    k = len([e for e in events if e[0] == "start"])
    events.append(("start", k, "first layer grad exists" if first.grad is not None else "-"))
    return LoggedWork(start(x, op), k)


comm.iallreduce = logged_iallreduce
first.register_post_accumulate_grad_hook(lambda p: events.append(("first layer grad",)))
x = ft.asarray(np.random.default_rng(rank).standard_normal((3, 4)).astype(np.float32))
model(x).square().sum().backward()
kinds = [e[0] for e in events]
assert kinds.count("start") == 6 and kinds.count("wait") == 6, events
when = kinds.index("first layer grad")
# the last layer's buckets started while the first layer's gradient did not yet exist
assert events[0] == ("start", 0, "-") and when > 1, events
assert all(k == "wait" for k in kinds[kinds.index("wait") :]), events  # waits at the end
assert [e[1] for e in events if e[0] == "start"] == list(range(6)), events
# the gradients are the averages over the processes
local = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))
local.load_state_dict(mlp.state_dict())
mine = ft.autograd.grad(local(x).square().sum(), list(local.parameters()))
for p, g in zip(mlp.parameters(), mine):
    both = ft.distributed.all_reduce(g, ft.distributed.ReduceOp.AVG)
    np.testing.assert_allclose(np.asarray(p.grad), np.asarray(both), rtol=1e-6)
comm.iallreduce = start

# a backward that raises after buckets started: the next forward waits for them and
# forgets them, and the next backward reduces as usual
boom = mlp[2].weight.register_post_accumulate_grad_hook(lambda p: 1 / 0)
try:
    model(x).square().sum().backward()
    raise AssertionError("the hook did not raise")
except ZeroDivisionError:
    pass
boom.remove()
assert model._reducer.busy and model._reducer.launched
for p in mlp.parameters():
    p.grad = None
model(x).square().sum().backward()
assert not model._reducer.busy
for p, g in zip(mlp.parameters(), mine):
    both = ft.distributed.all_reduce(g, ft.distributed.ReduceOp.AVG)
    np.testing.assert_allclose(np.asarray(p.grad), np.asarray(both), rtol=1e-6)


# --- training with used-on-one-rank and unused parameters -----------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.never = nn.Linear(3, 3)  # no rank uses it
        self.a, self.b = nn.Linear(6, 8), nn.Linear(8, 3)
        self.extra = nn.Linear(8, 3)  # only rank 1's half uses it

    def forward(self, x, extra: bool):
        h = ft.tanh(self.a(x))
        return self.b(h) + self.extra(h) if extra else self.b(h)


rng = np.random.default_rng(5)
batches = [
    [ft.asarray(rng.standard_normal((4, 6)).astype(np.float32)) for _ in range(n)] for _ in range(3)
]
targets = ft.asarray(rng.standard_normal((4, 3)).astype(np.float32))
ft.manual_seed(1)
ref = Net()
ddp = nn.parallel.DistributedDataParallel(Net(), bucket_cap_mb=TINY)
ddp.module.load_state_dict(ref.state_dict())
ref_opt = ft.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
opt = ft.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for halves in batches:
    ref_opt.zero_grad()
    whole = sum(F.mse_loss(ref(h, extra=(r == 1)), targets) for r, h in enumerate(halves)) / n
    whole.backward()
    ref_opt.step()
    opt.zero_grad()
    F.mse_loss(ddp(halves[rank], extra=(rank == 1)), targets).backward()
    opt.step()
for (name, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
    np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-5, atol=1e-6, err_msg=name)
assert ddp.module.never.weight.grad is None and ddp.module.extra.weight.grad is not None

ft.distributed.destroy_process_group()
print(f"OK rank {rank}", flush=True)
