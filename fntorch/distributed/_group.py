"""The default process group: start-up from the launcher's environment, and PyTorch's
``torch.distributed`` calls on top of the collectives.

The group is the process axis ``WORLD_AXIS`` (fx/axes.py): ``all_reduce`` binds ``psum``
over it, so it runs eagerly through the communicator and, under ``ft.jit``, as a
library step of the compiled program.
"""

from __future__ import annotations

import enum
import os

import numpy as np

from ..fx.axes import axis_owners, bind_process_axis, process_axes, unbind_process_axis
from ..fx.cell import Cell
from ..fx.core import Tensor, _new_tensor
from ..ops import _prims_collective as pc
from ..ops._prims_structural import _operand
from .comm import LocalCommunicator

WORLD_AXIS = "_world"
BACKENDS = ("mpi", "nccl", "gloo", "local")


class DistributedError(RuntimeError):
    """Start-up or use of the process group failed (the message says which call and why).

    >>> issubclass(DistributedError, RuntimeError)
    True
    """


def _env_int(names, where):
    for n in names:
        raw = os.environ.get(n)
        if raw is not None:
            try:
                return int(raw)
            except ValueError:
                raise DistributedError(
                    f"{where}: environment variable {n} must be an int, got {raw!r}"
                ) from None
    return None


def launch_env() -> dict:
    """The launcher's view of this process: ``rank``, ``world_size``, ``local_rank``,
    ``master_addr``, ``master_port``, from torchrun's variables (``RANK``, ...) or MPI's
    own (MPICH's ``PMI_RANK``/``PMI_SIZE``, Open MPI's ``OMPI_COMM_WORLD_*``); None where
    neither says.

    >>> sorted(launch_env())
    ['local_rank', 'master_addr', 'master_port', 'rank', 'world_size']
    """
    where = "initialize"
    return {
        "rank": _env_int(("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK"), where),
        "world_size": _env_int(("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE"), where),
        "local_rank": _env_int(
            ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"), where
        ),
        "master_addr": os.environ.get("MASTER_ADDR"),
        "master_port": _env_int(("MASTER_PORT",), where),
    }


def _started_by_mpi() -> bool:
    return any(
        k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
    )


def _default_backend():
    from ..fx.device import get_default_device

    return "nccl" if get_default_device().platform == "cuda" else "mpi"


def initialize(backend: str | None = None, init_method: str | None = None):
    """Starts this process' default group from the launcher's environment.

    ``backend``: ``"mpi"`` (CPU tensors, mpi4py), ``"nccl"`` (CUDA tensors, CuPy's NCCL),
    ``"gloo"`` (taken as ``"mpi"``: same tensors, same semantics), or None: NCCL when
    the default device is a GPU, else MPI. A process started alone (no launcher, one
    process) gets a group of one, without any engine. Returns the communicator.

    >>> import fntorch as ft
    >>> comm = ft.distributed.initialize(); ft.distributed.get_world_size()
    1
    >>> ft.distributed.destroy_process_group()
    """
    if WORLD_AXIS in process_axes:
        raise DistributedError(
            "initialize: the default process group is already initialized; call "
            "destroy_process_group() first"
        )
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"initialize: backend must be one of {BACKENDS} or None, got {backend!r}")
    env = launch_env()
    if init_method is not None:
        _apply_init_method(init_method, env)
    world = env["world_size"]
    backend = backend or _default_backend()
    if backend == "gloo":
        backend = "mpi"
    if backend == "local" or (world in (None, 1) and not _started_by_mpi() and backend == "mpi"):
        comm = LocalCommunicator()
    elif backend == "mpi":
        comm = _mpi_comm(env)
    else:
        from .nccl import nccl_communicator

        comm = nccl_communicator(env)
    bind_process_axis(WORLD_AXIS, comm)
    return comm


def _apply_init_method(init_method, env):
    if init_method == "env://":
        return
    if init_method.startswith("tcp://"):
        host, _, port = init_method[len("tcp://") :].rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(
                f"init_process_group: init_method must be 'tcp://host:port', got {init_method!r}"
            )
        env["master_addr"], env["master_port"] = host, int(port)
        return
    raise ValueError(
        "init_process_group: init_method must be None, 'env://' or 'tcp://host:port', "
        f"got {init_method!r}"
    )


