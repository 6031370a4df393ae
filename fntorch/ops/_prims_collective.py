"""Collectives over a named axis: the primitives and their abstract-eval rules.

Every collective carries ``axis_name`` (a str, or a tuple of mesh axis names: their
group) and ``size`` (the bound axis' size, looked up when the public function binds
it: fx/axes.py), so abstract evaluation never reads the axis environment. Under
``vmap(axis_name=)`` the batch trace of that name rewrites them into reductions and
rearrangements of its batch axis (``transforms/vmap_collective.py``); across processes
the impls call the mesh's communicator (``devices/collectives.py``), eagerly and as
compiled programs' library steps.

``pvary`` is the identity whose transpose is ``psum``: ``shard_map`` applies it to its
replicated inputs, so their cotangents are summed over the axis (JAX's ``pvary``).
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules

__all__ = [
    "psum_p", "pmax_p", "pmin_p", "all_gather_p", "psum_scatter_p", "all_to_all_p",
    "ppermute_p", "axis_index_p", "pvary_p", "COLLECTIVES",
]  # fmt: skip

psum_p = Primitive("psum")
pmax_p = Primitive("pmax")
pmin_p = Primitive("pmin")
all_gather_p = Primitive("all_gather")
psum_scatter_p = Primitive("psum_scatter")
all_to_all_p = Primitive("all_to_all")
ppermute_p = Primitive("ppermute")
axis_index_p = Primitive("axis_index")
pvary_p = Primitive("pvary")

COLLECTIVES = (
    psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p,
    axis_index_p, pvary_p,
)  # fmt: skip


def _weak(x) -> bool:
    return bool(getattr(x, "weak_type", False))


def _check_axis(where, axis_name, size):
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(
            f"{where}: axis_name must be a str or a tuple of strs, got {type(axis_name).__name__}"
        )
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"{where}: size (of the axis) must be a positive int, got {size!r}")


def _check_dim(where, arg, d, ndim):
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d < ndim:
        raise ValueError(f"{where}: {arg} must be an axis in [0, {ndim}), got {d!r}")


def _same_abstract(where):
    def rule(x, *, axis_name, size):
        _check_axis(where, axis_name, size)
        return ShapedArray(x.shape, x.dtype, _weak(x))

    return rule


for _p in (psum_p, pmax_p, pmin_p, pvary_p):
    abstract_eval_rules[_p] = _same_abstract(_p.name)


def _all_gather_abstract(x, *, axis_name, size, axis, tiled):
    _check_axis("all_gather", axis_name, size)
    shape = list(x.shape)
    if tiled:
        _check_dim("all_gather", "axis", axis, len(shape))
        shape[axis] *= size
    else:
        _check_dim("all_gather", "axis", axis, len(shape) + 1)
        shape.insert(axis, size)
    return ShapedArray(tuple(shape), x.dtype, _weak(x))


abstract_eval_rules[all_gather_p] = _all_gather_abstract


def _psum_scatter_abstract(x, *, axis_name, size, scatter_dimension, tiled):
    _check_axis("psum_scatter", axis_name, size)
    shape = list(x.shape)
    _check_dim("psum_scatter", "scatter_dimension", scatter_dimension, len(shape))
    n = shape[scatter_dimension]
    if tiled:
        if n % size:
            raise ValueError(
                f"psum_scatter: with tiled=True, dim {scatter_dimension} (size {n}) must be "
                f"divisible by the axis size {size}"
            )
        shape[scatter_dimension] = n // size
    else:
        if n != size:
            raise ValueError(
                f"psum_scatter: dim {scatter_dimension} must have the axis size "
                f"{size} (or pass tiled=True), got shape {tuple(x.shape)}"
            )
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, _weak(x))


abstract_eval_rules[psum_scatter_p] = _psum_scatter_abstract


def _all_to_all_abstract(x, *, axis_name, size, split_axis, concat_axis):
    _check_axis("all_to_all", axis_name, size)
    shape = list(x.shape)
    _check_dim("all_to_all", "split_axis", split_axis, len(shape))
    if shape[split_axis] != size:
        raise ValueError(
            f"all_to_all: split_axis {split_axis} must have the axis size {size}, got "
            f"shape {tuple(x.shape)}"
        )
    del shape[split_axis]
    _check_dim("all_to_all", "concat_axis", concat_axis, len(shape) + 1)
    shape.insert(concat_axis, size)
    return ShapedArray(tuple(shape), x.dtype, _weak(x))


abstract_eval_rules[all_to_all_p] = _all_to_all_abstract


def _ppermute_abstract(x, *, axis_name, size, perm):
    _check_axis("ppermute", axis_name, size)
    check_perm(perm, size)
    return ShapedArray(x.shape, x.dtype, _weak(x))


def check_perm(perm, axis_size):
    """``perm``: pairs ``(source, destination)`` of axis indices, each used once per side."""
    ok = isinstance(perm, tuple) and all(
        isinstance(p, tuple) and len(p) == 2 and all(type(i) is int for i in p) for p in perm
    )
    if not ok:
        raise TypeError(
            f"ppermute: perm must be a tuple of (source, destination) int pairs, got {perm!r}"
        )
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute: perm uses a source or a destination twice: {perm!r}")
    if not all(0 <= i < axis_size for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {perm!r} names an index outside [0, {axis_size})")


abstract_eval_rules[ppermute_p] = _ppermute_abstract


def _axis_index_abstract(*, axis_name, size):
    _check_axis("axis_index", axis_name, size)
    return ShapedArray((), dt.int32)


abstract_eval_rules[axis_index_p] = _axis_index_abstract
