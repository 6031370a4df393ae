"""Scalar lowering rules: primitive name -> code for one element, in a ``KernelBuilder``.

``lowering_rules[name](b, *values, dtype=..., out_dtype=..., **params)`` emits the
scalar computation of one element and returns its value. ``dtype`` is the operands'
numpy dtype (the cases' dtype for ``select_n``), ``out_dtype`` the result's. Values are
in register form (``builder.reg_type``): bool is i1, float16/bfloat16 are float32
values that the kernel template rounds after each op, so rules compute in float32 for
them. Every rule matches the numpy impl in ``fntorch/devices/cpu_elementwise.py``.

``reduction_rules[name]`` holds the reductions' combiners as ``Reducer(init, step,
final)``: ``init(b, dtype) -> state``, ``step(b, state, x, index, dtype) -> state``
(``index``: the element's flat index in its row, i64), ``final(b, state, dtype,
out_dtype) -> value``.

Equations with a complex operand or result take ``complex_rules`` and
``complex_reduction_rules`` instead (``rules_complex``: the same signatures over
(re, im) pairs); ``real``, ``imag`` and ``conj`` of a real operand are here.

Nothing here imports xDSL: the front-end reads ``KERNEL_PRIMITIVES`` cheaply.

>>> "exp" in KERNEL_PRIMITIVES and "dot_general" not in KERNEL_PRIMITIVES
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import mathlib
from .rules_complex import COMPLEX_REDUCERS, complex_rules


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


def _is_signed(dtype) -> bool:
    return np.dtype(dtype).kind == "i"


def _is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def _bits(dtype) -> int:
    return 1 if _is_bool(dtype) else np.dtype(dtype).itemsize * 8


def _ty(b, dtype):
    from .builder import reg_type  # xDSL only when something is being built

    return reg_type(dtype)


def _const(b, value, dtype):
    return b.const(value, _ty(b, dtype))


lowering_rules: dict = {}


# ------------------------------------------------------------------ arithmetic
def _neg(b, x, *, dtype, **_):
    return b.fneg(x) if _is_float(dtype) else b.sub(_const(b, 0, dtype), x)


def _binary(fop, iop):
    def rule(b, x, y, *, dtype, **_):
        return getattr(b, fop)(x, y) if _is_float(dtype) else getattr(b, iop)(x, y)

    return rule


def _int_div_guard(b, x, y, dtype):
    """A divisor safe for sdiv/udiv: 1 where y == 0 (and for INT_MIN / -1)."""
    zero = b.icmp("eq", y, _const(b, 0, dtype))
    bad = zero
    if _is_signed(dtype):
        lo = -(1 << (_bits(dtype) - 1))
        ovf = b.and_(b.icmp("eq", x, _const(b, lo, dtype)), b.icmp("eq", y, _const(b, -1, dtype)))
        bad = b.or_(zero, ovf)
    return zero, b.select(bad, _const(b, 1, dtype), y)


def _div(b, x, y, *, dtype, **_):
    if _is_float(dtype):
        return b.fdiv(x, y)
    # Toward zero; x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN (x / 1 gives it).
    zero, ys = _int_div_guard(b, x, y, dtype)
    q = b.sdiv(x, ys) if _is_signed(dtype) else b.udiv(x, ys)
    return b.select(zero, _const(b, -1, dtype), q)


def _rem(b, x, y, *, dtype, **_):
    if _is_float(dtype):
        return b.frem(x, y)  # C fmod: exact; a libm call on the CPU
    # Dividend's sign; x % 0 = x; INT_MIN % -1 = 0 (x % 1 gives it).
    zero, ys = _int_div_guard(b, x, y, dtype)
    r = b.srem(x, ys) if _is_signed(dtype) else b.urem(x, ys)
    return b.select(zero, x, r)


def _square(b, x, *, dtype, **_):
    return b.fmul(x, x) if _is_float(dtype) else b.mul(x, x)


def _abs(b, x, *, dtype, **_):
    if _is_float(dtype):
        return b.fabs(x)
    if not _is_signed(dtype):
        return x
    return b.select(b.icmp("slt", x, _const(b, 0, dtype)), b.sub(_const(b, 0, dtype), x), x)


def _sign(b, x, *, dtype, **_):
    if _is_float(dtype):
        one, zero = _const(b, 1.0, dtype), _const(b, 0.0, dtype)
        out = b.select(b.fcmp("olt", x, zero), _const(b, -1.0, dtype), zero)
        out = b.select(b.fcmp("ogt", x, zero), one, out)
        return b.select(b.fcmp("uno", x, x), x, out)
    t = _ty(b, dtype)
    zero = _const(b, 0, dtype)
    if not _is_signed(dtype):
        return b.zext(b.icmp("ne", x, zero), t)
    return b.sub(b.zext(b.icmp("sgt", x, zero), t), b.zext(b.icmp("slt", x, zero), t))


def _is_finite(b, x, *, dtype, **_):
    return b.fcmp("olt", b.fabs(x), _const(b, float("inf"), dtype))


def _signbit(b, x, *, dtype, **_):
    # copysign reads the sign bit, a NaN's too (a comparison cannot see it).
    return b.fcmp("olt", b.copysign(_const(b, 1.0, dtype), x), _const(b, 0.0, dtype))


def _not(b, x, *, dtype, **_):
    return b.xor(x, _const(b, -1, dtype))  # bool: xor with true


def _intrinsic(name):
    def rule(b, x, **_):
        return getattr(b, name)(x)

    return rule


def _math(name):
    fn = mathlib.FUNCTIONS[name]

    def rule(b, x, **_):
        return fn(b, x)

    return rule


def _ipow_unrolled(b, x, y, dtype):
    """x ** y for integer x and y >= 0, square-and-multiply over every bit of y (wraps)."""
    one = _const(b, 1, dtype)
    r, base = one, x
    for bit in range(_bits(dtype)):
        mask = _const(b, 1 << bit, dtype)
        on = b.icmp("ne", b.and_(y, mask), _const(b, 0, dtype))
        r = b.select(on, b.mul(r, base), r)
        if bit + 1 < _bits(dtype):
            base = b.mul(base, base)
    return r


def _pow(b, x, y, *, dtype, **_):
    if _is_float(dtype):
        return mathlib.pow(b, x, y)
    r = _ipow_unrolled(b, x, y, dtype)
    if not _is_signed(dtype):
        return r
    # A negative exponent: 0, except 1 ** y = 1 and (-1) ** y = +-1 (XLA, the numpy impl).
    one, zero = _const(b, 1, dtype), _const(b, 0, dtype)
    minus_one = _const(b, -1, dtype)
    odd = b.icmp("ne", b.and_(y, one), zero)
    small = b.select(
        b.icmp("eq", x, one),
        one,
        b.select(b.icmp("eq", x, minus_one), b.select(odd, minus_one, one), zero),
    )
    return b.select(b.icmp("slt", y, zero), small, r)


def _integer_pow(b, x, *, dtype, y, **_):
    mul = b.fmul if _is_float(dtype) else b.mul
    n = abs(int(y))
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
    if result is None:
        result = _const(b, 1, dtype)
    if y < 0:
        result = b.fdiv(_const(b, 1.0, dtype), result)
    return result


def _minmax(is_max: bool):
    def rule(b, x, y, *, dtype, **_):
        if _is_bool(dtype):
            return b.or_(x, y) if is_max else b.and_(x, y)
        if _is_float(dtype):
            # numpy's maximum: NaN propagates; on a tie the second operand (x86 maxps).
            pick = b.fcmp("ogt" if is_max else "olt", x, y)
            return b.select(b.or_(pick, b.fcmp("uno", x, x)), x, y)
        pred = ("sgt" if is_max else "slt") if _is_signed(dtype) else ("ugt" if is_max else "ult")
        return b.select(b.icmp(pred, x, y), x, y)

    return rule


_max, _min = _minmax(True), _minmax(False)


def _clamp(b, lo, x, hi, *, dtype, **kw):
    return _min(b, _max(b, x, lo, dtype=dtype), hi, dtype=dtype)


def _width(v):
    from .builder import width

    return width(v.type)


def _nextafter(b, x, y, *, dtype, **_):
    from .builder import f16, f32, i16, i32

    name = np.dtype(dtype).name
    zero = b.const_like(0.0, x)
    if name in ("float16", "bfloat16"):
        # Step in the narrow format's bits; the f32 values are exact narrow values.
        if name == "float16":
            xb = b.bitcast(b.fptrunc(x, f16), i16)
        else:
            xb = b.trunc(b.lshr(b.bitcast(x, i32), b.const(16, i32)), i16)
        it, nbits = i16, 16
    else:
        nbits = _width(x)
        from .builder import int_type

        it = int_type(nbits)
        xb = b.bitcast(x, it)
    up = b.xor(b.fcmp("olt", x, y), b.fcmp("ogt", x, zero))
    nb = b.add(xb, b.select(up, b.const(-1, it), b.const(1, it)))
    # From +-0: the smallest subnormal with y's sign.
    y_neg = b.fcmp("olt", b.copysign(b.const_like(1.0, y), y), zero)
    sign = b.const(1 << (nbits - 1), it)
    tiny = b.select(y_neg, b.or_(sign, b.const(1, it)), b.const(1, it))
    nb = b.select(b.fcmp("oeq", x, zero), tiny, nb)
    if name == "float16":
        out = b.fpext(b.bitcast(nb, f16), f32)
    elif name == "bfloat16":
        out = b.bitcast(b.shl(b.zext(nb, i32), b.const(16, i32)), f32)
    else:
        out = b.bitcast(nb, x.type)
    out = b.select(b.fcmp("oeq", x, y), y, out)
    return b.select(b.fcmp("uno", x, y), b.const_like(float("nan"), x), out)


def _bitwise(op):
    def rule(b, x, y, **_):
        return getattr(b, op)(x, y)

    return rule


def _shift(kind):
    def rule(b, x, y, *, dtype, **_):
        n = _bits(dtype)
        zero = _const(b, 0, dtype)
        ok = b.icmp("ult", y, _const(b, n, dtype))  # unsigned: negative amounts are huge
        if kind == "left":
            return b.select(ok, b.shl(x, b.select(ok, y, zero)), zero)
        if kind == "logical":
            return b.select(ok, b.lshr(x, b.select(ok, y, zero)), zero)
        # Arithmetic: out-of-range amounts shift by n - 1 (all sign bits).
        return b.ashr(x, b.select(ok, y, _const(b, n - 1, dtype)))

    return rule


_FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_ICMP_S = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_ICMP_U = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def _compare(name):
    def rule(b, x, y, *, dtype, **_):
        if _is_float(dtype):
            return b.fcmp(_FCMP[name], x, y)
        return b.icmp((_ICMP_S if _is_signed(dtype) else _ICMP_U)[name], x, y)

    return rule


def _select_n(b, which, *cases, dtype, **_):
    if len(cases) == 1:
        return cases[0]
    from .builder import i1, i32

    if which.type == i1:
        return b.select(which, cases[1], cases[0])
    # int32 selector, clipped into range as numpy's choose(mode="clip").
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = b.select(b.icmp("sle", which, b.const(i, i32)), cases[i], out)
    return out


def _round_to_odd_f32(b, x):
    """float64 -> float32 rounded to odd: a later rounding to float16/bfloat16 is then
    correctly rounded (no double rounding)."""
    from .builder import f32, f64, i32

    t = b.fptrunc(x, f32)
    back = b.fpext(t, f64)
    exact = b.fcmp("oeq", back, x)
    tb = b.bitcast(t, i32)
    # Toward zero: one step down in magnitude where rounding went away from zero.
    away = b.fcmp("ogt", b.fabs(back), b.fabs(x))
    tz = b.select(away, b.sub(tb, b.const(1, i32)), tb)
    odd = b.bitcast(b.or_(tz, b.const(1, i32)), f32)
    keep = b.or_(exact, b.fcmp("uno", x, x))
    return b.select(keep, t, b.select(b.fcmp("olt", b.fabs(back), b.const(3.4e38, f64)), odd, t))


def _convert(b, x, *, dtype, new_dtype, **_):
    from .builder import f32, f64, reg_type

    src, dst = np.dtype(dtype), np.dtype(new_dtype)
    if src == dst:
        return x
    t = reg_type(dst)
    if _is_bool(dst):
        if _is_float(src):
            return b.fcmp("une", x, b.const_like(0.0, x))  # NaN is True
        return b.icmp("ne", x, b.const_like(0, x))
    if _is_bool(src):
        return b.uitofp(x, t) if _is_float(dst) else b.zext(x, t)
    if _is_float(src) and _is_float(dst):
        if x.type == t:
            return x  # same register type (narrow floats are rounded by the template)
        if t == f64:
            return b.fpext(x, f64)
        if dst.itemsize < 4:  # float64 -> float16/bfloat16, via float32 rounded to odd
            return _round_to_odd_f32(b, x)
        return b.fptrunc(x, f32)
    if _is_float(dst):  # integer -> float
        return b.sitofp(x, t) if _is_signed(src) else b.uitofp(x, t)
    if _is_float(src):
        # Toward zero, saturating as XLA: NaN -> 0, out of range -> the min or max (the
        # eager impl's rule); plain fptosi/fptoui give poison there.
        kind = "fptosi" if _is_signed(dst) else "fptoui"
        return b.intrinsic(f"llvm.{kind}.sat.i{_bits(dst)}.f{_width(x)}", [x], t)
    return b.int_resize(x, t, signed=_is_signed(src))


def _identity(b, x, **_):
    return x


def _zero(b, x, *, dtype, **_):
    return _const(b, 0, dtype)


def _iota(b, index, *, out_dtype, **_):
    return _convert(b, index, dtype=np.dtype(np.int64), new_dtype=out_dtype)


lowering_rules.update({
    "neg": _neg, "sign": _sign, "floor": _intrinsic("floor"), "ceil": _intrinsic("ceil"),
    "round": _intrinsic("rint"), "is_finite": _is_finite, "signbit": _signbit,
    "sqrt": _intrinsic("sqrt"),
    "abs": _abs, "not": _not, "square": _square,
    "add": _binary("fadd", "add"), "sub": _binary("fsub", "sub"),
    "mul": _binary("fmul", "mul"), "div": _div, "rem": _rem, "pow": _pow,
    "atan2": lambda b, y, x, **_: mathlib.atan2(b, y, x),
    "max": _max, "min": _min, "nextafter": _nextafter,
    "and": _bitwise("and_"), "or": _bitwise("or_"), "xor": _bitwise("xor"),
    "shift_left": _shift("left"), "shift_right_logical": _shift("logical"),
    "shift_right_arithmetic": _shift("arithmetic"),
    "integer_pow": _integer_pow, "select_n": _select_n, "clamp": _clamp,
    "convert_element_type": _convert, "copy": _identity, "stop_gradient": _identity,
    "iota": _iota,
    # The parts of a real operand (complex ones: ``rules_complex``).
    "real": _identity, "imag": _zero, "conj": _identity,
})  # fmt: skip
lowering_rules.update({name: _math(name) for name in mathlib.FUNCTIONS})
lowering_rules.update({name: _compare(name) for name in _FCMP})


# ------------------------------------------------------------------ reductions
class Reducer(NamedTuple):
    """A reduction's combiner: ``init`` state, ``step`` per element, ``final`` value;
    ``blocked`` where rounding makes the order matter (float sums and products): the
    kernel then accumulates a long row in blocks, folding each block's partial in with
    ``step`` (``codegen.ACCUMULATE_BLOCKS``), or with ``combine(b, state, partial,
    dtype)`` where the partial is not one value (a complex sum's two parts)."""

    init: object
    step: object
    final: object
    blocked: bool = False
    combine: object = None

    def fold(self, b, state, part, *, dtype):
        """``state`` with a block's partial state ``part`` folded in."""
        if self.combine is not None:
            return self.combine(b, state, part, dtype)
        return self.step(b, state, part[0], None, dtype)


def _flags():
    from .builder import REDUCE_FLAGS

    return REDUCE_FLAGS


def _acc_init(value_float, value_int, value_bool):
    def init(b, dtype):
        if _is_bool(dtype):
            return [_const(b, value_bool, dtype)]
        return [_const(b, value_float if _is_float(dtype) else value_int, dtype)]

    return init


def _sum_step(b, st, x, idx, dtype):
    if _is_bool(dtype):
        return [b.or_(st[0], x)]
    return [b.fadd(st[0], x, _flags()) if _is_float(dtype) else b.add(st[0], x)]


def _prod_step(b, st, x, idx, dtype):
    if _is_bool(dtype):
        return [b.and_(st[0], x)]
    return [b.fmul(st[0], x, _flags()) if _is_float(dtype) else b.mul(st[0], x)]


def _first(b, st, dtype, out_dtype):
    return st[0]


def _extreme_init(is_max):
    def init(b, dtype):
        if _is_bool(dtype):
            return [_const(b, 0 if is_max else 1, dtype)]
        if _is_float(dtype):
            return [_const(b, float("-inf") if is_max else float("inf"), dtype)]
        info = np.iinfo(dtype)
        return [_const(b, info.min if is_max else info.max, dtype)]

    return init


def _extreme_step(is_max):
    def step(b, st, x, idx, dtype):
        if _is_float(dtype):
            # llvm.maximum propagates NaN and vectorizes; maxnum plus a seen-NaN flag
            # kept the loop scalar (measured: the softmax max pass 3x slower).
            return [b.maximum(st[0], x) if is_max else b.minimum(st[0], x)]
        return [(_max if is_max else _min)(b, st[0], x, dtype=dtype)]

    return step


def _arg_init(is_max):
    def init(b, dtype):
        from .builder import i64

        return [_extreme_init(is_max)(b, dtype)[0], b.const(0, i64)]

    return init


def _arg_step(is_max):
    def step(b, st, x, idx, dtype):
        best, at = st
        if _is_float(dtype):
            better = b.fcmp("ogt" if is_max else "olt", x, best)
            # The first NaN wins and is never replaced (numpy's argmax/argmin).
            nan_first = b.and_(b.fcmp("uno", x, x), b.fcmp("ord", best, best))
            better = b.or_(better, nan_first)
        elif _is_bool(dtype):
            better = b.icmp("ugt" if is_max else "ult", x, best)
        else:
            s = _is_signed(dtype)
            better = b.icmp(
                ("sgt" if is_max else "slt") if s else ("ugt" if is_max else "ult"), x, best
            )
        return [b.select(better, x, best), b.select(better, idx, at)]

    return step


def _arg_final(b, st, dtype, out_dtype):
    return _convert(b, st[1], dtype=np.dtype(np.int64), new_dtype=out_dtype)


def _logical(is_and):
    def init(b, dtype):
        return [_const(b, 1 if is_and else 0, dtype)]

    def step(b, st, x, idx, dtype):
        return [b.and_(st[0], x) if is_and else b.or_(st[0], x)]

    return Reducer(init, step, _first)


reduction_rules: dict = {
    "reduce_sum": Reducer(_acc_init(0.0, 0, 0), _sum_step, _first, blocked=True),
    "reduce_prod": Reducer(_acc_init(1.0, 1, 1), _prod_step, _first, blocked=True),
    "reduce_max": Reducer(_extreme_init(True), _extreme_step(True), _first),
    "reduce_min": Reducer(_extreme_init(False), _extreme_step(False), _first),
    "reduce_and": _logical(True),
    "reduce_or": _logical(False),
    "argmax": Reducer(_arg_init(True), _arg_step(True), _arg_final),
    "argmin": Reducer(_arg_init(False), _arg_step(False), _arg_final),
}

complex_reduction_rules: dict = {n: Reducer(*parts) for n, parts in COMPLEX_REDUCERS.items()}

KERNEL_PRIMITIVES = (
    frozenset(lowering_rules)
    | frozenset(reduction_rules)
    | frozenset(complex_rules)
    | frozenset(complex_reduction_rules)
)
"""Names of the primitives fused kernels compute (on some dtypes: ``rules_complex.
fuses_complex`` says which on complex ones). Gather/scatter*, the cumulative scans
and reduce_window_* have kernel templates of their own (``templates.py``); the others
(dot_general, conv_general_dilated, sort, dynamic_slice, lgamma, digamma, ...) are
library calls of the front-end."""
