"""Cases of the indexing primitives (see tests/cases/__init__.py).

Operands of rank 1 to 3, one to three index tensors on random distinct axes (any order,
not only consecutive), index shapes that broadcast, index dtypes signed and unsigned.
Index values run past both ends of their axis (gather clamps, scatters drop) and repeat
(the scatters accumulate). ``scatter`` is linear only when no two updates land on one
position, so its linear case draws unique in-range index tuples.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_indexing as pi

from . import Case, array, broadcastable_shapes

_INDEX_DTYPES = (dt.int32, dt.int64, dt.int8, dt.uint8)


def _operand_and_axes(data, k=None, max_side=4):
    rank = data.draw(st.integers(k or 1, 3), label="operand rank")
    shape = list(
        data.draw(
            st.lists(st.integers(0, max_side), min_size=rank, max_size=rank), label="operand shape"
        )
    )
    if k is None:
        k = data.draw(st.integers(1, rank), label="number of indices")
    axes = tuple(data.draw(st.permutations(range(rank)), label="axes")[:k])
    for a in axes:
        shape[a] = max(shape[a], 1)  # gather needs something to clamp into
    return tuple(shape), axes


def _indices(data, shape, axes, *, unique=False):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="index seed"))
    idtype = data.draw(st.sampled_from(_INDEX_DTYPES), label="index dtype")
    if unique:
        sizes = [shape[a] for a in axes]
        total = int(np.prod(sizes))
        m = data.draw(st.integers(0, min(total, 6)), label="number of updates")
        flat = rng.choice(total, size=m, replace=False)
        b = (m,) if data.draw(st.booleans(), label="flat") or m < 2 else (1, m)
        return [np.asarray(i, idtype).reshape(b) for i in np.unravel_index(flat, sizes)]
    ishapes = broadcastable_shapes(data, n=len(axes), max_dims=2, max_side=3)
    out = []
    for s, a in zip(ishapes, axes):
        lo = 0 if np.dtype(idtype).kind == "u" else -2
        out.append(rng.integers(lo, shape[a] + 2, size=s).astype(idtype))
    return out


def _gather_shape(shape, indices, axes):
    return pi.gather_shape("gather", shape, [i.shape for i in indices], axes)


def _draw_gather(data, dtype):
    shape, axes = _operand_and_axes(data)
    indices = _indices(data, shape, axes)
    return [array(data, shape, dtype), *indices], {"axes": axes}


def _draw_scatter(data, dtype, *, k, unique=False):
    shape, axes = _operand_and_axes(data, k)
    indices = _indices(data, shape, axes, unique=unique)
    gshape = _gather_shape(shape, indices, axes)
    # updates: the gather shape, or a shape that broadcasts to it
    nd = data.draw(st.integers(0, len(gshape)), label="updates rank")
    ushape = tuple(
        d if data.draw(st.booleans(), label="keep") else 1 for d in gshape[len(gshape) - nd :]
    )
    lo, hi = (0.5, 2.0) if data.draw(st.booleans(), label="positive") else (-3.0, 3.0)
    updates = array(data, ushape, dtype, lo=lo, hi=hi)
    return [array(data, shape, dtype), *indices, updates], {"axes": axes}


# ---------------------------------------------------------------- numpy references
# Plain loops over the broadcast index shape: independent of the impls' moveaxis trick.


def _positions(operand_shape, indices, axes, *, clamp):
    """(b, slice tuple into the operand) for every broadcast index position b, C order."""
    idx = np.broadcast_arrays(*(np.asarray(i).astype(np.int64) for i in indices))
    bshape = idx[0].shape if idx else ()
    for b in np.ndindex(*bshape):
        sl = [slice(None)] * len(operand_shape)
        ok = True
        for i, a in zip(idx, axes):
            v = int(i[b])
            n = operand_shape[a]
            if clamp:
                v = min(max(v, 0), n - 1)
            elif not 0 <= v < n:
                ok = False
            sl[a] = v
        yield b, tuple(sl), ok


def _gather_ref(operand, *indices, axes):
    operand = np.asarray(operand)
    out = np.empty(_gather_shape(operand.shape, indices, axes), operand.dtype)
    for b, sl, _ in _positions(operand.shape, indices, axes, clamp=True):
        out[b] = operand[sl]
    return out


def _scatter_ref(combine, operand, *rest, axes):
    indices, updates = rest[:-1], rest[-1]
    out = np.array(operand, copy=True)
    upd = np.broadcast_to(updates, _gather_shape(out.shape, indices, axes))
    for b, sl, ok in _positions(out.shape, indices, axes, clamp=False):
        if ok:
            out[sl] = combine(out[sl], upd[b])
    return out


def _ref(combine):
    return lambda *args, axes: _scatter_ref(combine, *args, axes=axes)


_FLOATS = (dt.float32, dt.float64)


def _scatter_case(prim, combine, k, dtypes=_FLOATS, *, linear=False, unique=False, **kw):
    """A scatter case with ``k`` index tensors, so the updates sit at the fixed position k+1."""

    def draw(data, dtype):
        return _draw_scatter(data, dtype, k=k, unique=unique)

    diff = (0, k + 1)
    name = f"{prim.name}_{k}idx" + ("_unique" if unique else "")
    return Case(
        prim,
        draw,
        _ref(combine),
        dtypes=dtypes,
        name=name,
        diff_args=diff,
        linear_args=diff if linear else None,
        **kw,
    )


def _set(old, new):
    return new


CASES = [
    Case(
        pi.gather_p,
        _draw_gather,
        _gather_ref,
        dtypes=(*_FLOATS, dt.int32, dt.bool_, dt.float16),
        diff_args=(0,),
        linear_args=(0,),
    ),
    _scatter_case(pi.scatter_add_p, np.add, 1, (*_FLOATS, dt.int32, dt.float16), linear=True),
    _scatter_case(pi.scatter_add_p, np.add, 2, linear=True),
    _scatter_case(pi.scatter_add_p, np.add, 3, linear=True),
    _scatter_case(pi.scatter_p, _set, 2, (*_FLOATS, dt.int32, dt.bool_)),
    _scatter_case(pi.scatter_p, _set, 1, linear=True, unique=True),
    _scatter_case(pi.scatter_p, _set, 2, linear=True, unique=True),
    _scatter_case(pi.scatter_mul_p, np.multiply, 1, (*_FLOATS, dt.int32)),
    _scatter_case(pi.scatter_mul_p, np.multiply, 2),
    _scatter_case(pi.scatter_min_p, np.minimum, 2, (*_FLOATS, dt.int32)),
    _scatter_case(pi.scatter_max_p, np.maximum, 1),
    _scatter_case(pi.scatter_max_p, np.maximum, 3, (*_FLOATS, dt.uint8)),
]
