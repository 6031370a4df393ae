"""Run by tests/distributed/test_nccl.py on two GPUs: all_reduce over NCCL."""

import numpy as np

import fntorch as ft

ft.cuda.set_device(int(__import__("os").environ["LOCAL_RANK"]))
ft.distributed.init_process_group("nccl")
r = ft.distributed.get_rank()
with ft.default_device("cuda"):
    total = ft.distributed.all_reduce(ft.ones(4) * (r + 1))
np.testing.assert_allclose(np.asarray(total.cpu()), 3.0)
ft.distributed.destroy_process_group()
print(f"OK rank {r}", flush=True)
