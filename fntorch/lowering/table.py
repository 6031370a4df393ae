"""How every primitive lowers under ``jit``: ``lowering_table[prim]``, a ``Lowering``.

Each entry's ``kind`` is one of

- ``"elementwise"``: a scalar rule inside a fused kernel (``rules.lowering_rules``);
- ``"reduction"``: a reducing step of a row kernel (``rules.reduction_rules``);
- ``"view"``: index arithmetic, a strided numpy view of its operand folded into the
  strides a consuming kernel reads with (``view`` names which; never a copy, except
  ``reshape`` of a layout that cannot be viewed, where numpy copies; ``iota`` is a
  broadcast view of a range made once per compiled program);
- ``"template"``: one template kernel of its own (``templates.py``: gather, scatter*,
  cumsum/cumprod/cummax/cummin, reduce_window_*) for the dtypes the template supports
  (``spec_special.spec_for``), else its CPU impl;
- ``"control"``: ``cond``/``while_loop``/``scan``/``jit_call``, compiled sub-programs
  (``control.py``);
- ``"erased"``: removed by ``passes.simplify`` (``copy``, ``stop_gradient``: the value
  is its operand);
- ``"library"``: a call outside the kernels through the host device's impl:
  ``dot_general`` (numpy matmul / BLAS), ``conv_general_dilated`` (im2col + one matmul),
  and every primitive the kernel compiler lacks (``lgamma``, ``digamma``, ...).

The other fields say what passes and fusion ask of a primitive: ``matmul`` (a
``dot_general``: outer products, transposed products, the program's BLAS call, a scan
accumulator), ``sum`` (``reduce_sum``: a BLAS column sum, a scan accumulator),
``adds`` (``add``: the combiner of a scan accumulator), ``foldable`` (constant
folding may run it) and ``effects`` (it does something besides computing its outputs,
``debug_callback``: DCE keeps it, CSE never merges it, nothing folds it or runs it when
the program is built, only when the program runs). Primitives are found in the
registry ``fntorch.fx.core.primitives`` as they are made; an entry is made on first
lookup, so primitives registered after this module is imported have one too. A
primitive no rule lowers (no kernel rule, view, template, control step or host impl)
has no entry.

>>> from fntorch.ops import lax
>>> lowering_table[lax.transpose_p].kind, lowering_table[lax.dot_general_p].kind
('view', 'library')
>>> lowering_table[lax.lgamma_p].kind, lowering_table[lax.stop_gradient_p].kind
('library', 'erased')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import ops as _ops  # noqa: F401  (registers every ops primitive)
from ..fx.core import Primitive, primitives
from ..ops._prims_collective import COLLECTIVES as _COLLECTIVES
from .identities import identity_rules
from .rules import KERNEL_PRIMITIVES, complex_rules, lowering_rules, reduction_rules
from .spec import REDUCTIONS
from .spec_special import TEMPLATE_PRIMITIVES

KINDS = ("elementwise", "reduction", "view", "template", "control", "erased", "library")

_VIEWS = frozenset(
    {"broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice", "rev", "iota"}
)
_CONTROL = frozenset({"cond", "while_loop", "scan", "jit_call"})
_ERASED = frozenset({"copy", "stop_gradient"})
# Never folded: their params hold Python callables with effects of their own, or they
# communicate with other processes (a collective runs when the program runs, on every
# process alike, never when it is built).
_NO_FOLD = frozenset({"custom_lin"} | {p.name for p in _COLLECTIVES})
# Effectful: run for their effect (a print), kept however unused their outputs are.
_EFFECTS = frozenset({"debug_callback"})


@dataclass(frozen=True)
class Lowering:
    """How one primitive lowers (see the module docstring)."""

    kind: str
    view: str | None = None  # a view's name ("transpose", "reshape", ...)
    matmul: bool = False  # dot_general
    sum: bool = False  # reduce_sum
    adds: bool = False  # add
    foldable: bool = True
    effects: bool = False  # kept by DCE, never merged by CSE, never folded or pre-run
    # (params, inputs, out) -> the input the output equals exactly, or None
    identity: Callable | None = None
    # A kernel may compute it: kinds "elementwise" and "reduction", and the erased ones
    # the kernel compiler has a rule for, should they reach fusion without the passes.
    kernel: bool = False

    def __post_init__(self):
        assert self.kind in KINDS, self.kind


def _has_host_impl(p: Primitive) -> bool:
    from ..fx.device import host_device, universal_impls

    return p in host_device().impls or p in universal_impls


def _entry(p: Primitive) -> Lowering | None:
    n = p.name
    fields = dict(
        matmul=n == "dot_general", sum=n == "reduce_sum", adds=n == "add",
        foldable=n not in _NO_FOLD and n not in _EFFECTS, effects=n in _EFFECTS,
        identity=identity_rules.get(n),
        kernel=n in KERNEL_PRIMITIVES and not p.multiple_results and n not in _VIEWS,
    )  # fmt: skip
    if n in _VIEWS:
        return Lowering("view", view=n, **fields)
    if n in _ERASED:
        return Lowering("erased", **fields)
    if n in _CONTROL:
        return Lowering("control", **fields)
    if n in TEMPLATE_PRIMITIVES:
        return Lowering("template", **fields)
    if n in reduction_rules and n in REDUCTIONS and fields["kernel"]:
        return Lowering("reduction", **fields)
    if (n in lowering_rules or n in complex_rules) and fields["kernel"]:
        return Lowering("elementwise", **fields)
    if _has_host_impl(p):
        return Lowering("library", **fields)
    return None


class LoweringTable(Mapping):
    """``Primitive -> Lowering`` over the primitive registry (entries made on first
    lookup and kept)."""

    def __init__(self):
        self._cache: dict = {}

    def __getitem__(self, p):
        try:
            return self._cache[p]
        except KeyError:
            pass
        if not isinstance(p, Primitive) or primitives.get(p.name) is not p:
            raise KeyError(p)
        e = _entry(p)
        if e is None:
            raise KeyError(p)
        self._cache[p] = e
        return e

    def __contains__(self, p) -> bool:
        try:
            self[p]
        except KeyError:
            return False
        return True

    def __iter__(self):
        return (p for p in list(primitives.values()) if p in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


lowering_table: Mapping[Primitive, Lowering] = LoweringTable()


def kernel_primitives() -> frozenset:
    """Names of the primitives the kernel compiler computes (``rules.KERNEL_PRIMITIVES``:
    the entries of kind "elementwise" or "reduction" and the erased ``copy`` and
    ``stop_gradient``)."""
    return frozenset(KERNEL_PRIMITIVES)
