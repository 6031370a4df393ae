"""Elementwise primitives and their abstract-eval rules.

Binary and n-ary elementwise primitives take operands of one dtype and broadcast with
numpy's rules (ranks may differ). Keeping broadcasting inside the primitive saves a
``broadcast_in_dim`` per eager op; the rules that need it (transpose, batching) undo it
with ``unbroadcast``.
"""

from __future__ import annotations

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Primitive, ShapedArray, abstract_eval_rules


def broadcast_shapes(name: str, *shapes) -> tuple:
    """numpy's broadcasting of ``shapes``; ValueError naming ``name`` and the shapes.

    >>> broadcast_shapes("add", (2, 1), (3,))
    (2, 3)
    """
    # Eager dispatch runs this on every op: the common cases come first, no generators.
    first = shapes[0]
    if len(shapes) == 2:
        other = shapes[1]
        if first == other or not other:
            return tuple(first)
        if not first:
            return tuple(other)
    nd = 0
    for s in shapes:
        if len(s) > nd:
            nd = len(s)
    out = [1] * nd
    for s in shapes:
        off = nd - len(s)
        for k, d in enumerate(s):
            if d != 1:
                size = out[off + k]
                if size != 1 and d != size:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ValueError(f"{name}: shapes {listed} cannot be broadcast together")
                out[off + k] = d
    return tuple(out)


def _weak(*xs) -> bool:
    for x in xs:
        # Buffers are never weak; skipping getattr on them keeps eager dispatch fast.
        if type(x) is np.ndarray or isinstance(x, np.generic):
            return False
        if not getattr(x, "weak_type", False):
            return False
    return True


def _dtype_error(name, what, dtype):
    return TypeError(f"{name}: expected {what}, got {dtype}")


# Kinds of dtype an operation accepts: the accepted dtypes and how an error names them.
_ANY = "any"
_REAL = "real"  # any dtype but complex: the ordered ones
_NUM = "numeric"  # int, float or complex
_REALNUM = "real numeric"  # int or float
_FLOAT = "float"
_INEXACT = "inexact"  # float or complex
_INT = "integer"
_INTBOOL = "integer or bool"
_KINDS = {
    _ANY: (frozenset(dt.all_dtypes), "any dtype"),
    _REAL: (frozenset(dt.real_dtypes), "a real (not complex) dtype"),
    _NUM: (
        frozenset(dt.integer_dtypes + dt.float_dtypes + dt.complex_dtypes),
        "a numeric (integer, float or complex) dtype",
    ),
    _REALNUM: (
        frozenset(dt.integer_dtypes + dt.float_dtypes),
        "a real numeric (integer or float) dtype",
    ),
    _FLOAT: (frozenset(dt.float_dtypes), "a real floating-point dtype"),
    _INEXACT: (
        frozenset(dt.float_dtypes + dt.complex_dtypes),
        "a floating-point or complex dtype",
    ),
    _INT: (frozenset(dt.integer_dtypes), "an integer dtype"),
    _INTBOOL: (frozenset(dt.integer_dtypes + dt.bool_dtypes), "an integer or bool dtype"),
}


def _check_kind(name: str, kind: str, dtype):
    allowed, what = _KINDS[kind]
    if dtype not in allowed:
        raise _dtype_error(name, what, dtype)


def unop(name: str, kind: str = _NUM, result_dtype=None) -> Primitive:
    """A unary primitive over ``kind``; ``result_dtype`` a dtype, or a function of the
    operand's dtype (``abs`` of a complex is real)."""
    p = Primitive(name)

    allowed, what = _KINDS[kind]

    def abstract(x):
        dtype = x.dtype
        if dtype not in allowed:
            raise _dtype_error(name, what, dtype)
        if callable(result_dtype):
            out = result_dtype(dtype)
            return ShapedArray(x.shape, out, _weak(x) and out == dtype)
        if result_dtype is not None:
            return ShapedArray(x.shape, result_dtype)
        return ShapedArray(x.shape, dtype, _weak(x))

    abstract_eval_rules[p] = abstract
    return p


