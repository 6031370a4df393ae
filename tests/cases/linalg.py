"""Cases of the linalg primitives (see tests/cases/__init__.py).

References are written independently of the impls: ``np.einsum`` for dot_general and
naive loops over output positions and window taps (straight from the lax definitions)
for convolutions and windows. ``dot_general`` and ``conv_general_dilated`` are linear in
each operand separately, so each has two transpose cases, one per operand, with the other
held constant (``linear_args`` names the free one; ``extra['const_args']`` the other).
"""

from __future__ import annotations

import itertools
import string

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_linalg as la

from . import Case, array

FLOATS = (dt.float32, dt.float64)
INTS = (dt.int32, dt.int64)


def _ints(data, lo, hi, label):
    return data.draw(st.integers(lo, hi), label=label)


def _distinct(data, shape, dtype):
    """Values at least 0.1 apart in random order: max/min have no ties."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))
    n = int(np.prod(shape, dtype=np.int64))
    vals = (rng.permutation(n) + rng.uniform(0.1, 0.9, n)) * 0.5 - n * 0.25
    return vals.reshape(shape).astype(dtype)


# ---------------------------------------------------------------------- dot_general

_DOT_KINDS = ("general", "matmul", "matvec", "vecmat", "batched_matmul", "outer", "inner")


def _dot_layout(data, kind):
    """Numbers of (batch, contracting, lhs free, rhs free) dims."""
    fixed = {
        "matmul": (0, 1, 1, 1),
        "matvec": (0, 1, 1, 0),
        "vecmat": (0, 1, 0, 1),
        "batched_matmul": (1, 1, 1, 1),
        "outer": (0, 0, 1, 1),
        "inner": (0, 1, 0, 0),
    }
    if kind in fixed:
        return fixed[kind]
    return tuple(_ints(data, 0, 2, label) for label in ("nb", "nc", "nlf", "nrf"))


def _dot_draw(pet=None, max_side=4):
    def draw(data, dtype):
        kind = data.draw(st.sampled_from(_DOT_KINDS), label="kind")
        nb, nc, nlf, nrf = _dot_layout(data, kind)
        min_side = data.draw(st.sampled_from((0, 1, 1, 1)), label="min side")

        def sizes(n, label):
            return [_ints(data, min_side, max_side, label) for _ in range(n)]

        b, c, lf, rf = sizes(nb, "b"), sizes(nc, "c"), sizes(nlf, "lf"), sizes(nrf, "rf")

        def operand(free, label):
            logical = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + free
            perm = data.draw(st.permutations(range(len(logical))), label=label)
            placed = [logical[p] for p in perm]
            shape = tuple({"b": b, "c": c, "lf": lf, "rf": rf}[k][i] for k, i in placed)
            cdims = tuple(placed.index(("c", i)) for i in range(nc))
            bdims = tuple(placed.index(("b", i)) for i in range(nb))
            return shape, cdims, bdims

        ls, lc, lb = operand([("lf", i) for i in range(nlf)], "lhs perm")
        rs, rc, rb = operand([("rf", i) for i in range(nrf)], "rhs perm")
        args = [array(data, ls, dtype), array(data, rs, dtype)]
        return args, dict(dimension_numbers=((lc, rc), (lb, rb)), preferred_element_type=pet)

    return draw


def _dot_general_ref(lhs, rhs, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    lsub = [None] * lhs.ndim
    rsub = [None] * rhs.ndim
    for ld, rd in zip(lc + lb, rc + rb):
        lsub[ld] = rsub[rd] = next(letters)
    for sub in (lsub, rsub):
        for i, s in enumerate(sub):
            if s is None:
                sub[i] = next(letters)
    out = [lsub[d] for d in lb]
    out += [s for i, s in enumerate(lsub) if i not in lc and i not in lb]
    out += [s for i, s in enumerate(rsub) if i not in rc and i not in rb]
    out_dtype = preferred_element_type or lhs.dtype
    wide = np.float64 if dt.is_float(out_dtype) else out_dtype
    spec = f"{''.join(lsub)},{''.join(rsub)}->{''.join(out)}"
    res = np.einsum(spec, lhs.astype(wide), rhs.astype(wide))
    return np.asarray(res).astype(out_dtype)


# ---------------------------------------------------------------------- convolution


def _conv_draw(int_values=False):
    def draw(data, dtype):
        nsp = _ints(data, 1, 2, "spatial dims")
        g = data.draw(st.sampled_from((1, 1, 2, 3)), label="feature groups")
        bg = data.draw(st.sampled_from((1, 1, 1, 2)), label="batch groups") if g == 1 else 1
        n = bg * _ints(data, 0 if bg == 1 else 1, 2, "N / batch groups")
        ci, og = _ints(data, 1, 2, "C / groups"), _ints(data, 1, 2, "O / groups")
        o = og * g * bg
        window = tuple(_ints(data, 1, 3, "window") for _ in range(nsp))
        spatial = tuple(_ints(data, 1, 5, "spatial") for _ in range(nsp))
        strides = tuple(_ints(data, 1, 2, "stride") for _ in range(nsp))
        lhs_dil = tuple(data.draw(st.sampled_from((1, 1, 2)), label="lhs dil") for _ in window)
        rhs_dil = tuple(data.draw(st.sampled_from((1, 1, 2)), label="rhs dil") for _ in window)
        padding = tuple((_ints(data, -1, 2, "lo"), _ints(data, -1, 2, "hi")) for _ in window)
        dil = la.dilate_shape(spatial, lhs_dil)
        padding = tuple(
            (lo, hi) if d + lo + hi >= 0 else (0, 0) for d, (lo, hi) in zip(dil, padding)
        )
        lhs = array(data, (n, g * ci, *spatial), dtype)
        rhs = array(data, (o, ci, *window), dtype)
        params = dict(
            window_strides=strides,
            padding=padding,
            lhs_dilation=lhs_dil,
            rhs_dilation=rhs_dil,
            feature_group_count=g,
            batch_group_count=bg,
        )
        return [lhs, rhs], params

    return draw


def _conv_ref(
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    """Straight from the definition: out[n, o, p] = sum over taps k and the group's input
    channels of lhs_dilated_padded[n, c, p * stride + k * rhs_dilation] * rhs[o, c, k]."""
    n, c = lhs.shape[:2]
    o, ci = rhs.shape[:2]
    window = rhs.shape[2:]
    g, b = feature_group_count, batch_group_count
    osp = la.conv_out_spatial(
        lhs.shape[2:], window, window_strides, padding, lhs_dilation, rhs_dilation
    )
    wide = np.float64 if dt.is_float(lhs.dtype) else lhs.dtype
    out = np.zeros((n // b, o, *osp), wide)
    x, w = lhs.astype(wide), rhs.astype(wide)
    groups = g * b
    og = o // groups
    for p in itertools.product(*map(range, osp)):
        for k in itertools.product(*map(range, window)):
            q = [
                pi * s + ki * d - lo
                for pi, s, ki, d, (lo, _) in zip(p, window_strides, k, rhs_dilation, padding)
            ]
            if any(
                qi % ld or not 0 <= qi // ld < sz
                for qi, ld, sz in zip(q, lhs_dilation, lhs.shape[2:])
            ):
                continue
            idx = tuple(qi // ld for qi, ld in zip(q, lhs_dilation))
            for grp in range(groups):
                # A feature group reads its slice of channels; a batch group its slice of N.
                cs = slice(grp * ci, (grp + 1) * ci) if g > 1 else slice(None)
                ns = slice(grp * (n // b), (grp + 1) * (n // b)) if b > 1 else slice(None)
                os_ = slice(grp * og, (grp + 1) * og)
                xv = x[(ns, cs, *idx)]  # (N/B, C/G)
                wv = w[(os_, slice(None), *k)]  # (O/groups, C/G)
                out[(slice(None), os_, *p)] += xv @ wv.T
    return out.astype(lhs.dtype)


# ---------------------------------------------------------------------- reduce_window


def _window_params(data, shape):
    return dict(
        window_dimensions=tuple(_ints(data, 1, 3, "window") for _ in shape),
        window_strides=tuple(_ints(data, 1, 2, "stride") for _ in shape),
        padding=tuple((_ints(data, -1, 2, "lo"), _ints(data, -1, 2, "hi")) for _ in shape),
        base_dilation=tuple(data.draw(st.sampled_from((1, 1, 2)), label="base") for _ in shape),
        window_dilation=tuple(data.draw(st.sampled_from((1, 1, 2)), label="wdil") for _ in shape),
    )


def _fix_padding(shape, params):
    dil = la.dilate_shape(shape, params["base_dilation"])
    params["padding"] = tuple(
        (lo, hi) if d + lo + hi >= 0 else (0, 0) for d, (lo, hi) in zip(dil, params["padding"])
    )
    return params


def _window_taps(
    shape, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """For each output index, the operand indices its window reads (padding and dilation
    holes read nothing)."""
    osp = la._window_out(
        "reduce_window",
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    for p in itertools.product(*map(range, osp)):
        taps = []
        for k in itertools.product(*map(range, window_dimensions)):
            q = [
                pi * s + ki * d - lo
                for pi, s, ki, d, (lo, _) in zip(p, window_strides, k, window_dilation, padding)
            ]
            if all(
                qi % bd == 0 and 0 <= qi // bd < sz for qi, bd, sz in zip(q, base_dilation, shape)
            ):
                taps.append(tuple(qi // bd for qi, bd in zip(q, base_dilation)))
        yield p, taps, osp


def _reduce_window_ref(kind):
    def reference(x, **params):
        x = np.asarray(x)
        if kind == "sum":
            ident = np.zeros((), x.dtype)
        elif dt.is_float(x.dtype):
            ident = np.asarray(-np.inf if kind == "max" else np.inf, x.dtype)
        else:
            info = np.iinfo(x.dtype)
            ident = np.asarray(info.min if kind == "max" else info.max, x.dtype)
        osp = None
        vals = {}
        for p, taps, osp in _window_taps(x.shape, **params):
            vals[p] = [x[t] for t in taps]
        if osp is None:
            osp = la._window_out(
                "reduce_window",
                x.shape,
                params["window_dimensions"],
                params["window_strides"],
                params["padding"],
                params["base_dilation"],
                params["window_dilation"],
            )
        out = np.full(osp, ident, np.float64 if dt.is_float(x.dtype) else x.dtype)
        for p, v in vals.items():
            if kind == "sum":
                out[p] = np.sum(np.asarray(v, out.dtype), dtype=out.dtype)
            elif v:
                out[p] = (np.max if kind == "max" else np.min)(np.asarray(v, out.dtype))
        return out.astype(x.dtype)

    return reference


def _reduce_window_draw(values="uniform", cover=False):
    """``cover``: every window reads at least one operand element (so max/min are finite
    and differentiable there)."""

    def draw(data, dtype):
        nd = _ints(data, 1, 3, "rank")
        shape = tuple(_ints(data, 1, 4, "side") for _ in range(nd))
        params = _fix_padding(shape, _window_params(data, shape))
        if cover and any(not t for _, t, _ in _window_taps(shape, **params)):
            params.update(padding=((0, 0),) * nd, base_dilation=(1,) * nd)
        if values == "distinct":
            x = _distinct(data, shape, dtype)
        else:
            x = array(data, shape, dtype, special=values == "special")
        return [x], params

    return draw


_sum_ref, _max_ref, _min_ref = map(_reduce_window_ref, ("sum", "max", "min"))

_dot, _conv = la.dot_general_p, la.conv_general_dilated_p
_rws, _rwmax, _rwmin = la.reduce_window_sum_p, la.reduce_window_max_p, la.reduce_window_min_p

CASES = [
    Case(_dot, _dot_draw(), _dot_general_ref, FLOATS, diff_args=(0, 1), linear_args=(0,),
         extra={"const_args": (1,)}, atol=1e-4, name="dot_general_lhs"),
    Case(_dot, _dot_draw(), _dot_general_ref, FLOATS, diff_args=(0, 1), linear_args=(1,),
         extra={"const_args": (0,)}, atol=1e-4, name="dot_general_rhs"),
    Case(_dot, _dot_draw(), _dot_general_ref, INTS, exact=True, name="dot_general_int"),
    Case(_dot, _dot_draw(pet=dt.float32), _dot_general_ref, (dt.float16, dt.bfloat16),
         rtol=1e-2, atol=1e-2, name="dot_general_half_to_f32"),
    Case(_dot, _dot_draw(pet=dt.int32), _dot_general_ref, (dt.int8,), exact=True,
         name="dot_general_int8_to_i32"),
    Case(_conv, _conv_draw(), _conv_ref, FLOATS, diff_args=(0, 1), linear_args=(0,),
         extra={"const_args": (1,)}, atol=1e-4, name="conv_lhs"),
    Case(_conv, _conv_draw(), _conv_ref, FLOATS, diff_args=(0, 1), linear_args=(1,),
         extra={"const_args": (0,)}, atol=1e-4, name="conv_rhs"),
    Case(_conv, _conv_draw(), _conv_ref, INTS, exact=True, name="conv_int"),
    Case(_rws, _reduce_window_draw(), _sum_ref, FLOATS, diff_args=(0,), linear_args=(0,),
         atol=1e-5),
    Case(_rws, _reduce_window_draw(), _sum_ref, INTS, exact=True, name="reduce_window_sum_int"),
    Case(_rwmax, _reduce_window_draw("distinct", cover=True), _max_ref, FLOATS, diff_args=(0,)),
    Case(_rwmin, _reduce_window_draw("distinct", cover=True), _min_ref, FLOATS, diff_args=(0,)),
    Case(_rwmax, _reduce_window_draw("special"), _max_ref, FLOATS, name="reduce_window_max_nan"),
    Case(_rwmin, _reduce_window_draw("special"), _min_ref, FLOATS, name="reduce_window_min_nan"),
    Case(_rwmax, _reduce_window_draw(), _max_ref, INTS, exact=True, name="reduce_window_max_int"),
    Case(_rwmin, _reduce_window_draw(), _min_ref, INTS, exact=True, name="reduce_window_min_int"),
]  # fmt: skip
