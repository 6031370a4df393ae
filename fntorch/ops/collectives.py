"""The public collectives: ``ft.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``, ``axis_index``, as JAX's.

Each looks up the size of ``axis_name`` (``ft.vmap(f, axis_name=)`` or a mesh binds it:
fx/axes.py) and binds its primitive. ``psum``, ``pmean``, ``pmax`` and ``pmin`` take a
pytree of tensors.

``axis_name`` may be a tuple of names: the group of the members that differ in those
coordinates, ranked row-major in the order given (JAX's). A tuple of mesh axes is one
collective over that group's communicator. A tuple that holds a ``vmap`` axis becomes
one collective per name: reductions one after the other, ``all_gather`` and
``psum_scatter`` nested over the names, ``axis_index`` the row-major index from each
name's; ``all_to_all`` and ``ppermute`` over such a tuple are not supported.
"""

from __future__ import annotations

import numpy as np

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.axes import axis_names, is_vmap_axis
from ..fx.axes import axis_size as _axis_size
from ..fx.core import Tensor
from . import _prims_collective as pc
from ._api_manipulation import moveaxis
from ._prims_structural import _operand, convert_element_type

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute",
    "axis_index", "pvary",
]  # fmt: skip


def _mixed(axis_name, where):
    """``(name, mixed)``: the checked name, and whether it is a tuple that holds a vmap
    axis (then taken one name at a time)."""
    name = axis_names(axis_name, where)
    return name, isinstance(name, tuple) and any(is_vmap_axis(n) for n in name)


def _reduction_parts(name, mixed) -> list:
    """The binds a reduction over ``name`` takes: itself, or for a tuple holding vmap
    axes each vmap name and the mesh names as one group (a reduction's order is free)."""
    if not mixed:
        return [name]
    mesh = tuple(n for n in name if not is_vmap_axis(n))
    return [n for n in name if is_vmap_axis(n)] + ([axis_names(mesh, "")] if mesh else [])


def _tree_bind(prim, x, axis_name, where):
    parts = [(p, _axis_size(p, where)) for p in _reduction_parts(*_mixed(axis_name, where))]

    def reduce(v):
        v = _operand(v)
        for part, size in parts:
            v = prim.bind(v, axis_name=part, size=size)
        return v

    return tree_util.map(reduce, x)


def _unsupported(where, name):
    return NotImplementedError(
        f"{where}: axis_name {name!r} is a tuple holding a vmap axis; {where} over several "
        "axes runs over mesh axes only (name one axis, or nest one call per axis)"
    )


def psum(x, axis_name: str | tuple):
    """The sum of ``x`` over the named axis, the same on every member of it.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.psum(v, "i"), axis_name="i")(ft.asarray([1.0, 2.0, 3.0])).tolist()
    [6.0, 6.0, 6.0]

    Over a tuple of names, the sum over all of them:

    >>> both = ft.vmap(ft.vmap(lambda v: ft.psum(v, ("i", "j")), axis_name="j"), axis_name="i")
    >>> both(ft.ones((2, 3))).tolist()
    [[6.0, 6.0, 6.0], [6.0, 6.0, 6.0]]
    """
    return _tree_bind(pc.psum_p, x, axis_name, "psum")


def pmean(x, axis_name: str | tuple):
    """The mean of ``x`` over the named axis (``psum`` divided by the axis size).

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmean(v, "i"), axis_name="i")(ft.asarray([1.0, 3.0])).tolist()
    [2.0, 2.0]
    """
    size = _axis_size(axis_name, "pmean")

    def mean(s):
        if not dt.is_float(s.dtype):
            s = convert_element_type(s, dt.default_float)
        return s / np.asarray(size, s.dtype)[()]

    return tree_util.map(mean, _tree_bind(pc.psum_p, x, axis_name, "pmean"))


def pmax(x, axis_name: str | tuple):
    """The elementwise maximum of ``x`` over the named axis.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmax(v, "i"), axis_name="i")(ft.asarray([1.0, 5.0, 2.0])).tolist()
    [5.0, 5.0, 5.0]
    """
    return _tree_bind(pc.pmax_p, x, axis_name, "pmax")


