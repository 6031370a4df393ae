"""The library steps of a compiled program: what is not a fused kernel.

``LibrarySteps`` is the part of ``program._Builder`` that turns a fusion ``LibraryStep``
into a step over frame slots: a matrix product as one BLAS call (``blas``; a column sum
as a BLAS product with ones; the target's ``products()`` run them), a primitive with a
template kernel as that kernel (``templates.py``), control flow as loops over compiled
sub-programs (``control.py``), and every other primitive as a call of the target's
eager impl.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..fx import dtypes as dt
from .control import control_steps
from .fusion import LibraryStep, TemplateStep, is_column_sum
from .steps import (
    CONST,
    DYN,
    LAYOUT,
    _alloc,
    _call_step,
    _matmul_step,
    _perm_reshape,
    _template_step,
)
from .table import lowering_table


def _as_array(fn):
    """``fn`` returning an ndarray where it returns a numpy scalar (0-d results)."""

    def call(*args):
        return np.asarray(fn(*args))

    return call


class LibrarySteps:
    """Library steps, mixed into ``program._Builder`` (whose slots and values they use)."""

    def library(self, st: LibraryStep):
        e = st.eqn
        if lowering_table[e.primitive].matmul and self._matmul(e):
            return
        if is_column_sum(e) and self._column_sum(e):
            return
        if isinstance(st, TemplateStep) and self._template(st):
            return
        ins = [self.use(self.value(u)) for u in e.inputs]
        control = control_steps.get(e.primitive)
        if control is not None:  # a loop or branch over compiled sub-programs
            fn = control(e.params, self.backend, self.target)
        else:
            fn = partial(self.target.impls[e.primitive], **e.params)
        multi = e.primitive.multiple_results
        if not multi and not e.outputs[0].aval.shape:
            # numpy returns a scalar for a full reduction; kernels read ndarray structs
            fn = _as_array(fn)
        if all(self.kind[i] == CONST for i in ins) and not lowering_table[e.primitive].effects:
            res = fn(*[self.probe[i] for i in ins])
            for v, r in zip(e.outputs, res if multi else [res]):
                self.slot[v.id] = self.const_slot(r)
            return
        outs = [self.new_slot(DYN) for _ in e.outputs]
        for v, s in zip(e.outputs, outs):
            self.slot[v.id] = s
        self.steps.append(_call_step(fn, ins, outs, multi))
        for label, prog in getattr(fn, "programs", ()):
            self.listing.append((f"{e.primitive.name} {label}", prog))

    def _template(self, st: TemplateStep) -> bool:
        """One template kernel (gather, scatter*, scan, reduce_window, lu, lu_solve) into
        preallocated or fresh buffers; False (keep the CPU impl) for constant operands, the numpy
        interpreter backend, or no kernel compiler."""
        e = st.eqn
        if self.backend == "interpret":
            return False
        ins = [self.value(u) for u in e.inputs]
        if all(self.kind[i] == CONST for i in ins):
            return False
        try:
            from .templates import compile_template
        except ImportError:
            if self.backend == "compiled":
                raise
            return False
        ins = [self.use(i) for i in ins]
        template = compile_template(st.spec, self.target)
        kern = template.bind(e.params)
        self.listing.append((f"{e.primitive.name} (template)", template))
        outs = []
        for out in e.outputs:
            shape, dtype = tuple(out.aval.shape), np.dtype(out.aval.dtype)
            fresh = out.id in self.escapes
            if fresh:
                slot = self.fresh_slot(shape, dtype)
            else:
                slot = self.new_slot(LAYOUT, np.empty(shape, dtype))
                self.setup.append(partial(_alloc, slot, shape, dtype))
            outs.append((slot, shape, dtype, fresh))
            self.slot[out.id] = slot
        self.steps.append(_template_step(kern, ins, outs))
        return True

    def _matmul(self, e) -> bool:
        """dot_general as one (batched) matmul into a preallocated or fresh buffer."""
        lhs, rhs = e.inputs
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        dtype = np.dtype(lhs.aval.dtype)
        pet = e.params["preferred_element_type"]
        if dtype not in (dt.float32, dt.float64) or (pet is not None and np.dtype(pet) != dtype):
            return False
        ls, rs = lhs.aval.shape, rhs.aval.shape
        lfree = [i for i in range(len(ls)) if i not in lc and i not in lb]
        rfree = [i for i in range(len(rs)) if i not in rc and i not in rb]

        def prod(sh, dims):
            return int(np.prod([sh[d] for d in dims], dtype=np.int64))

        b, m, n, k = prod(ls, lb), prod(ls, lfree), prod(rs, rfree), prod(ls, lc)
        a_shape, b_shape, o_shape = (b, m, k), (b, k, n), (b, m, n)
        if not lb:  # plain 2-d matmul: no batch loop in numpy
            a_shape, b_shape, o_shape = (m, k), (k, n), (m, n)
        a = self.unary_view(_perm_reshape((*lb, *lfree, *lc), a_shape), self.value(lhs))
        bb = self.unary_view(_perm_reshape((*rb, *rc, *rfree), b_shape), self.value(rhs))
        out = e.outputs[0]
        if self.kind[a] == CONST and self.kind[bb] == CONST:
            return False
        # (Contractions of size 1 never get here: passes.outer_products made them mul.)
        self._blas(self.use(a), self.use(bb), out, o_shape, dtype)
        return True

    def _column_sum(self, e) -> bool:
        """``reduce_sum`` over leading axes as ``ones @ x`` (BLAS gemv, see
        ``fusion.is_column_sum``) into a preallocated or fresh buffer."""
        (x,), out = e.inputs, e.outputs[0]
        k = len(e.params["axes"])
        shape, dtype = x.aval.shape, np.dtype(x.aval.dtype)
        rows = int(np.prod(shape[:k]))
        xs = self.unary_view(partial(np.reshape, shape=(rows, -1)), self.value(x))
        if self.kind[xs] == CONST:
            return False
        ones = self.const_slot(np.ones(rows, dtype))
        self._blas(ones, self.use(xs), out, (int(np.prod(shape[k:])),), dtype)
        return True

    def _blas(self, a, b, out, o_shape, dtype):
        """``out = a @ b`` (slots) through the target's products, seen as ``out``'s shape."""
        if out.id in self.escapes:
            slot = self.fresh_slot(o_shape, dtype)
            self.steps.append(
                _matmul_step(self.products.matmul, a, b, slot, o_shape, dtype, fresh=True)
            )
        else:
            slot = self.new_slot(LAYOUT, np.empty(o_shape, dtype))
            self.setup.append(partial(_alloc, slot, o_shape, dtype))
            self.steps.append(
                _matmul_step(self.products.matmul, a, b, slot, o_shape, dtype, fresh=False)
            )
        self.slot[out.id] = self.unary_view(partial(np.reshape, shape=out.aval.shape), slot)
