"""Communicators: the seam between fntorch's collectives and a distributed engine.

A communicator is one process' handle on a group of ``size`` processes, this one being
``rank``. Every collective works on the buffers of one device kind (numpy arrays for
MPI, CuPy arrays for NCCL) along their first dim, and returns a new buffer:

- ``allreduce(x, op)``: ``op`` is ``"sum"``, ``"max"`` or ``"min"``;
- ``allgather(x)``: shape ``(size, *x.shape)``, row ``k`` from rank ``k``;
- ``reduce_scatter(x)``: ``x`` has ``size`` rows; the sum over ranks of row ``rank``;
- ``alltoall(x)``: ``x`` has ``size`` rows; row ``k`` of the result is rank ``k``'s row
  ``rank``;
- ``permute(x, perm)``: for each ``(source, destination)`` pair the source's ``x`` goes to
  the destination; a rank that receives nothing gets zeros;
- ``broadcast(x, root)``: ``root``'s ``x``;
- ``barrier()``;
- ``iallreduce(x, op)``: ``allreduce`` started without waiting; returns a ``Work``
  whose ``wait()`` returns the result (``test()``: whether it is done, and a nudge to
  the engine's progress). Every rank must start its non-blocking collectives in the
  same order, as MPI requires;
- ``split(color, key)``: the communicator of the ranks that pass the same ``color``,
  ranked by ``key`` (MPI's ``Comm_split``; a collective over this group), and
  ``dup()``, the same group as a separate communicator whose collectives never match
  this one's.

``LocalCommunicator`` is the group of one process (no engine needed);
``MPICommunicator`` runs on mpi4py (imported when one is made);
``fntorch/distributed/nccl.py`` has the NCCL one. Only raw buffer bytes cross the wire:
MPI and NCCL move typed memory, nothing is pickled.

>>> import numpy as np
>>> c = LocalCommunicator()
>>> c.allreduce(np.ones(2, np.float32), "sum").tolist(), c.allgather(np.ones(2)).shape
([1.0, 1.0], (1, 2))
>>> c.iallreduce(np.ones(2), "sum").wait().tolist(), c.split(0, 0).size
([1.0, 1.0], 1)
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

OPS = ("sum", "max", "min")


class LocalCommunicator:
    """The group of this process alone: every collective is the identity (or a copy).

    >>> import numpy as np
    >>> LocalCommunicator().permute(np.ones(2), ((0, 0),)).tolist()
    [1.0, 1.0]
    """

    rank = 0
    size = 1
    backend = "local"

    def allreduce(self, x, op):
        """The elementwise ``op`` (sum, max, min) of ``x`` over the group."""
        _check_op(op)
        return x.copy()

    def allgather(self, x):
        """Every rank's ``x``, stacked: shape ``(size, *x.shape)``."""
        return x.reshape((1, *x.shape)).copy()

    def reduce_scatter(self, x):
        """Row ``rank`` of the sum over the group of ``x`` (``size`` rows)."""
        return x.reshape(x.shape[1:]).copy()  # not x[0]: a 0-d result stays an array

    def alltoall(self, x):
        """Row ``k``: rank ``k``'s row ``rank`` of its ``x`` (``size`` rows)."""
        return x.copy()

    def permute(self, x, perm):
        """``x`` sent along each ``(source, destination)`` pair; zeros if none arrives."""
        return x.copy() if (0, 0) in perm else x * 0

    def broadcast(self, x, root=0):
        """Rank ``root``'s ``x``."""
        return x.copy()

    def barrier(self):
        """Returns once every rank of the group has called it."""
        pass

    def iallreduce(self, x, op):
        """``allreduce`` as a ``Work`` (here already done)."""
        return DoneWork(self.allreduce(x, op))

    def split(self, color: int, key: int):
        """The ranks passing the same ``color``: here this process alone."""
        return LocalCommunicator()

    def dup(self):
        """The same group as a separate communicator."""
        return LocalCommunicator()

    def close(self):
        """Releases the communicator (its watchdog thread)."""
        pass


class DoneWork:
    """A ``Work`` whose result is already there (a group of one, or a fallback).

    >>> import numpy as np
    >>> w = DoneWork(np.zeros(1)); w.test(), w.wait().tolist()
    (True, [0.0])
    """

    def __init__(self, result):
        self.result = result

    def test(self) -> bool:
        """Whether the collective has completed: always."""
        return True

    def wait(self):
        """The result."""
        return self.result