def binop(name: str, kind: str = _NUM, result_dtype=None) -> Primitive:
    p = Primitive(name)

    allowed, what = _KINDS[kind]

    def abstract(x, y):
        dtype = x.dtype
        if dtype != y.dtype:
            raise TypeError(f"{name}: operands must have the same dtype, got {dtype} and {y.dtype}")
        if dtype not in allowed:
            raise _dtype_error(name, what, dtype)
        xs, ys = x.shape, y.shape
        shape = xs if xs == ys else broadcast_shapes(name, xs, ys)
        if callable(result_dtype):
            return ShapedArray(shape, result_dtype(dtype))
        if result_dtype is not None:
            return ShapedArray(shape, result_dtype)
        return ShapedArray(shape, dtype, _weak(x, y))

    abstract_eval_rules[p] = abstract
    return p


# ---------------------------------------------------------------------- unary
# The complex dtypes go where numpy's complex ufunc is the function the Array API
# standard defines (principal branches); the rest stay real.
neg_p = unop("neg")
sign_p = unop("sign")  # z / |z| for complex (the standard's, numpy 2's)
floor_p = unop("floor", _FLOAT)
ceil_p = unop("ceil", _FLOAT)
round_p = unop("round", _FLOAT)  # half to even, as the Array API's round
is_finite_p = unop("is_finite", _INEXACT, dt.bool_)
signbit_p = unop("signbit", _FLOAT, dt.bool_)  # the sign bit, NaNs' included
exp_p = unop("exp", _INEXACT)
exp2_p = unop("exp2", _FLOAT)
log_p = unop("log", _INEXACT)
log1p_p = unop("log1p", _INEXACT)
expm1_p = unop("expm1", _INEXACT)
tanh_p = unop("tanh", _INEXACT)
logistic_p = unop("logistic", _FLOAT)
sin_p = unop("sin", _INEXACT)
cos_p = unop("cos", _INEXACT)
tan_p = unop("tan", _INEXACT)
asin_p = unop("asin", _INEXACT)
acos_p = unop("acos", _INEXACT)
atan_p = unop("atan", _INEXACT)
sinh_p = unop("sinh", _INEXACT)
cosh_p = unop("cosh", _INEXACT)
asinh_p = unop("asinh", _INEXACT)
acosh_p = unop("acosh", _INEXACT)
atanh_p = unop("atanh", _INEXACT)
sqrt_p = unop("sqrt", _INEXACT)
rsqrt_p = unop("rsqrt", _INEXACT)
cbrt_p = unop("cbrt", _FLOAT)
abs_p = unop("abs", _NUM, dt.real_dtype)
not_p = unop("not", _INTBOOL)  # logical not on bool, bitwise not on integers
erf_p = unop("erf", _FLOAT)
erf_inv_p = unop("erf_inv", _FLOAT)
lgamma_p = unop("lgamma", _FLOAT)
digamma_p = unop("digamma", _FLOAT)
square_p = unop("square")
# The parts of a complex number; of a real one, itself and zeros (real, imag), itself
# (conj). ``complex`` builds one from two real operands of one float dtype.
real_p = unop("real", _NUM, dt.real_dtype)
imag_p = unop("imag", _NUM, dt.real_dtype)
conj_p = unop("conj", _NUM)

# ---------------------------------------------------------------------- binary
add_p = binop("add")
sub_p = binop("sub")
mul_p = binop("mul")
div_p = binop("div")  # floats: true division; integers: rounds toward zero (C, lax)
rem_p = binop("rem", _REALNUM)  # sign of the dividend (C fmod, lax)
pow_p = binop("pow")
atan2_p = binop("atan2", _FLOAT)
max_p = binop("max", _REAL)
min_p = binop("min", _REAL)
nextafter_p = binop("nextafter", _FLOAT)
and_p = binop("and", _INTBOOL)
or_p = binop("or", _INTBOOL)
xor_p = binop("xor", _INTBOOL)
shift_left_p = binop("shift_left", _INT)
shift_right_arithmetic_p = binop("shift_right_arithmetic", _INT)
shift_right_logical_p = binop("shift_right_logical", _INT)
eq_p = binop("eq", _ANY, dt.bool_)
ne_p = binop("ne", _ANY, dt.bool_)
lt_p = binop("lt", _REAL, dt.bool_)
le_p = binop("le", _REAL, dt.bool_)
gt_p = binop("gt", _REAL, dt.bool_)
ge_p = binop("ge", _REAL, dt.bool_)
complex_p = binop("complex", _FLOAT, dt.complex_dtype)

