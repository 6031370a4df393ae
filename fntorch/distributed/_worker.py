"""One rank of ``python -m fntorch.distributed.run``: torchrun's environment from MPI's,
then the user's script as ``__main__``.

It records its pid and, when the script ends on its own, its exit code in the
launcher's run directory (``FNTORCH_RUN_DIR``), so the launcher can name the rank that
failed. An exception is printed with the rank before the process exits with code 1.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from pathlib import Path


def _torchrun_env() -> int:
    rank = os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or "0"
    size = os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or "1"
    local = (
        os.environ.get("MPI_LOCALRANKID") or os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or rank
    )
    local_size = (
        os.environ.get("MPI_LOCALNRANKS") or os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") or size
    )
    os.environ.update(RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=local_size)
    return int(rank)


def main() -> None:
    rank = _torchrun_env()
    run_dir = Path(os.environ.get("FNTORCH_RUN_DIR", "."))
    (run_dir / f"rank{rank}.pid").write_text(str(os.getpid()))
    script, args = sys.argv[1], sys.argv[2:]
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException:
        print(f"fntorch.distributed.run: rank {rank} raised:", file=sys.stderr)
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    (run_dir / f"rank{rank}.exit").write_text(str(code))
    os._exit(code)  # no interpreter teardown that could wait on the other ranks


if __name__ == "__main__":
    main()