def _contiguous(x):
    """``x`` as a C-contiguous array of its own shape (``np.ascontiguousarray`` makes a
    0-d array 1-d)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.array(x, order="C")


def _reduce_buffers(x):
    """``(send, receive, dtype)`` for an MPI reduction of ``x``: C-contiguous, in a dtype
    MPI reduces (narrow floats through float32, other ints through int32), ``dtype`` the
    one to give back."""
    x = _contiguous(x)
    dtype = x.dtype
    if dtype not in _MPI_REDUCIBLE:
        x = x.astype(np.float32 if dtype.kind in "fV" else np.int32)
    return x, np.empty_like(x), dtype


def _check_op(op):
    if op not in OPS:
        raise ValueError(f"allreduce: op must be one of {OPS}, got {op!r}")


def collective_timeout() -> float:
    """Seconds a collective may wait for the other processes before this process reports
    the hang and aborts the group: ``FNTORCH_DIST_TIMEOUT`` (default 300).

    >>> collective_timeout() > 0
    True
    """
    raw = os.environ.get("FNTORCH_DIST_TIMEOUT", "300")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"FNTORCH_DIST_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"FNTORCH_DIST_TIMEOUT must be positive, got {raw!r}")
    return value


class Watchdog:
    """Ends a process group whose collective never completes (a rank that died without
    the launcher noticing, or ranks that called different collectives): a daemon thread
    that, once a collective has waited ``timeout`` seconds, prints which rank waited in
    which collective and calls ``abort``. Arming and disarming cost two attribute writes.

    >>> w = Watchdog(rank=0, timeout=60.0, abort=lambda: None)
    >>> w.arm("allreduce"); w.disarm(); w.stop()
    """

    def __init__(self, rank: int, timeout: float, abort):
        self.rank, self.timeout, self.abort = rank, timeout, abort
        self.what = None
        self.since = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="fntorch-watchdog", daemon=True)
        self._thread.start()

    def arm(self, what: str) -> None:
        """Starts timing a collective named ``what``."""
        self.since = time.monotonic()
        self.what = what

    def disarm(self) -> None:
        """The collective completed."""
        self.what = None

    def stop(self) -> None:
        """Ends the watchdog thread."""
        self._stop.set()

    def _watch(self):
        tick = min(1.0, self.timeout / 4)
        while not self._stop.wait(tick):
            what = self.what
            if what is not None and time.monotonic() - self.since > self.timeout:
                print(
                    f"fntorch.distributed: rank {self.rank} waited more than {self.timeout:g} s "
                    f"in {what} for the other ranks (a rank died or hung, or the ranks called "
                    "different collectives); aborting the process group "
                    "(FNTORCH_DIST_TIMEOUT sets the limit)",
                    file=sys.stderr,
                    flush=True,
                )
                _record_exit(self.rank, 3)
                self.abort()
                return


def _record_exit(rank: int, code: int) -> None:
    """Tells ``python -m fntorch.distributed.run`` (if it launched us) this rank's code."""
    run_dir = os.environ.get("FNTORCH_RUN_DIR")
    if run_dir:
        try:
            with open(os.path.join(run_dir, f"rank{rank}.exit"), "w") as f:
                f.write(str(code))
        except OSError:
            pass


# numpy dtypes MPI reduces natively; others (float16, bfloat16, bool) go through float32
# or int32 and back.
_MPI_REDUCIBLE = {
    np.dtype(t)
    for t in ("float32", "float64", "int8", "int16", "int32", "int64")
    + ("uint8", "uint16", "uint32", "uint64")
}


