"""Cases of the structural primitives (see tests/cases/__init__.py).

The linear primitives' finite differences are taken with a large step (``fd_eps=1``):
for a linear map they are exact up to rounding, which lets the float64 -> float32
conversion be checked too. References are written independently of the impls where a
second formulation exists (moveaxis for broadcast_in_dim, loops for pad, explicit
clamping for the dynamic slices).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_structural as ps

from . import Case, array, shapes

FLOATS = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
INTS = (dt.int8, dt.int32, dt.int64, dt.uint8)
MIXED = (dt.float32, dt.float64, dt.int32, dt.bool_, dt.bfloat16)
INDEX_DTYPES = (dt.int32, dt.int64)
LINEAR = dict(dtypes=MIXED, fd_eps=1.0, fd_rtol=1e-7, fd_atol=1e-7)


def _shape(data, min_dims=0, max_dims=3, min_side=0):
    return data.draw(shapes(min_dims, max_dims, min_side, 4), label="shape")


def _subset(data, n, label):
    if not n:
        return ()
    return tuple(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n), label=label)))


# ------------------------------------------------------------- convert_element_type


def _convert_draw(to_dtypes, from_float64=None):
    def draw(data, dtype):
        targets = to_dtypes if dtype != dt.float64 or from_float64 is None else from_float64
        new_dtype = data.draw(st.sampled_from(targets), label="new_dtype")
        x = array(data, _shape(data), dtype)
        if not dt.is_signed(new_dtype) and dt.is_float(dtype):
            x = np.abs(x)  # negative floats to unsigned integers are unspecified
        return [x], dict(new_dtype=new_dtype)

    return draw


def _convert_ref(x, *, new_dtype):
    return np.asarray(x).astype(new_dtype)


# ------------------------------------------------------------------------- iota


def _iota_draw(data, dtype):
    shape = _shape(data, min_dims=1)
    return [], dict(dtype=dtype, shape=shape, dimension=data.draw(st.integers(0, len(shape) - 1)))


def _iota_ref(*, dtype, shape, dimension):
    return np.indices(shape)[dimension].astype(dtype)


# -------------------------------------------------------------- broadcast_in_dim


def _broadcast_in_dim_draw(data, dtype):
    x_shape = _shape(data)
    x_shape = tuple(1 if data.draw(st.booleans(), label="unit") else n for n in x_shape)
    out_nd = len(x_shape) + data.draw(st.integers(0, 2), label="extra dims")
    bdims = list(data.draw(st.permutations(range(out_nd)), label="placement")[: len(x_shape)])
    if data.draw(st.booleans(), label="sorted"):
        bdims.sort()
    shape = [data.draw(st.integers(0, 3), label="new size") for _ in range(out_nd)]
    for i, d in enumerate(bdims):
        if x_shape[i] != 1 or data.draw(st.booleans(), label="keep unit"):
            shape[d] = x_shape[i]
    x = array(data, x_shape, dtype)
    return [x], dict(shape=tuple(shape), broadcast_dimensions=tuple(bdims))


def _broadcast_in_dim_ref(x, *, shape, broadcast_dimensions):
    r = np.ndim(x)
    x = np.reshape(x, np.shape(x) + (1,) * (len(shape) - r))
    return np.broadcast_to(np.moveaxis(x, list(range(r)), list(broadcast_dimensions)), shape)


# ----------------------------------------------------------------------- reshape


def _reshape_draw(data, dtype):
    x_shape = _shape(data)
    factors = []
    for n in x_shape:
        for p in (2, 3):
            while n > 1 and n % p == 0:
                factors.append(p)
                n //= p
        if n != 1:
            factors.append(n)
    factors = list(data.draw(st.permutations(factors), label="order"))
    sizes = []
    for f in factors:
        if sizes and data.draw(st.booleans(), label="merge"):
            sizes[-1] *= f
        else:
            sizes.append(f)
    for _ in range(data.draw(st.integers(0, 2), label="ones")):
        sizes.insert(data.draw(st.integers(0, len(sizes)), label="at"), 1)
    return [array(data, x_shape, dtype)], dict(new_sizes=tuple(sizes))


def _reshape_ref(x, *, new_sizes):
    return np.reshape(x, new_sizes)


# ------------------------------------------------------------------- transpose, rev


def _transpose_draw(data, dtype):
    x = array(data, _shape(data, max_dims=4), dtype)
    perm = data.draw(st.permutations(range(x.ndim)), label="permutation")
    return [x], dict(permutation=tuple(perm))


def _transpose_ref(x, *, permutation):
    return np.transpose(x, permutation)


def _rev_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    return [x], dict(dimensions=_subset(data, x.ndim, "dimensions"))


def _rev_ref(x, *, dimensions):
    return np.flip(x, dimensions) if dimensions else np.asarray(x)


# ------------------------------------------------------------- squeeze, expand_dims


def _squeeze_draw(data, dtype):
    x_shape = list(_shape(data, max_dims=4))
    dims = _subset(data, len(x_shape), "dimensions")
    for d in dims:
        x_shape[d] = 1
    return [array(data, tuple(x_shape), dtype)], dict(dimensions=dims)


def _squeeze_ref(x, *, dimensions):
    return np.squeeze(x, axis=dimensions)


def _expand_dims_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    k = data.draw(st.integers(0, 2), label="new dims")
    dims = tuple(sorted(data.draw(st.permutations(range(x.ndim + k)), label="at")[:k]))
    return [x], dict(dimensions=dims)


def _expand_dims_ref(x, *, dimensions):
    return np.expand_dims(x, dimensions)


# ------------------------------------------------------------------------- slice


def _slice_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    starts, limits, strides = [], [], []
    for n in x.shape:
        s = data.draw(st.integers(0, n), label="start")
        starts.append(s)
        limits.append(data.draw(st.integers(s, n), label="limit"))
        strides.append(data.draw(st.integers(1, 3), label="stride"))
    use_strides = data.draw(st.booleans(), label="strided")
    return [x], dict(
        start_indices=tuple(starts),
        limit_indices=tuple(limits),
        strides=tuple(strides) if use_strides else None,
    )


def _slice_ref(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * np.ndim(x)
    return np.asarray(x)[tuple(slice(*t) for t in zip(start_indices, limit_indices, strides))]


# ---------------------------------------------------- dynamic_slice, dynamic_update_slice


def _starts(data, shape):
    out = []
    for n in shape:
        dtype = data.draw(st.sampled_from(INDEX_DTYPES), label="index dtype")
        out.append(np.asarray(data.draw(st.integers(-2, n + 2), label="start"), dtype))
    return out


def _clamped(shape, starts, sizes):
    return tuple(
        slice(c, c + k)
        for c, k in ((min(max(int(s), 0), n - k), k) for n, s, k in zip(shape, starts, sizes))
    )


def _dynamic_slice_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    sizes = tuple(data.draw(st.integers(0, n), label="size") for n in x.shape)
    return [x, *_starts(data, x.shape)], dict(slice_sizes=sizes)


def _dynamic_slice_ref(x, *starts, slice_sizes):
    return np.asarray(x)[_clamped(np.shape(x), starts, slice_sizes)]


def _dynamic_update_slice_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    u_shape = tuple(data.draw(st.integers(0, n), label="update size") for n in x.shape)
    return [x, array(data, u_shape, dtype), *_starts(data, x.shape)], {}


def _dynamic_update_slice_ref(x, update, *starts):
    out = np.array(x)
    out[_clamped(out.shape, starts, np.shape(update))] = update
    return out


# ------------------------------------------------------------------- concatenate


def _concatenate_draw(n):
    def draw(data, dtype):
        shape = list(_shape(data, min_dims=1))
        dim = data.draw(st.integers(0, len(shape) - 1), label="dimension")
        xs = []
        for _ in range(n):
            shape[dim] = data.draw(st.integers(0, 3), label="size")
            xs.append(array(data, tuple(shape), dtype))
        return xs, dict(dimension=dim)

    return draw


def _concatenate_ref(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


# --------------------------------------------------------------------------- pad


def _pad_draw(data, dtype):
    x = array(data, _shape(data), dtype)
    config = []
    for n in x.shape:
        lo, hi = (data.draw(st.integers(-3, 3), label=w) for w in ("lo", "hi"))
        interior = data.draw(st.integers(0, 2), label="interior")
        if ps.pad_output_size(n, lo, hi, interior) < 0:
            lo, hi = max(lo, 0), max(hi, 0)
        config.append((lo, hi, interior))
    pv = array(data, (), dtype)
    return [x, pv], dict(padding_config=tuple(config))


def _pad_ref(x, padding_value, *, padding_config):
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(padding_config):
        out = np.moveaxis(out, axis, 0)
        n = out.shape[0]
        rows = []
        for i in range(n):
            rows.append(out[i])
            if i < n - 1:
                rows.extend([np.full(out.shape[1:], padding_value, out.dtype)] * interior)
        fill = np.full(out.shape[1:], padding_value, out.dtype)
        rows = [fill] * max(lo, 0) + rows + [fill] * max(hi, 0)
        stacked = np.stack(rows) if rows else np.zeros((0,) + out.shape[1:], out.dtype)
        stacked = stacked[max(-lo, 0) : len(stacked) - max(-hi, 0)]
        out = np.moveaxis(stacked, 0, axis)
    return out


def _unary_draw(special):
    def draw(data, dtype):
        return [array(data, _shape(data), dtype, special=special)], {}

    return draw


def _identity_ref(x):
    return np.asarray(x)


CASES = [
    Case(
        ps.convert_element_type_p,
        _convert_draw(FLOATS, from_float64=(dt.float64,)),
        _convert_ref,
        dtypes=FLOATS,
        diff_args=(0,),
        linear_args=(0,),
        exact=True,
    ),
    Case(
        ps.convert_element_type_p,
        _convert_draw((dt.float32,)),
        _convert_ref,
        name="convert_element_type_f64_to_f32",
        dtypes=(dt.float64,),
        diff_args=(0,),
        fd_eps=1.0,
        fd_rtol=1e-6,
        fd_atol=1e-6,
    ),
    Case(
        ps.convert_element_type_p,
        _convert_draw(INTS + (dt.bool_,)),
        _convert_ref,
        name="convert_element_type_float_to_int",
        dtypes=FLOATS,
        diff_args=(0,),
        exact=True,
    ),
    Case(
        ps.convert_element_type_p,
        _convert_draw(FLOATS + INTS + (dt.bool_,)),
        _convert_ref,
        name="convert_element_type_from_int",
        dtypes=INTS + (dt.bool_,),
        exact=True,
    ),
    Case(
        ps.iota_p,
        _iota_draw,
        _iota_ref,
        dtypes=(dt.int32, dt.int64, dt.uint8, dt.float32, dt.bfloat16),
        exact=True,
    ),
    Case(
        ps.broadcast_in_dim_p,
        _broadcast_in_dim_draw,
        _broadcast_in_dim_ref,
        diff_args=(0,),
        linear_args=(0,),
        **LINEAR,
    ),
    Case(ps.reshape_p, _reshape_draw, _reshape_ref, diff_args=(0,), linear_args=(0,), **LINEAR),
    Case(
        ps.transpose_p, _transpose_draw, _transpose_ref, diff_args=(0,), linear_args=(0,), **LINEAR
    ),
    Case(ps.squeeze_p, _squeeze_draw, _squeeze_ref, diff_args=(0,), linear_args=(0,), **LINEAR),
    Case(
        ps.expand_dims_p,
        _expand_dims_draw,
        _expand_dims_ref,
        diff_args=(0,),
        linear_args=(0,),
        **LINEAR,
    ),
    Case(ps.rev_p, _rev_draw, _rev_ref, diff_args=(0,), linear_args=(0,), **LINEAR),
    Case(ps.slice_p, _slice_draw, _slice_ref, diff_args=(0,), linear_args=(0,), **LINEAR),
    Case(
        ps.dynamic_slice_p,
        _dynamic_slice_draw,
        _dynamic_slice_ref,
        diff_args=(0,),
        linear_args=(0,),
        **LINEAR,
    ),
    Case(
        ps.dynamic_update_slice_p,
        _dynamic_update_slice_draw,
        _dynamic_update_slice_ref,
        diff_args=(0, 1),
        linear_args=(0, 1),
        **LINEAR,
    ),
    Case(
        ps.concatenate_p,
        _concatenate_draw(3),
        _concatenate_ref,
        diff_args=(0, 1, 2),
        linear_args=(0, 1, 2),
        **LINEAR,
    ),
    Case(
        ps.concatenate_p,
        _concatenate_draw(1),
        _concatenate_ref,
        name="concatenate_one",
        diff_args=(0,),
        linear_args=(0,),
        **LINEAR,
    ),
    Case(ps.pad_p, _pad_draw, _pad_ref, diff_args=(0, 1), linear_args=(0, 1), **LINEAR),
    Case(ps.copy_p, _unary_draw(False), _identity_ref, diff_args=(0,), linear_args=(0,), **LINEAR),
    # Its tangent is zero by definition, so finite differences of the identity do not apply.
    Case(ps.stop_gradient_p, _unary_draw(True), _identity_ref, dtypes=MIXED),
]
