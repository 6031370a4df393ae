"""Cases of the control-flow primitives (see tests/cases/__init__.py).

The sub-graphs are fixed small functions, staged at the drawn shape and dtype; the
references are the same functions in numpy, looped in Python. Each primitive has a
general case and, where it is linear in some operands, a linear one (for the
transpose contract).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.fx.core import ShapedArray
from fntorch.fx.graph import trace_to_graph
from fntorch.ops import _prims_control as pc
from fntorch.ops import lax

from . import Case, array, shapes

FLOATS = (dt.float32, dt.float64)


def _graph(fun, avals):
    g, _ = trace_to_graph(lambda *xs: (list(fun(*xs)), None), avals)
    assert not g.constvars  # the cases' bodies close over nothing
    return g


def _aval(x):
    return ShapedArray(np.shape(x), np.asarray(x).dtype)


# ---------------------------------------------------------------------------------- cond

_BRANCHES = (
    (lambda x, y: [lax.mul(lax.sin(x), y), x], lambda x, y: [np.sin(x) * y, x]),
    (lambda x, y: [lax.add(x, y), lax.cos(y)], lambda x, y: [x + y, np.cos(y)]),
    (lambda x, y: [lax.sub(x, lax.mul(y, y)), lax.neg(x)], lambda x, y: [x - y * y, -x]),
)
_LINEAR_BRANCHES = (
    (lambda x, y: [lax.mul(x, 2.0), lax.sub(y, x)], lambda x, y: [x * 2, y - x]),
    (lambda x, y: [lax.add(x, y), lax.neg(y)], lambda x, y: [x + y, -y]),
)


def _cond_draw(branches):
    def draw(data, dtype):
        shape = data.draw(shapes(0, 2, 0, 3), label="shape")
        x, y = array(data, shape, dtype), array(data, shape, dtype)
        index = np.int32(data.draw(st.integers(-1, len(branches)), label="index"))
        avals = [_aval(x), _aval(y)]
        graphs = tuple(_graph(f, avals) for f, _ in branches)
        return [np.asarray(index), x, y], dict(branches=graphs)

    return draw


def _cond_ref(branches):
    def reference(index, x, y, *, branches=None):
        i = min(max(int(index), 0), len(_fns) - 1)
        return [np.asarray(o, np.asarray(x).dtype) for o in _fns[i](x, y)]

    _fns = [r for _, r in branches]
    return reference


# ---------------------------------------------------------------------------- while_loop


def _while_draw(data, dtype):
    shape = data.draw(shapes(0, 2, 0, 3), label="shape")
    x = array(data, shape, dtype)
    n = np.asarray(np.int32(data.draw(st.integers(0, 4), label="trips")))
    i0 = np.asarray(np.int32(data.draw(st.integers(0, 2), label="start")))
    cond = _graph(lambda n, i, x: [lax.lt(i, n)], [_aval(n), _aval(i0), _aval(x)])
    body = _graph(
        lambda i, x: [lax.add(i, np.int32(1)), lax.add(lax.mul(lax.sin(x), 1.1), 0.5)],
        [_aval(i0), _aval(x)],
    )
    params = dict(cond_graph=cond, body_graph=body, cond_nconsts=1, body_nconsts=0)
    return [n, i0, x], params


def _while_ref(n, i, x, **params):
    i, x = int(i), np.asarray(x)
    while i < int(n):
        i, x = i + 1, (np.sin(x) * 1.1 + 0.5).astype(x.dtype)
    return [np.asarray(np.int32(i)), x]


# ---------------------------------------------------------------------------------- scan


def _scan_draw(linear):
    def draw(data, dtype):
        shape = data.draw(shapes(0, 2, 1, 3), label="shape")
        length = data.draw(st.integers(0, 4), label="length")
        init = array(data, shape, dtype)
        xs = array(data, (length, *shape), dtype)
        x_aval = ShapedArray(shape, np.dtype(dtype))
        if linear:
            body = _graph(
                lambda c, x: [lax.add(lax.mul(c, 0.5), x), lax.mul(c, 2.0)], [x_aval, x_aval]
            )
            params = dict(body=body, num_consts=0, num_carry=1, length=length, reverse=False)
            return [init, xs], params
        w = array(data, shape, dtype, lo=-1.0, hi=1.0)
        body = _graph(
            lambda w, c, x: [lax.tanh(lax.add(lax.mul(c, w), x)), lax.mul(c, x)],
            [x_aval, x_aval, x_aval],
        )
        reverse = data.draw(st.booleans(), label="reverse")
        params = dict(body=body, num_consts=1, num_carry=1, length=length, reverse=reverse)
        return [w, init, xs], params

    return draw


def _scan_ref(*args, body, num_consts, num_carry, length, reverse):
    if num_consts:
        w, c, xs = args
        step = lambda c, x: (np.tanh(c * w + x), c * x)
    else:
        c, xs = args
        step = lambda c, x: (c * 0.5 + x, c * 2.0)
    dtype = np.asarray(c).dtype
    ys = np.zeros(np.shape(xs), dtype)
    for i in reversed(range(length)) if reverse else range(length):
        c, ys[i] = step(c, xs[i])
    return [np.asarray(c, dtype), ys]


# ------------------------------------------------------------------------------ jit_call


def _call_draw(linear):
    def draw(data, dtype):
        shape = data.draw(shapes(0, 2, 0, 3), label="shape")
        x, y = array(data, shape, dtype), array(data, shape, dtype)
        avals = [_aval(x), _aval(y)]
        if linear:
            g = _graph(lambda x, y: [lax.sub(lax.mul(x, 3.0), y), lax.neg(x)], avals)
        else:
            g = _graph(
                lambda x, y: [lax.mul(lax.sin(x), lax.exp(lax.mul(y, 0.5))), lax.cos(y)], avals
            )
        return [x, y], dict(graph=g, name="case")

    return draw


def _call_ref(linear):
    def reference(x, y, *, graph=None, name=None):
        dtype = np.asarray(x).dtype
        outs = [x * 3.0 - y, -x] if linear else [np.sin(x) * np.exp(y * 0.5), np.cos(y)]
        return [np.asarray(o, dtype) for o in outs]

    return reference


CASES = [
    Case(pc.cond_p, _cond_draw(_BRANCHES), _cond_ref(_BRANCHES), FLOATS, diff_args=(1, 2)),
    Case(
        pc.cond_p,
        _cond_draw(_LINEAR_BRANCHES),
        _cond_ref(_LINEAR_BRANCHES),
        FLOATS,
        diff_args=(1, 2),
        linear_args=(1, 2),
        name="cond_linear",
    ),
    Case(pc.while_p, _while_draw, _while_ref, FLOATS, diff_args=(2,)),
    Case(pc.scan_p, _scan_draw(False), _scan_ref, FLOATS, diff_args=(0, 1, 2)),
    Case(
        pc.scan_p,
        _scan_draw(True),
        _scan_ref,
        FLOATS,
        diff_args=(0, 1),
        linear_args=(0, 1),
        name="scan_linear",
    ),
    Case(pc.call_p, _call_draw(False), _call_ref(False), FLOATS, diff_args=(0, 1)),
    Case(
        pc.call_p,
        _call_draw(True),
        _call_ref(True),
        FLOATS,
        diff_args=(0, 1),
        linear_args=(0, 1),
        name="jit_call_linear",
    ),
]
