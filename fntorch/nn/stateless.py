"""``ft.nn.functional_call``: a module's forward with other values in place of its cells.

>>> import fntorch as ft
>>> lin = ft.nn.Linear(2, 1)
>>> w = {"weight": ft.ones((1, 2)), "bias": ft.zeros(1)}
>>> ft.nn.functional_call(lin, w, (ft.ones((1, 2)),)).tolist()
[[2.0]]
"""

from __future__ import annotations

from .. import tree as tree_util
from .module import Module

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers, args=(), kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):  # fmt: skip
    """Calls ``module`` with the values of ``parameters_and_buffers`` (a dict by
    ``state_dict`` name, or a tuple of such dicts) in place of its cells, on a functional
    copy: the module itself is never changed, and the values may be traced (``grad``,
    ``vmap`` and ``jit`` of the call work). Tied parameters take the one value given for
    any of their names (``tie_weights``); ``strict`` requires every name.

    >>> import fntorch as ft
    >>> lin = ft.nn.Linear(2, 1)
    >>> w = {"weight": ft.ones((1, 2)), "bias": ft.zeros(1)}
    >>> g = ft.grad(lambda w: ft.nn.functional_call(lin, w, ft.ones((1, 2))).sum())(w)
    >>> g["weight"].tolist(), g["bias"].tolist()
    ([[1.0, 1.0]], [1.0])
    """
    dicts = parameters_and_buffers
    values = {}
    for d in dicts if isinstance(dicts, (tuple, list)) else (dicts,):
        values.update(d)
    leaves, structure = tree_util.flatten(module)
    copy = tree_util.unflatten(structure, leaves)
    own = set()
    for path, sub in copy.named_modules(remove_duplicate=False):
        for table in ("_parameters", "_buffers"):
            for name in list(sub.__dict__[table]):
                full = f"{path}.{name}" if path else name
                own.add(full)
                if full in values:
                    sub.__dict__[table][name] = values[full]
    if strict:
        missing = sorted(own - set(values))
        unexpected = sorted(set(values) - own)
        if missing or unexpected:
            raise RuntimeError(
                f"functional_call: missing keys {missing}, unexpected keys {unexpected}"
            )
    else:
        unexpected = sorted(set(values) - own)
        if unexpected:
            raise ValueError(f"functional_call: unexpected keys {unexpected}")
    if tie_weights:
        _tie(module, copy, values)
    if not isinstance(args, tuple):
        args = (args,)
    return copy(*args, **(kwargs or {}))


def _tie(module, copy, values):
    """Every name of a tied cell takes the value given for any one of them."""
    by_cell: dict = {}
    for path, sub in module.named_modules(remove_duplicate=False):
        for table in ("_parameters", "_buffers"):
            for name, v in sub.__dict__[table].items():
                if v is not None:
                    by_cell.setdefault(id(v), []).append((path, table, name))
    for slots in by_cell.values():
        if len(slots) < 2:
            continue
        given = [values[n] for n in (f"{p}.{k}" if p else k for p, _, k in slots) if n in values]
        if given:
            for path, table, name in slots:
                copy.get_submodule(path).__dict__[table][name] = given[0]
