"""Run by tests/distributed/test_mpi.py under `mpiexec -n 2`: 3 steps of the digits CNN
under DistributedDataParallel (each process a half batch) against single-process
training on the whole batch, eagerly and compiled; no_sync; DistributedSampler.

The model is in eval mode: BatchNorm normalizes with its running statistics and
dropout is off, so the processes' half batches give exactly the whole batch's gradient
(train-mode BatchNorm uses each process' own statistics, as PyTorch's DDP without
SyncBatchNorm)."""

import sys

import numpy as np

import fntorch as ft
import fntorch.nn.functional as F
from fntorch.demo_digits import Net, synthetic_digits

mode = sys.argv[1]  # "eager" or "compiled"
ft.distributed.init_process_group("mpi")
rank, n = ft.distributed.get_rank(), ft.distributed.get_world_size()
images, labels = synthetic_digits(96, seed=3)
images = images[:, None]


def train(model, opt, batches, compiled):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = ft.compile(step)
    return [float(step(ft.asarray(x), ft.asarray(y))) for x, y in batches]


ft.manual_seed(0)
start = Net().state_dict()
start = {k: ft.asarray(np.asarray(v)) for k, v in start.items()}

# single process, whole batches of 32
ref = Net()
ref.load_state_dict(start)
ref.eval()
ref_opt = ft.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
whole = [(images[32 * s : 32 * s + 32], labels[32 * s : 32 * s + 32]) for s in range(3)]
ref_losses = train(ref, ref_opt, whole, mode == "compiled")

# DDP: this process' half of each batch; a different start on rank 1 is overwritten
local = Net()
local.load_state_dict(start)
if rank == 1:
    with ft.no_grad():
        for p in local.parameters():
            p.add_(1.0)
model = ft.nn.parallel.DistributedDataParallel(local)
model.eval()
opt = ft.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
halves = [(x[16 * rank : 16 * rank + 16], y[16 * rank : 16 * rank + 16]) for x, y in whole]
losses = train(model, opt, halves, mode == "compiled")
for (name, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
    np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-5, atol=1e-6, err_msg=name)
mean_loss = float(ft.distributed.all_reduce(ft.asarray(losses[-1]), ft.distributed.ReduceOp.AVG))
np.testing.assert_allclose(mean_loss, ref_losses[-1], rtol=1e-5)


# train mode with SyncBatchNorm (dropout off): the whole batch's statistics on every
# process, so DDP training equals whole-batch training, running statistics included
def no_dropout(net):
    net.drop = ft.nn.Identity()
    return net


ref = no_dropout(Net())
ref.load_state_dict(start)
ref_opt = ft.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
train(ref, ref_opt, whole, mode == "compiled")
local = ft.nn.SyncBatchNorm.convert_sync_batchnorm(no_dropout(Net()))
local.load_state_dict(start)
model = ft.nn.parallel.DistributedDataParallel(local)
opt = ft.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
train(model, opt, halves, mode == "compiled")
got, want = model.module.state_dict(), ref.state_dict()
for name in want:
    np.testing.assert_allclose(
        np.asarray(got[name]), np.asarray(want[name]), rtol=1e-5, atol=1e-5, err_msg=name
    )

# no_sync: the gradients stay local, and the next synced backward reduces their sum
lin = ft.nn.parallel.DistributedDataParallel(ft.nn.Linear(2, 1, bias=False))
x = ft.asarray([[1.0, 2.0]]) * (rank + 1)
with lin.no_sync():
    lin(x).sum().backward()
local_grad = np.asarray(lin.module.weight.grad)
np.testing.assert_allclose(local_grad, np.asarray(x))
lin(x).sum().backward()
np.testing.assert_allclose(np.asarray(lin.module.weight.grad), [[3.0, 6.0]])  # mean of 2x, 4x

# DistributedSampler: the two processes' indices partition the padded dataset
sampler = ft.utils.data.distributed.DistributedSampler(range(11), shuffle=True, seed=5)
mine = list(sampler)
everyone = ft.distributed.all_gather([None] * n, ft.asarray(mine))
assert sorted(sum((t.tolist() for t in everyone), [])) == sorted(
    list(range(11)) + [everyone[0].tolist()[0]]
), everyone

ft.distributed.destroy_process_group()
print(f"OK rank {rank} losses {losses}", flush=True)
