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

>>> with vmap_axis("i", 3):
...     axis_size("i", "psum")
3
"""

from __future__ import annotations

import contextlib
import contextvars

_vmap_axes: contextvars.ContextVar[tuple] = contextvars.ContextVar("fntorch_vmap_axes", default=())

# name -> communicator (see ``Communicator`` in fntorch/distributed/comm.py): the
# registry of process axes, as fx/device.py holds the device registry.
process_axes: dict = {}


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


def axis_size(name, where: str) -> int:
    """The size of the axis ``name`` (innermost ``vmap`` first, then a mesh's).

    >>> try:
    ...     axis_size(3, "pmean")
    ... except TypeError as e:
    ...     print(e)
    pmean: axis_name must be a str, got int 3
    """
    if not isinstance(name, str):
        raise TypeError(f"{where}: axis_name must be a str, got {type(name).__name__} {name!r}")
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
    if comm is None:
        raise UnboundAxisError(
            _unbound_message(name, where)
            + ". A collective over a vmap axis runs inside that vmap only: under "
            "ft.jit inside the vmap it cannot reach the batch axis"
        )
    return comm


def bind_process_axis(name: str, comm) -> None:
    """Binds ``name`` across processes to ``comm`` (a ``Mesh`` does this).

    >>> class One:
    ...     size, rank = 1, 0
    >>> bind_process_axis("doc_axis", One()); axis_size("doc_axis", "psum")
    1
    >>> unbind_process_axis("doc_axis")
    """
    process_axes[name] = comm


def unbind_process_axis(name: str) -> None:
    """Forgets the process axis ``name`` (``destroy_process_group`` does this)."""
    process_axes.pop(name, None)