def _mpi_comm(env):
    try:
        from .comm import MPICommunicator

        comm = MPICommunicator()
    except ImportError as e:
        raise DistributedError(
            "initialize: the 'mpi' backend needs mpi4py and an MPI library: "
            f"pip install 'fntorch[distributed]' ({e})"
        ) from None
    world = env["world_size"]
    if world is not None and world != comm.size:
        comm.close()
        raise DistributedError(
            f"initialize: WORLD_SIZE is {world} but MPI sees {comm.size} process(es): the "
            "'mpi' backend needs processes started by `mpiexec -n N` or "
            "`python -m fntorch.distributed.run --nproc-per-node N`"
        )
    return comm


def _group(where: str):
    comm = process_axes.get(WORLD_AXIS)
    if comm is None:
        raise DistributedError(
            f"{where}: the default process group is not initialized; call "
            "ft.distributed.init_process_group() (or initialize()) first"
        )
    return comm


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       world_size: int = -1, rank: int = -1, **kwargs) -> None:  # fmt: skip
    """PyTorch's ``init_process_group``: ``initialize`` with these arguments (``timeout``,
    ``store`` and ``group_name`` are accepted; ``FNTORCH_DIST_TIMEOUT`` sets the time
    limit). ``world_size`` and ``rank``, when given, must match the launcher's.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group("mpi"); ft.distributed.get_rank()
    0
    >>> ft.distributed.destroy_process_group()
    """
    comm = initialize(backend, init_method)
    for name, want, got in (("world_size", world_size, comm.size), ("rank", rank, comm.rank)):
        if want not in (-1, None) and want != got:
            destroy_process_group()
            raise DistributedError(f"init_process_group: {name}={want} but the launcher gave {got}")


def is_initialized() -> bool:
    """Whether the default group exists.

    >>> import fntorch as ft
    >>> ft.distributed.is_initialized()
    False
    """
    return WORLD_AXIS in process_axes


def is_available() -> bool:
    """Always True: the package is there (an engine is looked for at start-up).

    >>> import fntorch as ft
    >>> ft.distributed.is_available()
    True
    """
    return True


def get_rank(group=None) -> int:
    """This process' rank in the default group (0 when there is none, as a lone process).

    >>> import fntorch as ft
    >>> ft.distributed.get_rank()
    0
    """
    comm = process_axes.get(WORLD_AXIS)
    return 0 if comm is None else comm.rank


def get_world_size(group=None) -> int:
    """The number of processes in the default group (1 when there is none).

    >>> import fntorch as ft
    >>> ft.distributed.get_world_size()
    1
    """
    comm = process_axes.get(WORLD_AXIS)
    return 1 if comm is None else comm.size


def get_backend(group=None) -> str:
    """The default group's backend name (``"mpi"``, ``"nccl"`` or ``"local"``).

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group(); ft.distributed.get_backend()
    'local'
    >>> ft.distributed.destroy_process_group()
    """
    return _group("get_backend").backend


def barrier(group=None, async_op=False, device_ids=None) -> None:
    """Waits until every process of the group reaches it.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group(); ft.distributed.barrier()
    >>> ft.distributed.destroy_process_group()
    """
    _group("barrier").barrier()


def destroy_process_group(group=None) -> None:
    """Ends the default group: its communicator, and every process axis (the meshes'
    communicators, split from it).

    >>> import fntorch as ft
    >>> ft.distributed.destroy_process_group()  # nothing to end: no error
    """
    comm = process_axes.get(WORLD_AXIS)
    if comm is None:
        return
    # The default group's axis and the meshes' (their splits of it, owned by a mesh, and
    # the groups of tuples of their names) end with it; an axis bound to a communicator
    # of its own (bind_process_axis without a mesh) stays.
    ours = [
        n for n, c in process_axes.items()
        if c is comm or isinstance(n, tuple) or axis_owners.get(n) is not None
    ]  # fmt: skip
    derived = {id(c): c for n in ours if (c := process_axes[n]) is not comm}
    for name in ours:
        unbind_process_axis(name)
    for c in derived.values():
        c.close()
    comm.close()


class ReduceOp(enum.Enum):
    """PyTorch's reduction names for ``all_reduce``.

    >>> ReduceOp.SUM
    <ReduceOp.SUM: 'sum'>
    """

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


