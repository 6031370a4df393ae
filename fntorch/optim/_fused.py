"""An eager ``step()`` as one compiled program per parameter group (PyTorch's
``foreach``/``fused`` idea, by the jit instead of hand-written multi-tensor kernels).

Run per parameter, Adam's rule is some fifteen eager operations, each a dispatch and a
pass over memory: 2.2 ms of a 15 ms W10 step for ten parameters. ``ft.jit`` of the same
rule over the whole group fuses it into a few kernels called once. The arithmetic is the
rule's (``_rules``), so the result is the per-parameter path's to rounding.

The jit's static key is the group's hyperparameters other than ``lr`` (the rules branch
on them in Python: ``momentum != 0``, ``amsgrad``, the weight of a lerp); ``lr`` is an
argument, so a scheduler that changes only it never retraces. A group whose other
settings keep changing (a cyclic momentum) would retrace on every step: after
``MAX_CONFIGS`` configurations an optimizer goes back to the per-parameter path.
Under a jit trace (``ft.compile`` of a step) or with values that are not plain tensors,
``step`` takes the per-parameter path too: a trace fuses it anyway.

Only groups of float32 (or narrower) parameters are fused. A Python float argument of a
jit is a weak float32 scalar, so ``lr`` reaches the program rounded to float32: exactly
what the per-parameter path computes with a float32 parameter, but float64 parameters
would see ``lr`` to eight digits instead of sixteen.
"""

from __future__ import annotations

import functools

from ..fx import dtypes
from ..fx.cell import Cell
from ..fx.cell import scopes as _cell_scopes
from ..fx.core import EVAL_TRACE, Tensor, _new_tensor, current_trace
from ..transforms.jit import jit
from ._rules import RULES

MAX_CONFIGS = 4
_FUSED_DTYPES = (dtypes.float32, dtypes.bfloat16, dtypes.float16)


def _static(group: dict):
    """The group's hyperparameters but ``params`` and ``lr``, hashable; None when one is
    not a plain number, bool, string or tuple of numbers (a tensor ``lr``-like setting)."""
    items = []
    for k, v in group.items():
        if k in ("params", "lr", "param_names"):
            continue
        if isinstance(v, list):
            v = tuple(v)
        try:
            hash(v)
        except TypeError:
            return None
        if isinstance(v, Tensor):
            return None
        items.append((k, v))
    return tuple(items)


@functools.cache
def _program(rule: str):
    update = RULES[rule][1]

    def run(static, lr, values, grads, states):
        hp = dict(static)
        hp["lr"] = lr
        outs = [update(v, g, s, hp) for v, g, s in zip(values, grads, states)]
        return [o[0] for o in outs], [o[1] for o in outs]

    return jit(run, static_argnums=0)


def _value(t):
    """A cell (or its ``.data`` alias) as a plain tensor of its value; None for anything
    else that is not a plain tensor (a Python number in a state, a foreign array)."""
    if isinstance(t, Cell):
        return _new_tensor(t._value)
    return t if type(t) is Tensor else None


def fused_step(opt, items_by_group) -> bool:
    """Runs the update of every ``(param, value, grad, state)`` of each group in one
    compiled call per group and writes the results back; False (nothing written) where
    this optimizer cannot take the fused path, so the caller runs the per-parameter one."""
    if _cell_scopes or current_trace() is not EVAL_TRACE:
        return False
    configs = opt.__dict__.setdefault("_fused_configs", set())
    plans = []
    for group, items in items_by_group:
        static = _static(group)
        if static is None or not isinstance(group["lr"], (int, float)):
            return False
        if static not in configs and len(configs) >= MAX_CONFIGS:
            return False
        args = []
        for _, v, g, s in items:
            state = {k: _value(x) for k, x in s.items()}
            value, grad = _value(v), _value(g)
            if value is None or grad is None or any(x is None for x in state.values()):
                return False
            if value.dtype not in _FUSED_DTYPES:
                return False
            args.append((value, grad, state))
        plans.append((static, group, items, args))
    for static, group, items, args in plans:
        configs.add(static)
        if not items:
            continue
        values, grads, states = (list(a) for a in zip(*args))
        new_values, new_states = _program(opt.rule)(
            static, float(group["lr"]), values, grads, states
        )
        for (p, _, _, _), value, state in zip(items, new_values, new_states):
            opt._write_state(p, state)
            p.data = value
    return True