# ------------------------------------------------------------------ integer_pow
integer_pow_p = Primitive("integer_pow")


def _integer_pow_abstract(x, *, y: int):
    _check_kind("integer_pow", _NUM, x.dtype)
    if y < 0 and not dt.is_inexact(x.dtype):
        raise ValueError(f"integer_pow: integers cannot be raised to the negative power {y}")
    return ShapedArray(x.shape, x.dtype, _weak(x))


abstract_eval_rules[integer_pow_p] = _integer_pow_abstract


# ---------------------------------------------------------------------- select_n, clamp
select_n_p = Primitive("select_n")


def _select_n_abstract(which, *cases):
    if not cases:
        raise ValueError("select_n: expected at least one case")
    if which.dtype != dt.bool_ and which.dtype != dt.int32:
        raise TypeError(f"select_n: the selector must be bool or int32, got {which.dtype}")
    if which.dtype == dt.bool_ and len(cases) > 2:
        raise ValueError(f"select_n: a bool selector picks from at most 2 cases, got {len(cases)}")
    d = cases[0].dtype
    for c in cases[1:]:
        if c.dtype != d:
            raise TypeError(f"select_n: cases must share one dtype, got {d} and {c.dtype}")
    shape = broadcast_shapes("select_n", which.shape, *(c.shape for c in cases))
    return ShapedArray(shape, d, _weak(*cases))


abstract_eval_rules[select_n_p] = _select_n_abstract

clamp_p = Primitive("clamp")


def _clamp_abstract(lo, x, hi):
    if not (lo.dtype == x.dtype == hi.dtype):
        raise TypeError(
            f"clamp: operands must share one dtype, got {lo.dtype}, {x.dtype} and {hi.dtype}"
        )
    _check_kind("clamp", _REALNUM, x.dtype)
    shape = broadcast_shapes("clamp", lo.shape, x.shape, hi.shape)
    return ShapedArray(shape, x.dtype, _weak(x))


abstract_eval_rules[clamp_p] = _clamp_abstract


# --------------------------------------------------------------- lax-style wrappers


def _lift_scalar(x, like=None):
    """A Python scalar as a numpy scalar: ``like``'s dtype if given, else its default."""
    dtype = like.dtype if like is not None else dt.dtype_and_weak(x)[0]
    return np.asarray(x, dtype=dtype)[()]


_PY_SCALARS = (bool, int, float, complex)


def _is_py_scalar(x) -> bool:
    # By exact type: numpy's float64 subclasses float but is a typed operand.
    return type(x) in _PY_SCALARS


def _bin(p, name=None, example="np.ones(3, np.float32), 2.0"):
    name = name or p.name

    def f(x, y):
        if _is_py_scalar(x):
            x = _lift_scalar(x, None if _is_py_scalar(y) else y)
        if _is_py_scalar(y):
            y = _lift_scalar(y, x)
        return p.bind(x, y)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"The ``{p.name}`` primitive; a Python scalar operand takes the other's dtype.\n\n"
        f"    >>> import numpy as np\n"
        f"    >>> {name}({example}).shape\n"
        f"    (3,)\n"
    )
    return f


def _un(p, name=None, example="np.ones(3, np.float32)"):
    name = name or p.name

    def f(x):
        if _is_py_scalar(x):
            x = _lift_scalar(x)
        return p.bind(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"The ``{p.name}`` primitive, elementwise.\n\n"
        f"    >>> import numpy as np\n"
        f"    >>> {name}({example}).shape\n"
        f"    (3,)\n"
    )
    return f