def pmin(x, axis_name: str | tuple):
    """The elementwise minimum of ``x`` over the named axis.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmin(v, "i"), axis_name="i")(ft.asarray([4.0, 1.0])).tolist()
    [1.0, 1.0]
    """
    return _tree_bind(pc.pmin_p, x, axis_name, "pmin")


def all_gather(x, axis_name: str | tuple, *, axis: int = 0, tiled: bool = False):
    """Every member's ``x``, stacked along a new dim ``axis`` (``tiled=True``:
    concatenated along the existing dim ``axis``), the same on every member.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.all_gather(v, "i"), axis_name="i")(ft.asarray([1, 2])).tolist()
    [[1, 2], [1, 2]]
    """
    x = _operand(x)
    name, mixed = _mixed(axis_name, "all_gather")
    size = _axis_size(name, "all_gather")
    ndim = np.ndim(x) if not isinstance(x, Tensor) else x.ndim
    axis = int(axis) + (ndim if tiled else ndim + 1) * (int(axis) < 0)
    if not mixed:
        return pc.all_gather_p.bind(x, axis_name=name, size=size, axis=axis, tiled=bool(tiled))
    # innermost name first: each gather pushes the ones before it one dim later, so the
    # stacked dims come out in the tuple's order, merged row-major below
    out = x
    for n in reversed(name):
        out = pc.all_gather_p.bind(
            out, axis_name=n, size=_axis_size(n, "all_gather"), axis=axis, tiled=False
        )
    shape = list(out.shape)
    merge = len(name) + (1 if tiled else 0)
    shape[axis : axis + merge] = [int(np.prod(shape[axis : axis + merge]))]
    return out.reshape(tuple(shape))


