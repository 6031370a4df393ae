"""``debug_callback``: the effectful primitive behind ``ft.debug.print``.

``debug_callback(*operands, callback)`` calls ``callback(*host_arrays)`` with the
operands' values as numpy arrays when it runs (eagerly at once; under ``jit`` each time
the compiled program reaches it) and returns a token: a 0-d bool that nothing needs to
read. Its lowering entry has ``effects``, so dead-code elimination keeps it, CSE never
merges two of them and constant folding never runs it at compile time. Its rules
(``transforms/debug_rules.py``): jvp calls it on the primals once (tangents are never
printed, so the linear graph has none); vmap calls it once per lane, in lane order.

>>> import fntorch as ft
>>> tok = debug_callback_p.bind(ft.asarray([1.0, 2.0]), callback=lambda x: print(x.tolist()))
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from ..fx.core import Primitive, ShapedArray, abstract_eval_rules
from ..fx.device import device_of_buffer, device_of_operand, host_device, universal_impls

__all__ = ["debug_callback_p", "TOKEN_AVAL"]

debug_callback_p = Primitive("debug_callback")
TOKEN_AVAL = ShapedArray((), np.dtype(bool))


def _debug_callback_abstract(*operands, callback):
    if not callable(callback):
        raise TypeError(f"debug_callback: callback must be callable, got {type(callback).__name__}")
    return TOKEN_AVAL


abstract_eval_rules[debug_callback_p] = _debug_callback_abstract


def _host(v):
    if isinstance(v, (np.ndarray, np.generic)):
        return np.asarray(v)
    if isinstance(v, (bool, int, float)):
        return np.asarray(v)
    return np.asarray(device_of_buffer(v).to_host(v))


def _debug_callback_impl(*operands, callback):
    """Calls ``callback`` on the operands' host values; the token is on their device."""
    callback(*map(_host, operands))
    token = np.asarray(True)
    host = host_device()
    for v in operands:
        d = device_of_operand(v)
        if d is not None and d is not host:
            return d.put(token)
    return token


universal_impls[debug_callback_p] = _debug_callback_impl
