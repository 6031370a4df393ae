"""The optimizers' settings, once for both APIs: PyTorch's validation (``check_*``), the
order of the keys in a param group (hence in ``state_dict``), and which keys the update
rules read.

A constructor (``SGD.__init__``) or a pure builder (``functional.sgd``) passes its
arguments (``locals()``) to ``group_defaults`` or ``rule_hyperparams``: the signature is
the one list of settings, this table the one place that says what becomes of them.

>>> group_defaults("adagrad", dict(lr=0.1, lr_decay=0, weight_decay=0,
...     initial_accumulator_value=0, eps=1e-10, foreach=None, maximize=False,
...     differentiable=False, fused=None))["lr"]
0.1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..fx.core import Tensor


def _scalar(x):
    return float(x.item()) if isinstance(x, Tensor) else x


def check_sgd(hp: dict) -> None:
    """Raises PyTorch's ``ValueError`` for invalid SGD settings.

    >>> check_sgd(dict(lr=-1.0, momentum=0, dampening=0, weight_decay=0, nesterov=False))
    Traceback (most recent call last):
    ValueError: Invalid learning rate: -1.0
    """
    if _scalar(hp["lr"]) < 0.0:
        raise ValueError(f"Invalid learning rate: {hp['lr']}")
    if hp["momentum"] < 0.0:
        raise ValueError(f"Invalid momentum value: {hp['momentum']}")
    if _scalar(hp["weight_decay"]) < 0.0:
        raise ValueError(f"Invalid weight_decay value: {hp['weight_decay']}")
    if hp["nesterov"] and (hp["momentum"] <= 0 or hp["dampening"] != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")


def _check_nonnegative(hp: dict, names: dict) -> None:
    """PyTorch's ``Invalid {what}: {value}`` for the first negative of ``names``."""
    for key, what in names.items():
        if not 0.0 <= _scalar(hp[key]):
            raise ValueError(f"Invalid {what}: {hp[key]}")


def check_adam(hp: dict) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adam/AdamW settings.

    >>> check_adam(dict(lr=1e-3, betas=(0.9, 1.0), eps=1e-8, weight_decay=0))
    Traceback (most recent call last):
    ValueError: Invalid beta parameter at index 1: 1.0
    """
    _check_nonnegative(hp, {"lr": "learning rate", "eps": "epsilon value"})
    for i, beta in enumerate(hp["betas"]):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    _check_nonnegative(hp, {"weight_decay": "weight_decay value"})


def check_rmsprop(hp: dict) -> None:
    """Raises PyTorch's ``ValueError`` for invalid RMSprop settings.

    >>> check_rmsprop(dict(lr=0.01, alpha=-0.5, eps=1e-8, weight_decay=0, momentum=0))
    Traceback (most recent call last):
    ValueError: Invalid alpha value: -0.5
    """
    _check_nonnegative(
        hp,
        {
            "lr": "learning rate",
            "eps": "epsilon value",
            "momentum": "momentum value",
            "weight_decay": "weight_decay value",
            "alpha": "alpha value",
        },
    )


def check_adagrad(hp: dict) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adagrad settings.

    >>> check_adagrad(dict(lr=0.01, lr_decay=-1, weight_decay=0,
    ...                    initial_accumulator_value=0, eps=1e-10))
    Traceback (most recent call last):
    ValueError: Invalid lr_decay value: -1
    """
    _check_nonnegative(
        hp,
        {
            "lr": "learning rate",
            "lr_decay": "lr_decay value",
            "weight_decay": "weight_decay value",
            "initial_accumulator_value": "initial_accumulator_value value",
            "eps": "epsilon value",
        },
    )


def check_adadelta(hp: dict) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adadelta settings.

    >>> check_adadelta(dict(lr=1.0, rho=1.5, eps=1e-6, weight_decay=0))
    Traceback (most recent call last):
    ValueError: Invalid rho value: 1.5
    """
    _check_nonnegative(hp, {"lr": "learning rate"})
    if not 0.0 <= hp["rho"] <= 1.0:
        raise ValueError(f"Invalid rho value: {hp['rho']}")
    _check_nonnegative(hp, {"eps": "epsilon value", "weight_decay": "weight_decay value"})


class Settings(NamedTuple):
    """An optimizer's validation and its param-group keys in PyTorch's order."""

    check: Callable[[dict], None]
    keys: tuple[str, ...]


# Accepted for PyTorch's signatures; they choose among PyTorch's kernels, and fntorch has
# one implementation, so no update rule reads them.
IGNORED = frozenset({"foreach", "capturable", "differentiable", "fused"})

SETTINGS = {
    "sgd": Settings(
        check_sgd,
        ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
         "differentiable", "fused"),
    ),
    "adam": Settings(
        check_adam,
        ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
         "differentiable", "fused", "decoupled_weight_decay"),
    ),
    "rmsprop": Settings(
        check_rmsprop,
        ("lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable", "foreach",
         "maximize", "differentiable"),
    ),
    "adagrad": Settings(
        check_adagrad,
        ("lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "foreach",
         "maximize", "differentiable", "fused"),
    ),
    "adadelta": Settings(
        check_adadelta,
        ("lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach",
         "differentiable"),
    ),
}  # fmt: skip
SETTINGS["adamw"] = SETTINGS["adam"]


def group_defaults(name: str, args: dict) -> dict:
    """The validated defaults of optimizer ``name``'s param groups, from its constructor's
    arguments, keyed in PyTorch's order (``betas`` as a tuple of floats).

    >>> group_defaults("sgd", dict(lr=-1, momentum=0, dampening=0, weight_decay=0,
    ...     nesterov=False, maximize=False, foreach=None, differentiable=False, fused=None))
    Traceback (most recent call last):
    ValueError: Invalid learning rate: -1
    """
    settings = SETTINGS[name]
    hp = {k: args[k] for k in settings.keys}
    if "betas" in hp:
        hp["betas"] = tuple(_scalar(b) for b in hp["betas"])
    settings.check(hp)
    return hp


def rule_hyperparams(name: str, args: dict) -> dict:
    """``group_defaults`` without the keys no update rule reads: the settings of a pure
    optimizer.

    >>> rule_hyperparams("adadelta", dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0,
    ...     maximize=False, capturable=False, foreach=None, differentiable=False))
    {'lr': 1.0, 'rho': 0.9, 'eps': 1e-06, 'weight_decay': 0, 'maximize': False}
    """
    return {k: v for k, v in group_defaults(name, args).items() if k not in IGNORED}
