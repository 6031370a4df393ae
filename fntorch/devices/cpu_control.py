"""Eager impls of the control-flow primitives: Python loops over ``eval_graph``.

The sub-graphs run under the current (eager) trace, so each of their primitives
dispatches to its own device impl; ``cond`` evaluates only the branch it takes.
"""

from __future__ import annotations

import numpy as np

from ..fx.core import Tensor
from ..fx.graph import eval_graph
from ..ops import _prims_control as pc
from ._device import cpu_impls


def _tensor(v) -> Tensor:
    return v if isinstance(v, Tensor) else Tensor(np.asarray(v))


def _buffer(o):
    return o._value if isinstance(o, Tensor) else np.asarray(o)


def _cond(index, *operands, branches):
    i = min(max(int(index), 0), len(branches) - 1)
    outs = eval_graph(branches[i], *map(_tensor, operands))
    return [_buffer(o) for o in outs]


cpu_impls[pc.cond_p] = _cond


def _while(*args, cond_graph, body_graph, cond_nconsts, body_nconsts):
    vals = [_tensor(a) for a in args]
    cc = vals[:cond_nconsts]
    bc = vals[cond_nconsts : cond_nconsts + body_nconsts]
    carry = vals[cond_nconsts + body_nconsts :]
    while bool(_buffer(eval_graph(cond_graph, *cc, *carry)[0])):
        carry = [_tensor(c) for c in eval_graph(body_graph, *bc, *carry)]
    return [_buffer(c) for c in carry]


cpu_impls[pc.while_p] = _while


def _scan(*args, body, num_consts, num_carry, length, reverse):
    consts = [_tensor(a) for a in args[:num_consts]]
    carry = [_tensor(a) for a in args[num_consts : num_consts + num_carry]]
    xs = [np.asarray(a) for a in args[num_consts + num_carry :]]
    ys = [np.empty((length, *a.shape), a.dtype) for a in body.out_avals[num_carry:]]
    for i in reversed(range(length)) if reverse else range(length):
        outs = eval_graph(body, *consts, *carry, *[Tensor(x[i, ...]) for x in xs])
        carry = [_tensor(c) for c in outs[:num_carry]]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = _buffer(y)
    return [_buffer(c) for c in carry] + ys


cpu_impls[pc.scan_p] = _scan
