"""``ft.debug``: printing run-time values from inside transformed code.

``ft.debug.print(fmt, *args, **kwargs)`` is ``jax.debug.print``: it prints
``fmt.format(*args, **kwargs)`` with the values the arguments have when the code runs,
eagerly at once, and from inside ``jit`` (the compiled program prints), ``vmap`` (one
line per lane, in lane order), ``grad`` (the forward values, once) and the bodies of
``scan``, ``fori_loop``, ``while_loop`` and ``cond`` (once per iteration or taken
branch). It binds the ``debug_callback`` primitive, whose lowering entry has effects.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from . import tree
from .fx.core import Tensor
from .ops._prims_debug import debug_callback_p

__all__ = ["print", "callback"]


@dataclass(frozen=True)
class _Formatter:
    """The callback of one ``ft.debug.print``: equal for equal formats and structures, so
    that a retraced function's graph keys (and compiled programs) stay the same."""

    fmt: str
    treedef: object
    statics: tuple  # (position, value) of the leaves that are not tensors

    def __call__(self, *arrays):
        leaves = list(arrays)
        for k, v in self.statics:
            leaves.insert(k, v)
        args, kwargs = tree.unflatten(self.treedef, leaves)
        builtins.print(self.fmt.format(*args, **kwargs), flush=True)


def _is_array(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic))


def print(fmt: str, *args, **kwargs) -> None:  # noqa: A001 - jax.debug.print's name
    """Prints ``fmt.format(*args, **kwargs)`` with the arguments' run-time values (numpy
    arrays), also from inside ``jit``, ``vmap`` (per lane, in order), ``grad`` and
    control-flow bodies. Leaves that are not tensors or arrays are formatted as they are.

    >>> import fntorch as ft
    >>> ft.debug.print("x = {x}", x=ft.asarray([1.0, 2.0]))
    x = [1. 2.]
    >>> _ = ft.jit(lambda x: (ft.debug.print("y = {}", x * 2.0), x)[1])(ft.asarray(3.0))
    y = 6.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"ft.debug.print: fmt must be a str, got {type(fmt).__name__}")
    leaves, treedef = tree.flatten((args, kwargs))
    arrays, statics = [], []
    for k, x in enumerate(leaves):
        if _is_array(x):
            arrays.append(x)
        else:
            statics.append((k, x))
    callback(_Formatter(fmt, treedef, tuple(statics)), *arrays)


def callback(fun, *args) -> None:
    """Calls ``fun(*arrays)`` with the run-time values of the tensors ``args`` (numpy
    arrays): eagerly at once, and wherever ``ft.debug.print`` would print. ``fun``'s
    result is ignored; a ``fun`` that compares equal to another (a frozen dataclass)
    keeps compiled programs shared across retraces.

    >>> import fntorch as ft
    >>> seen = []
    >>> ft.debug.callback(lambda a: seen.append(float(a.sum())), ft.ones(3)); seen
    [3.0]
    """
    debug_callback_p.bind(*args, callback=fun)
