"""jvp and transpose rules of the indexing primitives.

Index operands are integers, so they never carry a tangent and are never linear.

- ``gather`` is linear in the operand. Its transpose scatter-adds the cotangent into
  zeros at the *clamped* indices, because that is where gather read from.
- ``scatter_add`` is linear jointly in (operand, updates): the operand's cotangent is
  the cotangent itself, the updates' is the cotangent gathered at the indices, zero
  where an index was out of range (scatter dropped that update), summed over the dims
  the updates were broadcast along.
- ``scatter`` (set) is linear jointly in (operand, updates): positions it overwrites
  pass no cotangent to the operand; each update that was written gets the cotangent at
  its position. With duplicate indices only one update per position is written, and
  only that one gets a tangent or cotangent, the others zero (JAX's method: scatter
  each update's id and read the ids back, ``_written``).
- ``scatter_mul``: ``out[p] = operand[p] * prod_j u_j`` over the updates j landing on p,
  so ``d out[p] = t_operand[p] * prod_j u_j + operand[p] * sum_j t_u_j * prod_{i!=j} u_i``.
  The product of the others is computed exactly, zeros included, from the count of zero
  updates and the product of the non-zero ones at each position. It is linear in the
  operand only (transpose: multiply the cotangent by the same products).
- ``scatter_min``/``scatter_max``: the output tangent is the tangent of the winner (the
  operand or an update); ties split it evenly, as in JAX.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import get_aval
from ..ops import _prims_indexing as pi
from ..ops import lax
from .ad import Zero, is_undefined_primal, jvp_rules, transpose_rules


def _scalar(value, dtype):
    # A 0-d array, not a numpy scalar: np.float64 subclasses float, and the lax wrappers
    # take Python floats for weak scalars.
    return np.asarray(value, dtype=dtype)


def _zeros(aval):
    return lax.broadcast_in_dim(_scalar(0, aval.dtype), aval.shape, ())


def _instantiate(t):
    return _zeros(t.aval) if type(t) is Zero else t


def _clamped(indices, operand_shape, axes):
    """The indices clamped into range, as gather reads them."""
    out = []
    for i, a in zip(indices, axes):
        n = operand_shape[a]
        dtype = get_aval(i).dtype
        if n == 0:  # only empty index tensors can gather from an empty axis
            out.append(i)
            continue
        hi = min(n - 1, int(dt.iinfo(dtype).max))
        out.append(lax.clamp(_scalar(0, dtype), i, _scalar(hi, dtype)))
    return out


def _in_range(indices, operand_shape, axes):
    """bool of the broadcast index shape: whether every index is in range (kept by scatter)."""
    mask = None
    for i, a in zip(indices, axes):
        n = operand_shape[a]
        dtype = get_aval(i).dtype
        ok = lax.ge(i, _scalar(0, dtype))
        if n <= int(dt.iinfo(dtype).max):
            ok = lax.bitwise_and(ok, lax.lt(i, _scalar(n, dtype)))
        mask = ok if mask is None else lax.bitwise_and(mask, ok)
    return mask


def _unbroadcast(x, shape):
    """Sums ``x`` over the dims that numpy broadcasting added to reach it from ``shape``."""
    xs = tuple(get_aval(x).shape)
    shape = tuple(shape)
    if xs == shape:
        return x
    lead = len(xs) - len(shape)
    summed = tuple(range(lead)) + tuple(
        lead + k for k, d in enumerate(shape) if d == 1 and xs[lead + k] != 1
    )
    if summed:
        x = lax.reduce_sum(x, summed)
    return lax.reshape(x, shape) if tuple(get_aval(x).shape) != shape else x


def _updates_cotangent(ct, indices, axes, updates_aval, written=False):
    """The cotangent of scatter's updates: ``ct`` at their positions, zero where dropped
    (and, with ``written``, zero for the updates a duplicate index overwrote)."""
    if type(ct) is Zero:
        return Zero(updates_aval)
    g = lax.gather(ct, indices, axes)
    gshape = get_aval(g).shape
    if written:
        w = _written(get_aval(ct).shape, indices, axes)
        g = lax.select(w, g, _scalar(0, get_aval(g).dtype))
    elif indices:
        mask = _in_range(indices, get_aval(ct).shape, axes)
        mshape = get_aval(mask).shape
        mask = lax.broadcast_in_dim(mask, gshape, tuple(range(len(mshape))))
        g = lax.select(mask, g, _scalar(0, get_aval(g).dtype))
    return _unbroadcast(g, updates_aval.shape)


def _written(operand_shape, indices, axes):
    """bool of the gathered shape: which updates a ``scatter`` (set) wrote. Where indices
    repeat, one update per position is written; scattering each update's id and
    gathering the ids back tells which, whatever order the scatter wrote them in. An
    out-of-range update is dropped, so its id is never read back."""
    b = pi.gather_shape("scatter", operand_shape, [get_aval(i).shape for i in indices], axes)
    bshape = b[: len(b) - (len(operand_shape) - len(axes))]
    n = math.prod(bshape)
    dtype = np.dtype(np.int32 if n < np.iinfo(np.int32).max else np.int64)
    ids = lax.add(lax.reshape(lax.iota(dtype, (n,)), bshape), _scalar(1, dtype))
    ids = lax.broadcast_in_dim(ids, b, tuple(range(len(bshape))))
    seen = lax.scatter(lax.full(operand_shape, 0, dtype), indices, ids, axes)
    return lax.eq(lax.gather(seen, indices, axes), ids)


def _split(args):
    return args[0], list(args[1:-1]), args[-1]


# -------------------------------------------------------------------------- gather


def _gather_jvp(primals, tangents, *, axes):
    operand, *indices = primals
    out = lax.gather(operand, indices, axes)
    t = tangents[0]
    return out, (Zero.like(out) if type(t) is Zero else lax.gather(t, indices, axes))


jvp_rules[pi.gather_p] = _gather_jvp


def _gather_transpose(ct, operand, *indices, axes):
    nones = [None] * len(indices)
    if type(ct) is Zero:
        return [Zero(operand.aval), *nones]
    idx = _clamped(indices, operand.shape, axes)
    return [lax.scatter_add(_zeros(operand.aval), idx, ct, axes), *nones]


transpose_rules[pi.gather_p] = _gather_transpose


# --------------------------------------------------------------------- scatter_add


def _scatter_add_jvp(primals, tangents, *, axes):
    operand, indices, updates = _split(primals)
    out = lax.scatter_add(operand, indices, updates, axes)
    t_op, t_u = tangents[0], tangents[-1]
    if type(t_u) is Zero:
        return out, t_op
    return out, lax.scatter_add(_instantiate(t_op), indices, t_u, axes)


jvp_rules[pi.scatter_add_p] = _scatter_add_jvp


def _scatter_add_transpose(ct, operand, *rest, axes):
    indices, updates = list(rest[:-1]), rest[-1]
    cts = [None] * (len(rest) + 1)
    if is_undefined_primal(operand):
        cts[0] = ct
    if is_undefined_primal(updates):
        cts[-1] = _updates_cotangent(ct, indices, axes, updates.aval)
    return cts


transpose_rules[pi.scatter_add_p] = _scatter_add_transpose


# ------------------------------------------------------------------------ scatter


def _scatter_jvp(primals, tangents, *, axes):
    operand, indices, updates = _split(primals)
    out = lax.scatter(operand, indices, updates, axes)
    t_op, t_u = tangents[0], tangents[-1]
    dtype = get_aval(updates).dtype
    t_out = lax.scatter(_instantiate(t_op), indices, _scalar(0, dtype), axes)
    if type(t_u) is Zero:
        return out, t_out
    # Added, not set: the overwritten updates' tangents are zeroed, so what lands on each
    # position is the written update's tangent alone.
    written = _written(get_aval(operand).shape, indices, axes)
    gshape = get_aval(written).shape
    ushape = get_aval(t_u).shape
    t_u = lax.broadcast_in_dim(t_u, gshape, tuple(range(len(gshape) - len(ushape), len(gshape))))
    t_u = lax.select(written, t_u, _scalar(0, dtype))
    return out, lax.scatter_add(t_out, indices, t_u, axes)


jvp_rules[pi.scatter_p] = _scatter_jvp


def _scatter_transpose(ct, operand, *rest, axes):
    indices, updates = list(rest[:-1]), rest[-1]
    cts = [None] * (len(rest) + 1)
    if is_undefined_primal(operand):
        if type(ct) is Zero:
            cts[0] = ct
        else:
            cts[0] = lax.scatter(ct, indices, _scalar(0, get_aval(ct).dtype), axes)
    if is_undefined_primal(updates):
        cts[-1] = _updates_cotangent(ct, indices, axes, updates.aval, written=True)
    return cts


transpose_rules[pi.scatter_p] = _scatter_transpose


# --------------------------------------------------------------------- scatter_mul


def _scatter_mul_jvp(primals, tangents, *, axes):
    operand, indices, updates = _split(primals)
    out = lax.scatter_mul(operand, indices, updates, axes)
    t_op, t_u = tangents[0], tangents[-1]
    tout = None if type(t_op) is Zero else lax.scatter_mul(t_op, indices, updates, axes)
    if type(t_u) is not Zero:
        aval = get_aval(operand)
        zero, one = _scalar(0, aval.dtype), _scalar(1, aval.dtype)
        is_zero = lax.eq(updates, zero)
        safe = lax.select(is_zero, one, updates)
        n_zeros = lax.scatter_add(_zeros(aval), indices, lax.select(is_zero, one, zero), axes)
        # operand[p] times the product of the non-zero updates landing on p
        prod_nz = lax.gather(lax.scatter_mul(operand, indices, safe, axes), indices, axes)
        n_zeros = lax.gather(n_zeros, indices, axes)
        # d out[p] / d u_j = operand[p] * prod_{i != j} u_i
        others_if_nonzero = lax.select(lax.eq(n_zeros, zero), lax.div(prod_nz, safe), zero)
        others_if_zero = lax.select(lax.eq(n_zeros, one), prod_nz, zero)
        weight = lax.select(is_zero, others_if_zero, others_if_nonzero)
        tu = lax.scatter_add(_zeros(aval), indices, lax.mul(t_u, weight), axes)
        tout = tu if tout is None else lax.add(tout, tu)
    return out, tout


jvp_rules[pi.scatter_mul_p] = _scatter_mul_jvp


def _scatter_mul_transpose(ct, operand, *rest, axes):
    indices, updates = list(rest[:-1]), rest[-1]
    if is_undefined_primal(updates):
        raise NotImplementedError(
            "scatter_mul: transpose with respect to the updates: scatter_mul is linear in "
            "its operand only"
        )
    cts = [None] * (len(rest) + 1)
    cts[0] = ct if type(ct) is Zero else lax.scatter_mul(ct, indices, updates, axes)
    return cts


transpose_rules[pi.scatter_mul_p] = _scatter_mul_transpose


# ------------------------------------------------------------- scatter_min / _max


def _scatter_extremum_jvp(scatter_fn, primals, tangents, *, axes):
    operand, indices, updates = _split(primals)
    out = scatter_fn(operand, indices, updates, axes)
    aval = get_aval(operand)
    zero, one = _scalar(0, aval.dtype), _scalar(1, aval.dtype)
    op_wins = lax.select(lax.eq(operand, out), one, zero)
    u_wins = lax.select(lax.eq(updates, lax.gather(out, indices, axes)), one, zero)
    # Dropped (out-of-range) updates vanish in the scatter_add, so they never count.
    count = lax.add(op_wins, lax.scatter_add(_zeros(aval), indices, u_wins, axes))
    count = lax.max(count, one)  # a NaN result equals nothing: give it a zero tangent
    t_op, t_u = tangents[0], tangents[-1]
    tout = None if type(t_op) is Zero else lax.mul(t_op, lax.div(op_wins, count))
    if type(t_u) is not Zero:
        weight = lax.div(u_wins, lax.gather(count, indices, axes))
        tu = lax.scatter_add(_zeros(aval), indices, lax.mul(t_u, weight), axes)
        tout = tu if tout is None else lax.add(tout, tu)
    return out, tout


jvp_rules[pi.scatter_min_p] = partial(_scatter_extremum_jvp, lax.scatter_min)
jvp_rules[pi.scatter_max_p] = partial(_scatter_extremum_jvp, lax.scatter_max)
