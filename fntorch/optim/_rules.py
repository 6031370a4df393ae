"""One update rule per optimizer, on one parameter: the arithmetic both APIs share.

Each rule is a pair of plain functions over immutable tensors, kept in ``RULES`` by
optimizer name (STYLE.md: rules as data):

- ``init(param, hp) -> dict``: the fresh per-parameter state (PyTorch's keys, in PyTorch's
  order; ``step`` is a 0-d float32 tensor, as PyTorch 2.x keeps it);
- ``update(param, grad, state, hp) -> (new_param, new_state)``: one step, with ``hp`` the
  hyperparameters (a param group or the functional optimizer's settings).

The operations follow PyTorch's single-tensor (``foreach=False``) implementations in the
same order, so float64 results agree to rounding and float32 ones to an ulp or two
(PyTorch's CPU kernels fuse some multiply-adds). Bias corrections are computed in float64
from the step count, as PyTorch computes them in Python floats from ``step.item()``, then
rounded to the parameter's dtype where PyTorch's kernels round the Python scalar.

>>> import fntorch as ft
>>> init, update = RULES["sgd"]
>>> p, s = update(ft.ones(2), ft.ones(2), init(ft.ones(2), {"momentum": 0}),
...               {"lr": 0.5, "momentum": 0, "dampening": 0, "weight_decay": 0,
...                "nesterov": False, "maximize": False})
>>> p.tolist(), s
([0.5, 0.5], {})
"""

from __future__ import annotations

from ..fx import dtypes
from ..fx.core import Tensor
from ..ops import api


def _step0(param: Tensor) -> Tensor:
    """The step count's 0.0, on ``param``'s device: a fused step compiles the group's
    parameters and states into one program, which takes operands on one device only."""
    return api.zeros((), dtype=dtypes.float32, device=getattr(param, "device", None))


def _cast(x: Tensor, like: Tensor) -> Tensor:
    """``x`` (a float64 scalar tensor) rounded to ``like``'s dtype, as a kernel rounds a
    Python scalar argument."""
    return api.astype(x, like.dtype)


def _first_step(state: dict, key: str):
    """Whether this is the first step for a buffer PyTorch creates lazily: a Python bool
    when the buffer is absent (the stateful classes), else a 0-d bool tensor read from the
    step count (the pure optimizers, whose state exists from ``init``)."""
    if state.get(key) is None:
        return True
    if "step" in state:
        return state["step"] == 0
    return False


def _select(first, if_first: Tensor, otherwise) -> Tensor:
    if first is True:
        return if_first
    if first is False:
        return otherwise()
    return api.where(first, if_first, otherwise())


