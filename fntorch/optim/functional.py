"""Pure optimizers: ``(init, update)`` pairs over pytrees, as optax's.

``opt = ft.optim.functional.adam(lr=1e-3)`` returns an ``Optimizer`` pair;
``state = opt.init(params)`` builds the state (a pytree of tensors, step count included)
and ``params, state = opt.update(grads, state, params)`` takes one step. Both are pure
functions of tensors, so they run under ``ft.jit`` (one trace serves every step: the step
count is a tensor in the state) and ``ft.grad``. The arithmetic is the stateful classes'
(``fntorch.optim._rules``), hence PyTorch's.

>>> import fntorch as ft
>>> opt = ft.optim.functional.sgd(lr=0.1)
>>> params = {"w": ft.ones(2)}
>>> state = opt.init(params)
>>> params, state = opt.update({"w": ft.ones(2)}, state, params)
>>> [round(v, 6) for v in params["w"].tolist()]
[0.9, 0.9]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .. import tree
from ._hyperparams import rule_hyperparams
from ._rules import RULES


class Optimizer(NamedTuple):
    """A pure optimizer: ``init(params) -> state``, ``update(grads, state, params) ->
    (new_params, new_state)``. ``hyperparams`` holds its settings (PyTorch's names).

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.adam(lr=1e-2)
    >>> opt.hyperparams["betas"], sorted(opt.init(ft.zeros(3)))
    ((0.9, 0.999), ['exp_avg', 'exp_avg_sq', 'step'])
    """

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], tuple]
    hyperparams: dict


def make(name: str, hyperparams: dict) -> Optimizer:
    """The pure optimizer of rule ``name`` (a key of ``_rules.RULES``) with ``hyperparams``.

    >>> import fntorch as ft
    >>> opt = make("sgd", dict(lr=1.0, momentum=0, dampening=0, weight_decay=0,
    ...                        nesterov=False, maximize=False))
    >>> opt.update(ft.ones(1), opt.init(ft.ones(1)), ft.ones(1))[0].tolist()
    [0.0]
    """
    init_leaf, update_leaf = RULES[name]
    hp = dict(hyperparams)

    def init(params):
        """The optimizer state for ``params``: one dict of tensors per leaf."""
        return tree.map(lambda p: init_leaf(p, hp), params)

    def update(grads, state, params):
        """One step: ``(new_params, new_state)``; a ``None`` gradient leaves its leaf as is."""
        flat_p, treedef = tree.flatten(params)
        flat_g = treedef.flatten_up_to(grads)
        flat_s = treedef.flatten_up_to(state)
        new_p, new_s = [], []
        for p, g, s in zip(flat_p, flat_g, flat_s):
            if g is None:
                new_p.append(p)
                new_s.append(s)
                continue
            p2, s2 = update_leaf(p, g, s, hp)
            new_p.append(p2)
            new_s.append(s2)
        return treedef.unflatten(new_p), treedef.unflatten(new_s)

    return Optimizer(init, update, hp)


def sgd(
    lr: float = 1e-3,
    momentum: float = 0.0,
    dampening: float = 0.0,
    weight_decay: float = 0.0,
    nesterov: bool = False,
    *,
    maximize: bool = False,
    foreach: bool | None = None,
    differentiable: bool = False,
    fused: bool | None = None,
) -> Optimizer:
    """Pure SGD, as ``torch.optim.SGD`` (momentum, dampening, nesterov, weight_decay,
    maximize). With momentum the state holds ``momentum_buffer`` and a ``step`` count.

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.sgd(lr=0.5, momentum=0.9)
    >>> p, s = opt.update(ft.ones(1), opt.init(ft.zeros(1)), ft.zeros(1))
    >>> p.tolist(), s["momentum_buffer"].tolist()
    ([-0.5], [1.0])
    """
    return make("sgd", rule_hyperparams("sgd", locals()))


def adam(
    lr: float = 1e-3,
    betas: tuple = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    amsgrad: bool = False,
    *,
    maximize: bool = False,
    decoupled_weight_decay: bool = False,
    foreach: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
    fused: bool | None = None,
) -> Optimizer:
    """Pure Adam, as ``torch.optim.Adam`` (``foreach``, ``fused``, ``capturable``,
    ``differentiable`` accepted and ignored).

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.adam(lr=0.1)
    >>> p, s = opt.update(ft.ones(1), opt.init(ft.zeros(1)), ft.zeros(1))
    >>> round(p.item(), 6), s["step"].item()
    (-0.1, 1.0)
    """
    return make("adam", rule_hyperparams("adam", locals()))


def adamw(
    lr: float = 1e-3,
    betas: tuple = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 1e-2,
    amsgrad: bool = False,
    *,
    maximize: bool = False,
    foreach: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
    fused: bool | None = None,
) -> Optimizer:
    """Pure AdamW (decoupled weight decay), as ``torch.optim.AdamW``.

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.adamw(lr=0.1, weight_decay=0.5)
    >>> p, _ = opt.update(ft.zeros(1), opt.init(ft.ones(1)), ft.ones(1))
    >>> round(p.item(), 6)
    0.95
    """
    args = {**locals(), "decoupled_weight_decay": True}
    return make("adamw", rule_hyperparams("adamw", args))


def rmsprop(
    lr: float = 1e-2,
    alpha: float = 0.99,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    momentum: float = 0.0,
    centered: bool = False,
    *,
    maximize: bool = False,
    capturable: bool = False,
    foreach: bool | None = None,
    differentiable: bool = False,
) -> Optimizer:
    """Pure RMSprop, as ``torch.optim.RMSprop`` (alpha, eps, weight_decay, momentum,
    centered, maximize).

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.rmsprop(lr=0.01, centered=True)
    >>> sorted(opt.init(ft.zeros(2)))
    ['grad_avg', 'square_avg', 'step']
    """
    return make("rmsprop", rule_hyperparams("rmsprop", locals()))


def adagrad(
    lr: float = 1e-2,
    lr_decay: float = 0.0,
    weight_decay: float = 0.0,
    initial_accumulator_value: float = 0.0,
    eps: float = 1e-10,
    *,
    maximize: bool = False,
    foreach: bool | None = None,
    differentiable: bool = False,
    fused: bool | None = None,
) -> Optimizer:
    """Pure Adagrad, as ``torch.optim.Adagrad``.

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.adagrad(lr=0.1, initial_accumulator_value=1.0)
    >>> opt.init(ft.zeros(2))["sum"].tolist()
    [1.0, 1.0]
    """
    return make("adagrad", rule_hyperparams("adagrad", locals()))


def adadelta(
    lr: float = 1.0,
    rho: float = 0.9,
    eps: float = 1e-6,
    weight_decay: float = 0.0,
    *,
    maximize: bool = False,
    capturable: bool = False,
    foreach: bool | None = None,
    differentiable: bool = False,
) -> Optimizer:
    """Pure Adadelta, as ``torch.optim.Adadelta``.

    >>> import fntorch as ft
    >>> opt = ft.optim.functional.adadelta()
    >>> sorted(opt.init(ft.zeros(2)))
    ['acc_delta', 'square_avg', 'step']
    """
    return make("adadelta", rule_hyperparams("adadelta", locals()))


__all__ = ["Optimizer", "make", "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta"]
