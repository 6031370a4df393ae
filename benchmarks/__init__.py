"""fntorch's benchmarks: the workloads of shared/BENCHMARKS.md, one command, one ratio table.

Run ``python -m benchmarks`` (``--quick``, ``--only W1,W9``; see ``python -m benchmarks
-h``). Each workload lives in one file of ``benchmarks/workloads/`` and defines its
inputs once (numpy, fixed seeds) and one builder per framework: fntorch always, numpy
always, PyTorch, JAX and HIPS autograd when importable.

Measured: W1 (eager dispatch), W2-W5 (jit: GELU, softmax, layernorm, an MLP training
step, with its first call in a new process), W6 and W7 (with and without jit), W8 (scan
RNN), W9 (matmul, and numpy's copy bandwidth as the memory ceiling), W10 and W11 (the
digits CNN and a GPT step through the ``nn`` shim), W12 (linear solves), W13 (FFT), W14
(data-parallel digits over MPI). ``--device cuda`` runs the workloads marked for the GPU.
``torch.compile`` rows are skipped by ``--quick``.

Adding a workload: a new file in ``benchmarks/workloads/`` that builds a
``Workload``, decorates one builder per framework with ``@w.impl(...)`` and calls
``register(w)``; then import it in ``benchmarks/workloads/__init__.py``.
"""

from ._harness import QUICK, REGISTRY, Settings, Workload, all_workloads, register, run_workload

__all__ = ["QUICK", "REGISTRY", "Settings", "Workload", "all_workloads", "register", "run_workload"]
