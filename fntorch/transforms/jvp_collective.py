"""jvp and transpose rules of the collectives.

All but ``pmax``/``pmin`` (piecewise) and ``axis_index`` (integer) are linear. The
transposes are JAX's: ``psum``'s result is the same on every member, so its transpose
hands each member the cotangent unchanged (a broadcast); ``pvary``'s is ``psum`` (a
value every member shares contributed from each of them); ``all_gather`` and
``psum_scatter`` transpose into each other, ``all_to_all`` into itself with the split
and concat dims swapped, ``ppermute`` into the inverse permutation.
"""

from __future__ import annotations

from functools import partial

from ..ops import _prims_collective as pc
from ..ops import lax
from .ad import Zero, defjvp_zero, deflinear, jvp_rules


def _psum_transpose(ct, x, **params):
    return [ct]


deflinear(pc.psum_p, _psum_transpose)


def _pvary_transpose(ct, x, **params):
    return [pc.psum_p.bind(ct, **params)]


deflinear(pc.pvary_p, _pvary_transpose)


def _all_gather_transpose(ct, x, *, axis, tiled, **params):
    return [pc.psum_scatter_p.bind(ct, scatter_dimension=axis, tiled=tiled, **params)]


deflinear(pc.all_gather_p, _all_gather_transpose)


def _psum_scatter_transpose(ct, x, *, scatter_dimension, tiled, **params):
    return [pc.all_gather_p.bind(ct, axis=scatter_dimension, tiled=tiled, **params)]


deflinear(pc.psum_scatter_p, _psum_scatter_transpose)


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, **params):
    return [pc.all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


deflinear(pc.all_to_all_p, _all_to_all_transpose)


def _ppermute_transpose(ct, x, *, perm, **params):
    inverse = tuple((d, s) for s, d in perm)
    return [pc.ppermute_p.bind(ct, perm=inverse, **params)]


deflinear(pc.ppermute_p, _ppermute_transpose)


def _extremum_jvp(prim, primals, tangents, **params):
    """The tangent of the members holding the extremum, averaged over ties."""
    (x,), (t,) = primals, tangents
    out = prim.bind(x, **params)
    if type(t) is Zero:
        return out, Zero.like(out)
    picked = lax.eq(x, out)
    dtype = t.dtype
    count = pc.psum_p.bind(lax.convert_element_type(picked, dtype), **params)
    zero = lax.full(t.shape, 0, dtype)
    return out, lax.div(pc.psum_p.bind(lax.select_n(picked, zero, t), **params), count)


jvp_rules[pc.pmax_p] = partial(_extremum_jvp, pc.pmax_p)
jvp_rules[pc.pmin_p] = partial(_extremum_jvp, pc.pmin_p)
defjvp_zero(pc.axis_index_p)
