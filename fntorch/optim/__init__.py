"""``ft.optim``: PyTorch's optimizers, stateful (over cells) and pure (``(init, update)``).

The stateful classes (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``)
take ``model.parameters()`` as in PyTorch; ``ft.optim.functional`` (also reachable as
``ft.optim.sgd``, ``ft.optim.adam``, ...) holds the same optimizers as pure pairs that
``ft.jit`` and ``ft.grad`` take; ``ft.optim.lr_scheduler`` the learning-rate schedulers.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.ones(1))
>>> opt = ft.optim.SGD([p], lr=0.25); p.grad = ft.ones(1); opt.step(); p.item()
0.75
"""

from . import functional, lr_scheduler
from ._optimizers import SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from .functional import adadelta, adagrad, adam, adamw, rmsprop, sgd
from .optimizer import Optimizer

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "sgd",
    "adam",
    "adamw",
    "rmsprop",
    "adagrad",
    "adadelta",
    "functional",
    "lr_scheduler",
]