class MPICommunicator:
    """A communicator over an ``mpi4py`` communicator (``MPI.COMM_WORLD`` by default).

    >>> MPICommunicator.backend
    'mpi'
    """

    backend = "mpi"

    def __init__(self, comm=None, timeout: float | None = None, watchdog: Watchdog | None = None):
        from mpi4py import MPI  # only when MPI is used: the base install never needs it

        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        # A split or dup shares its parent's watchdog: one thread per process, and a
        # hang anywhere aborts the whole job through the parent.
        self._owns_watchdog = watchdog is None
        self.watchdog = watchdog or Watchdog(
            self.rank, collective_timeout() if timeout is None else timeout, self._abort
        )

    def _abort(self):
        self.comm.Abort(3)

    def _bytes(self, x):
        return [x, self._MPI.BYTE]

    def allreduce(self, x, op):
        """The elementwise ``op`` (sum, max, min) of ``x`` over the group."""
        _check_op(op)
        x, out, dtype = _reduce_buffers(x)
        self.watchdog.arm("allreduce")
        self.comm.Allreduce(x, out, op=self._ops[op])
        self.watchdog.disarm()
        return out if out.dtype == dtype else out.astype(dtype)

    def allgather(self, x):
        """Every rank's ``x``, stacked: shape ``(size, *x.shape)``."""
        x = _contiguous(x)
        out = np.empty((self.size, *x.shape), x.dtype)
        self.watchdog.arm("allgather")
        self.comm.Allgather(self._bytes(x), self._bytes(out))
        self.watchdog.disarm()
        return out

    def reduce_scatter(self, x):
        """Row ``rank`` of the sum over the group of ``x`` (``size`` rows)."""
        x = _contiguous(x)
        if x.dtype not in _MPI_REDUCIBLE:
            return self.allreduce(x, "sum")[self.rank].astype(x.dtype)
        out = np.empty(x.shape[1:], x.dtype)
        self.watchdog.arm("reduce_scatter")
        self.comm.Reduce_scatter_block(x, out, op=self._MPI.SUM)
        self.watchdog.disarm()
        return out

    def alltoall(self, x):
        """Row ``k``: rank ``k``'s row ``rank`` of its ``x`` (``size`` rows)."""
        x = _contiguous(x)
        out = np.empty_like(x)
        self.watchdog.arm("alltoall")
        self.comm.Alltoall(self._bytes(x), self._bytes(out))
        self.watchdog.disarm()
        return out

    def permute(self, x, perm):
        """``x`` sent along each ``(source, destination)`` pair; zeros if none arrives."""
        x = _contiguous(x)
        dest = [d for s, d in perm if s == self.rank]
        source = [s for s, d in perm if d == self.rank]
        out = np.zeros_like(x)
        self.watchdog.arm("permute")
        reqs = [self.comm.Isend(self._bytes(x), dest=dest[0], tag=17)] if dest else []
        if source:
            self.comm.Recv(self._bytes(out), source=source[0], tag=17)
        self._MPI.Request.Waitall(reqs)
        self.watchdog.disarm()
        return out

    def broadcast(self, x, root=0):
        """Rank ``root``'s ``x``."""
        out = np.array(x, order="C")
        self.watchdog.arm("broadcast")
        self.comm.Bcast(self._bytes(out), root=root)
        self.watchdog.disarm()
        return out

    def barrier(self):
        """Returns once every rank of the group has called it."""
        self.watchdog.arm("barrier")
        self.comm.Barrier()
        self.watchdog.disarm()

    def iallreduce(self, x, op):
        """``allreduce`` started with MPI's ``Iallreduce``; ``wait()`` on the returned
        ``Work`` gives the result."""
        _check_op(op)
        x, out, dtype = _reduce_buffers(x)
        request = self.comm.Iallreduce(x, out, op=self._ops[op])
        return MPIWork(request, (x, out), dtype, self.watchdog)

    def split(self, color: int, key: int):
        """The ranks passing the same ``color``, ranked by ``key`` (``Comm.Split``)."""
        self.watchdog.arm("split")
        comm = self.comm.Split(int(color), int(key))
        self.watchdog.disarm()
        return MPICommunicator(comm, watchdog=self.watchdog)

    def dup(self):
        """The same group as a separate communicator (``Comm.Dup``)."""
        self.watchdog.arm("dup")
        comm = self.comm.Dup()
        self.watchdog.disarm()
        return MPICommunicator(comm, watchdog=self.watchdog)

    def close(self):
        """Releases the communicator (its watchdog thread, if it has its own)."""
        if self._owns_watchdog:
            self.watchdog.stop()


class MPIWork:
    """A started ``Iallreduce``: ``wait()`` returns its result (cast back to the
    operand's dtype), ``test()`` whether it is done. The buffers stay referenced until
    it completes, as MPI reads and writes them meanwhile.

    >>> MPIWork.wait.__doc__.split()[0]
    'Waits'
    """

    def __init__(self, request, buffers, dtype, watchdog):
        self.request, self.buffers, self.dtype, self.watchdog = request, buffers, dtype, watchdog
        self.result = None

    def test(self) -> bool:
        """Whether it is done (each call lets MPI progress it)."""
        if self.result is None and self.request.Test():
            self._done()
        return self.result is not None

    def wait(self):
        """Waits for the all-reduce (bounded by the watchdog) and returns its result."""
        if self.result is None:
            self.watchdog.arm("allreduce (started by iallreduce)")
            self.request.Wait()
            self.watchdog.disarm()
            self._done()
        return self.result

    def _done(self):
        out = self.buffers[1]
        self.result = out if out.dtype == self.dtype else out.astype(self.dtype)
        self.buffers = None
