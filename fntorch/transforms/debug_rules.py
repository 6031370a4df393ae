"""Debugging: the rules of ``debug_callback`` and the NaN/inf checks of ``ft.config``.

- jvp: the callback runs on the primals, once (``defjvp_zero``); its token carries no
  tangent, so nothing of it reaches the linear graph and transposition prints nothing.
- vmap: the callback runs once per lane, in lane order (a loop over the lanes).
- ``debug_nans`` / ``debug_infs``: while either is on, ``fx.core``'s eager dispatch runs
  ``check_outputs`` after every impl; a NaN (an inf) in a primitive's result raises
  ``FloatingPointError`` naming the primitive and the user's ``file:line``. A compiled
  call (``jit_call``) whose result has one is run again eagerly, equation by equation,
  to name the culprit; ``jit`` checks its program's outputs (``check_jit_result``) and
  runs the function again eagerly in the same way.

>>> import fntorch as ft
>>> ft.vmap(lambda x: ft.debug.print("x={}", x))(ft.asarray([1.0, 2.0]))
x=1.0
x=2.0
"""

from __future__ import annotations

import numpy as np

from ..fx import core
from ..fx import dtypes as dt
from ..fx.core import EVAL_TRACE, Tensor, current_trace, set_current_trace
from ..fx.device import device_of_buffer
from ..fx.graph import Graph, eval_graph, format_source, user_source
from ..ops import lax
from ..ops._prims_debug import debug_callback_p
from .ad import defjvp_zero
from .batching import batch_rules
from .jit_config import config, on_update

# --------------------------------------------------------------------------- rules

defjvp_zero(debug_callback_p)


def _lane(x, dim, i):
    """Lane ``i`` of ``x`` along its batch axis ``dim``."""
    shape = x.shape
    start = [0] * len(shape)
    limit = list(shape)
    start[dim], limit[dim] = i, i + 1
    return lax.squeeze(lax.slice(x, tuple(start), tuple(limit)), (dim,))


def _debug_callback_batch(axis_size, args, dims, *, callback):
    token = np.asarray(True)
    for i in range(axis_size):
        lane = [a if d is None else _lane(a, d, i) for a, d in zip(args, dims)]
        token = debug_callback_p.bind(*lane, callback=callback)
    return token, None


batch_rules[debug_callback_p] = _debug_callback_batch


# ---------------------------------------------------------------------- NaN checks


def _bad_value(buf) -> str | None:
    """ "NaN" or "inf" when ``buf`` holds one that the config asks to catch, else None."""
    dtype = getattr(buf, "dtype", None)
    if dtype is None or not dt.is_float(dtype):
        return None
    host = buf if isinstance(buf, (np.ndarray, np.generic)) else device_of_buffer(buf).to_host(buf)
    host = np.asarray(host)
    if config.debug_nans and np.isnan(host).any():
        return "NaN"
    if config.debug_infs and np.isinf(host).any():
        return "inf"
    return None


def _message(what: str, prim_name: str, source) -> str:
    return (
        f"{what} produced by primitive {prim_name!r} at {format_source(source)} "
        f"(ft.config debug_{'nans' if what == 'NaN' else 'infs'} is on)"
    )


def check_outputs(prim, vals, params, out) -> None:
    """The eager check: raises FloatingPointError if ``prim``'s result ``out`` has a NaN
    (an inf) that the config asks to catch. A compiled call's graph is run again
    eagerly first, so that the primitive inside it is the one named."""
    outs = out if prim.multiple_results else (out,)
    for o in outs:
        what = _bad_value(o)
        if what is None:
            continue
        graph = params.get("graph")
        if isinstance(graph, Graph):
            with set_current_trace(EVAL_TRACE):
                eval_graph(graph, *[Tensor(np.asarray(v)) if _is_raw(v) else v for v in vals])
        raise FloatingPointError(_message(what, prim.name, user_source()))


def _is_raw(v) -> bool:
    return isinstance(v, (np.generic, bool, int, float)) or (
        isinstance(v, np.ndarray) and v.ndim == 0
    )


def check_jit_result(fun, args, kwargs, out, name: str) -> None:
    """``jit``'s check of its compiled outputs (either flag on): on a NaN (an inf),
    ``fun`` runs again eagerly with the checks, which raise naming the primitive and
    line; if the eager run has none, the error names the jit'ed function."""
    from .. import tree

    for leaf in tree.leaves(out):
        if not isinstance(leaf, Tensor) or isinstance(leaf, core.Tracer):
            continue
        what = _bad_value(leaf._value)
        if what is None:
            continue
        if current_trace() is EVAL_TRACE:
            fun(*args, **kwargs)
        raise FloatingPointError(
            f"{what} in the result of jit({name}), which its eager run did not produce "
            f"(the compiled program rounds differently); ft.config debug_nans / debug_infs"
        )


def _sync(name=None, value=None) -> None:
    on = bool(config.debug_nans or config.debug_infs)
    core.set_debug_check(check_outputs if on else None)


on_update.append(_sync)
_sync()
