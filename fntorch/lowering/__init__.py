"""lowering: Graph -> passes -> fusion plan -> compiled program of kernels and library calls.

``compile_graph(graph, target)`` (``pipeline.py``) is what ``ft.jit`` runs on a cache
miss and ``.lower()``, with the target of its arguments' device, and what compiled
control flow runs on its branches and bodies. A ``Target`` (``target.py``) answers
everything device-specific: the compiler, the kernels' entry and launch, threads,
matrix products and library impls; the rest of this room is target-neutral.

1. ``passes.run_passes``: outer products as multiplies, algebraic cleanups (with
   transposes of transposes composed), constant folding, CSE, DCE, then transposed
   products as swapped ones;
2. ``fusion.partition``: kernel groups (elementwise chains and row reductions, with
   index arithmetic on their inputs), template kernels and library steps;
3. ``program.build_program``: the steps as closures over preallocated buffers, each
   kernel compiled for the target (``kernels.compile_kernel``; the numpy
   interpreter of ``interpret.py`` while it is not importable), for the input layouts
   its first run will have.

Each step asks ``table.lowering_table[prim]`` (a ``Lowering``: its kind, "elementwise",
"reduction", "view", "template", "control", "erased" or "library", and what the passes
ask of it: a view's name, a matmul, a sum, an add, foldable) rather than the
primitive's name. Nothing here imports xDSL at import time.

>>> import fntorch as ft
>>> g = ft.make_graph(lambda x: ft.exp(x) * 2.0)(ft.ones(3))
>>> prog = compile_graph(g)
>>> prog(np.zeros(3, np.float32))[0].tolist()
[2.0, 2.0, 2.0]
"""

import numpy as np

from .fusion import KernelStep, LibraryStep, Plan, partition
from .passes import dce, run_passes, simplify
from .pipeline import compile_graph, plan_graph
from .program import Program, build_program
from .table import lowering_table
from .target import Target, default_target
