"""Cases of the collectives (see tests/cases/__init__.py).

The contracts bind primitives bare, so the cases name ``AXIS``, a process axis of one
process (a ``LocalCommunicator``) bound when this module is imported: every table runs
(impl, jvp, transpose, batching over another axis, jit, export, a second device).
What a collective does over a larger axis is tested under ``vmap(axis_name=)``
(tests/transforms/test_collectives.py) and over two MPI processes (tests/distributed).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.distributed.comm import LocalCommunicator
from fntorch.fx import dtypes as dt
from fntorch.fx.axes import bind_process_axis
from fntorch.ops import _prims_collective as pc

from . import Case, array, shapes

AXIS = "cases"
bind_process_axis(AXIS, LocalCommunicator())
_AX = dict(axis_name=AXIS, size=1)


def _draw_plain(data, dtype):
    x = array(data, data.draw(shapes(0, 3, 0, 4), label="shape"), dtype)
    return [x], dict(_AX)


def _draw_all_gather(data, dtype):
    x = array(data, data.draw(shapes(1, 3, 0, 4), label="shape"), dtype)
    tiled = data.draw(st.booleans(), label="tiled")
    axis = data.draw(st.integers(0, x.ndim - 1 if tiled else x.ndim), label="axis")
    return [x], dict(_AX, axis=axis, tiled=tiled)


def _all_gather_ref(x, *, axis, tiled, **_):
    return x.copy() if tiled else np.expand_dims(x, axis)


def _draw_psum_scatter(data, dtype):
    shape = list(data.draw(shapes(1, 3, 0, 4), label="shape"))
    tiled = data.draw(st.booleans(), label="tiled")
    d = data.draw(st.integers(0, len(shape) - 1), label="scatter_dimension")
    if not tiled:
        shape[d] = 1
    return [array(data, tuple(shape), dtype)], dict(_AX, scatter_dimension=d, tiled=tiled)


def _psum_scatter_ref(x, *, scatter_dimension, tiled, **_):
    return x.copy() if tiled else np.squeeze(x, scatter_dimension)


def _draw_all_to_all(data, dtype):
    shape = list(data.draw(shapes(1, 3, 0, 4), label="shape"))
    split = data.draw(st.integers(0, len(shape) - 1), label="split_axis")
    shape[split] = 1
    concat = data.draw(st.integers(0, len(shape) - 1), label="concat_axis")
    return [array(data, tuple(shape), dtype)], dict(_AX, split_axis=split, concat_axis=concat)


def _all_to_all_ref(x, *, split_axis, concat_axis, **_):
    return np.expand_dims(np.squeeze(x, split_axis), concat_axis)


def _draw_ppermute(data, dtype):
    x = array(data, data.draw(shapes(0, 3, 0, 4), label="shape"), dtype)
    perm = data.draw(st.sampled_from([((0, 0),), ()]), label="perm")
    return [x], dict(_AX, perm=perm)


def _ppermute_ref(x, *, perm, **_):
    return x.copy() if perm else np.zeros_like(x)


def _draw_axis_index(data, dtype):
    return [], dict(_AX)


_FLOATS = (dt.float32, dt.float64)
_ANY = (dt.float32, dt.float64, dt.int32)

CASES = [
    Case(pc.psum_p, _draw_plain, lambda x, **_: x.copy(), _ANY, (0,), (0,)),
    Case(pc.pvary_p, _draw_plain, lambda x, **_: x.copy(), _ANY, (0,), (0,)),
    Case(pc.pmax_p, _draw_plain, lambda x, **_: x.copy(), _ANY, (0,)),
    Case(pc.pmin_p, _draw_plain, lambda x, **_: x.copy(), _ANY, (0,)),
    Case(pc.all_gather_p, _draw_all_gather, _all_gather_ref, _ANY, (0,), (0,)),
    Case(pc.psum_scatter_p, _draw_psum_scatter, _psum_scatter_ref, _FLOATS, (0,), (0,)),
    Case(pc.all_to_all_p, _draw_all_to_all, _all_to_all_ref, _ANY, (0,), (0,)),
    Case(pc.ppermute_p, _draw_ppermute, _ppermute_ref, _ANY, (0,), (0,)),
    Case(
        pc.axis_index_p,
        _draw_axis_index,
        lambda **_: np.asarray(0, np.int32),
        (dt.int32,),
        exact=True,
    ),
]
