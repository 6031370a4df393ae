"""Named axes: where a collective's ``axis_name`` is bound, and how large it is.

A name is bound in one of two ways.

- ``vmap(f, axis_name="i")`` binds it *within one process*: while ``f`` is traced, the
  name's size is on the ``vmap_axes`` stack (a ``contextvars`` value, like the trace
  state), and the batch trace of that name turns each collective into a reduction or a
  rearrangement over its batch axis.
- A ``Mesh`` (``fntorch.distributed``) binds it *across processes*: the name maps to a
  communicator in ``process_axes`` for as long as the mesh lives, and a collective that
  reaches the eager impl (or a compiled program's library step) calls that
  communicator. It stays bound after ``shard_map`` returns, so a backward pass run later
  (``grad`` of a ``shard_map``'ed loss) can still communicate.

The innermost ``vmap`` of a name wins over an outer one and over a mesh.

A collective may name a tuple of axes: the group of members that differ only in those
coordinates, of the product of their sizes, ranked row-major in the order given (as
JAX's). For mesh axes that group has a communicator of its own, which the mesh that
bound the names makes on first use (``axis_owners``); the public collectives
(ops/collectives.py) split a tuple that holds a ``vmap`` axis into one collective per
name.

>>> with vmap_axis("i", 3), vmap_axis("j", 2):
...     axis_size("i", "psum"), axis_size(("i", "j"), "psum")
(3, 6)
"""

from __future__ import annotations

import contextlib
import contextvars

_vmap_axes: contextvars.ContextVar[tuple] = contextvars.ContextVar("fntorch_vmap_axes", default=())

# name (or tuple of names) -> communicator (see fntorch/distributed/comm.py): the
# registry of process axes, as fx/device.py holds the device registry.
process_axes: dict = {}
# name -> what bound it (a Mesh): its ``communicator(names)`` makes the communicator of
# a tuple of its axis names, cached in ``process_axes`` under the tuple.
axis_owners: dict = {}


class UnboundAxisError(NameError):
    """A collective named an axis that no ``vmap(axis_name=)`` or mesh binds.

    >>> try:
    ...     axis_size("nowhere", "psum")
    ... except UnboundAxisError as e:
    ...     print(str(e)[:37])
    psum: unbound axis name 'nowhere'; bi
    """


@contextlib.contextmanager
def vmap_axis(name: str, size: int):
    """Binds ``name`` to a vmap axis of ``size`` while a function is traced.

    >>> with vmap_axis("j", 2):
    ...     axis_size("j", "all_gather")
    2
    """
    token = _vmap_axes.set((*_vmap_axes.get(), (name, size)))
    try:
        yield
    finally:
        _vmap_axes.reset(token)


def axis_names(name, where: str):
    """``name`` checked: a str, or a tuple of distinct strs (a one-name tuple is the
    name itself, so each group has one spelling).

    >>> axis_names(("dp",), "psum"), axis_names(["dp", "tp"], "psum")
    ('dp', ('dp', 'tp'))
    >>> try:
    ...     axis_names(3, "pmean")
    ... except TypeError as e:
    ...     print(e)
    pmean: axis_name must be a str or a tuple of strs, got int 3
    """
    if isinstance(name, str):
        return name
    if isinstance(name, (tuple, list)) and name and all(isinstance(n, str) for n in name):
        if len(set(name)) != len(name):
            raise ValueError(f"{where}: axis_name names an axis twice: {tuple(name)!r}")
        return name[0] if len(name) == 1 else tuple(name)
    raise TypeError(
        f"{where}: axis_name must be a str or a tuple of strs, got {type(name).__name__} {name!r}"
    )


def is_vmap_axis(name: str) -> bool:
    """Whether ``name`` is bound by a ``vmap`` being traced now (which shadows a mesh's).

    >>> with vmap_axis("i", 2):
    ...     is_vmap_axis("i"), is_vmap_axis("dp")
    (True, False)
    """
    return any(bound == name for bound, _ in _vmap_axes.get())


def axis_size(name, where: str) -> int:
    """The size of the axis ``name`` (innermost ``vmap`` first, then a mesh's); of a
    tuple of names, the product of their sizes.

    >>> try:
    ...     axis_size(3, "pmean")
    ... except TypeError as e:
    ...     print(e)
    pmean: axis_name must be a str or a tuple of strs, got int 3
    """
    name = axis_names(name, where)
    if isinstance(name, tuple):
        size = 1
        for n in name:
            size *= axis_size(n, where)
        return size
    for bound, size in reversed(_vmap_axes.get()):
        if bound == name:
            return size
    comm = process_axes.get(name)
    if comm is not None:
        return comm.size
    raise UnboundAxisError(_unbound_message(name, where))


def _unbound_message(name, where):
    bound = [n for n, _ in _vmap_axes.get()] + list(process_axes)
    return (
        f"{where}: unbound axis name {name!r}; bind it with ft.vmap(f, axis_name={name!r}) "
        f"or ft.shard_map(f, mesh, ...) over a ft.distributed.Mesh with that axis name "
        f"(bound now: {bound or 'none'})"
    )


def process_communicator(name: str, where: str):
    """The communicator of the process axis ``name`` (for the collectives' impls).

    >>> try:
    ...     process_communicator("i", "psum")
    ... except UnboundAxisError as e:
    ...     print("vmap" in str(e))
    True
    """
    comm = process_axes.get(name)
    if comm is None and isinstance(name, tuple):
        comm = _group_communicator(name, where)
    if comm is None:
        raise UnboundAxisError(
            _unbound_message(name, where)
            + ". A collective over a vmap axis runs inside that vmap only: under "
            "ft.jit inside the vmap it cannot reach the batch axis"
        )
    return comm


def _group_communicator(names: tuple, where: str):
    """The communicator of a tuple of process axes, made by the mesh that bound them."""
    owners = [axis_owners.get(n) for n in names]
    if any(o is None for o in owners) or any(n not in process_axes for n in names):
        return None
    if any(o is not owners[0] for o in owners):
        raise ValueError(
            f"{where}: axis names {names!r} belong to different meshes; a collective over "
            "several axes needs them all in one ft.distributed.Mesh"
        )
    comm = owners[0].communicator(names)
    process_axes[names] = comm
    return comm


def bind_process_axis(name: str, comm, owner=None) -> None:
    """Binds ``name`` across processes to ``comm`` (a ``Mesh`` does this; ``owner``, the
    mesh, makes the communicators of tuples of its names). Groups cached for tuples that
    hold ``name`` are forgotten: they belonged to the mesh bound before.

    >>> class One:
    ...     size, rank = 1, 0
    >>> bind_process_axis("doc_axis", One()); axis_size("doc_axis", "psum")
    1
    >>> unbind_process_axis("doc_axis")
    """
    for key in [k for k in process_axes if isinstance(k, tuple) and name in k]:
        del process_axes[key]
    process_axes[name] = comm
    if owner is None:
        axis_owners.pop(name, None)
    else:
        axis_owners[name] = owner


def unbind_process_axis(name) -> None:
    """Forgets the process axis ``name`` (``destroy_process_group`` does this).

    >>> unbind_process_axis("never_bound")
    """
    process_axes.pop(name, None)
    axis_owners.pop(name, None)
