"""Code generation for fused kernels: a ``KernelSpec`` (and a variant) -> an xDSL module
in the ``llvm`` dialect, built with ``builder.KernelBuilder``. ``kernels.py`` compiles,
caches and calls what this builds. This module holds the entry and the loop nests
(``_Gen``); the values at one element (loads, stores, literals, narrow floats, the
primitives' rules) are ``codegen_values._Values``, which ``_Gen`` extends and whose
helpers ``templates.py`` borrows.

The function's convention (the ``arrays`` tuple, ``[lo, hi)``, the return code) is
described in ``kernels.py``; the struct offsets it reads are the target's
``entry_abi()`` (on the CPU, numpy's ndarray and CPython's tuple: ``devices/cpu_abi.py``).

Templates (``spec.py`` defines the semantics, ``interpret.py`` is the oracle):

- elementwise (``reduce_rank == 0``): the outer dims are one flattened range, the
  innermost dim a loop LLVM vectorizes. Each input's innermost stride is specialized at
  call time into a *variant* bit: ``c`` (contiguous: a plain ``p[j]``), ``b`` (stride 0:
  loaded once per row) or ``g`` (general: ``p + j*stride``); the variant is part of the
  cache key, so contiguous inputs need no run-time stride versioning and a broadcast
  input is one load per row. Outputs are C-contiguous.
- row (``reduce_rank == k``): per row, one pass over the row per reduction, in order,
  recomputing the cheap elementwise ops it needs and reloading the expensive ones an
  earlier pass stashed (``stash_plan``; per-row values are computed once per row,
  before the pass that needs them); a last pass writes the full-shape outputs; per-row
  outputs are written after the passes (a full-shape value used as a per-row output is
  read at the row's first element).

Aliasing: no pointer is ``noalias``; a kernel may write an output that is also one of
its inputs (donated buffers) as long as each element is read only at the index written
(LLVM keeps its run-time overlap checks; they cost nothing measurable here).

Narrow floats are float32 in registers, rounded after every op (``codegen_values``);
reductions over them accumulate in float32 and round once at the end.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .codegen_values import _Values
from .rules import _is_float
from .rules_complex import is_complex
from .spec import (
    FUNCTION_NAME,
    REDUCTIONS,
    KernelSpec,
    _cone_of,
    _inputs_used,
    _operand_dtype,
    _out_dtype,
    _row_levels,
    stash_plan,
)

# A float sum or product along a row is accumulated as a cascade: a fresh partial per
# block of 512 elements, those folded into a fresh partial per 512 blocks, and those
# into the row's total. One running accumulator (one per vector lane once LLVM
# vectorizes it) gathered n/lanes rounding errors: jit's sum of x * x over 2**24 float32
# normals was off by 5.8e-5 relative (numpy's pairwise sum: ~1e-9). The folds cost one
# add per block.
ACCUMULATE_BLOCKS = (1 << 18, 1 << 9)  # powers of two: a block's start is a shift


class _Gen(_Values):
    """Emits one variant of one spec with a ``KernelBuilder``: the entry, the array
    access and the loop nests; the values at each element are ``_Values``'."""

    def __init__(
        self,
        spec: KernelSpec,
        variant: str,
        abi: tuple,
        name: str = FUNCTION_NAME,
        cascade: bool = True,
    ):
        from . import builder as B
        from .rules import complex_reduction_rules, complex_rules, lowering_rules, reduction_rules

        self.B, self.spec, self.variant, self.name = B, spec, variant, name
        self.abi = abi  # the target's entry_abi(): where the entry finds its arrays
        # Float sums and products of long rows in blocks (ACCUMULATE_BLOCKS): off for
        # the small-call variant, whose whole call is shorter than a block or two.
        self.cascade = cascade
        self.rules, self.reducers = lowering_rules, reduction_rules
        self.complex_rules, self.complex_reducers = complex_rules, complex_reduction_rules
        self.b = B.KernelBuilder()
        self.row_level = _row_levels(spec)
        self.n_in, self.n_out = len(spec.input_dtypes), len(spec.outputs)

    # --------------------------------------------------------- array access
    def _arrays(self, args):
        """Data pointers, sizes and byte strides read from the ndarray objects."""
        b, B = self.b, self.B
        off_data, off_dims, off_strides = self.abi[:3]
        spec = self.spec
        rank, k = spec.rank, spec.reduce_rank
        self.data = [b.load(b.gep_const(a, off_data), B.PTR) for a in args]
        # Sizes: from an input (iteration-shaped) or a full-shape output.
        src = (
            0
            if self.n_in
            else next((self.n_in + i for i, row in enumerate(spec.output_is_row) if not row), None)
        )
        if src is None and rank > 0:
            raise ValueError(
                "compile_kernel: a kernel without inputs or full-shape outputs has no "
                "sizes; give it an input shaped as the iteration space"
            )
        self.sizes = []
        if rank:
            dims = b.load(b.gep_const(args[src], off_dims), B.PTR)
            self.sizes = [b.load(b.gep_const(dims, 8 * d, B.i8), B.i64) for d in range(rank)]
        self.strides = []
        for i, a in enumerate(args):
            is_row = i >= self.n_in and spec.output_is_row[i - self.n_in]
            nd = rank - k if is_row else rank
            st = b.load(b.gep_const(a, off_strides), B.PTR) if nd else None
            self.strides.append([b.load(b.gep_const(st, 8 * d, B.i8), B.i64) for d in range(nd)])

    def _inner_access(self, used, bases, inner_stride_dim, j, pre):
        """A ``load_input`` for the inner loop body at position ``j``.

        ``pre`` holds the broadcast inputs' values, loaded before the loop."""
        b, B, spec = self.b, self.B, self.spec
        cache = {}

        def load_input(i):
            if i in cache:
                return cache[i]
            dtype = spec.input_dtypes[i]
            cls = self.variant[i] if inner_stride_dim is not None else "b"
            if cls == "b":
                v = pre[i]
            elif cls == "c":
                v = self._load(b.gep(bases[i], j, B.mem_type(dtype)), dtype)
            else:
                off = b.mul(j, self.strides[i][inner_stride_dim])
                v = self._load(b.gep(bases[i], off, B.i8), dtype)
            cache[i] = v
            return v

        return load_input

    def _preload(self, used, bases):
        pre = {}
        for i in sorted(used):
            if self.spec.rank == 0 or self.variant[i] == "b":
                pre[i] = self._load(bases[i], self.spec.input_dtypes[i])
        return pre

    # ------------------------------------------------------------ templates
    def build(self):
        b, B, spec = self.b, self.B, self.spec
        n = self.n_in + self.n_out
        arrays, lo, hi = b.function(self.name, [B.PTR, B.i64, B.i64], ret=B.i32)
        items = self.abi[3]
        self.objs = [b.load(b.gep_const(arrays, items + 8 * i), B.PTR) for i in range(n)]
        self._arrays(self.objs)
        if spec.rank:
            self._check_variant()
        if spec.reduce_rank == 0:
            self._elementwise(lo, hi)
        else:
            self._rows(lo, hi)
        b.ret(b.const(0, B.i32))
        return b

    def _check_variant(self):
        """Returns 1 at once unless every input's innermost stride fits the variant."""
        b, B, spec = self.b, self.B, self.spec
        ok = b.icmp("sle", self.sizes[-1], b.const(1, B.i64))  # any stride fits
        fits = None
        for i, cls in enumerate(self.variant):
            want = {"c": np.dtype(spec.input_dtypes[i]).itemsize, "b": 0}.get(cls)
            if want is None:
                continue
            c = b.icmp("eq", self.strides[i][-1], b.const(want, B.i64))
            fits = c if fits is None else b.and_(fits, c)
        if fits is None:
            return
        good, bad = b.new_block(), b.new_block()
        b.cond_br(b.or_(ok, fits), good, [], bad, [])
        b.set_block(bad)
        b.ret(b.const(1, B.i32))
        b.set_block(good)

    def _outer_range(self, lo, hi, sizes):
        b, B = self.b, self.B
        total = self._product(sizes)
        hi = b.select(b.icmp("slt", hi, b.const(0, B.i64)), total, hi)
        return lo, hi

    def _elementwise(self, lo, hi):
        b, B, spec = self.b, self.B, self.spec
        rank = spec.rank
        used = _inputs_used(spec, spec.outputs, _cone_of(spec, spec.outputs))
        outs = list(range(self.n_in, self.n_in + self.n_out))

        if rank == 0:
            bases = self.data
            pre = self._preload(used, bases)
            env = {}
            for o, ref in enumerate(spec.outputs):
                v = self._eval(
                    ref,
                    env,
                    lambda i: pre[i],
                    None,
                    spec.input_dtypes[0] if ref[0] == "in" else None,
                )
                self._store(v, bases[self.n_in + o], self._out_dtype(o))
            return
        inner = self.sizes[-1]
        if rank == 1:
            lo, hi = self._outer_range(lo, hi, [inner])
            self._inner_loop(self.data, used, outs, lo, hi, [], rank - 1)
            return
        lo, hi = self._outer_range(lo, hi, self.sizes[:-1])

        def body(t, carried):
            idx = self._unflatten(t, self.sizes[:-1])
            bases = [self._offset(p, idx, s[:-1]) for p, s in zip(self.data, self.strides)]
            self._inner_loop(bases, used, outs, b.const(0, B.i64), inner, idx, rank - 1)
            return []

        b.loop(lo, hi, [], body)

    def _out_dtype(self, o):
        return _out_dtype(self.spec, o)

    def _inner_loop(self, bases, used, outs, lo, hi, outer_idx, inner_dim, env0=None):
        """The vectorizable innermost loop writing the full-shape outputs ``outs``."""
        b, B, spec = self.b, self.B, self.spec
        pre = self._preload(used, bases)

        def body(j, carried):
            load_input = self._inner_access(used, bases, inner_dim, j, pre)
            env = dict(env0 or {})

            def index(d):
                return j if d == inner_dim else outer_idx[d]

            for slot in outs:
                o = slot - self.n_in
                if spec.output_is_row[o]:
                    continue
                v = self._eval(spec.outputs[o], env, load_input, index)
                dtype = self._out_dtype(o)
                self._store(v, b.gep(bases[slot], j, B.mem_type(dtype)), dtype)
            return []

        b.loop(lo, hi, [], body)

    # ----------------------------------------------------------------- rows
    def _rows(self, lo, hi):
        b, B, spec = self.b, self.B, self.spec
        rank, k = spec.rank, spec.reduce_rank
        m = rank - k
        row_sizes, red_sizes = self.sizes[:m], self.sizes[m:]
        lo, hi = self._outer_range(lo, hi, row_sizes)
        reductions = [j for j, op in enumerate(spec.ops) if op.prim in REDUCTIONS]
        full_outs = [self.n_in + o for o, row in enumerate(spec.output_is_row) if not row]
        row_outs = [o for o, row in enumerate(spec.output_is_row) if row]

        stash = stash_plan(spec)

        def stashed(env, pass_no, bases, flat):
            """Loads the values an earlier pass stashed; returns the ones to store."""
            store = []
            for j, (o, first) in stash.items():
                ptr = b.gep(bases[self.n_in + o], flat, B.mem_type(spec.ops[j].dtype))
                if first == pass_no:
                    store.append((j, ptr))
                elif first < pass_no:
                    env[j] = self._load(ptr, spec.ops[j].dtype)
            return store

        def row_body(t, carried):
            ridx = self._unflatten(t, row_sizes) if m else []
            bases = [self._offset(p, ridx, s[:m]) for p, s in zip(self.data, self.strides)]
            row_env: dict = {}

            def row_index(d):
                return ridx[d]

            def prepare(refs):
                """Computes the per-row ops ``refs`` need, in the row block."""
                for j in sorted(_cone_of(self.spec, refs)):
                    if (
                        self.row_level[j]
                        and j not in row_env
                        and spec.ops[j].prim not in REDUCTIONS
                    ):
                        self._eval(("op", j), row_env, None, row_index)

            for pass_no, r in enumerate(reductions):
                op = spec.ops[r]
                prepare(op.args)
                cone = {j for j in _cone_of(spec, op.args) if not self.row_level[j]}
                used = _inputs_used(spec, op.args, cone)
                dtype = _operand_dtype(spec, op)
                red = (self.complex_reducers if is_complex(dtype) else self.reducers)[op.prim]
                state = red.init(b, dtype)

                def elem(load_input, index, flat, st, op=op, dtype=dtype, red=red, p=pass_no):
                    env = dict(row_env)
                    store = stashed(env, p, bases, flat)
                    x = self._eval(op.args[0], env, load_input, index, dtype)
                    for j, ptr in store:
                        v = self._eval(("op", j), env, load_input, index)
                        self._store(v, ptr, spec.ops[j].dtype)
                    return red.step(b, st, x, flat, dtype)

                blocks = None
                if red.blocked and (_is_float(dtype) or is_complex(dtype)):
                    # A block's fresh partial, and how one is folded into the total.
                    blocks = (partial(red.init, b, dtype), partial(red.fold, b, dtype=dtype))
                state = self._row_nest(bases, used, ridx, red_sizes, state, elem, blocks)
                v = red.final(b, state, dtype, np.dtype(op.dtype))
                row_env[r] = self._round(v, op.dtype)
            if full_outs:
                refs = [spec.outputs[s - self.n_in] for s in full_outs]
                prepare(refs)
                cone = {j for j in _cone_of(spec, refs) if not self.row_level[j]}
                used = _inputs_used(spec, refs, cone)

                def write(load_input, index, flat, st, bases=bases):
                    env = dict(row_env)
                    stashed(env, len(reductions), bases, flat)
                    for s in full_outs:
                        o = s - self.n_in
                        v = self._eval(spec.outputs[o], env, load_input, index)
                        dtype = self._out_dtype(o)
                        self._store(v, b.gep(bases[s], flat, B.mem_type(dtype)), dtype)
                    return []

                self._row_nest(bases, used, ridx, red_sizes, [], write)
            if row_outs:
                self._row_outputs(row_outs, bases, ridx, red_sizes, row_env, prepare)
            return []

        b.loop(lo, hi, [], row_body)

    def _row_nest(self, bases, used, ridx, red_sizes, state, elem, blocks=None):
        """Loops over a row's elements (the last k dims), threading ``state`` through.

        With ``blocks`` (a float sum or product's ``(init, fold)``), the innermost
        loop runs as a cascade of blocks (``ACCUMULATE_BLOCKS``), each summed into a fresh
        partial that is then combined into the level above."""
        b, B, spec = self.b, self.B, self.spec
        m = spec.rank - spec.reduce_rank
        inner_dim = spec.rank - 1

        def level(depth, bases_here, idx, flat_outer, st):
            if depth == len(red_sizes) - 1:
                pre = self._preload(used, bases_here)

                def body(j, cur):
                    load_input = self._inner_access(used, bases_here, inner_dim, j, pre)
                    flat = b.add(b.mul(flat_outer, red_sizes[-1]), j)

                    def index(d):
                        if d == inner_dim:
                            return j
                        return ridx[d] if d < m else idx[d - m]

                    return elem(load_input, index, flat, cur)

                n = red_sizes[-1]
                if blocks is None or not self.cascade:
                    return b.loop(b.const(0, B.i64), n, st, body)
                init, fold = blocks

                def cascade(level, lo, hi, cur):
                    if level == len(ACCUMULATE_BLOCKS):
                        return b.loop(lo, hi, cur, body)
                    shift = b.const(ACCUMULATE_BLOCKS[level].bit_length() - 1, B.i64)

                    def block(k, c):
                        start = b.add(lo, b.shl(k, shift))
                        end = b.add(start, b.shl(b.const(1, B.i64), shift))
                        end = b.select(b.icmp("slt", end, hi), end, hi)
                        return fold(c, cascade(level + 1, start, end, init()))

                    # ceil((hi - lo) / span) blocks: hi > lo here (rows of one block and
                    # less take the plain loop below, and no block is empty).
                    last = b.sub(b.sub(hi, lo), b.const(1, B.i64))
                    count = b.add(b.ashr(last, shift), b.const(1, B.i64))
                    return b.loop(b.const(0, B.i64), count, cur, block)

                # A row of one block runs the plain loop: the cascade's loops cost more
                # than a short row's sum (a sum over rows of 3: 3x slower).
                short, long_, join = b.new_block(), b.new_block(), b.new_block([v.type for v in st])
                span = b.const(ACCUMULATE_BLOCKS[-1], B.i64)
                b.cond_br(b.icmp("sle", n, span), short, [], long_, [])
                b.set_block(short)
                b.br(join, *b.loop(b.const(0, B.i64), n, st, body))
                b.set_block(long_)
                b.br(join, *cascade(0, b.const(0, B.i64), n, st))
                b.set_block(join)
                return list(join.args)

            def body(e, cur):
                d = m + depth
                nb = [
                    b.gep(p, b.mul(e, s[d]), B.i8) if len(s) > d else p
                    for p, s in zip(bases_here, self.strides)
                ]
                return level(
                    depth + 1, nb, [*idx, e], b.add(b.mul(flat_outer, red_sizes[depth]), e), cur
                )

            return b.loop(b.const(0, B.i64), red_sizes[depth], st, body)

        return level(0, bases, [], b.const(0, B.i64), list(state))

    def _row_outputs(self, row_outs, bases, ridx, red_sizes, row_env, prepare):
        b, B, spec = self.b, self.B, self.spec
        refs = [spec.outputs[o] for o in row_outs]
        prepare(refs)
        elementwise = any(
            ref[0] == "in" or (ref[0] == "op" and not self.row_level[ref[1]]) for ref in refs
        )
        if elementwise:
            # Full-shape values as per-row outputs: read at the row's first element,
            # which exists only if the row is not empty.
            count = self._product(red_sizes)
            yes, done = b.new_block(), b.new_block()
            b.cond_br(b.icmp("sgt", count, b.const(0, B.i64)), yes, [], done, [])
            b.set_block(yes)
        zero = b.const(0, B.i64)
        inner_dim = spec.rank - 1
        used = set(range(self.n_in))
        load_input = self._inner_access(used, bases, None, zero, self._preload_all(bases))

        def index(d):
            return ridx[d] if d < spec.rank - spec.reduce_rank else zero

        del inner_dim
        env = dict(row_env)
        for o in row_outs:
            v = self._eval(spec.outputs[o], env, load_input, index)
            self._store(v, bases[self.n_in + o], self._out_dtype(o))
        if elementwise:
            b.br(done)
            b.set_block(done)

    def _preload_all(self, bases):
        # Loads are emitted lazily, in the block that needs them.
        spec = self.spec

        class _Lazy(dict):
            def __missing__(d, i):
                v = d[i] = self._load(bases[i], spec.input_dtypes[i])
                return v

        return _Lazy()
