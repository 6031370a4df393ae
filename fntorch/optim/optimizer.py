"""``ft.optim.Optimizer``: PyTorch's stateful optimizer base, over cells.

Parameters are cells (``ft.nn.Parameter``): ``step()`` reads each one's ``grad``, runs the
optimizer's pure update rule (``fntorch.optim._rules``) on its current value and rebinds
it (``p.data = new``). The per-parameter state (``opt.state[p]``) is a dict of immutable
tensors that each step rebinds. ``param_groups``, ``add_param_group``, ``zero_grad``,
``state_dict`` and ``load_state_dict`` follow ``torch.optim.Optimizer``, layout included.

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.ones(2))
>>> opt = ft.optim.SGD([p], lr=0.5)
>>> p.grad = ft.ones(2); opt.step(); p.tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from ..fx import autocast as _fx_autocast
from ..fx.cell import Cell
from ..fx.core import Tensor
from ..ops import api
from . import _fused
from ._rules import RULES

NOT_A_CELL = (
    "optimizer can only optimize cells (ft.nn.Parameter), but one of the params is {what}: "
    "a plain fntorch tensor is immutable, so step() could not update it. Wrap it as "
    "ft.nn.Parameter(t) and pass that"
)


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _to_fntorch(value):
    """A state value loaded from a state dict: foreign tensors (PyTorch's, numpy arrays)
    become fntorch tensors; numbers and strings stay as they are."""
    if isinstance(value, Tensor) or isinstance(value, (int, float, bool, str, type(None))):
        return value
    if hasattr(value, "__array__") or hasattr(value, "__dlpack__"):
        if hasattr(value, "detach"):  # a torch tensor: numpy() needs it detached
            value = value.detach().cpu()
        return api.asarray(np.asarray(value))
    return value


def _is_floating(t: Tensor) -> bool:
    return np.dtype(np.asarray(api.zeros((), dtype=t.dtype)).dtype).kind == "f"


class Optimizer:
    """Base class of the stateful optimizers (PyTorch's ``torch.optim.Optimizer``).

    Subclasses set ``rule`` (a key of ``fntorch.optim._rules.RULES``) and pass their
    ``defaults``; ``params`` is an iterable of Parameters or of dicts (param groups).

    >>> import fntorch as ft
    >>> w, b = ft.nn.Parameter(ft.ones(2)), ft.nn.Parameter(ft.zeros(1))
    >>> opt = ft.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.1}], lr=1.0)
    >>> [g["lr"] for g in opt.param_groups]
    [1.0, 0.1]
    """

    rule: str = ""

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors "
                f"or dicts, but got {type(params).__module__}.{type(params).__name__}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(dict(param_group))

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a param group (a dict with ``"params"`` and optional hyperparameters; the
        rest come from the optimizer's defaults).

        >>> import fntorch as ft
        >>> opt = ft.optim.SGD([ft.nn.Parameter(ft.ones(1))], lr=1.0)
        >>> opt.add_param_group({"params": ft.nn.Parameter(ft.ones(1)), "lr": 0.5})
        >>> len(opt.param_groups), opt.param_groups[1]["momentum"]
        (2, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                param = param[1]
            tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. "
                    "Some param names are missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Cell):
                raise TypeError(NOT_A_CELL.format(what=type(param).__name__))
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _init_state(self, param: Tensor, group: dict) -> dict:
        """The state a parameter gets before its first step (PyTorch's lazy init)."""
        return RULES[self.rule][0](param, group)

    def step(self, closure: Callable | None = None):
        """One optimization step over every parameter whose ``grad`` is not None; returns
        ``closure()``'s loss when a closure is given (it is called first).

        >>> import fntorch as ft
        >>> p = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.Adam([p], lr=0.1)
        >>> p.grad = ft.ones(1); opt.step(); round(p.item(), 4)
        0.9
        """
        loss = closure() if closure is not None else None
        # The update is never autocast (PyTorch's in-place updates are not eligible).
        with _fx_autocast.suspended():
            items_by_group = [(group, self._items(group)) for group in self.param_groups]
            if _fused.fused_step(self, items_by_group):
                return loss
            update = RULES[self.rule][1]
            for group, items in items_by_group:
                for p, value, grad, state in items:
                    new_value, new_state = update(value, grad, state, group)
                    self._write_state(p, new_state)
                    p.data = new_value
        return loss

    def _items(self, group: dict) -> list:
        """``(param, value, grad, state)`` of each parameter of ``group`` with a grad; a
        parameter's first step creates its state (cells, stored before the update reads
        them: under ft.jit they are implicit inputs and outputs, so a compiled step
        carries them)."""
        items = []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            value = p.data
            if isinstance(grad, Cell):
                grad = grad.data
            state = self.state.get(p)
            if not state:
                state = _as_cells(self._init_state(value, group))
                if state:
                    self.state[p].update(state)
                    state = self.state[p]
            items.append((p, value, grad, state if state else {}))
        return items

    def _write_state(self, p, new_state: dict) -> None:
        if new_state:
            entry = self.state[p]
            old = dict(entry)
            entry.clear()
            entry.update(_as_cells(new_state, old))

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients: to None (the default), or to zeros.

        >>> import fntorch as ft
        >>> p = ft.nn.Parameter(ft.ones(2)); p.grad = ft.ones(2)
        >>> opt = ft.optim.SGD([p]); opt.zero_grad(set_to_none=False); p.grad.tolist()
        [0.0, 0.0]
        """
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None  # a blind write: a compiled step does not depend on the old one
                elif p.grad is not None:
                    p.grad = api.zeros_like(p.grad)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{..., "params":
        [indices]}]}``. The per-parameter dicts are snapshots (their tensors are values; a
        later step rebinds the optimizer's own dicts, not these).

        >>> import fntorch as ft
        >>> p = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.Adam([p])
        >>> p.grad = ft.ones(1); opt.step(); sd = opt.state_dict()
        >>> list(sd["state"][0]), sd["param_groups"][0]["params"]
        (['step', 'exp_avg', 'exp_avg_sq'], [0])
        """
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        state = {
            (mapping[id(k)] if isinstance(k, Tensor) else k): {
                n: x._read() if isinstance(x, Cell) else x for n, x in v.items()
            }
            for k, v in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Loads a ``state_dict()`` (this optimizer's, or PyTorch's for the same parameters:
        its tensors become fntorch tensors, cast to each parameter's dtype but ``step``).

        >>> import fntorch as ft
        >>> p = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.SGD([p], lr=0.1, momentum=0.9)
        >>> p.grad = ft.ones(1); opt.step(); sd = opt.state_dict()
        >>> opt2 = ft.optim.SGD([p], lr=1.0); opt2.load_state_dict(sd)
        >>> opt2.param_groups[0]["lr"], opt2.state[p]["momentum_buffer"].tolist()
        (0.1, [1.0])
        """
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size "
                "of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param, value, key=None):
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, key=key) for v in value)
            value = _to_fntorch(value)
            if isinstance(value, Tensor) and key != "step" and _is_floating(param):
                if value.dtype != param.dtype:
                    value = api.astype(value, param.dtype)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


def _as_cells(state: dict, old: dict | None = None) -> dict:
    """``state`` with its tensors held in cells: ``old``'s cell of a key is rebound."""
    out = {}
    for k, v in state.items():
        c = (old or {}).get(k)
        if isinstance(c, Cell) and isinstance(v, Tensor):
            out[k] = c if v is c else c.set_(v)
        elif isinstance(v, Tensor) and not isinstance(v, Cell):
            out[k] = Cell(v, name=k)
        else:
            out[k] = v
    return out
