"""jvp and transpose rules of the structural primitives.

All of them are linear in their tensor operands except `iota` (no operands),
`stop_gradient` (zero tangent), `convert_element_type` to or from a non-float dtype, and
the start indices of `dynamic_slice`/`dynamic_update_slice`. `pad` is linear jointly
in the operand and the padding value.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import ShapedArray, get_aval
from ..ops import _prims_structural as ps
from ..ops import lax
from .ad import (
    Zero,
    defjvp_zero,
    deflinear,
    instantiate,
    is_undefined_primal,
    jvp_rules,
    transpose_rules,
    zeros,
)


def _zero_scalar(dtype):
    return np.zeros((), dtype)[()]


def _sum_all(x):
    return lax.reduce_sum(x, tuple(range(get_aval(x).ndim)))


# --------------------------------------------------------------- convert_element_type


def _convert_element_type_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = ps.convert_element_type_p.bind(x, new_dtype=new_dtype)
    if type(t) is Zero or not (dt.is_inexact(get_aval(x).dtype) and dt.is_inexact(new_dtype)):
        return out, Zero.like(out)
    return out, lax.convert_element_type(t, new_dtype)


jvp_rules[ps.convert_element_type_p] = _convert_element_type_jvp


def _convert_element_type_transpose(ct, x, *, new_dtype):
    return [lax.convert_element_type(ct, x.aval.dtype)]


transpose_rules[ps.convert_element_type_p] = _convert_element_type_transpose

defjvp_zero(ps.iota_p)


# ------------------------------------------------------------------- broadcast_in_dim


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    kept = [i for i, n in enumerate(in_shape) if n == shape[broadcast_dimensions[i]]]
    kept_out = {broadcast_dimensions[i] for i in kept}
    summed = tuple(d for d in range(len(shape)) if d not in kept_out)
    out = lax.reduce_sum(ct, summed) if summed else ct
    # The remaining dims are in output order; put them in operand order.
    order = sorted(kept, key=lambda i: broadcast_dimensions[i])
    out = lax.transpose(out, tuple(order.index(i) for i in kept))
    return [lax.reshape(out, in_shape)]


deflinear(ps.broadcast_in_dim_p, _broadcast_in_dim_transpose)


# ------------------------------------------------------------- reshape, transpose, ...


def _reshape_transpose(ct, x, *, new_sizes):
    return [lax.reshape(ct, x.aval.shape)]


deflinear(ps.reshape_p, _reshape_transpose)


def _transpose_transpose(ct, x, *, permutation):
    return [lax.transpose(ct, tuple(np.argsort(permutation).tolist()))]


deflinear(ps.transpose_p, _transpose_transpose)


def _squeeze_transpose(ct, x, *, dimensions):
    return [lax.expand_dims(ct, dimensions)]


deflinear(ps.squeeze_p, _squeeze_transpose)


def _expand_dims_transpose(ct, x, *, dimensions):
    return [lax.squeeze(ct, dimensions)]


deflinear(ps.expand_dims_p, _expand_dims_transpose)


def _rev_transpose(ct, x, *, dimensions):
    return [lax.rev(ct, dimensions)]


deflinear(ps.rev_p, _rev_transpose)


def _copy_transpose(ct, x):
    return [lax.copy(ct)]


deflinear(ps.copy_p, _copy_transpose)


# ------------------------------------------------------------------------------ slice


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    in_shape = x.aval.shape
    out_shape = get_aval(ct).shape
    strides = strides or (1,) * len(in_shape)
    # The last element taken along each dim, +1; the rest of the operand gets zeros.
    ends = [s + (k - 1) * st + 1 if k else s for s, k, st in zip(start_indices, out_shape, strides)]
    config = [(s, n - e, st - 1) for s, e, n, st in zip(start_indices, ends, in_shape, strides)]
    return [lax.pad(ct, _zero_scalar(x.aval.dtype), config)]


deflinear(ps.slice_p, _slice_transpose)


# ------------------------------------------------------------------------ concatenate


def _concatenate_transpose(ct, *xs, dimension):
    shape = get_aval(ct).shape
    out, start = [], 0
    for x in xs:
        n = x.shape[dimension]
        if is_undefined_primal(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + n
            out.append(lax.slice(ct, lo, hi))
        else:
            out.append(None)
        start += n
    return out


deflinear(ps.concatenate_p, _concatenate_transpose)


# -------------------------------------------------------------------------------- pad


def _pad_jvp(primals, tangents, *, padding_config):
    x, pv = primals
    tx, tpv = tangents
    out = ps.pad_p.bind(x, pv, padding_config=padding_config)
    # A Zero padding value tangent stays a constant (not a zeros tensor) in the linear graph.
    tpv = _zero_scalar(get_aval(pv).dtype) if type(tpv) is Zero else tpv
    return out, ps.pad_p.bind(instantiate(tx), tpv, padding_config=padding_config)


jvp_rules[ps.pad_p] = _pad_jvp


def _pad_transpose(ct, x, pv, *, padding_config):
    dtype = get_aval(ct).dtype
    ct_x = None
    if is_undefined_primal(x) or is_undefined_primal(pv):
        # Undo lo/hi (negative padding becomes zero padding), then drop the interior.
        unpadded = lax.pad(ct, _zero_scalar(dtype), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
        shape = get_aval(unpadded).shape
        ct_x = lax.slice(unpadded, (0,) * len(shape), shape, [k + 1 for _, _, k in padding_config])
    ct_pv = None
    if is_undefined_primal(pv):
        ct_pv = lax.sub(_sum_all(ct), _sum_all(ct_x))
    return [ct_x if is_undefined_primal(x) else None, ct_pv]


transpose_rules[ps.pad_p] = _pad_transpose


# ---------------------------------------------------------- dynamic_slice, dynamic_update_slice


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = ps.dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    return out, ps.dynamic_slice_p.bind(instantiate(tangents[0]), *starts, slice_sizes=slice_sizes)


jvp_rules[ps.dynamic_slice_p] = _dynamic_slice_jvp


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    z = zeros(x.aval)
    return [lax.dynamic_update_slice(z, ct, starts)] + [None] * len(starts)


transpose_rules[ps.dynamic_slice_p] = _dynamic_slice_transpose


def _dynamic_update_slice_jvp(primals, tangents):
    x, u, *starts = primals
    tx, tu = tangents[:2]
    out = ps.dynamic_update_slice_p.bind(x, u, *starts)
    return out, ps.dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


jvp_rules[ps.dynamic_update_slice_p] = _dynamic_update_slice_jvp


def _dynamic_update_slice_transpose(ct, x, u, *starts):
    ushape = u.shape
    ct_x = ct_u = None
    if is_undefined_primal(x):
        ct_x = lax.dynamic_update_slice(ct, zeros(ShapedArray(ushape, get_aval(ct).dtype)), starts)
    if is_undefined_primal(u):
        ct_u = lax.dynamic_slice(ct, starts, ushape)
    return [ct_x, ct_u] + [None] * len(starts)


transpose_rules[ps.dynamic_update_slice_p] = _dynamic_update_slice_transpose


# ---------------------------------------------------------------------- stop_gradient


def _stop_gradient_jvp(primals, tangents):
    out = ps.stop_gradient_p.bind(*primals)
    return out, Zero.like(out)


jvp_rules[ps.stop_gradient_p] = _stop_gradient_jvp
