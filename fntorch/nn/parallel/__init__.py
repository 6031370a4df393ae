"""``ft.nn.parallel``: ``DistributedDataParallel``, as PyTorch's."""

from ._ddp import DistributedDataParallel
from ._sync_bn import SyncBatchNorm

__all__ = ["DistributedDataParallel", "SyncBatchNorm"]
