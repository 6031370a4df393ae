"""``Mesh`` and ``shard_map``: named axes across processes, one device per process.

fntorch is multi-controller as JAX on GPUs: every process runs the same program on its
own block of the data. A ``Mesh`` lays the processes of the default group out as an
n-dimensional array with named axes (JAX's ``Mesh(devices, axis_names)``, the devices
being process ranks): ``Mesh(np.arange(4).reshape(2, 2), ("dp", "tp"))``, or
``make_mesh((2, 2), ("dp", "tp"))``; ``Mesh(("data",))`` is every process on one axis.
Each axis name is bound to the communicator of the processes that differ only in that
coordinate (MPI's ``Comm_split`` by the other coordinates), so ``ft.psum(x, "tp")``
sums over this process' row of the mesh; a tuple of names, ``ft.psum(x, ("dp",
"tp"))``, is the group of the processes that differ in those coordinates (its
communicator made on first use). ``shard_map(f, mesh, in_specs, out_specs)`` calls
``f`` on this process' arguments with the mesh's names bound (eagerly, and under
``ft.jit`` as library steps).

Arguments and results are this process' blocks. A spec is a ``P(...)`` with one entry
per dim: a mesh axis name, a tuple of them (the dim split over several axes) or None.
An input is replicated over every mesh axis its spec does not name, and goes through
``pvary`` over those axes, so its cotangent is summed over them: ``grad`` of a
``shard_map``'ed loss that ends in ``psum``/``pmean`` over the axes the batch is split
on is the gradient of the whole batch on every process. Like JAX with
``check_rep=False``, a replicated output must be computed through a collective over
the axes (not checked).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import tree as tree_util
from ..fx.axes import axis_owners, bind_process_axis, process_axes
from ..fx.core import check_callable
from ..ops import _prims_collective as pc
from ..ops._prims_structural import _operand
from ._group import WORLD_AXIS, initialize
from .comm import LocalCommunicator


class P(tuple):
    """A partition spec: one entry per dim, an axis name, a tuple of axis names (the dim
    split over those axes, the first outermost) or None (JAX's ``PartitionSpec``).
    ``P()`` is replicated.

    >>> P("data"), sorted(P(None, ("dp", "tp")).axes())
    (P('data',), ['dp', 'tp'])
    """

    def __new__(cls, *entries):
        out = []
        for e in entries:
            if isinstance(e, (tuple, list)) and e and all(isinstance(n, str) for n in e):
                e = tuple(e)
            elif e is not None and not isinstance(e, str):
                raise TypeError(
                    f"P: entries must be axis names (str), tuples of them or None, got {e!r}"
                )
            out.append(e)
        names = [n for e in out if e is not None for n in ((e,) if isinstance(e, str) else e)]
        if len(set(names)) != len(names):
            raise ValueError(f"P: an axis name may split one dim only, got {tuple(out)!r}")
        return super().__new__(cls, out)

    def axes(self) -> set:
        """The axis names the spec uses."""
        return {n for e in self if e is not None for n in ((e,) if isinstance(e, str) else e)}

    def __repr__(self):
        return f"P{tuple(self)!r}"


PartitionSpec = P


def _looks_like_names(x) -> bool:
    return isinstance(x, str) or (
        isinstance(x, (tuple, list)) and len(x) > 0 and all(isinstance(n, str) for n in x)
    )


class Mesh:
    """The processes of the default group (started by ``initialize`` if it is not yet)
    as an n-dimensional array with named axes, as ``jax.sharding.Mesh``.

    ``devices``: an array (nested lists, numpy) of process ranks, each rank once, of one
    dim per name; ``axis_names``: a tuple of distinct strs. ``Mesh(("data",))`` puts
    every process on one axis. The names are bound to this mesh's communicators, until
    another mesh binds them (``shard_map`` binds its mesh again at each call).

    >>> import fntorch as ft, numpy as np
    >>> mesh = ft.distributed.Mesh(np.zeros((1, 1), int), ("dp", "tp")); mesh.shape
    {'dp': 1, 'tp': 1}
    >>> ft.distributed.destroy_process_group()
    """

    def __init__(self, devices=None, axis_names=None):
        if axis_names is None and _looks_like_names(devices):
            devices, axis_names = None, devices  # Mesh(("data",)): names first, 1-d
        elif _looks_like_names(devices) and not _looks_like_names(axis_names):
            devices, axis_names = axis_names, devices  # Mesh(axis_names, devices)
        if axis_names is None:
            axis_names = ("data",)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        if not _looks_like_names(axis_names) or len(set(axis_names)) != len(axis_names):
            raise TypeError(f"Mesh: axis_names must be distinct strs, got {axis_names!r}")
        self.axis_names = tuple(axis_names)
        if WORLD_AXIS not in process_axes:
            initialize()
        self.comm = process_axes[WORLD_AXIS]
        if devices is None:
            if len(self.axis_names) != 1:
                raise ValueError(
                    f"Mesh: with {len(self.axis_names)} axis names, pass devices (an array of "
                    "the process ranks, one dim per name) or use make_mesh(shape, axis_names)"
                )
            devices = np.arange(self.comm.size)
        self.devices = _check_devices(devices, len(self.axis_names), self.comm.size)
        if WORLD_AXIS in self.axis_names and not (
            self.devices.ndim == 1 and (self.devices == np.arange(self.comm.size)).all()
        ):
            raise ValueError(f"Mesh: the axis name {WORLD_AXIS!r} is the default group's own")
        self._coords = tuple(int(c) for c in np.argwhere(self.devices == self.comm.rank)[0])
        self._comms: dict = {}
        for name in self.axis_names:  # every rank splits for every axis, in this order
            self.communicator((name,))
        self.bind()

    def communicator(self, names: tuple):
        """The communicator of the processes that differ only in the coordinates of
        ``names`` (a tuple of this mesh's axis names), ranked row-major over ``names`` in
        the order given. Made on first use: every process must ask for it together.

        >>> import fntorch as ft
        >>> ft.distributed.Mesh(("data",)).communicator(("data",)).size
        1
        >>> ft.distributed.destroy_process_group()
        """
        names = tuple(names)
        comm = self._comms.get(names)
        if comm is not None:
            return comm
        unknown = [n for n in names if n not in self.axis_names]
        if unknown or not names:
            raise ValueError(
                f"Mesh.communicator: names must be axes of the mesh {self.axis_names}, got "
                f"{names!r}"
            )
        dims = [self.axis_names.index(n) for n in names]
        others = [d for d in range(self.devices.ndim) if d not in dims]
        shape = self.devices.shape
        size = int(np.prod([shape[d] for d in dims]))
        key = int(np.ravel_multi_index([self._coords[d] for d in dims], [shape[d] for d in dims]))
        ranked = np.transpose(self.devices, dims + others).ravel()
        if size == self.comm.size and (ranked == np.arange(size)).all():
            comm = self.comm  # the whole group in its own order (on every rank): no split
        elif size == 1:
            comm = LocalCommunicator()
        else:
            color = int(
                np.ravel_multi_index([self._coords[d] for d in others], [shape[d] for d in others])
            )
            comm = self.comm.split(color, key)
        self._comms[names] = comm
        return comm

    def bind(self) -> None:
        """Binds the mesh's axis names to its communicators (a collective over one of
        them then runs over this mesh)."""
        for name in self.axis_names:
            if axis_owners.get(name) is not self or process_axes.get(name) is None:
                bind_process_axis(name, self._comms[(name,)], owner=self)

    @property
    def shape(self) -> dict:
        """``{axis name: size}``, in the mesh's order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        """The number of processes in the mesh."""
        return int(self.devices.size)

    def __repr__(self):
        return f"Mesh({self.shape})"


def _check_devices(devices, ndim: int, world: int) -> np.ndarray:
    try:
        arr = np.asarray(devices)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype.kind not in "iu":
        raise TypeError(f"Mesh: devices must be an array of process ranks (ints), got {devices!r}")
    if arr.ndim != ndim:
        raise ValueError(
            f"Mesh: devices must have one dim per axis name ({ndim}), got shape {arr.shape}"
        )
    if sorted(arr.ravel().tolist()) != list(range(world)):
        raise ValueError(
            f"Mesh: devices must hold each rank 0..{world - 1} of the default group once, got "
            f"{arr.ravel().tolist()}"
        )
    return arr.astype(np.int64)


def make_mesh(axis_shapes, axis_names) -> Mesh:
    """A mesh of the processes in rank order, reshaped to ``axis_shapes`` (JAX's
    ``jax.make_mesh``); the sizes' product must be the number of processes.

    >>> import fntorch as ft
    >>> ft.distributed.make_mesh((1, 1), ("dp", "tp")).shape
    {'dp': 1, 'tp': 1}
    >>> ft.distributed.destroy_process_group()
    """
    if WORLD_AXIS not in process_axes:
        initialize()
    world = process_axes[WORLD_AXIS].size
    shape = tuple(int(s) for s in axis_shapes)
    if int(np.prod(shape)) != world:
        raise ValueError(
            f"make_mesh: axis_shapes {shape} must multiply to the number of processes ({world})"
        )
    return Mesh(np.arange(world).reshape(shape), axis_names)


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
    """``f`` run on this process' blocks with the mesh's axes bound (module docstring).

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

    @functools.wraps(f)
    def mapped(*args):
        mesh.bind()
        specs = _specs(in_specs, args, "in_specs", mesh.axis_names)
        flat, tree = tree_util.flatten(args)
        flat = [_replicated(x, s, mesh) for x, s in zip(flat, specs)]
        out = f(*tree_util.unflatten(tree, flat))
        _specs(out_specs, out, "out_specs", mesh.axis_names)
        return out

    return mapped


def _replicated(x, spec: P, mesh: Mesh):
    """``x`` through ``pvary`` over the mesh axes ``spec`` does not name (the same value
    on those processes, so its cotangent is their sum)."""
    rest = tuple(n for n in mesh.axis_names if n not in spec.axes())
    if not rest:
        return x
    name = rest[0] if len(rest) == 1 else rest
    size = int(np.prod([mesh.shape[n] for n in rest]))
    return pc.pvary_p.bind(_operand(x), axis_name=name, size=size)
