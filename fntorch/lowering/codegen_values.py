"""Element values of fused kernels: what ``codegen._Gen`` computes at one element.

``_Values`` is the part of ``_Gen`` that knows one element and not the loop nests around
it: a literal in its dtype; the load and store of every dtype (bool as ``i8``, complex as
interleaved (re, im) pairs, ``Cx`` in registers); narrow floats' rounding; a primitive's
lowering rule applied (``rules.py``, ``rules_complex.py``; float64 ``pow`` by a small
literal integer as products); a spec's expression evaluated at the current element
(``_eval``); and the byte-offset arithmetic of indices. ``codegen._Gen`` adds the entry
and the loop nests; the CUDA target's ``_GpuGen`` extends ``_Gen``, and
``templates._TGen`` borrows the loads, stores and index helpers.

A ``_Values`` reads from ``self``: ``b`` (the ``KernelBuilder``), ``B`` (the ``builder``
module, imported when a kernel is built: it imports xDSL), and for ``_apply``/``_eval``
``spec`` and the rule tables ``rules`` and ``complex_rules``; ``_Gen.__init__`` sets them.

Narrow floats: float16/bfloat16 values are float32 in registers, rounded to their
dtype after every op (so a fused chain equals the eager one, op by op); reductions over
them accumulate in float32 and round once at the end.

>>> import numpy as np
>>> from fntorch.lowering import builder
>>> v = _Values()
>>> v.b, v.B = builder.KernelBuilder(), builder
>>> (p,) = v.b.function("load_half", [builder.PTR], ret=builder.f32)
>>> v.b.ret(v._load(p, np.dtype("float16")))  # float16 in memory, float32 in registers
>>> "llvm.fpext" in str(v.b.module)
True
"""

from __future__ import annotations

import numpy as np

from .mathlib_complex import Cx
from .rules_complex import is_complex
from .spec import REDUCTIONS, _operand_dtype


# ------------------------------------------------------------------------- errors
def _unsupported(prim: str, on_complex: bool = False) -> NotImplementedError:
    what = " of complex operands" if on_complex else ""
    see = "rules_complex.fuses_complex" if on_complex else "rules.KERNEL_PRIMITIVES"
    return NotImplementedError(
        f"compile_kernel: primitive {prim!r} has no kernel lowering{what}; the fusion pass "
        f"must leave it as a library call (see fntorch.lowering.{see})"
    )


# -------------------------------------------------------------- integer powers
def _integer_exponent(op, dtype) -> int | None:
    """``n`` when ``op`` is a float64 ``pow`` by a literal integer ``n``, 0 < |n| <= 64.

    float64 pow is ``exp(y log|x|)`` (``mathlib.pow``, within its table's bound); by a
    small integer it is computed by products instead, as XLA's simplifier does, which
    C99's pow allows for integer exponents (signed zeros and infinities included):
    ``x ** 2.0`` is then exact, 9.0 where plain exp/log gave 8.999999999999998. float32
    already computes in float64, well within an ulp.
    """
    if op.prim != "pow" or np.dtype(dtype) != np.float64 or op.args[1][0] != "lit":
        return None
    y = float(op.args[1][1])
    return int(y) if y.is_integer() and 0 < abs(y) <= 64 else None


