"""Cases of the complex primitives (``real``, ``imag``, ``conj``, ``complex``) and of the
elementwise primitives on complex64/complex128 operands (see tests/cases/__init__.py).

References compute in complex128 with numpy's principal branches and round to the
operand dtype. Smooth cases draw values away from each function's branch cuts (finite
differences would straddle them): real parts positive for ``log``/``sqrt``/``pow``,
inside (-1, 1) for ``asin``/``acos``/``atanh``, above 1 for ``acosh``, imaginary parts
inside (-1, 1) for ``atan``/``asinh``. The jvp contract runs them in complex128 with
complex tangents; the transpose contract pairs values by ``Re(sum(a * b))``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt
from fntorch.ops import _prims_elementwise as ew
from fntorch.ops import _prims_linalg as la
from fntorch.ops import _prims_reduce as r
from fntorch.ops import _prims_structural as ps

from . import Case, array, broadcastable_shapes, shapes
from .linalg import _dot_draw, _dot_general_ref
from .reduce import _cumsum_ref, _prod_ref, _reduce_draw, _scan_draw, _sum_ref
from .structural import _convert_draw

COMPLEX = (dt.complex64, dt.complex128)
REAL_AND_COMPLEX = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def _c128(fn, real_out=False):
    """Reference computed in complex128, rounded to the operand's dtype (or its real
    dtype, for functions with real results)."""

    def ref(*args, **params):
        dtype = np.asarray(args[0]).dtype
        wide = np.complex128 if dt.is_complex(dtype) else np.float64
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*[np.asarray(a, wide) for a in args], **params))
        if out.dtype == np.bool_:
            return out
        target = dt.real_dtype(dtype) if real_out else dtype
        return out.real.astype(target) if not dt.is_complex(target) else out.astype(target)

    return ref


def _unary(lo=-2.0, hi=2.0, imag=(-1.0, 1.0), special=False):
    def draw(data, dtype):
        x = array(data, data.draw(shapes(0, 3, 0, 4), label="shape"), dtype, lo=lo, hi=hi,
                  special=special, imag=imag)  # fmt: skip
        return [x], {}

    return draw


def _nary(n, ranges=None, special=False):
    ranges = ranges or [(-2.0, 2.0)] * n

    def draw(data, dtype):
        out = []
        for s, (lo, hi) in zip(broadcastable_shapes(data, n), ranges):
            out.append(array(data, s, dtype, lo=lo, hi=hi, special=special))
        return out, {}

    return draw


def _complex_ref(x, y):
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    return (x.astype(dt.complex_dtype(x.dtype)) + 1j * y).astype(dt.complex_dtype(x.dtype))


def _integer_pow_draw(data, dtype):
    y = data.draw(st.integers(-3, 4), label="y")
    x = array(data, data.draw(shapes(0, 3, 0, 4), label="shape"), dtype, lo=0.3, hi=2.0)
    return [x], dict(y=y)


_SMOOTH = dict(diff_args=(0,), dtypes=COMPLEX)


def _smooth(p, fn, **draw_kw):
    return Case(p, _unary(**draw_kw), _c128(fn), name=f"{p.name}_complex", **_SMOOTH)


def _cast_draw(target):
    """Casts to ``target(dtype)``, the same precision: finite differences stay exact."""

    def draw(data, dtype):
        x = array(data, data.draw(shapes(0, 3, 0, 4), label="shape"), dtype)
        return [x], dict(new_dtype=target(dtype))

    return draw


def _convert_ref(x, *, new_dtype):
    x = np.asarray(x)
    return (x.real if dt.is_complex(x.dtype) and not dt.is_complex(new_dtype) else x).astype(
        new_dtype
    )


CASES = [
    # Reductions, scans, products and casts of complex values (JAX's transposes: no
    # conjugation anywhere).
    Case(r.reduce_sum_p, _reduce_draw(), _sum_ref, COMPLEX, name="reduce_sum_complex",
         diff_args=(0,), linear_args=(0,)),
    Case(r.reduce_prod_p, _reduce_draw("prod", max_side=3), _prod_ref, COMPLEX,
         name="reduce_prod_complex", diff_args=(0,)),
    Case(r.cumsum_p, _scan_draw(), _cumsum_ref, COMPLEX, name="cumsum_complex",
         diff_args=(0,), linear_args=(0,)),
    Case(la.dot_general_p, _dot_draw(), _dot_general_ref, COMPLEX, diff_args=(0, 1),
         linear_args=(0,), extra={"const_args": (1,)}, atol=1e-4, name="dot_general_complex"),
    Case(la.dot_general_p, _dot_draw(), _dot_general_ref, COMPLEX, linear_args=(1,),
         extra={"const_args": (0,)}, atol=1e-4, name="dot_general_complex_rhs"),
    Case(ps.convert_element_type_p, _cast_draw(dt.complex_dtype), _convert_ref,
         dtypes=(dt.float32, dt.float64), diff_args=(0,), linear_args=(0,),
         name="convert_element_type_to_complex"),
    Case(ps.convert_element_type_p, _cast_draw(dt.real_dtype), _convert_ref,
         dtypes=COMPLEX, diff_args=(0,), linear_args=(0,),
         name="convert_element_type_complex_to_real"),
    Case(ps.convert_element_type_p, _convert_draw(COMPLEX + (dt.float16, dt.int32)),
         _convert_ref, dtypes=COMPLEX, name="convert_element_type_complex_any"),
    # The parts and their inverse, on complex and real operands.
    Case(
        ew.real_p, _unary(), _c128(np.real, real_out=True), dtypes=REAL_AND_COMPLEX,
        diff_args=(0,), linear_args=(0,),
    ),
    Case(
        ew.imag_p, _unary(), _c128(np.imag, real_out=True), dtypes=REAL_AND_COMPLEX,
        diff_args=(0,), linear_args=(0,),
    ),
    Case(
        ew.conj_p, _unary(), _c128(np.conjugate), dtypes=REAL_AND_COMPLEX, diff_args=(0,),
        linear_args=(0,),
    ),
    Case(
        ew.complex_p, _nary(2), _complex_ref, dtypes=(dt.float32, dt.float64),
        diff_args=(0, 1), linear_args=(0, 1),
    ),
    # Holomorphic functions, away from their branch cuts.
    _smooth(ew.exp_p, np.exp),
    _smooth(ew.expm1_p, np.expm1),
    _smooth(ew.log_p, np.log, lo=0.2, hi=3.0),
    _smooth(ew.log1p_p, np.log1p, lo=-0.5, hi=3.0),
    _smooth(ew.sqrt_p, np.sqrt, lo=0.2, hi=3.0),
    _smooth(ew.rsqrt_p, lambda x: 1 / np.sqrt(x), lo=0.2, hi=3.0),
    _smooth(ew.sin_p, np.sin),
    _smooth(ew.cos_p, np.cos),
    _smooth(ew.tan_p, np.tan, lo=-1.0, hi=1.0),
    _smooth(ew.sinh_p, np.sinh),
    _smooth(ew.cosh_p, np.cosh),
    _smooth(ew.tanh_p, np.tanh, lo=-1.0, hi=1.0, imag=(-0.7, 0.7)),
    _smooth(ew.asin_p, np.arcsin, lo=-0.8, hi=0.8),
    _smooth(ew.acos_p, np.arccos, lo=-0.8, hi=0.8),
    _smooth(ew.atan_p, np.arctan, imag=(-0.8, 0.8)),
    _smooth(ew.asinh_p, np.arcsinh, imag=(-0.8, 0.8)),
    _smooth(ew.acosh_p, np.arccosh, lo=1.2, hi=3.0),
    _smooth(ew.atanh_p, np.arctanh, lo=-0.8, hi=0.8),
    _smooth(ew.square_p, np.square),
    Case(
        ew.neg_p, _unary(), _c128(np.negative), name="neg_complex", dtypes=COMPLEX,
        diff_args=(0,), linear_args=(0,),
    ),
    Case(ew.abs_p, _unary(lo=0.2), _c128(np.abs, real_out=True), name="abs_complex", **_SMOOTH),
    Case(ew.sign_p, _unary(special=True), _c128(np.sign), name="sign_complex", dtypes=COMPLEX),
    Case(
        ew.is_finite_p, _unary(special=True), _c128(np.isfinite), name="is_finite_complex",
        dtypes=COMPLEX, exact=True,
    ),
    Case(
        ew.exp_p, _unary(special=True), _c128(np.exp), name="exp_complex_special",
        dtypes=COMPLEX,
    ),
    Case(
        ew.integer_pow_p, _integer_pow_draw, _c128(lambda x, y: x ** float(y)),
        name="integer_pow_complex", **_SMOOTH,
    ),
    # Binary.
    Case(
        ew.add_p, _nary(2), _c128(np.add), name="add_complex", dtypes=COMPLEX,
        diff_args=(0, 1), linear_args=(0, 1),
    ),
    Case(
        ew.sub_p, _nary(2), _c128(np.subtract), name="sub_complex", dtypes=COMPLEX,
        diff_args=(0, 1), linear_args=(0, 1),
    ),
    Case(
        ew.mul_p, _nary(2), _c128(np.multiply), name="mul_complex", dtypes=COMPLEX,
        diff_args=(0, 1), linear_args=(0,),
    ),
    Case(
        ew.div_p, _nary(2, [(-2.0, 2.0), (0.5, 2.0)]), _c128(np.divide), name="div_complex",
        dtypes=COMPLEX, diff_args=(0, 1), linear_args=(0,),
    ),
    Case(
        ew.pow_p, _nary(2, [(0.3, 2.0), (-1.0, 1.0)]), _c128(np.power), name="pow_complex",
        dtypes=COMPLEX, diff_args=(0, 1),
    ),
    Case(
        ew.eq_p, _nary(2, special=True), _c128(np.equal), name="eq_complex", dtypes=COMPLEX,
        exact=True,
    ),
    Case(
        ew.ne_p, _nary(2, special=True), _c128(np.not_equal), name="ne_complex",
        dtypes=COMPLEX, exact=True,
    ),
]  # fmt: skip