def _write_back(t, out):
    """A cell (a buffer, a parameter, ``p.data``) takes the result in place, as PyTorch's
    in-place collectives write their argument; a value cannot change."""
    if isinstance(t, Cell):
        t.set_(out)
    return out


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """The reduction of ``tensor`` over every process, returned, and written into
    ``tensor`` when it is a cell (a Parameter, a buffer, ``p.data``).

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group()
    >>> ft.distributed.all_reduce(ft.ones(2)).tolist()
    [1.0, 1.0]
    >>> ft.distributed.destroy_process_group()
    """
    comm = _group("all_reduce")
    op = ReduceOp(op) if not isinstance(op, ReduceOp) else op
    prim = {ReduceOp.SUM: pc.psum_p, ReduceOp.AVG: pc.psum_p, ReduceOp.MAX: pc.pmax_p,
            ReduceOp.MIN: pc.pmin_p}.get(op)  # fmt: skip
    if prim is None:
        raise NotImplementedError(f"all_reduce: op {op} is not supported; use SUM, AVG, MAX or MIN")
    value = tensor._read() if isinstance(tensor, Cell) else _operand(tensor)
    out = prim.bind(value, axis_name=WORLD_AXIS, size=comm.size)
    if op is ReduceOp.AVG:
        out = out / comm.size
    return _write_back(tensor, out)


def broadcast(tensor, src: int = 0, group=None, async_op=False):
    """Process ``src``'s ``tensor`` on every process: returned, and written into
    ``tensor`` when it is a cell. Built from ``psum`` (the other processes contribute
    zeros), so it runs under ``ft.jit`` too.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group()
    >>> ft.distributed.broadcast(ft.arange(3), src=0).tolist()
    [0, 1, 2]
    >>> ft.distributed.destroy_process_group()
    """
    comm = _group("broadcast")
    if isinstance(src, bool) or not isinstance(src, int) or not 0 <= src < comm.size:
        raise ValueError(f"broadcast: src must be a rank in [0, {comm.size}), got {src!r}")
    value = tensor._read() if isinstance(tensor, Cell) else _operand(tensor)
    if not isinstance(value, Tensor):
        value = Tensor(np.asarray(value))
    out = broadcast_value(value, src, comm.size)
    return _write_back(tensor, out)


def broadcast_value(value, src: int, size: int):
    """``value`` of process ``src`` on every process of the default group (a psum of it
    and zeros)."""
    from ..fx.core import EvalTrace, current_trace
    from ..ops import lax

    if size == 1:
        return value
    if type(value) is Tensor and type(current_trace()) is EvalTrace:
        # A concrete value outside any transform: one broadcast call, no psum.
        return _new_tensor(process_axes[WORLD_AXIS].broadcast(value._value, src))
    here = lax.eq(pc.axis_index_p.bind(axis_name=WORLD_AXIS, size=size), np.int32(src))
    shape = value.shape
    pick = lax.broadcast_in_dim(here, shape, ()) if shape else here
    mine = lax.select_n(pick, lax.full(shape, 0, value.dtype), value)
    return pc.psum_p.bind(mine, axis_name=WORLD_AXIS, size=size)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """PyTorch's ``all_gather``: ``tensor_list`` (one entry per process) is filled with
    every process' ``tensor`` (cells in it are written; other entries replaced); also
    returns the list.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group()
    >>> ft.distributed.all_gather([None], ft.ones(2))[0].tolist()
    [1.0, 1.0]
    >>> ft.distributed.destroy_process_group()
    """
    comm = _group("all_gather")
    if len(tensor_list) != comm.size:
        raise ValueError(
            f"all_gather: tensor_list must have one entry per process ({comm.size}), "
            f"got {len(tensor_list)}"
        )
    value = tensor._read() if isinstance(tensor, Cell) else _operand(tensor)
    gathered = pc.all_gather_p.bind(
        value, axis_name=WORLD_AXIS, size=comm.size, axis=0, tiled=False
    )
    for k in range(comm.size):
        row = gathered[k]
        if isinstance(tensor_list[k], Cell):
            tensor_list[k].set_(row)
        else:
            tensor_list[k] = row
    return tensor_list


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """The processes' ``input_tensor`` concatenated along dim 0 (written into
    ``output_tensor`` when it is a cell), returned.

    >>> import fntorch as ft
    >>> ft.distributed.init_process_group()
    >>> ft.distributed.all_gather_into_tensor(None, ft.ones(2)).shape
    (2,)
    >>> ft.distributed.destroy_process_group()
    """
    comm = _group("all_gather_into_tensor")
    value = input_tensor._read() if isinstance(input_tensor, Cell) else _operand(input_tensor)
    out = pc.all_gather_p.bind(value, axis_name=WORLD_AXIS, size=comm.size, axis=0, tiled=True)
    return _write_back(output_tensor, out)