def psum_scatter(x, axis_name: str | tuple, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum of ``x`` over the named axis, of which member ``k`` keeps block ``k`` of
    dim ``scatter_dimension`` (whose size must be the axis size, or with ``tiled=True``
    a multiple of it). The transpose of ``all_gather``.

    >>> import fntorch as ft
    >>> xs = ft.asarray([[1.0, 2.0], [10.0, 20.0]])
    >>> ft.vmap(lambda v: ft.psum_scatter(v, "i"), axis_name="i")(xs).tolist()
    [11.0, 22.0]
    """
    x = _operand(x)
    name, mixed = _mixed(axis_name, "psum_scatter")
    size = _axis_size(name, "psum_scatter")
    d = int(scatter_dimension)
    d += np.ndim(x) * (d < 0) if not isinstance(x, Tensor) else x.ndim * (d < 0)
    if not mixed:
        return pc.psum_scatter_p.bind(
            x, axis_name=name, size=size, scatter_dimension=d, tiled=bool(tiled)
        )
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    shape, n = list(x.shape), x.shape[d] if 0 <= d < x.ndim else None
    if n is None or (n % size if tiled else n != size):
        raise ValueError(
            f"psum_scatter: dim {scatter_dimension} of shape {tuple(x.shape)} must be "
            f"{'a multiple of' if tiled else 'of'} the axis size {size}"
        )
    # dim d cut into one dim per name (and the block): scattering each name in turn
    # leaves member (i1, ..., im) block i1 * S2 * ... + im, row-major
    sizes = [_axis_size(a, "psum_scatter") for a in name]
    shape[d : d + 1] = sizes + ([n // size] if tiled else [])
    out = x.reshape(tuple(shape))
    for a, s in zip(name, sizes):
        out = pc.psum_scatter_p.bind(out, axis_name=a, size=s, scatter_dimension=d, tiled=False)
    return out


def all_to_all(
    x, axis_name: str | tuple, split_axis: int, concat_axis: int, *, tiled: bool = False
):
    """Member ``k`` sends block ``j`` of dim ``split_axis`` to member ``j``, and stacks
    what it receives along a new dim ``concat_axis`` (``tiled=True``: ``split_axis`` is
    cut into axis-size blocks and the received ones are concatenated along
    ``concat_axis``), as JAX's.

    >>> import fntorch as ft
    >>> xs = ft.asarray([[1, 2], [3, 4]])
    >>> ft.vmap(lambda v: ft.all_to_all(v, "i", 0, 0), axis_name="i")(xs).tolist()
    [[1, 3], [2, 4]]
    """
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(_operand(x)))
    axis_name, mixed = _mixed(axis_name, "all_to_all")
    if mixed:
        raise _unsupported("all_to_all", axis_name)
    size = _axis_size(axis_name, "all_to_all")
    nd = x.ndim
    split_axis, concat_axis = int(split_axis), int(concat_axis)
    split_axis += nd * (split_axis < 0)
    concat_axis += nd * (concat_axis < 0)
    if tiled:
        for arg, d in (("split_axis", split_axis), ("concat_axis", concat_axis)):
            if not 0 <= d < nd:
                raise ValueError(f"all_to_all: {arg} must be an axis in [{-nd}, {nd}), got {d}")
    else:
        return pc.all_to_all_p.bind(
            x, axis_name=axis_name, size=size, split_axis=split_axis, concat_axis=concat_axis
        )
    n = x.shape[split_axis]
    if n % size:
        raise ValueError(
            f"all_to_all: with tiled=True, split_axis {split_axis} (size {n}) must be "
            f"divisible by the axis size {size}"
        )
    shape = list(x.shape)
    shape[split_axis : split_axis + 1] = [size, n // size]
    blocks = x.reshape(tuple(shape))
    out = pc.all_to_all_p.bind(
        blocks, axis_name=axis_name, size=size, split_axis=split_axis, concat_axis=0
    )
    # out: (sender, *x's dims with split_axis cut to a block); each sender's block goes
    # before the block already in concat_axis, in sender order.
    out = moveaxis(out, 0, concat_axis)
    shape = list(out.shape)
    shape[concat_axis : concat_axis + 2] = [shape[concat_axis] * shape[concat_axis + 1]]
    return out.reshape(tuple(shape))


def ppermute(x, axis_name: str | tuple, perm):
    """Member ``s`` sends ``x`` to member ``d`` for each pair ``(s, d)`` of ``perm``;
    members that receive nothing get zeros.

    >>> import fntorch as ft
    >>> shift = lambda v: ft.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ft.vmap(shift, axis_name="i")(ft.asarray([1.0, 2.0, 3.0])).tolist()
    [3.0, 1.0, 2.0]
    """
    axis_name, mixed = _mixed(axis_name, "ppermute")
    if mixed:
        raise _unsupported("ppermute", axis_name)
    size = _axis_size(axis_name, "ppermute")
    try:
        perm = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(
            f"ppermute: perm must be (source, destination) int pairs, got {perm!r}"
        ) from None
    return pc.ppermute_p.bind(_operand(x), axis_name=axis_name, size=size, perm=perm)


def axis_index(axis_name: str | tuple):
    """This member's index along the named axis, an int32 scalar (along a tuple of
    names: row-major over them, in the order given).

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: v * ft.axis_index("i"), axis_name="i")(ft.ones(3)).tolist()
    [0.0, 1.0, 2.0]
    """
    name = axis_names(axis_name, "axis_index")
    if isinstance(name, tuple):  # row-major over the names, from each one's index
        index = axis_index(name[0])
        for n in name[1:]:
            index = index * _axis_size(n, "axis_index") + axis_index(n)
        return index
    return pc.axis_index_p.bind(axis_name=name, size=_axis_size(name, "axis_index"))


def pvary(x, axis_name: str | tuple):
    """``x`` unchanged, marked as differing between the members of the named axis: its
    cotangent is summed over them (its transpose is ``psum``), as JAX's ``lax.pvary``.
    Apply it to a ``psum`` result that each member then uses in a computation of its
    own (shared statistics), so each member's gradient gets every member's share.

    >>> import fntorch as ft
    >>> share = lambda v: (v * ft.pvary(ft.psum(v, "i"), "i")).sum()
    >>> ft.grad(lambda x: ft.vmap(share, axis_name="i")(x).sum())(ft.asarray([1.0, 2.0])).tolist()
    [6.0, 6.0]
    """
    return _tree_bind(pc.pvary_p, x, axis_name, "pvary")
