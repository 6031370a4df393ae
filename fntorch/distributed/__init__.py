"""``ft.distributed``: processes, meshes and PyTorch's ``torch.distributed`` calls.

fntorch runs on existing engines: MPI (mpi4py) between CPU processes and NCCL (CuPy)
between GPUs, one process per device. Neither is imported until a group starts, so
the base install needs neither. See docs/distributed.md.

>>> import fntorch as ft
>>> ft.distributed.get_world_size(), ft.distributed.is_initialized()
(1, False)
"""

from ._group import (
    WORLD_AXIS,
    DistributedError,
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    initialize,
    is_available,
    is_initialized,
    launch_env,
)
from .comm import LocalCommunicator, MPICommunicator
from .mesh import Mesh, P, PartitionSpec, make_mesh, shard_map

__all__ = [
    "WORLD_AXIS", "DistributedError", "ReduceOp", "all_gather", "all_gather_into_tensor",
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_backend", "get_rank",
    "get_world_size", "init_process_group", "initialize", "is_available", "is_initialized",
    "launch_env", "LocalCommunicator", "MPICommunicator", "Mesh", "P", "PartitionSpec",
    "make_mesh", "shard_map",
]  # fmt: skip
