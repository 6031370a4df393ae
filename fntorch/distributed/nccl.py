"""The NCCL communicator: CuPy's ``cupy.cuda.nccl`` over CuPy buffers, one GPU per process.

Same interface as fntorch/distributed/comm.py's communicators. NCCL's unique id goes
from rank 0 to the others over MPI when MPI started the processes, else over the TCP
rendezvous (rendezvous.py) at ``MASTER_ADDR:MASTER_PORT``. Each process uses GPU
``LOCAL_RANK``. CuPy is imported only here.

>>> NCCLCommunicator.backend
'nccl'
"""

from __future__ import annotations

import numpy as np

from .comm import OPS, collective_timeout


def _nccl():
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as e:
        raise RuntimeError(
            f"the 'nccl' backend needs CuPy with NCCL: pip install 'fntorch[cuda]' ({e})"
        ) from None
    return cupy, nccl


class NCCLCommunicator:
    """Rank ``rank`` of ``size`` on NCCL, from the group's ``unique_id`` (128 bytes).

    >>> sorted(NCCLCommunicator.REDUCIBLE)[:2]
    ['float16', 'float32']
    """

    backend = "nccl"
    REDUCIBLE = (
        "float16",
        "float32",
        "float64",
        "int32",
        "int64",
        "uint8",
        "int8",
        "uint32",
        "uint64",
    )

    def __init__(self, rank: int, size: int, unique_id: bytes, device_index: int):
        cp, nccl = _nccl()
        self._cp, self._nccl = cp, nccl
        self.rank, self.size = rank, size
        cp.cuda.Device(device_index).use()
        self.device_index = device_index
        self._side = None  # the stream of the non-blocking collectives (made when needed)
        try:  # current CuPy takes the id as bytes
            self.comm = nccl.NcclCommunicator(size, bytes(unique_id), rank)
        except TypeError:  # older CuPy: a tuple of C chars
            uid = tuple(int(b) - 256 if b > 127 else int(b) for b in unique_id)
            self.comm = nccl.NcclCommunicator(size, uid, rank)
        self._ops = {"sum": nccl.NCCL_SUM, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}
        self._types = {np.dtype(n): getattr(nccl, f"NCCL_{n.upper()}") for n in self.REDUCIBLE}

    def _stream(self):
        return self._cp.cuda.get_current_stream().ptr

    def _c(self, x):
        x = self._cp.asarray(x)
        return x if x.flags.c_contiguous else x.copy(order="C")

    def _bytes(self, x):
        return x.reshape(-1).view(self._cp.uint8)

    def allreduce(self, x, op):
        """The elementwise ``op`` (sum, max, min) of ``x`` over the group."""
        if op not in OPS:
            raise ValueError(f"allreduce: op must be one of {OPS}, got {op!r}")
        x = self._c(x)
        dtype = x.dtype
        if dtype not in self._types:
            x = x.astype(np.float32 if dtype.kind in "fV" else np.int32)
        out = self._cp.empty_like(x)
        self.comm.allReduce(x.data.ptr, out.data.ptr, x.size, self._types[x.dtype],
                            self._ops[op], self._stream())  # fmt: skip
        return out if out.dtype == dtype else out.astype(dtype)

    def allgather(self, x):
        """Every rank's ``x``, stacked: shape ``(size, *x.shape)``."""
        x = self._c(x)
        out = self._cp.empty((self.size, *x.shape), x.dtype)
        self.comm.allGather(
            x.data.ptr, out.data.ptr, x.nbytes, self._nccl.NCCL_UINT8, self._stream()
        )
        return out

    def reduce_scatter(self, x):
        """Row ``rank`` of the sum over the group of ``x`` (``size`` rows)."""
        x = self._c(x)
        if x.dtype not in self._types:
            return self.allreduce(x, "sum")[self.rank]
        out = self._cp.empty(x.shape[1:], x.dtype)
        self.comm.reduceScatter(x.data.ptr, out.data.ptr, out.size, self._types[x.dtype],
                                self._nccl.NCCL_SUM, self._stream())  # fmt: skip
        return out

    def _exchange(self, pairs):
        """``pairs``: (send buffer or None, peer to send to, recv buffer or None, peer)."""
        nccl, stream = self._nccl, self._stream()
        nccl.groupStart()
        for send, to, recv, frm in pairs:
            if send is not None:
                b = self._bytes(send)
                self.comm.send(b.data.ptr, b.size, nccl.NCCL_UINT8, to, stream)
            if recv is not None:
                b = self._bytes(recv)
                self.comm.recv(b.data.ptr, b.size, nccl.NCCL_UINT8, frm, stream)
        nccl.groupEnd()

    def alltoall(self, x):
        """Row ``k``: rank ``k``'s row ``rank`` of its ``x`` (``size`` rows)."""
        x = self._c(x)
        out = self._cp.empty_like(x)
        self._exchange([(x[k], k, out[k], k) for k in range(self.size)])
        return out

    def permute(self, x, perm):
        """``x`` sent along each ``(source, destination)`` pair; zeros if none arrives."""
        x = self._c(x)
        out = self._cp.zeros_like(x)
        dest = [d for s, d in perm if s == self.rank]
        source = [s for s, d in perm if d == self.rank]
        self._exchange([(x if dest else None, dest[0] if dest else 0,
                         out if source else None, source[0] if source else 0)])  # fmt: skip
        return out

    def broadcast(self, x, root=0):
        """Rank ``root``'s ``x``."""
        out = self._c(x).copy()
        b = self._bytes(out)
        self.comm.bcast(b.data.ptr, b.size, self._nccl.NCCL_UINT8, root, self._stream())
        return out

    def barrier(self):
        """Returns once every rank of the group has called it."""
        self.allreduce(self._cp.zeros(1, np.float32), "sum")
        self._cp.cuda.get_current_stream().synchronize()

    def iallreduce(self, x, op):
        """``allreduce`` launched on this communicator's own stream, after the work
        queued so far on the current one: the current stream goes on meanwhile.
        ``wait()`` makes the current stream wait for it and returns the result."""
        if op not in OPS:
            raise ValueError(f"iallreduce: op must be one of {OPS}, got {op!r}")
        cp = self._cp
        x = self._c(x)
        dtype = x.dtype
        if dtype not in self._types:
            x = x.astype(np.float32 if dtype.kind in "fV" else np.int32)
        out = cp.empty_like(x)
        if self._side is None:
            self._side = cp.cuda.Stream(non_blocking=True)
        inputs_ready = cp.cuda.get_current_stream().record()
        self._side.wait_event(inputs_ready)
        self.comm.allReduce(x.data.ptr, out.data.ptr, x.size, self._types[x.dtype],
                            self._ops[op], self._side.ptr)  # fmt: skip
        return NCCLWork(cp, self._side.record(), (x, out), dtype)

    def split(self, color: int, key: int):
        """The ranks passing the same ``color``, ranked by ``key``: a new NCCL
        communicator per color, whose unique id its first rank makes and every rank
        gathers (with this communicator)."""
        cp, nccl = self._cp, self._nccl
        mine = cp.asarray([int(color), int(key), self.rank], np.int64)
        table = cp.asnumpy(self.allgather(mine)).tolist()
        members = sorted((k, r) for c, k, r in table if c == int(color))
        leader = members[0][1]
        uid = bytes(b % 256 for b in nccl.get_unique_id()) if self.rank == leader else bytes(128)
        ids = cp.asnumpy(self.allgather(cp.asarray(np.frombuffer(uid, np.uint8))))
        rank = [r for _, r in members].index(self.rank)
        return NCCLCommunicator(rank, len(members), bytes(ids[leader]), self.device_index)

    def dup(self):
        """The same group as a separate NCCL communicator."""
        return self.split(0, self.rank)

    def close(self):
        """Releases the NCCL communicator."""
        self.comm.destroy()


