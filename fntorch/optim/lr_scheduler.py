"""``ft.optim.lr_scheduler``: PyTorch's learning-rate schedulers, over ``ft.optim``.

Each scheduler rewrites ``optimizer.param_groups[i]["lr"]`` on ``step()`` with the same
formulas PyTorch 2.13 uses (its recursive, chainable forms), so the lr sequences agree
exactly. Constructing one records ``initial_lr`` in each param group and takes the
initial step, as PyTorch's do.

>>> import fntorch as ft
>>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
>>> sched = ft.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(4):
...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25]
"""

from ._lr_base import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiStepLR,
    StepLR,
)
from ._lr_cycles import OneCycleLR, ReduceLROnPlateau, SequentialLR

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LinearLR",
    "OneCycleLR",
    "SequentialLR",
    "ReduceLROnPlateau",
]
