"""Run by tests/distributed/test_launcher.py through `python -m fntorch.distributed.run`:
`ok` prints torchrun's environment; `raise`, `exit`, `kill` and `hang` make rank 1 fail
while rank 0 waits in an all_reduce."""

import os
import signal
import sys
import time

import fntorch as ft

mode = sys.argv[1]
ft.distributed.init_process_group()
r = ft.distributed.get_rank()
if r == 1:
    if mode == "raise":
        raise ValueError("boom on rank 1")
    if mode == "exit":
        sys.exit(3)
    if mode == "kill":
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(1000)
total = ft.distributed.all_reduce(ft.asarray(float(r + 1)))
keys = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
line = " ".join([f"OK rank {r}", *(str(os.environ.get(k)) for k in keys), str(float(total))])
print(f"{line} {sys.argv[2:]}", flush=True)  # one write: the ranks share the pipe