def _lerp(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """``torch.lerp`` with a scalar weight: its two branches, for accuracy near 0 and 1."""
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _grad(param: Tensor, grad: Tensor, hp: dict) -> Tensor:
    grad = -grad if hp["maximize"] else grad
    if hp["weight_decay"] != 0 and not hp.get("decoupled_weight_decay", False):
        grad = grad + hp["weight_decay"] * param
    return grad


# ------------------------------------------------------------------------------- SGD


def sgd_init(param: Tensor, hp: dict) -> dict:
    """SGD keeps a momentum buffer only when ``momentum != 0``; the pure form also keeps a
    step count, which says when the buffer starts (PyTorch's first step copies the grad)."""
    if hp["momentum"] == 0:
        return {}
    return {"momentum_buffer": api.zeros_like(param), "step": _step0(param)}


def sgd_update(param: Tensor, grad: Tensor, state: dict, hp: dict):
    grad = _grad(param, grad, hp)
    new_state = dict(state)
    momentum = hp["momentum"]
    if momentum != 0:
        first = _first_step(state, "momentum_buffer")
        buf = state.get("momentum_buffer")
        buf = _select(first, grad, lambda: buf * momentum + (1 - hp["dampening"]) * grad)
        new_state["momentum_buffer"] = buf
        if "step" in state:
            new_state["step"] = state["step"] + 1
        grad = grad + momentum * buf if hp["nesterov"] else buf
    return param - hp["lr"] * grad, new_state


# ---------------------------------------------------------------------- Adam and AdamW


def adam_init(param: Tensor, hp: dict) -> dict:
    state = {"step": _step0(param), "exp_avg": api.zeros_like(param)}
    state["exp_avg_sq"] = api.zeros_like(param)
    if hp["amsgrad"]:
        state["max_exp_avg_sq"] = api.zeros_like(param)
    return state


def adam_update(param: Tensor, grad: Tensor, state: dict, hp: dict):
    lr, (beta1, beta2), eps = hp["lr"], hp["betas"], hp["eps"]
    step = state["step"] + 1
    if hp["weight_decay"] != 0 and hp.get("decoupled_weight_decay", False):
        param = param * (1 - lr * hp["weight_decay"])
    grad = _grad(param, grad, hp)
    exp_avg = _lerp(state["exp_avg"], grad, 1 - beta1)
    exp_avg_sq = state["exp_avg_sq"] * beta2 + (1 - beta2) * grad * grad
    step64 = api.astype(step, dtypes.float64)
    bias_correction1 = 1 - beta1**step64
    bias_correction2 = 1 - beta2**step64
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    new_state = {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
    second = exp_avg_sq
    if hp["amsgrad"]:
        second = api.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        new_state["max_exp_avg_sq"] = second
    denom = api.sqrt(second) / _cast(bias_correction2_sqrt, param) + eps
    return param + _cast(-step_size, param) * exp_avg / denom, new_state


# ---------------------------------------------------------------------------- RMSprop


def rmsprop_init(param: Tensor, hp: dict) -> dict:
    state = {"step": _step0(param), "square_avg": api.zeros_like(param)}
    if hp["momentum"] > 0:
        state["momentum_buffer"] = api.zeros_like(param)
    if hp["centered"]:
        state["grad_avg"] = api.zeros_like(param)
    return state


def rmsprop_update(param: Tensor, grad: Tensor, state: dict, hp: dict):
    alpha, lr = hp["alpha"], hp["lr"]
    grad = _grad(param, grad, hp)
    new_state = {"step": state["step"] + 1}
    square_avg = state["square_avg"] * alpha + (1 - alpha) * grad * grad
    new_state["square_avg"] = square_avg
    if hp["centered"]:
        grad_avg = _lerp(state["grad_avg"], grad, 1 - alpha)
        new_state["grad_avg"] = grad_avg
        avg = api.sqrt(square_avg + -1 * grad_avg * grad_avg)
    else:
        avg = api.sqrt(square_avg)
    avg = avg + hp["eps"]
    if hp["momentum"] > 0:
        buf = state["momentum_buffer"] * hp["momentum"] + grad / avg
        new_state["momentum_buffer"] = buf
        param = param - lr * buf
    else:
        param = param + (-lr) * grad / avg
    # PyTorch's key order: step, square_avg, momentum_buffer, grad_avg
    order = ("step", "square_avg", "momentum_buffer", "grad_avg")
    return param, {k: new_state[k] for k in order if k in new_state}


# ---------------------------------------------------------------------------- Adagrad


def adagrad_init(param: Tensor, hp: dict) -> dict:
    acc = api.full_like(param, hp["initial_accumulator_value"])
    return {"step": _step0(param), "sum": acc}


def adagrad_update(param: Tensor, grad: Tensor, state: dict, hp: dict):
    step = state["step"] + 1
    grad = _grad(param, grad, hp)
    # clr = lr / (1 + (step - 1) * lr_decay), in float64 as PyTorch's Python floats
    step64 = api.astype(step, dtypes.float64)
    clr = hp["lr"] / (1 + (step64 - 1) * hp["lr_decay"])
    acc = state["sum"] + 1 * grad * grad
    std = api.sqrt(acc) + hp["eps"]
    return param + _cast(-clr, param) * grad / std, {"step": step, "sum": acc}


# --------------------------------------------------------------------------- Adadelta


def adadelta_init(param: Tensor, hp: dict) -> dict:
    zeros = api.zeros_like(param)
    return {"step": _step0(param), "square_avg": zeros, "acc_delta": api.zeros_like(param)}


def adadelta_update(param: Tensor, grad: Tensor, state: dict, hp: dict):
    rho, eps = hp["rho"], hp["eps"]
    grad = _grad(param, grad, hp)
    square_avg = state["square_avg"] * rho + (1 - rho) * grad * grad
    std = api.sqrt(square_avg + eps)
    delta = api.sqrt(state["acc_delta"] + eps) / std * grad
    acc_delta = state["acc_delta"] * rho + (1 - rho) * delta * delta
    new_state = {"step": state["step"] + 1, "square_avg": square_avg, "acc_delta": acc_delta}
    return param - hp["lr"] * delta, new_state


RULES = {
    "sgd": (sgd_init, sgd_update),
    "adam": (adam_init, adam_update),
    "adamw": (adam_init, adam_update),
    "rmsprop": (rmsprop_init, rmsprop_update),
    "adagrad": (adagrad_init, adagrad_update),
    "adadelta": (adadelta_init, adadelta_update),
}