class NCCLWork:
    """An all-reduce running on a side stream: ``wait()`` orders the current stream
    after it and returns the result; the operand is kept alive until then, since the
    side stream still reads it.

    >>> NCCLWork.test.__doc__.split()[0]
    'Whether'
    """

    def __init__(self, cp, done, buffers, dtype):
        self._cp, self.done, self.buffers, self.dtype = cp, done, buffers, dtype

    def test(self) -> bool:
        """Whether the all-reduce has finished on the GPU."""
        return self.done.done

    def wait(self):
        """The result, ordered before whatever the current stream runs next."""
        self._cp.cuda.get_current_stream().wait_event(self.done)
        out = self.buffers[1]
        return out if out.dtype == self.dtype else out.astype(self.dtype)


def nccl_communicator(env: dict) -> NCCLCommunicator:
    """The NCCL communicator of this process, from the launcher's ``env``
    (``distributed._group.launch_env``): the unique id over MPI or the TCP rendezvous.

    >>> callable(nccl_communicator)
    True
    """
    cp, nccl = _nccl()
    rank = env["rank"] or 0
    size = env["world_size"] or 1
    local = env["local_rank"] if env["local_rank"] is not None else rank
    uid = bytes(b % 256 for b in nccl.get_unique_id()) if rank == 0 else None
    if size > 1:
        uid = _share_id(uid, rank, size, env)
    return NCCLCommunicator(rank, size, uid, local)


def _share_id(uid, rank, size, env):
    import os

    if any(k in os.environ for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK")):
        from mpi4py import MPI

        buf = bytearray(uid if uid is not None else bytes(128))
        MPI.COMM_WORLD.Bcast([buf, MPI.BYTE], root=0)
        return bytes(buf)
    from .rendezvous import join, serve

    addr = env["master_addr"] or "127.0.0.1"
    port = env["master_port"] or 29500
    if rank == 0:
        serve(addr, port, size, uid, collective_timeout())
        return uid
    return join(addr, port, rank, size, collective_timeout())