class _Values:
    """Loads, stores, literals, narrow-float rounding, rules and index arithmetic at one
    element of a kernel (see the module docstring for what it reads from ``self``)."""

    # ----------------------------------------------------- literals, loads, stores
    def _lit(self, value, dtype):
        b, B = self.b, self.B
        t = B.reg_type(dtype)
        if is_complex(dtype):
            value = complex(value)
            return Cx(b.const(value.real, t), b.const(value.imag, t))
        if dtype == np.bool_:
            return b.const(1 if bool(value) else 0, t)
        if B.is_float_type(t):
            return self._round(b.const(float(value), t), dtype)
        return b.const(int(value), t)

    def _round(self, v, dtype):
        """Rounds a float32 register value to float16/bfloat16 (and back to float32)."""
        b, B = self.b, self.B
        name = np.dtype(dtype).name
        if name == "float16":
            return b.fpext(b.fptrunc(v, B.f16), B.f32)
        if name == "bfloat16":
            return b.bitcast(b.shl(b.zext(self._bf16_bits(v), B.i32), b.const(16, B.i32)), B.f32)
        return v

    def _bf16_bits(self, v):
        """float32 -> bfloat16 bits, rounded to nearest even; NaN stays a quiet NaN."""
        b, B = self.b, self.B
        u = b.bitcast(v, B.i32)
        lsb = b.and_(b.lshr(u, b.const(16, B.i32)), b.const(1, B.i32))
        r = b.add(u, b.add(b.const(0x7FFF, B.i32), lsb))
        r = b.select(b.fcmp("uno", v, v), b.or_(u, b.const(0x400000, B.i32)), r)
        return b.trunc(b.lshr(r, b.const(16, B.i32)), B.i16)

    def _load(self, ptr, dtype):
        b, B = self.b, self.B
        name = np.dtype(dtype).name
        if is_complex(dtype):  # interleaved (re, im)
            t = B.reg_type(dtype)
            half = np.dtype(dtype).itemsize // 2
            return Cx(b.load(ptr, t), b.load(b.gep_const(ptr, half), t))
        if name == "bool":
            return b.icmp("ne", b.load(ptr, B.i8), b.const(0, B.i8))
        if name == "float16":
            return b.fpext(b.load(ptr, B.f16), B.f32)
        if name == "bfloat16":
            bits = b.zext(b.load(ptr, B.i16), B.i32)
            return b.bitcast(b.shl(bits, b.const(16, B.i32)), B.f32)
        return b.load(ptr, B.mem_type(dtype))

    def _store(self, v, ptr, dtype):
        b, B = self.b, self.B
        name = np.dtype(dtype).name
        if is_complex(dtype):
            b.store(v.re, ptr)
            b.store(v.im, b.gep_const(ptr, np.dtype(dtype).itemsize // 2))
            return
        if name == "bool":
            v = b.zext(v, B.i8)
        elif name == "float16":
            v = b.fptrunc(v, B.f16)
        elif name == "bfloat16":
            v = self._bf16_bits(v)
        b.store(v, ptr)

    # ------------------------------------------------------ rules and expressions
    def _apply(self, j, args):
        op = self.spec.ops[j]
        dtype = _operand_dtype(self.spec, op)
        cplx = is_complex(dtype) or is_complex(op.dtype)
        rule = (self.complex_rules if cplx else self.rules).get(op.prim)
        if rule is None:
            raise _unsupported(op.prim, cplx)
        # A primitive's own ``dtype`` param (iota) is the result dtype: out_dtype says it.
        params = {k: v for k, v in op.params if k not in ("dtype", "out_dtype")}
        n = _integer_exponent(op, dtype)
        if n is not None:
            rule, args, params = self.rules["integer_pow"], args[:1], {"y": n}
        v = rule(self.b, *args, dtype=dtype, out_dtype=np.dtype(op.dtype), **params)
        return self._round(v, op.dtype)

    def _eval(self, ref, env, load_input, index, dtype=None):
        """The value of ``ref`` at the current element; ``env`` memoizes ops."""
        kind, x = ref
        if kind == "in":
            return load_input(x)
        if kind == "index":
            return index(x)
        if kind == "lit":
            return self._lit(x, dtype)
        if x in env:
            return env[x]
        op = self.spec.ops[x]
        if op.prim in REDUCTIONS:
            raise AssertionError(f"reduction %{x} used before its pass")
        odt = _operand_dtype(self.spec, op)
        args = []
        for pos, a in enumerate(op.args):
            adt = self._selector_dtype(a) if op.prim == "select_n" and pos == 0 else odt
            args.append(self._eval(a, env, load_input, index, adt))
        if op.prim == "iota" and not op.args:
            args = [index(op.param("dimension"))]
        v = env[x] = self._apply(x, args)
        return v

    def _selector_dtype(self, ref):
        kind, x = ref
        if kind == "in":
            return np.dtype(self.spec.input_dtypes[x])
        if kind == "op":
            return np.dtype(self.spec.ops[x].dtype)
        return np.dtype(np.bool_ if isinstance(x, (bool, np.bool_)) else np.int32)

    # ----------------------------------------------------------- indexing
    def _offset(self, ptr, idx, strides):
        """``ptr`` advanced by sum(idx[d] * strides[d]) bytes."""
        b, B = self.b, self.B
        off = None
        for i, s in zip(idx, strides):
            t = b.mul(i, s)
            off = t if off is None else b.add(off, t)
        return ptr if off is None else b.gep(ptr, off, B.i8)

    def _unflatten(self, t, sizes):
        b = self.b
        idx = []
        for n in reversed(sizes[1:]):
            idx.append(b.srem(t, n))
            t = b.sdiv(t, n)
        idx.append(t)
        return idx[::-1]

    def _product(self, sizes):
        b, B = self.b, self.B
        p = b.const(1, B.i64)
        for n in sizes:
            p = b.mul(p, n)
        return p
