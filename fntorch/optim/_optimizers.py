"""The stateful optimizers: PyTorch's constructors over the shared update rules
(``_rules``). A constructor's signature is PyTorch's; what becomes of its arguments
(validation, the param group's keys and their order) is ``_hyperparams``' table, shared
with the pure optimizers of ``functional``.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.zeros(2))
>>> opt = ft.optim.RMSprop([p], lr=0.01, momentum=0.9, centered=True)
>>> p.grad = ft.ones(2); opt.step(); list(opt.state[p])
['step', 'square_avg', 'momentum_buffer', 'grad_avg']
"""

from __future__ import annotations

from ..ops import api
from ._hyperparams import group_defaults
from .optimizer import Optimizer


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD`` (momentum, dampening, nesterov,
    weight_decay, maximize). The state holds ``momentum_buffer`` once a step ran with
    ``momentum != 0``.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); opt = ft.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     p.grad = ft.ones(1); opt.step()
    >>> round(p.item(), 6)
    -0.29
    """

    rule = "sgd"

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        super().__init__(params, group_defaults("sgd", locals()))

    def _init_state(self, param, group):
        # The momentum buffer starts as the first step's gradient: with no dampening, a
        # zero buffer gives exactly that (0 * m + g), and a buffer present from the start
        # keeps a jit'ed step's trace the same from its first call on.
        if group["momentum"] != 0 and group["dampening"] == 0:
            return {"momentum_buffer": api.zeros_like(param)}
        return {}


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (amsgrad, maximize, decoupled_weight_decay;
    ``foreach``, ``fused``, ``capturable``, ``differentiable`` accepted and ignored).

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); opt = ft.optim.Adam([p], lr=0.1, amsgrad=True)
    >>> p.grad = ft.ones(1); opt.step(); list(opt.state[p])
    ['step', 'exp_avg', 'exp_avg_sq', 'max_exp_avg_sq']
    """

    rule = "adam"

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        super().__init__(params, group_defaults("adam", locals()))


class AdamW(Adam):
    """AdamW (Adam with decoupled weight decay, default 1e-2), as ``torch.optim.AdamW``.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.AdamW([p], lr=0.1)
    >>> opt.param_groups[0]["decoupled_weight_decay"], opt.param_groups[0]["weight_decay"]
    (True, 0.01)
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        # AdamW is Adam's param group with decoupled_weight_decay fixed on
        args = {**locals(), "decoupled_weight_decay": True}
        Optimizer.__init__(self, params, group_defaults("adam", args))


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop`` (alpha, eps, weight_decay, momentum, centered,
    maximize).

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); opt = ft.optim.RMSprop([p], lr=0.01)
    >>> p.grad = ft.ones(1); opt.step(); round(p.item(), 4)
    -0.1
    """

    rule = "rmsprop"

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        super().__init__(params, group_defaults("rmsprop", locals()))


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (lr_decay, weight_decay,
    initial_accumulator_value, eps, maximize). As PyTorch, the state exists from
    construction.

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); opt = ft.optim.Adagrad([p], lr=0.1)
    >>> opt.state[p]["sum"].tolist(), opt.state[p]["step"].item()
    ([0.0], 0.0)
    """

    rule = "adagrad"

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(params, group_defaults("adagrad", locals()))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p.data, group))


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta`` (lr, rho, eps, weight_decay, maximize).

    >>> import fntorch as ft
    >>> p = ft.nn.Parameter(ft.zeros(1)); opt = ft.optim.Adadelta([p])
    >>> p.grad = ft.ones(1); opt.step(); list(opt.state[p])
    ['step', 'square_avg', 'acc_delta']
    """

    rule = "adadelta"

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        super().__init__(params, group_defaults("adadelta", locals()))
