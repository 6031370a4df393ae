"""The stateful optimizers: PyTorch's constructors, defaults and errors over the shared
rules (``_rules``). The ``check_*`` functions are the constructors' validation, shared
with the pure optimizers of ``functional``.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.zeros(2))
>>> opt = ft.optim.RMSprop([p], lr=0.01, momentum=0.9, centered=True)
>>> p.grad = ft.ones(2); opt.step(); list(opt.state[p])
['step', 'square_avg', 'momentum_buffer', 'grad_avg']
"""

from __future__ import annotations

from ..fx.core import Tensor
from .optimizer import Optimizer


def _scalar(x):
    return float(x.item()) if isinstance(x, Tensor) else x


def check_sgd(lr, momentum, dampening, weight_decay, nesterov) -> None:
    """Raises PyTorch's ``ValueError`` for invalid SGD settings.

    >>> check_sgd(-1.0, 0, 0, 0, False)
    Traceback (most recent call last):
    ValueError: Invalid learning rate: -1.0
    """
    if _scalar(lr) < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if momentum < 0.0:
        raise ValueError(f"Invalid momentum value: {momentum}")
    if _scalar(weight_decay) < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if nesterov and (momentum <= 0 or dampening != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")


def check_adam(lr, betas, eps, weight_decay) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adam/AdamW settings.

    >>> check_adam(1e-3, (0.9, 1.0), 1e-8, 0)
    Traceback (most recent call last):
    ValueError: Invalid beta parameter at index 1: 1.0
    """
    if not 0.0 <= _scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def check_rmsprop(lr, alpha, eps, weight_decay, momentum) -> None:
    """Raises PyTorch's ``ValueError`` for invalid RMSprop settings.

    >>> check_rmsprop(0.01, -0.5, 1e-8, 0, 0)
    Traceback (most recent call last):
    ValueError: Invalid alpha value: -0.5
    """
    if not 0.0 <= _scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= momentum:
        raise ValueError(f"Invalid momentum value: {momentum}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not 0.0 <= alpha:
        raise ValueError(f"Invalid alpha value: {alpha}")


def check_adagrad(lr, lr_decay, weight_decay, initial_accumulator_value, eps) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adagrad settings.

    >>> check_adagrad(0.01, -1, 0, 0, 1e-10)
    Traceback (most recent call last):
    ValueError: Invalid lr_decay value: -1
    """
    if not 0.0 <= _scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= lr_decay:
        raise ValueError(f"Invalid lr_decay value: {lr_decay}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not 0.0 <= initial_accumulator_value:
        raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_adadelta(lr, rho, eps, weight_decay) -> None:
    """Raises PyTorch's ``ValueError`` for invalid Adadelta settings.

    >>> check_adadelta(1.0, 1.5, 1e-6, 0)
    Traceback (most recent call last):
    ValueError: Invalid rho value: 1.5
    """
    if not 0.0 <= _scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"Invalid rho value: {rho}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


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
        check_sgd(lr, momentum, dampening, weight_decay, nesterov)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def _init_state(self, param, group):
        return {}  # the momentum buffer starts as the first step's gradient


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
        check_adam(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=tuple(_scalar(b) for b in betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)


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
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )


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
        check_rmsprop(lr, alpha, eps, weight_decay, momentum)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)


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
        check_adagrad(lr, lr_decay, weight_decay, initial_accumulator_value, eps)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
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
        check_adadelta(lr, rho, eps, weight_decay)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)
