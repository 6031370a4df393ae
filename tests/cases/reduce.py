"""Cases of the reduce, scan and sort primitives (see tests/cases/__init__.py).

Derivative cases draw values without ties (``distinct``): max/min/cummax/sort are not
differentiable where two elements tie. Impl-only cases add NaN/inf and duplicates.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_reduce as r

from . import Case, array, shapes

FLOATS = (dt.float32, dt.float64)
LOW = (dt.float16, dt.bfloat16)
INTS = (dt.int32, dt.int64, dt.uint8)
INDEX_DTYPES = (dt.int32, dt.int64)


# ----------------------------------------------------------------- drawing helpers


def distinct(data, shape, dtype):
    """Values at least 0.1 apart, in random order (no ties, safe for finite differences)."""
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    vals = (rng.permutation(n) + rng.uniform(0.1, 0.9, n)) * 0.5 - n * 0.25
    return vals.reshape(shape).astype(dtype)


def with_zeros(data, x):
    """``x`` with some entries set to exactly zero (the hard points of products)."""
    if x.size and data.draw(st.booleans(), label="zeros"):
        x = np.array(x)
        k = data.draw(st.lists(st.integers(0, x.size - 1), min_size=1, max_size=2), label="at")
        x.reshape(-1)[k] = 0
    return x


def draw_axes(data, ndim):
    if ndim == 0:
        return ()
    return tuple(sorted(data.draw(st.lists(st.integers(0, ndim - 1), unique=True), label="axes")))


def draw_axis(data, ndim):
    return data.draw(st.integers(0, ndim - 1), label="axis")


# ------------------------------------------------------------------- reductions


def _reduce_draw(values="uniform", min_side=0, max_side=4, max_dims=3):
    def draw(data, dtype):
        shape = data.draw(shapes(0, max_dims, min_side, max_side), label="shape")
        if values == "distinct":
            x = distinct(data, shape, dtype)
        elif values == "prod":
            x = with_zeros(data, array(data, shape, dtype, lo=-1.5, hi=1.5))
        else:
            x = array(data, shape, dtype, special=values == "special")
        return [x], dict(axes=draw_axes(data, len(shape)))

    return draw


def _ref(fn):
    def reference(x, *, axes):
        return np.asarray(fn(x, axes))

    return reference


def _max_ref(x, axes):
    if dt.is_float(x.dtype):
        init = -np.inf
    else:
        init = np.iinfo(x.dtype).min if x.dtype != dt.bool_ else False
    return np.max(x, axis=axes, initial=init)


def _min_ref(x, axes):
    if dt.is_float(x.dtype):
        init = np.inf
    else:
        init = np.iinfo(x.dtype).max if x.dtype != dt.bool_ else True
    return np.min(x, axis=axes, initial=init)


_sum_ref = _ref(lambda x, a: np.sum(x, axis=a, dtype=x.dtype))
_prod_ref = _ref(lambda x, a: np.prod(x, axis=a, dtype=x.dtype))

CASES = [
    Case(r.reduce_sum_p, _reduce_draw(), _sum_ref, FLOATS, diff_args=(0,), linear_args=(0,)),
    Case(r.reduce_sum_p, _reduce_draw(), _sum_ref, INTS, exact=True, name="reduce_sum_int"),
    Case(r.reduce_prod_p, _reduce_draw("prod", max_side=3), _prod_ref, FLOATS, diff_args=(0,)),
    Case(r.reduce_prod_p, _reduce_draw(max_side=3), _prod_ref, (dt.int32, dt.int64),
         exact=True, name="reduce_prod_int"),
    # Empty reduced axes give a constant -inf/+inf (tangent 0 here, NaN by finite
    # differences): tests/ops/test_reduce_extra.py checks those.
    Case(r.reduce_max_p, _reduce_draw("distinct", min_side=1), _ref(_max_ref), FLOATS,
         diff_args=(0,)),
    Case(r.reduce_min_p, _reduce_draw("distinct", min_side=1), _ref(_min_ref), FLOATS,
         diff_args=(0,)),
    Case(r.reduce_sum_p, _reduce_draw(), _sum_ref, LOW, name="reduce_sum_lowp"),
    Case(r.reduce_max_p, _reduce_draw("special"), _ref(_max_ref), FLOATS + LOW,
         name="reduce_max_nan"),
    Case(r.reduce_min_p, _reduce_draw("special"), _ref(_min_ref), FLOATS + LOW,
         name="reduce_min_nan"),
    Case(r.reduce_max_p, _reduce_draw(), _ref(_max_ref), INTS + (dt.bool_,), exact=True,
         name="reduce_max_int"),
    Case(r.reduce_min_p, _reduce_draw(), _ref(_min_ref), INTS + (dt.bool_,), exact=True,
         name="reduce_min_int"),
    Case(r.reduce_and_p, _reduce_draw(), _ref(lambda x, a: np.all(x, axis=a)), (dt.bool_,),
         exact=True),
    Case(r.reduce_or_p, _reduce_draw(), _ref(lambda x, a: np.any(x, axis=a)), (dt.bool_,),
         exact=True),
]  # fmt: skip


# ----------------------------------------------------------------- arg-reductions


def _arg_draw(data, dtype):
    shape = data.draw(shapes(1, 3, 1, 4), label="shape")
    x = array(data, shape, dtype, special=True)
    index_dtype = data.draw(st.sampled_from(INDEX_DTYPES), label="index_dtype")
    return [x], dict(axes=(draw_axis(data, len(shape)),), index_dtype=index_dtype)


def _arg_ref(fn):
    def reference(x, *, axes, index_dtype):
        return np.asarray(fn(x, axis=axes[0])).astype(index_dtype)

    return reference


CASES += [
    Case(r.argmax_p, _arg_draw, _arg_ref(np.argmax), FLOATS + INTS, exact=True),
    Case(r.argmin_p, _arg_draw, _arg_ref(np.argmin), FLOATS + INTS, exact=True),
]


# ------------------------------------------------------------------------ scans


def _scan_draw(values="uniform", max_side=4):
    def draw(data, dtype):
        shape = data.draw(shapes(1, 3, 0, max_side), label="shape")
        if values == "distinct":
            x = distinct(data, shape, dtype)
        elif values == "prod":
            x = with_zeros(data, array(data, shape, dtype, lo=-1.5, hi=1.5))
        else:
            x = array(data, shape, dtype, special=values == "special")
        axis = draw_axis(data, len(shape))
        return [x], dict(axis=axis, reverse=data.draw(st.booleans(), label="reverse"))

    return draw


def _scan_ref(fn):
    def reference(x, *, axis, reverse):
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis), axis)
        return fn(x, axis)

    return reference


_cumsum_ref = _scan_ref(lambda x, a: np.cumsum(x, axis=a, dtype=x.dtype))
_cumprod_ref = _scan_ref(lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype))
_cummax_ref = _scan_ref(np.maximum.accumulate)
_cummin_ref = _scan_ref(np.minimum.accumulate)

CASES += [
    Case(r.cumsum_p, _scan_draw(), _cumsum_ref, FLOATS, diff_args=(0,), linear_args=(0,)),
    Case(r.cumsum_p, _scan_draw(), _cumsum_ref, INTS, exact=True, name="cumsum_int"),
    # Sides up to 7 take cumprod's jvp through three shift-and-combine steps.
    Case(r.cumprod_p, _scan_draw("prod", max_side=7), _cumprod_ref, FLOATS, diff_args=(0,)),
    Case(r.cumprod_p, _scan_draw(max_side=3), _cumprod_ref, (dt.int32, dt.int64), exact=True,
         name="cumprod_int"),
    Case(r.cummax_p, _scan_draw("distinct", 6), _cummax_ref, FLOATS, diff_args=(0,)),
    Case(r.cummin_p, _scan_draw("distinct", 6), _cummin_ref, FLOATS, diff_args=(0,)),
    Case(r.cumsum_p, _scan_draw(), _cumsum_ref, LOW, name="cumsum_lowp"),
    Case(r.cummax_p, _scan_draw("special"), _cummax_ref, FLOATS + LOW, name="cummax_nan"),
    Case(r.cummin_p, _scan_draw("special"), _cummin_ref, FLOATS + LOW, name="cummin_nan"),
    Case(r.cummax_p, _scan_draw(), _cummax_ref, INTS, exact=True, name="cummax_int"),
    Case(r.cummin_p, _scan_draw(), _cummin_ref, INTS, exact=True, name="cummin_int"),
]  # fmt: skip


# ------------------------------------------------------------------------- sort


def _sort_draw(n, keys="distinct"):
    def draw(data, dtype):
        shape = data.draw(shapes(1, 3, 0, 5), label="shape")
        num_keys = data.draw(st.integers(1, n), label="num_keys")
        operands = []
        for i in range(n):
            if keys == "distinct" and i == 0:
                operands.append(distinct(data, shape, dtype))
            elif keys == "distinct":
                operands.append(array(data, shape, dtype))
            elif i == 0 and dt.is_float(dtype):
                # Few distinct values: many ties, plus NaN and infinities.
                x = array(data, shape, dtype, lo=-2, hi=2, special=True)
                operands.append(np.round(x.astype(np.float64)).astype(dtype))
            else:
                operands.append(array(data, shape, dt.int32))
        dimension = draw_axis(data, len(shape))
        return operands, dict(dimension=dimension, is_stable=True, num_keys=num_keys)

    return draw


def _sort_ref(*operands, dimension, is_stable, num_keys):
    # numpy sorts NaNs last, but not in ml_dtypes' bfloat16 (plain comparisons): its
    # keys sort as float32, which holds every bfloat16 exactly.
    keys = [k.astype(np.float32) if k.dtype.name == "bfloat16" else k for k in operands]
    perm = np.lexsort(keys[:num_keys][::-1], axis=dimension)
    return [np.take_along_axis(x, perm, dimension) for x in operands]


CASES += [
    # Every operand is a float of the case dtype; the first key has no ties.
    Case(r.sort_p, _sort_draw(1), _sort_ref, FLOATS, diff_args=(0,)),
    Case(r.sort_p, _sort_draw(3), _sort_ref, FLOATS, diff_args=(0, 1, 2), name="sort3"),
    Case(r.sort_p, _sort_draw(3, "ties"), _sort_ref, FLOATS + LOW + (dt.int32,), name="sort3_ties"),
]
