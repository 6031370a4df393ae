"""The composite lr schedulers: OneCycleLR, SequentialLR, ReduceLROnPlateau
(``ft.optim.lr_scheduler``).

>>> import fntorch as ft
>>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
>>> ReduceLROnPlateau(opt).get_last_lr()
[1.0]
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from ._lr_base import LRScheduler, _check_optimizer, _values


def _format_param(name: str, optimizer, param) -> list:
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): warm up to ``max_lr``, anneal to
    ``max_lr / div_factor / final_div_factor``, cycling momentum (or Adam's beta1).

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=0.1, momentum=0.9)
    >>> s = ft.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> round(s.get_last_lr()[0], 6), opt.param_groups[0]["momentum"]
    (0.04, 0.95)
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        def phase(end, s_lr, e_lr, s_m, e_m):
            return dict(
                end_step=end, start_lr=s_lr, end_lr=e_lr, start_momentum=s_m, end_momentum=e_m
            )

        n = self.total_steps
        up = phase(
            float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"
        )
        if three_phase:
            self._schedule_phases = [
                up,
                phase(
                    float(2 * pct_start * n) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                phase(n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            down = phase(n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")
            self._schedule_phases = [up, down]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            maxs = _format_param("max_momentum", optimizer, max_momentum)
            bases = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(maxs, bases, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        """The lrs (and momenta, with ``cycle_momentum``) of the phase ``last_epoch`` is in;
        stepping past ``total_steps`` raises ``ValueError``."""
        lrs, step_num = [], self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class SequentialLR(LRScheduler):
    """Runs ``schedulers`` one after another, switching at each of ``milestones``.

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> a = ft.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> b = ft.optim.lr_scheduler.StepLR(opt, step_size=10)
    >>> s = ft.optim.lr_scheduler.SequentialLR(opt, [a, b], milestones=[1]); s.step()
    >>> s.get_last_lr()
    [1.0]
    """

    def __init__(self, optimizer, schedulers: list, milestones: list, last_epoch: int = -1):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                    "additional kwargs to be specified when calling `step`, but got one at "
                    f"index {i} in the given schedulers sequence."
                )
            if optimizer is not scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but got "
                    f"scheduler {type(scheduler).__name__} at index {i} has "
                    f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}."
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Undoes the initial step the inner schedulers took at construction.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> a = ft.optim.lr_scheduler.StepLR(opt, 2)
        >>> ft.optim.lr_scheduler.SequentialLR(opt, [a], []).recursive_undo(a); a.last_epoch
        -1
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Steps the scheduler of the current phase (restarting it at a milestone).

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> a = ft.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        >>> s = ft.optim.lr_scheduler.SequentialLR(opt, [a], []); s.step(); s.get_last_lr()
        [0.5]
        """
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Its attributes with each inner scheduler's state dict.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> a = ft.optim.lr_scheduler.StepLR(opt, 2)
        >>> len(ft.optim.lr_scheduler.SequentialLR(opt, [a], []).state_dict()["_schedulers"])
        1
        """
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores ``state_dict()``, inner schedulers included.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.SequentialLR(opt, [ft.optim.lr_scheduler.StepLR(opt, 2)], [])
        >>> s.load_state_dict(s.state_dict()); s.last_epoch
        0
        """
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the lr by ``factor`` when ``step(metric)`` has not improved for
    ``patience`` epochs (``mode`` "min" or "max", ``threshold_mode`` "rel" or "abs").

    >>> import fntorch as ft
    >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
    >>> s = ft.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
    >>> for loss in [1.0, 1.0, 1.0]:
    ...     s.step(loss)
    >>> s.get_last_lr()
    [0.1]
    """

    def __init__(
        self,
        optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr=0,
        eps: float = 1e-8,
    ):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        """Records ``metrics`` (a number or 0-d tensor) and reduces the lr on a plateau.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.ReduceLROnPlateau(opt); s.step(ft.asarray(0.5)); s.best
        0.5
        """
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    "to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is in its cooldown period after a reduction.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> ft.optim.lr_scheduler.ReduceLROnPlateau(opt).in_cooldown
        False
        """
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores ``state_dict()``.

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> s = ft.optim.lr_scheduler.ReduceLROnPlateau(opt); s.load_state_dict({"best": 2.0})
        >>> s.best
        2.0
        """
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
