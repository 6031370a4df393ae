"""Eager impls of the collectives over a process axis: calls into the mesh's communicator.

They are ``universal_impls``: the communicator takes the buffers of its own device kind
(MPI numpy arrays, NCCL CuPy arrays), so one impl serves every device, eagerly and as
a compiled program's library step. Each moves the collective's dim to the front, where
the communicator works (``fntorch/distributed/comm.py`` states its interface).
"""

from __future__ import annotations

import numpy as np

from ..fx.axes import process_communicator
from ..fx.device import get_default_device, host_device, universal_impls
from ..ops import _prims_collective as pc


def _comm(where, axis_name, size):
    comm = process_communicator(axis_name, where)
    if comm.size != size:
        raise ValueError(
            f"{where}: axis {axis_name!r} was traced with size {size} but its mesh now has "
            f"{comm.size} processes; trace the function again under this mesh"
        )
    return comm


def _reduce(op, where):
    def impl(x, *, axis_name, size):
        return _comm(where, axis_name, size).allreduce(x, op)

    return impl


universal_impls[pc.psum_p] = _reduce("sum", "psum")
universal_impls[pc.pmax_p] = _reduce("max", "pmax")
universal_impls[pc.pmin_p] = _reduce("min", "pmin")


def _pvary_impl(x, *, axis_name, size):
    return x


universal_impls[pc.pvary_p] = _pvary_impl


def _all_gather_impl(x, *, axis_name, size, axis, tiled):
    gathered = _comm("all_gather", axis_name, size).allgather(x)  # (size, *x.shape)
    out = np.moveaxis(gathered, 0, axis)
    if tiled:
        shape = list(out.shape)
        shape[axis : axis + 2] = [shape[axis] * shape[axis + 1]]
        out = out.reshape(shape)
    return out


universal_impls[pc.all_gather_p] = _all_gather_impl


def _psum_scatter_impl(x, *, axis_name, size, scatter_dimension, tiled):
    d = scatter_dimension
    front = np.moveaxis(x, d, 0)
    if tiled:
        front = front.reshape((size, front.shape[0] // size, *front.shape[1:]))
    block = _comm("psum_scatter", axis_name, size).reduce_scatter(front)
    return np.moveaxis(block, 0, d) if tiled else block


universal_impls[pc.psum_scatter_p] = _psum_scatter_impl


def _all_to_all_impl(x, *, axis_name, size, split_axis, concat_axis):
    received = _comm("all_to_all", axis_name, size).alltoall(np.moveaxis(x, split_axis, 0))
    return np.moveaxis(received, 0, concat_axis)


universal_impls[pc.all_to_all_p] = _all_to_all_impl


def _ppermute_impl(x, *, axis_name, size, perm):
    return _comm("ppermute", axis_name, size).permute(x, perm)


universal_impls[pc.ppermute_p] = _ppermute_impl


def _axis_index_impl(*, axis_name, size):
    index = np.asarray(_comm("axis_index", axis_name, size).rank, np.int32)
    device = get_default_device()  # no operands: made where new tensors go
    return index if device is host_device() else device.put(index)


universal_impls[pc.axis_index_p] = _axis_index_impl
