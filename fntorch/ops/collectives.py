"""The public collectives: ``ft.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``, ``axis_index``, as JAX's.

Each looks up the size of ``axis_name`` (``ft.vmap(f, axis_name=)`` or a mesh binds it:
fx/axes.py) and binds its primitive. ``psum``, ``pmean``, ``pmax`` and ``pmin`` take a
pytree of tensors.
"""

from __future__ import annotations

import numpy as np

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.axes import axis_size as _axis_size
from ..fx.core import Tensor
from . import _prims_collective as pc
from ._api_manipulation import moveaxis
from ._prims_structural import _operand, convert_element_type

__all__ = [
    "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute",
    "axis_index", "pvary",
]  # fmt: skip


def _tree_bind(prim, x, axis_name, where):
    size = _axis_size(axis_name, where)
    return tree_util.map(lambda v: prim.bind(_operand(v), axis_name=axis_name, size=size), x)


def psum(x, axis_name: str):
    """The sum of ``x`` over the named axis, the same on every member of it.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.psum(v, "i"), axis_name="i")(ft.asarray([1.0, 2.0, 3.0])).tolist()
    [6.0, 6.0, 6.0]
    """
    return _tree_bind(pc.psum_p, x, axis_name, "psum")


def pmean(x, axis_name: str):
    """The mean of ``x`` over the named axis (``psum`` divided by the axis size).

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmean(v, "i"), axis_name="i")(ft.asarray([1.0, 3.0])).tolist()
    [2.0, 2.0]
    """
    size = _axis_size(axis_name, "pmean")

    def mean(v):
        s = pc.psum_p.bind(_operand(v), axis_name=axis_name, size=size)
        if not dt.is_float(s.dtype):
            s = convert_element_type(s, dt.default_float)
        return s / np.asarray(size, s.dtype)[()]

    return tree_util.map(mean, x)


def pmax(x, axis_name: str):
    """The elementwise maximum of ``x`` over the named axis.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmax(v, "i"), axis_name="i")(ft.asarray([1.0, 5.0, 2.0])).tolist()
    [5.0, 5.0, 5.0]
    """
    return _tree_bind(pc.pmax_p, x, axis_name, "pmax")


def pmin(x, axis_name: str):
    """The elementwise minimum of ``x`` over the named axis.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.pmin(v, "i"), axis_name="i")(ft.asarray([4.0, 1.0])).tolist()
    [1.0, 1.0]
    """
    return _tree_bind(pc.pmin_p, x, axis_name, "pmin")


def all_gather(x, axis_name: str, *, axis: int = 0, tiled: bool = False):
    """Every member's ``x``, stacked along a new dim ``axis`` (``tiled=True``:
    concatenated along the existing dim ``axis``), the same on every member.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: ft.all_gather(v, "i"), axis_name="i")(ft.asarray([1, 2])).tolist()
    [[1, 2], [1, 2]]
    """
    x = _operand(x)
    size = _axis_size(axis_name, "all_gather")
    ndim = np.ndim(x) if not isinstance(x, Tensor) else x.ndim
    axis = int(axis) + (ndim if tiled else ndim + 1) * (int(axis) < 0)
    return pc.all_gather_p.bind(x, axis_name=axis_name, size=size, axis=axis, tiled=bool(tiled))


def psum_scatter(x, axis_name: str, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum of ``x`` over the named axis, of which member ``k`` keeps block ``k`` of
    dim ``scatter_dimension`` (whose size must be the axis size, or with ``tiled=True``
    a multiple of it). The transpose of ``all_gather``.

    >>> import fntorch as ft
    >>> xs = ft.asarray([[1.0, 2.0], [10.0, 20.0]])
    >>> ft.vmap(lambda v: ft.psum_scatter(v, "i"), axis_name="i")(xs).tolist()
    [11.0, 22.0]
    """
    x = _operand(x)
    size = _axis_size(axis_name, "psum_scatter")
    d = int(scatter_dimension)
    d += np.ndim(x) * (d < 0) if not isinstance(x, Tensor) else x.ndim * (d < 0)
    return pc.psum_scatter_p.bind(
        x, axis_name=axis_name, size=size, scatter_dimension=d, tiled=bool(tiled)
    )


def all_to_all(x, axis_name: str, split_axis: int, concat_axis: int, *, tiled: bool = False):
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


def ppermute(x, axis_name: str, perm):
    """Member ``s`` sends ``x`` to member ``d`` for each pair ``(s, d)`` of ``perm``;
    members that receive nothing get zeros.

    >>> import fntorch as ft
    >>> shift = lambda v: ft.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ft.vmap(shift, axis_name="i")(ft.asarray([1.0, 2.0, 3.0])).tolist()
    [3.0, 1.0, 2.0]
    """
    size = _axis_size(axis_name, "ppermute")
    try:
        perm = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(
            f"ppermute: perm must be (source, destination) int pairs, got {perm!r}"
        ) from None
    return pc.ppermute_p.bind(_operand(x), axis_name=axis_name, size=size, perm=perm)


def axis_index(axis_name: str):
    """This member's index along the named axis, an int32 scalar.

    >>> import fntorch as ft
    >>> ft.vmap(lambda v: v * ft.axis_index("i"), axis_name="i")(ft.ones(3)).tolist()
    [0.0, 1.0, 2.0]
    """
    size = _axis_size(axis_name, "axis_index")
    return pc.axis_index_p.bind(axis_name=axis_name, size=size)


def pvary(x, axis_name: str):
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
