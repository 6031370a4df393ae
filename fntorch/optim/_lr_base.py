"""The lr scheduler base class and the one-formula schedulers (``ft.optim.lr_scheduler``).

>>> import fntorch as ft
>>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
>>> ExponentialLR(opt, gamma=0.5).get_last_lr()
[1.0]
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _values(optimizer, key: str) -> list:
    return [group[key] for group in optimizer.param_groups]


class LRScheduler:
    """Base class: ``step()`` advances ``last_epoch`` and writes ``get_lr()`` into the
    param groups; ``get_last_lr()`` is the lr list the last step wrote.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=0.1)
    >>> s = ft.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> s.last_epoch, opt.param_groups[0]["initial_lr"]
    (0, 0.1)
    """

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0: load the optimizer's state "
                        "dict first, or start with last_epoch=-1"
                    )
        self.base_lrs = _values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The lrs for the current ``last_epoch`` (called by ``step``).

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> ft.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5).get_lr()
        [0.5]
        """
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The lrs the last ``step()`` set, one per param group.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> ft.optim.lr_scheduler.StepLR(opt, 1).get_last_lr()
        [1.0]
        """
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advances one epoch (or, deprecated as in PyTorch, jumps to ``epoch``).

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.ExponentialLR(opt, 0.5); s.step(); s.get_last_lr()
        [0.5]
        """
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _values(self.optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes but the optimizer, as PyTorch's.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> ft.optim.lr_scheduler.StepLR(opt, 3).state_dict()["step_size"]
        3
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores ``state_dict()``'s attributes.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.StepLR(opt, 3); s.load_state_dict({"last_epoch": 7})
        >>> s.last_epoch
        7
        """
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch), one lambda or one per param group.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.9**e); s.step(); s.get_last_lr()
    [0.9]
    """

    def __init__(self, optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch's: functions are not saved (``None``), callable objects' ``__dict__`` is.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> ft.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"]
        [None]
        """
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        sd["lr_lambdas"] = [
            None if callable(fn) and hasattr(fn, "__code__") else dict(vars(fn))
            for fn in self.lr_lambdas
        ]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores ``state_dict()`` (callable objects' attributes included).

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
        >>> s.load_state_dict(s.state_dict()); s.last_epoch
        0
        """
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self) -> list:
        """Each base lr times its ``lr_lambda(last_epoch)``."""
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiplies the lr by ``gamma`` every ``step_size`` epochs.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1); s.step()
    >>> s.get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current lrs, times ``gamma`` on every ``step_size``-th epoch (recursive form)."""
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the lr by ``gamma`` at each milestone epoch.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.MultiStepLR(opt, milestones=[1], gamma=0.5); s.step()
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(
        self, optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current lrs, times ``gamma`` (per repeat) on a milestone epoch."""
        if self.last_epoch not in self.milestones:
            return _values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        n = bisect_right(milestones, self.last_epoch)
        return [b * self.gamma**n for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the lr by ``gamma`` every epoch.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5); s.step(); s.step()
    >>> s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current lrs times ``gamma`` (unchanged on the initial step)."""
        if self._is_initial:
            return _values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_max`` epochs (PyTorch's
    recursive form, continuing periodically past ``T_max``).

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2); s.step()
    >>> round(s.get_last_lr()[0], 6)
    0.5
    """

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The next lrs of the cosine schedule from the current ones (PyTorch's recursive
        form; its closed form on a first step with ``last_epoch > 0``)."""
        groups, t, T, eta = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:
            return [eta + (b - eta) * (1 + math.cos(t * math.pi / T)) / 2 for b in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [
                g["lr"] + (b - eta) * (1 - math.cos(math.pi / T)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (g["lr"] - eta) + eta for g in groups]

    def _get_closed_form_lr(self) -> list:
        t, eta = self.last_epoch, self.eta_min
        return [
            eta + (b - eta) * (1 + math.cos(math.pi * t / self.T_max)) / 2 for b in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scales the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> [s.get_last_lr()[0]] + [(s.step(), s.get_last_lr()[0])[1] for _ in range(2)]
    [0.5, 0.75, 1.0]
    """

    def __init__(
        self,
        optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current lrs, moved by one epoch's share of the linear factor change."""
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        factor = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [g["lr"] * factor for g in groups]

    def _get_closed_form_lr(self) -> list:
        span = self.end_factor - self.start_factor
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [b * (self.start_factor + span * frac) for b in self.base_lrs]
