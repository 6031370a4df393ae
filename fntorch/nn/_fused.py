"""Eager composites as one compiled call: what PyTorch's fused native ops are to its
eager mode.

A function of ``ft.nn.functional`` built from many primitives (``layer_norm``, ``gelu``,
``cross_entropy``, ``scaled_dot_product_attention``, ...) costs one eager dispatch per
primitive, and on the tape one recorded jvp per primitive and one transpose each at
``backward``: in W11's eager step GELU alone was ~8 ms of ~200. Run eagerly, such a
function goes through ``jit`` instead: one compiled program (fused kernels) forward, and
on the tape one ``jit_call`` whose transpose is one compiled program backward
(``transforms/call.py``). GELU's forward and backward on (16, 64, 512) took 1.8 ms so
against 8.6 ms primitive by primitive, and a (4, 8) one 0.26 against 0.36 ms.

Only eager calls take this path, on CPU tensors of float32 or float64: under a
transform (``grad``, ``vmap``, a ``jit`` or ``ft.compile`` trace) the function is traced
inline as before, so enclosing programs fuse across it; on other devices and dtypes it
runs primitive by primitive (their compiled composites are not measured). A function
compiles once per signature (operand shapes and dtypes, which operands are None, the
settings), and kernels are shared across shapes of one rank; past ``MAX_SIGNATURES``
signatures of one function (a generation loop's growing lengths) further ones run
primitive by primitive rather than compiling each.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as _dt
from ..fx.core import EVAL_TRACE, Tensor, current_trace
from ..transforms.jit import jit

__all__ = ["fused", "MAX_SIGNATURES"]

MAX_SIGNATURES = 16

_FLOATS = (_dt.float32, _dt.float64)


class fused:  # noqa: N801 - used as a decorator
    """``fused(fun)(*operands, **settings)``: ``fun``'s value, through one compiled call
    when eager (see the module docstring). ``operands`` are tensors or None, ``settings``
    hashable Python values (shapes, flags, numbers) that configure ``fun``.

    >>> import fntorch as ft
    >>> double = fused(lambda x, k: x * k)
    >>> double(ft.ones(2), k=2.0).tolist()
    [2.0, 2.0]
    """

    __slots__ = ("fun", "jits", "seen", "__name__")

    def __init__(self, fun):
        self.fun = fun
        self.jits: dict = {}  # (which operands are None, settings) -> its jit
        self.seen: set = set()  # the signatures compiled: those keys with the avals
        self.__name__ = getattr(fun, "__name__", "fused")

    def __call__(self, *operands, **settings):
        if current_trace() is not EVAL_TRACE:
            return self.fun(*operands, **settings)
        avals = []
        taped = False
        for x in operands:
            if x is None:
                avals.append(None)
                continue
            v = x._value if isinstance(x, Tensor) else None
            if type(v) is not np.ndarray or not (v.dtype in _FLOATS or v.dtype.kind in "biu"):
                return self.fun(*operands, **settings)
            avals.append((v.shape, v.dtype))
            taped = taped or x._taped
        try:
            key = (
                tuple(x is None for x in operands),
                tuple((k, type(v), v) for k, v in settings.items()),
            )
            j = self.jits.get(key)
            sig = (key, tuple(avals))
            known = sig in self.seen
        except TypeError:  # an unhashable setting
            return self.fun(*operands, **settings)
        if not known:
            if len(self.seen) >= MAX_SIGNATURES:
                return self.fun(*operands, **settings)
            self.seen.add(sig)
        if j is None:
            j = self.jits[key] = jit(_bind(self.fun, key[0], settings))
        present = [x for x in operands if x is not None]
        return j._call_taped(present) if taped else j(*present)


def _bind(fun, absent, settings):
    """``fun`` of the present operands only, its settings fixed."""
    n = len(absent)
    present = [i for i in range(n) if not absent[i]]

    def call(*xs):
        full = [None] * n
        for i, x in zip(present, xs):
            full[i] = x
        return fun(*full, **settings)

    call.__name__ = getattr(fun, "__name__", "fused")
    return call
