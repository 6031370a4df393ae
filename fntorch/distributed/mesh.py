"""``Mesh`` and ``shard_map``: a named axis across processes, one device per process.

fntorch is multi-controller as JAX on GPUs: every process runs the same program on its
own block of the data. ``Mesh(("data",))`` names the processes of the default group as
one axis; ``shard_map(f, mesh, in_specs, out_specs)`` calls ``f`` on this process'
arguments with the axis bound, so ``ft.psum(x, "data")`` inside sums over processes
(through the communicator: eagerly, and under ``ft.jit`` as a library step).

Arguments and results are this process' blocks: an input whose spec names the axis
(``P("data")``) is this process' block of the global array; one whose spec does not
(``P()`` or None) is replicated, the same everywhere. A replicated input goes through
``pvary``, so its cotangent is summed over the axis: ``grad`` of a ``shard_map``'ed
loss that ends in ``psum``/``pmean`` is the gradient of the whole batch on every
process. Like JAX with ``check_rep=False``, a replicated output must be computed
through a collective over the axis (not checked).
"""

from __future__ import annotations

import functools

from .. import tree as tree_util
from ..fx.axes import bind_process_axis, process_axes
from ..fx.core import check_callable
from ..ops import _prims_collective as pc
from ..ops._prims_structural import _operand
from ._group import WORLD_AXIS, initialize


class P(tuple):
    """A partition spec: one entry per dim, an axis name or None (PyTorch/JAX's
    ``PartitionSpec``). ``P()`` is replicated.

    >>> P("data"), P(None, "data").axes()
    (P('data',), {'data'})
    """

    def __new__(cls, *entries):
        for e in entries:
            if e is not None and not isinstance(e, str):
                raise TypeError(f"P: entries must be axis names (str) or None, got {e!r}")
        return super().__new__(cls, entries)

    def axes(self) -> set:
        """The axis names the spec uses."""
        return {e for e in self if e is not None}

    def __repr__(self):
        return f"P{tuple(self)!r}"


PartitionSpec = P


class Mesh:
    """The processes of the default group as one named axis (started by ``initialize``
    if it is not yet). Only one-dimensional meshes: one axis, every process on it.

    >>> import fntorch as ft
    >>> mesh = ft.distributed.Mesh(("data",)); mesh.shape
    {'data': 1}
    >>> ft.distributed.destroy_process_group()
    """

    def __init__(self, axis_names=("data",), devices=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if len(axis_names) != 1 or not isinstance(axis_names[0], str):
            raise NotImplementedError(
                f"Mesh: only one-dimensional meshes (one axis name, a str) are supported, got "
                f"axis_names={axis_names!r}"
            )
        if WORLD_AXIS not in process_axes:
            initialize()
        self.comm = process_axes[WORLD_AXIS]
        self.axis_names = axis_names
        self.devices = devices
        (name,) = axis_names
        bound = process_axes.get(name)
        if bound is not None and bound is not self.comm:
            raise ValueError(f"Mesh: axis name {name!r} is bound to another process group")
        bind_process_axis(name, self.comm)

    @property
    def shape(self) -> dict:
        """``{axis name: number of processes}``."""
        return {self.axis_names[0]: self.comm.size}

    @property
    def size(self) -> int:
        """The number of processes on the axis."""
        return self.comm.size

    def __repr__(self):
        return f"Mesh({self.shape})"


def _specs(specs, tree, where, names):
    flat = tree_util.tree_prefix_broadcast(specs, tree, f"shard_map: {where}")
    out = []
    for s in flat:
        if s is None:
            s = P()
        if not isinstance(s, P):
            raise TypeError(f"shard_map: {where} entries must be P(...) or None, got {s!r}")
        unknown = s.axes() - set(names)
        if unknown:
            raise ValueError(
                f"shard_map: {where} names axis {sorted(unknown)} not in the mesh's {names}"
            )
        out.append(s)
    return out


def shard_map(f, mesh: Mesh, in_specs, out_specs, check_rep: bool = False):
    """``f`` run on this process' blocks with the mesh's axis bound (module docstring).

    >>> import fntorch as ft
    >>> mesh = ft.distributed.Mesh(("data",))
    >>> loss = ft.shard_map(lambda w, x: ft.pmean(((x * w) ** 2).mean(), "data"),
    ...                     mesh, in_specs=(P(), P("data")), out_specs=P())
    >>> float(ft.grad(loss)(ft.asarray(1.0), ft.asarray([1.0, 2.0])))
    5.0
    >>> ft.distributed.destroy_process_group()
    """
    check_callable("shard_map", "f", f)
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: mesh must be a ft.distributed.Mesh, got {type(mesh).__name__}")
    (name,) = mesh.axis_names

    @functools.wraps(f)
    def mapped(*args):
        specs = _specs(in_specs, args, "in_specs", mesh.axis_names)
        flat, tree = tree_util.flatten(args)
        flat = [
            x if s.axes() else pc.pvary_p.bind(_operand(x), axis_name=name, size=mesh.size)
            for x, s in zip(flat, specs)
        ]
        out = f(*tree_util.unflatten(tree, flat))
        _specs(out_specs, out, "out_specs", mesh.axis_names)
        return out

    return mapped
