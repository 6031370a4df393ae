"""``ft.nn.parallel``: ``DistributedDataParallel``, as PyTorch's."""

from ._ddp import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
