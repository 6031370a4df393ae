"""Scalar lowering rules for complex operands: ``complex_rules[name]``, the counterpart of
``rules.lowering_rules`` for equations with a complex64/complex128 operand or result.

A rule has the real rules' signature, ``rule(b, *values, dtype=..., out_dtype=...,
**params)``, but a complex value is a ``mathlib_complex.Cx`` pair of its parts' floats.
The code generator picks this table when the operands' or the result's dtype is complex
(``abs``, ``real``, ``imag`` and ``eq`` give real or bool results; ``complex`` and a cast
to complex take real operands). ``COMPLEX_REDUCERS`` holds the parts of the reductions a
row kernel computes on complex rows (``rules.complex_reduction_rules``).

A complex primitive missing here (``pow`` of two complex operands, ``reduce_prod``,
...) stays a library step:
fusion asks ``fuses_complex`` before it puts a complex-valued equation in a kernel.
Nothing here imports xDSL.

>>> "asin" in complex_rules and "pow" not in complex_rules
True
"""

from __future__ import annotations

import numpy as np

from . import mathlib_catrig as mt
from . import mathlib_complex as mc
from .mathlib_complex import Cx


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def _part_dtype(dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


def _unary(fn):
    def rule(b, z, **_):
        return fn(b, z)

    return rule


def _binary(fn):
    def rule(b, z, w, **_):
        return fn(b, z, w)

    return rule


def _convert_complex(b, x, *, dtype, new_dtype, **_):
    """Casts from or to complex: a real operand becomes the real part (im +0); a complex
    one to a real dtype keeps its real part, as the eager impl (and lax) do."""
    from .rules import _convert  # rules imports this module

    src, dst = np.dtype(dtype), np.dtype(new_dtype)
    if is_complex(src) and is_complex(dst):
        part = _part_dtype(dst)
        return Cx(*(_convert(b, v, dtype=_part_dtype(src), new_dtype=part) for v in x))
    if is_complex(src):
        return _convert(b, x.re, dtype=_part_dtype(src), new_dtype=dst)
    re = _convert(b, x, dtype=src, new_dtype=_part_dtype(dst))
    return Cx(re, b.const_like(0.0, re))


def _select_complex(b, which, *cases, dtype, **_):
    from .rules import _select_n

    re = _select_n(b, which, *(c.re for c in cases), dtype=dtype)
    return Cx(re, _select_n(b, which, *(c.im for c in cases), dtype=dtype))


def _eq(b, z, w, **_):
    return b.and_(b.fcmp("oeq", z.re, w.re), b.fcmp("oeq", z.im, w.im))


def _ne(b, z, w, **_):
    return b.or_(b.fcmp("une", z.re, w.re), b.fcmp("une", z.im, w.im))


def _integer_pow(b, z, *, y, **_):
    return mc.integer_pow(b, z, y)


complex_rules: dict = {
    "add": _binary(mc.add), "sub": _binary(mc.sub), "mul": _binary(mc.mul),
    "div": _binary(mc.div), "neg": _unary(mc.neg), "conj": _unary(mc.conj),
    "square": _unary(mc.square), "integer_pow": _integer_pow,
    "real": lambda b, z, **_: z.re, "imag": lambda b, z, **_: z.im,
    "complex": lambda b, re, im, **_: Cx(re, im),
    "abs": _unary(mc.modulus), "sign": _unary(mc.sign), "is_finite": _unary(mc.is_finite),
    "eq": _eq, "ne": _ne, "select_n": _select_complex,
    "convert_element_type": _convert_complex,
    "copy": lambda b, z, **_: z, "stop_gradient": lambda b, z, **_: z,
    "exp": _unary(mc.exp), "expm1": _unary(mc.expm1), "log": _unary(mc.log),
    "log1p": _unary(mc.log1p), "sqrt": _unary(mc.sqrt), "rsqrt": _unary(mc.rsqrt),
    "sin": _unary(mc.sin), "cos": _unary(mc.cos), "tan": _unary(mc.tan),
    "sinh": _unary(mc.sinh), "cosh": _unary(mc.cosh), "tanh": _unary(mc.tanh),
    "asin": _unary(mt.asin), "asinh": _unary(mt.asinh),
    "atan": _unary(mt.atan), "atanh": _unary(mt.atanh),
    "acos": _unary(mt.acos), "acosh": _unary(mt.acosh),
}  # fmt: skip


# ------------------------------------------------------------------ reductions
def _sum_init(b, dtype):
    zero = b.const(0.0, _reg(dtype))
    return [zero, zero]


def _reg(dtype):
    from .builder import reg_type  # xDSL only when something is being built

    return reg_type(dtype)


def _sum_step(b, st, x, idx, dtype):
    from .builder import REDUCE_FLAGS

    return [b.fadd(st[0], x.re, REDUCE_FLAGS), b.fadd(st[1], x.im, REDUCE_FLAGS)]


def _sum_combine(b, st, part, dtype):
    return _sum_step(b, st, Cx(*part), None, dtype)


def _sum_final(b, st, dtype, out_dtype):
    return Cx(*st)


# The reductions' parts (``rules.Reducer(init, step, final, blocked, combine)``; the
# table ``rules.complex_reduction_rules``): a sum is two running sums, one per part, in
# the same cascade of blocks as a float sum.
COMPLEX_REDUCERS = {"reduce_sum": (_sum_init, _sum_step, _sum_final, True, _sum_combine)}


def fuses_complex(name: str) -> bool:
    """Whether a kernel computes primitive ``name`` with complex operands or results.

    >>> fuses_complex("mul"), fuses_complex("pow")
    (True, False)
    """
    return name in complex_rules or name in COMPLEX_REDUCERS
