"""Row kernels (``reduce_rank > 0``) of ``cuda_codegen``'s GPU templates: one warp per
row, the lanes' partials combined by butterfly shuffles; rows of whole groups of
``VEC`` per lane up to ``REGISTER_GROUPS`` are held in registers (``cuda_codegen``'s
module doc says how each form reads a row).

``RowKernels`` is a mixin of ``cuda_codegen._GpuGen`` (which supplies the builder, the
accessors and the value helpers); it is imported only when a kernel is being built.

>>> RowKernels.__name__
'RowKernels'
"""

from __future__ import annotations

import numpy as np

from ..lowering.spec import REDUCTIONS, _cone_of, _operand_dtype
from .cuda_codegen import ARG_REDUCTIONS, VEC, WARP


class RowKernels:
    """The warp-per-row loop nest: ``_warp_rows`` and its helpers."""

    # --------------------------------------------------------------- rows
    def _groups(self, length):
        """(the number of whole groups of VEC in a row, ``g`` -> group g's indices)."""
        b, B = self.b, self.B
        vec = b.const(VEC, B.i64)

        def indices(g):
            q = b.mul(g, vec)
            return [q if k == 0 else b.add(q, b.const(k, B.i64)) for k in range(VEC)]

        return b.sdiv(length, vec), indices

    def _row_fold(self, lane, length, init, value, step):
        """This lane's fold of ``step(state, x, e)`` over its elements of the row:
        its groups (every ``value(e, lead)`` of a group before the group's steps),
        then its element of the row's tail."""
        b, B = self.b, self.B
        groups, indices = self._groups(length)
        types = [v.type for v in init]
        header, body, exit_ = b.new_block([B.i64, *types]), b.new_block(), b.new_block(types)
        b.br(header, lane, *init)
        b.set_block(header)
        g, *st = header.args
        b.cond_br(b.icmp("slt", g, groups), body, [], exit_, list(st))
        b.set_block(body)
        idx = indices(g)
        xs = [value(e, k == 0) for k, e in enumerate(idx)]
        for e, x in zip(idx, xs):
            st = step(st, x, e)
        b.br(header, b.add(g, b.const(WARP, B.i64)), *st)
        b.set_block(exit_)
        st = list(exit_.args)
        e = b.add(b.mul(groups, b.const(VEC, B.i64)), lane)
        tail, done = b.new_block(), b.new_block(types)
        b.cond_br(b.icmp("slt", e, length), tail, [], done, st)
        b.set_block(tail)
        b.br(done, *step(st, value(e, False), e))
        b.set_block(done)
        return list(done.args)

    def _row_groups(self, lane, length, values, write):
        """``write(e, values(e, lead), lead)`` for this lane's elements of the row,
        a group's values all computed before its writes."""
        b, B = self.b, self.B
        groups, indices = self._groups(length)

        def group(g):
            idx = indices(g)
            vals = [values(e, k == 0) for k, e in enumerate(idx)]
            for k, (e, v) in enumerate(zip(idx, vals)):
                write(e, v, k == 0)

        self._loop_step(lane, groups, b.const(WARP, B.i64), group)
        e = b.add(b.mul(groups, b.const(VEC, B.i64)), lane)
        self._if(b.icmp("slt", e, length), lambda: write(e, values(e, False), False))

    def _shuffle(self, v, lane_mask):
        """``v`` of the lane ``lane ^ lane_mask`` (``shfl.sync.bfly``), any type."""
        b, B = self.b, self.B
        t = v.type
        bits = B.width(t)

        def shfl32(x):
            return b.intrinsic(
                "llvm.nvvm.shfl.sync.bfly.i32",
                [b.const(-1, B.i32), x, b.const(lane_mask, B.i32), b.const(31, B.i32)],
                B.i32,
            )

        as_int = b.bitcast(v, B.int_type(bits)) if B.is_float_type(t) else v
        if bits == 64:
            lo = shfl32(b.trunc(as_int, B.i32))
            hi = shfl32(b.trunc(b.lshr(as_int, b.const(32, B.i64)), B.i32))
            r = b.or_(b.zext(lo, B.i64), b.shl(b.zext(hi, B.i64), b.const(32, B.i64)))
        elif bits == 32:
            r = shfl32(as_int)
        else:
            r = b.trunc(shfl32(b.zext(as_int, B.i32)), B.int_type(bits))
        return b.bitcast(r, t) if B.is_float_type(t) else r

    def _arg_combine(self, st, other, is_max, dtype):
        """Two lanes' argmax/argmin partials (the first best of each lane's elements)
        as the first best of both: the better value, on a tie the smaller index; a
        NaN beats any number and the earlier of two NaNs wins (numpy's rule)."""
        from ..lowering.rules import _is_bool, _is_float, _is_signed

        b = self.b
        (va, ia), (vb, ib) = st, other
        earlier = b.icmp("slt", ib, ia)
        if _is_float(dtype):
            better = b.fcmp("ogt" if is_max else "olt", vb, va)
            tie = b.fcmp("oeq", vb, va)
            nan_a, nan_b = b.fcmp("uno", va, va), b.fcmp("uno", vb, vb)
            both = b.and_(nan_a, nan_b)
            only_b = b.and_(nan_b, b.xor(nan_a, b.true()))
            wins = b.or_(b.or_(better, only_b), b.and_(b.or_(tie, both), earlier))
        else:
            pred = "gt" if is_max else "lt"
            pred = ("s" if _is_signed(dtype) and not _is_bool(dtype) else "u") + pred
            better, tie = b.icmp(pred, vb, va), b.icmp("eq", vb, va)
            wins = b.or_(better, b.and_(tie, earlier))
        return [b.select(wins, vb, va), b.select(wins, ib, ia)]

    def _warp_rows(self):
        b, B, spec = self.b, self.B, self.spec
        rank, k = spec.rank, spec.reduce_rank
        m = rank - k
        row_sizes, red_sizes = self.sizes[:m], self.sizes[m:]
        rows, length = self._product(row_sizes), self._product(red_sizes)
        tid = self._sreg("tid")
        lane = b.and_(tid, b.const(WARP - 1, B.i64))
        warp = b.lshr(tid, b.const(5, B.i64))
        per_block = b.lshr(self._sreg("ntid"), b.const(5, B.i64))
        first = b.add(b.mul(self._sreg("ctaid"), per_block), warp)
        step = b.mul(self._sreg("nctaid"), per_block)
        reductions = [j for j, op in enumerate(spec.ops) if op.prim in REDUCTIONS]
        full = [o for o, row in enumerate(spec.output_is_row) if not row]
        per_row = [o for o, row in enumerate(spec.output_is_row) if row]
        # A ``v`` or ``w`` input means rows of a length divisible by VEC
        # (``row_variant``), so every group of the fresh, contiguous outputs starts
        # 16-byte aligned too.
        aligned = bool(set(self.variant) & set("vw"))

        def unflat(t, sizes):
            return self._unflatten(t, sizes) if sizes else []

        def row_body(row):
            row_env: dict = {}

            def at(e, lead=False):
                flat = b.add(b.mul(row, length), e)

                def idx():
                    return unflat(row, row_sizes) + unflat(e, red_sizes)

                return self._accessors(flat, idx, lead, inner=e)

            # A row held in registers (``row_groups`` > 0): this lane's elements, each
            # with its accessors (loads memoized) and its values (``env``), made once
            # and read by every pass, all in straight-line code.
            slots = []
            for g in range(self.row_groups):
                base = b.add(b.mul(lane, b.const(VEC, B.i64)), b.const(g * WARP * VEC, B.i64))
                for q in range(VEC):
                    e = b.add(base, b.const(q, B.i64)) if q else base
                    slots.append((e, q == 0, *at(e, q == 0), {}))

            def in_registers(ref, dtype):
                """``ref``'s value at each of this lane's elements (register rows)."""
                out = []
                for _, _, load_input, index, env in slots:
                    env.update(row_env)
                    out.append(self._eval(ref, env, load_input, index, dtype))
                return out

            def prepare(refs, index):
                for j in sorted(_cone_of(spec, refs)):
                    fresh = j not in row_env and spec.ops[j].prim not in REDUCTIONS
                    if self.row_level[j] and fresh:
                        self._eval(("op", j), row_env, None, index)

            def row_index(d):
                return unflat(row, row_sizes)[d] if d < m else b.const(0, B.i64)

            for r in reductions:
                op = spec.ops[r]
                prepare(op.args, row_index)
                dtype = _operand_dtype(spec, op)
                red = self.reducers[op.prim]

                def value(e, lead, op=op, dtype=dtype):
                    load_input, index = at(e, lead)
                    return self._eval(op.args[0], dict(row_env), load_input, index, dtype)

                def fold(st, x, e, red=red, dtype=dtype):
                    return red.step(b, list(st), x, e, dtype)

                if slots:
                    st = red.init(b, dtype)
                    for (e, *_), x in zip(slots, in_registers(op.args[0], dtype)):
                        st = fold(st, x, e)
                else:
                    st = self._row_fold(lane, length, red.init(b, dtype), value, fold)
                for mask in (16, 8, 4, 2, 1):
                    if op.prim in ARG_REDUCTIONS:
                        other = [self._shuffle(v, mask) for v in st]
                        st = self._arg_combine(st, other, op.prim == "argmax", dtype)
                    else:
                        st = red.step(b, st, self._shuffle(st[0], mask), None, dtype)
                v = red.final(b, st, dtype, np.dtype(op.dtype))
                row_env[r] = self._round(v, op.dtype)
            if full:
                refs = [spec.outputs[o] for o in full]
                prepare(refs, row_index)

                def values(e, lead):
                    load_input, index = at(e, lead)
                    env = dict(row_env)
                    return [
                        self._eval(spec.outputs[o], env, load_input, index, self._out_dtype(o))
                        for o in full
                    ]

                def write(e, vals, lead):
                    flat = b.add(b.mul(row, length), e)
                    for o, v in zip(full, vals):
                        dtype = self._out_dtype(o)
                        ptr = b.gep(self.data[self.n_in + o], flat, B.mem_type(dtype))
                        self._store_aligned(v, ptr, dtype, lead and aligned)

                if slots:
                    outs = [in_registers(spec.outputs[o], self._out_dtype(o)) for o in full]
                    for s, (e, lead, *_) in enumerate(slots):
                        write(e, [vs[s] for vs in outs], lead)
                else:
                    self._row_groups(lane, length, values, write)
            if per_row:
                refs = [spec.outputs[o] for o in per_row]
                prepare(refs, row_index)

                def lane0():
                    load_input, index = at(b.const(0, B.i64))
                    env = dict(row_env)
                    for o in per_row:
                        dtype = self._out_dtype(o)
                        v = self._eval(spec.outputs[o], env, load_input, index, dtype)
                        ptr = b.gep(self.data[self.n_in + o], row, B.mem_type(dtype))
                        self._store(v, ptr, dtype)

                self._if(b.icmp("eq", lane, b.const(0, B.i64)), lane0)

        self._loop_step(first, rows, step, row_body)
