"""How every primitive lowers under ``jit``: the lowering rule table.

``lowering_table[prim]`` is one of

- ``"kernel"``: computed inside a fused kernel (elementwise ops, and reductions as the
  reducing steps of a row kernel), when the kernel compiler supports it
  (``rules.KERNEL_PRIMITIVES``); otherwise it falls back to ``"library"``; also
  gather/scatter*, cumsum/cumprod/cummax/cummin and reduce_window_*, each one template
  kernel of its own (``templates.py``; ``spec_special.TEMPLATE_PRIMITIVES``) for the
  dtypes the template supports, else the library call;
- ``"index"``: index arithmetic: a strided numpy view of its operand, folded into the
  strides a consuming kernel reads with (never a copy, except ``reshape`` of a layout
  that cannot be viewed, where numpy copies);
- ``"library"``: a call outside the kernels: ``dot_general`` (numpy matmul / BLAS),
  ``conv_general_dilated`` (im2col + one matmul), ``cond``/``while_loop``/``scan`` (a
  loop over compiled sub-programs, ``control.py``), and every other primitive through its
  eager CPU impl (``fntorch.devices.cpu_impls``) for now.

>>> from fntorch.ops import lax
>>> lowering_table[lax.transpose_p], lowering_table[lax.dot_general_p]
('index', 'library')
"""

from __future__ import annotations

from ..fx.core import Primitive
from ..ops import (
    _prims_control,
    _prims_elementwise,
    _prims_indexing,
    _prims_linalg,
    _prims_reduce,
    _prims_structural,
)
from ..transforms import custom
from .spec import REDUCTIONS
from .spec_special import TEMPLATE_PRIMITIVES

# Views: their result is a strided view of their operand (iota: a broadcast view of a
# range, made once per compiled program).
INDEX_PRIMITIVES = frozenset(
    {"broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice", "rev", "iota"}
)
REDUCTION_PRIMITIVES = REDUCTIONS
# What the fusion pass may put in a kernel when the kernel compiler is not importable
# (the numpy interpreter of ``interpret.py`` computes all of these).
DEFAULT_KERNEL_PRIMITIVES = frozenset(
    {
        "neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "log1p",
        "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "not", "erf",
        "erf_inv", "lgamma", "digamma", "square", "integer_pow", "add", "sub", "mul", "div",
        "rem", "pow", "atan2", "max", "min", "nextafter", "and", "or", "xor", "shift_left",
        "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge",
        "select_n", "clamp", "convert_element_type",
    }
    | REDUCTION_PRIMITIVES
)  # fmt: skip


def all_primitives() -> dict[str, Primitive]:
    """Every primitive fntorch defines, by name."""
    prims = {}
    for m in (
        _prims_elementwise,
        _prims_structural,
        _prims_indexing,
        _prims_reduce,
        _prims_linalg,
        _prims_control,
        custom,
    ):
        for v in vars(m).values():
            if isinstance(v, Primitive):
                prims[v.name] = v
    return prims


def kernel_primitives() -> frozenset:
    """Names of the primitives the kernel compiler computes (``rules.KERNEL_PRIMITIVES``),
    or the interpreter's set while the compiler is not importable."""
    try:
        from .rules import KERNEL_PRIMITIVES
    except ImportError:
        return DEFAULT_KERNEL_PRIMITIVES
    return frozenset(KERNEL_PRIMITIVES)


def _category(name: str, kernel_names) -> str:
    if name in INDEX_PRIMITIVES:
        return "index"
    if name in kernel_names or name in TEMPLATE_PRIMITIVES:
        return "kernel"
    return "library"


lowering_table: dict[Primitive, str] = {
    p: _category(n, DEFAULT_KERNEL_PRIMITIVES) for n, p in all_primitives().items()
}