neg, sign, floor, ceil, round, is_finite, signbit = map(
    _un, (neg_p, sign_p, floor_p, ceil_p, round_p, is_finite_p, signbit_p)
)
exp, exp2, log, log1p, expm1, tanh, logistic = map(
    _un, (exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p)
)
sin, cos, tan, asin, acos, atan = map(_un, (sin_p, cos_p, tan_p, asin_p, acos_p, atan_p))
sinh, cosh, asinh, acosh, atanh = map(_un, (sinh_p, cosh_p, asinh_p, acosh_p, atanh_p))
sqrt, rsqrt, cbrt, abs = map(_un, (sqrt_p, rsqrt_p, cbrt_p, abs_p))
bitwise_not = _un(not_p, "bitwise_not", "np.ones(3, np.bool_)")
erf, erf_inv, lgamma, digamma, square = map(_un, (erf_p, erf_inv_p, lgamma_p, digamma_p, square_p))
real, imag, conj = map(_un, (real_p, imag_p, conj_p))
add, sub, mul, div, rem, pow, atan2 = map(_bin, (add_p, sub_p, mul_p, div_p, rem_p, pow_p, atan2_p))
max, min, nextafter = map(_bin, (max_p, min_p, nextafter_p))
_INT_EXAMPLE = "np.ones(3, np.int32), 2"
bitwise_and = _bin(and_p, "bitwise_and", _INT_EXAMPLE)
bitwise_or = _bin(or_p, "bitwise_or", _INT_EXAMPLE)
bitwise_xor = _bin(xor_p, "bitwise_xor", _INT_EXAMPLE)
shift_left, shift_right_arithmetic, shift_right_logical = (
    _bin(p, None, _INT_EXAMPLE)
    for p in (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p)
)
eq, ne, lt, le, gt, ge = map(_bin, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
complex = _bin(complex_p, "complex", "np.ones(3, np.float32), 2.0")


def integer_pow(x, y: int):
    """``x ** y`` for a static Python int ``y`` (negative only for floats).

    >>> import numpy as np
    >>> integer_pow(np.full(2, 3.0, np.float32), 2).shape
    (2,)
    """
    if _is_py_scalar(x):
        x = _lift_scalar(x)
    if int(y) == 1:
        return x
    return integer_pow_p.bind(x, y=int(y))


def _cases_like(cases):
    """Python scalar cases take the dtype of the first tensor case."""
    like = next((c for c in cases if not _is_py_scalar(c)), None)
    return [_lift_scalar(c, like) if _is_py_scalar(c) else c for c in cases]


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is bool (False picks ``cases[0]``) or int32.

    >>> import numpy as np
    >>> select_n(np.array([True, False]), np.zeros(2, np.float32), np.ones(2, np.float32)).shape
    (2,)
    """
    if _is_py_scalar(which):
        which = np.asarray(which, np.int32 if type(which) is int else np.bool_)[()]
    return select_n_p.bind(which, *_cases_like(cases))


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (lax.select's argument order).

    >>> import numpy as np
    >>> select(np.array([True, False]), 1.0, np.zeros(2, np.float32)).shape
    (2,)
    """
    if _is_py_scalar(pred):
        pred = np.bool_(pred)
    on_false, on_true = _cases_like((on_false, on_true))
    return select_n_p.bind(pred, on_false, on_true)


def clamp(lo, x, hi):
    """``min(max(x, lo), hi)`` elementwise, broadcasting; Python scalar bounds take x's dtype.

    >>> import numpy as np
    >>> clamp(0.0, np.array([-1.0, 0.5, 2.0], np.float32), 1.0).shape
    (3,)
    """
    if _is_py_scalar(x):
        x = _lift_scalar(x, None if _is_py_scalar(lo) else lo)
    lo = _lift_scalar(lo, x) if _is_py_scalar(lo) else lo
    hi = _lift_scalar(hi, x) if _is_py_scalar(hi) else hi
    return clamp_p.bind(lo, x, hi)
