"""The GPU forms of the kernel templates: a ``KernelSpec`` -> an NVPTX kernel (xDSL IR).

The element math is the CPU's: ``_GpuGen`` extends ``lowering.codegen._Gen`` and reuses
its value helpers (``_eval``, ``_load``/``_store``, the narrow-float rounding, the
lowering and reduction rule tables, fntorch's own math expansions, so no intrinsic that
NVPTX cannot select is emitted); what differs is the entry and the loop nest.

Entry (``abi`` below): ``void fntorch_kernel(ptr a_0, ..., ptr a_{n-1}, i64 size_0 ...
size_{r-1}, i64 stride_{0,0} ... stride_{n_in-1,r-1})``: the data pointers of the inputs
then the outputs, the iteration space's sizes and every input's byte strides (iteration
order). Outputs are C-contiguous (full outputs of the iteration shape, per-row outputs
of the row shape). Each input has a *variant* letter, part of the cache key: ``c``
(C-contiguous: ``p[j]``), ``v`` (C-contiguous and 16-byte aligned), ``s`` (one element:
loaded once per thread), ``g`` (any strides, broadcasts and transposes included: the
element's index is unflattened and dotted with the strides), ``k`` (a float16/32/64
scalar passed by value in the pointer's place: the eager fast path's ``x * 2.0``,
``cuda_eager``) or, in a row kernel, ``w`` and ``u`` (one row read by every row, a
weight or bias: ``p[e]`` at the element's place ``e`` in its row, aligned or not).

- elementwise (``reduce_rank == 0``): a grid-stride loop. With every input ``v``, ``s``
  or ``k``, each thread takes groups of ``VEC`` consecutive elements (16-byte vector
  loads and stores: the group's first access carries the alignment); otherwise ``UNROLL``
  elements per thread per step, at ``j, j + T, ..., j + (UNROLL-1) T`` (``T`` threads in
  the grid), so neighbouring threads touch neighbouring elements.
- row (``reduce_rank > 0``, built by the ``cuda_rows.RowKernels`` mixin): one warp per
  row (``ROWS_PER_BLOCK`` warps per block, rows grid-strided). Each reduction is a pass
  over the row in groups of ``VEC`` consecutive elements, group ``g`` on lane ``g % 32``
  (the last ``length % VEC`` elements one per lane); a group's values are all computed
  before it is folded or stored, so its loads and stores of ``v`` inputs and of the
  outputs merge into 16-byte accesses (a ``v`` input of a row kernel also has a row
  length divisible by ``VEC``: ``row_variant``). The lanes' partials combine by
  butterfly shuffles, so every lane holds the row's value, which later passes and the
  outputs read. Full-shape outputs are written in a last pass, per-row outputs by lane
  0. argmax/argmin combine their lanes' (value, index) partials by ``_arg_combine`` (the
  first best wins, as numpy). That form reads the row once per reduction pass, so a row
  of ``G * 32 * VEC`` elements, ``G`` at most ``REGISTER_GROUPS`` (the ``r<G>`` variant,
  ``row_variant``), is instead loaded once: each lane's ``G`` groups at the start,
  unrolled, their values kept in registers for every pass and the writes.

>>> import numpy as np
>>> from fntorch.lowering.spec import KernelSpec, KOp
>>> f32 = np.dtype("float32")
>>> spec = KernelSpec(1, 0, (f32,), (KOp("exp", (("in", 0),), (), f32),), (("op", 0),),
...                   (False,))
>>> ir = kernel_ir(spec, "c")
>>> "define ptx_kernel void" in ir and "llvm.nvvm.read.ptx.sreg.tid.x" in ir
True
"""

from __future__ import annotations

import numpy as np

from ..lowering.spec import FUNCTION_NAME, REDUCTIONS, KernelSpec

UNROLL = 4  # elements per thread per grid-stride step (strided inputs)
VEC = 4  # consecutive elements per thread per step, aligned inputs: 16 bytes of float32
BLOCK = 256  # threads per block of an elementwise kernel
WARP = 32
ROWS_PER_BLOCK = 4  # warps (rows in flight) per block of a row kernel
# Blocks per multiprocessor at most in a grid (the grid-stride loops cover the rest),
# None for no bound: elementwise and row kernels. Elementwise grids are unbounded, one
# group of VEC elements per thread, as PyTorch's: GELU on 2^28 float32 on an H100
# (kernel time; PyTorch's F.gelu 708.7 us, a 1 GiB copy 710.4) took 761.8 us at 16
# blocks per SM, 749.6 at 32, 736.2 at 64, 727.6 at 128 and 707.3 unbounded. (The
# cap of 64 came from an H200 run of an earlier kernel, not repeated since.)
GRID_PER_SM = None
# Row kernels (a warp a row, ROWS_PER_BLOCK rows a block): W3's softmax of (65536, 1024)
# on an H100 took 182.8 us at 64 blocks per SM, 181.2 at 128 and 181.3 at 256 (PyTorch's
# 183.1); on another H100 W4's layer norm took 184.8 at 64 and 183.1 at 128. A grid of
# more than 128 * 4 rows per SM (67,584 on an H100's 132) is capped: the grid-stride loop
# takes the rest.
ROW_GRID_PER_SM = 128
# Rows of up to this many groups of VEC per lane (1,024 elements) are held in registers
# (``row_variant``): 32 values a lane per input read, within the 255 registers a thread
# has even for float64.
REGISTER_GROUPS = 8
# The dtypes a ``k`` input (a float passed by value: the eager ``x * 2.0``) may have; its
# parameter is of the dtype's memory type (``builder.mem_type``).
BY_VALUE = frozenset({"float16", "float32", "float64"})
# Reductions with a one-value state whose step also combines two partials.
WARP_REDUCIBLE = frozenset(
    {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or"}
)
# (value, index) states, combined by ``_arg_combine``: the reductions of a row kernel.
ARG_REDUCTIONS = frozenset({"argmax", "argmin"})


def elementwise_grid(total: int, multiprocessors: int) -> int:
    """Blocks of ``BLOCK`` threads for an elementwise kernel over ``total`` elements.

    >>> elementwise_grid(2**28, 132), elementwise_grid(16, 132), elementwise_grid(0, 132)
    (262144, 1, 1)
    """
    grid = -(-total // (BLOCK * max(UNROLL, VEC)))
    if GRID_PER_SM is not None:
        grid = min(grid, multiprocessors * GRID_PER_SM)
    return max(grid, 1)


def supports(spec: KernelSpec) -> bool:
    """Whether ``spec`` has a GPU form here (else the CUDA program runs its group's
    equations eagerly).

    >>> from fntorch.lowering.spec import KOp
    >>> f32 = np.dtype("float32")
    >>> i32 = np.dtype("int32")
    >>> supports(KernelSpec(2, 1, (f32,), (KOp("argmax", (("in", 0),), (), i32),),
    ...                     (("op", 0),), (True,)))
    True
    >>> supports(KernelSpec(1, 0, (f32,), (KOp("sort", (("in", 0),), (), f32),),
    ...                     (("op", 0),), (False,)))
    False
    >>> c64 = np.dtype("complex64")
    >>> supports(KernelSpec(1, 0, (c64,), (KOp("neg", (("in", 0),), (), c64),),
    ...                     (("op", 0),), (False,)))
    False
    """
    from ..lowering.rules import KERNEL_PRIMITIVES

    # Complex kernels are the CPU's for now: on CUDA, complex values take the host
    # route (``cuda_impls``), where the special values are numpy's.
    dtypes = (*spec.input_dtypes, *(op.dtype for op in spec.ops))
    if any(np.dtype(d).kind == "c" for d in dtypes):
        return False
    for op in spec.ops:
        if op.prim not in KERNEL_PRIMITIVES:
            return False
        if op.prim in REDUCTIONS and op.prim not in WARP_REDUCIBLE | ARG_REDUCTIONS:
            return False
    return True


def _group_align(dtype) -> int:
    """The alignment of a group of ``VEC`` elements in a 16-byte-aligned buffer."""
    return min(16, VEC * np.dtype(dtype).itemsize)


def _address(a) -> int:
    data = getattr(a, "data", None)
    return data.ptr if hasattr(data, "ptr") else a.ctypes.data  # CuPy's, else numpy's


def variant_of(arrays, n_in: int, row_dims: int = 0) -> str:
    """One letter per input array (shaped as the iteration space): ``s`` one element
    (or one broadcast everywhere), ``v`` C-contiguous at a 16-byte-aligned address, ``c``
    C-contiguous; for a row kernel (``row_dims`` > 0 leading row dimensions), ``w`` one
    row read by every row (stride 0 across rows: a layer norm's weight), C-contiguous
    within it at a 16-byte-aligned address, ``u`` the same unaligned; ``g`` anything else.

    >>> a = np.zeros((2, 4), np.float32)
    >>> variant_of([a, a[:, ::2], np.zeros((1, 1))], 3)
    'vgs'
    >>> variant_of([a.reshape(-1)[1:7]], 1), variant_of([np.broadcast_to(np.float32(1), (4, 5))], 1)
    ('c', 's')
    >>> w = np.broadcast_to(np.ones(4, np.float32), (3, 4))
    >>> variant_of([w, w[:, 1:]], 2, row_dims=1), variant_of([w], 1)
    ('wu', 'g')
    """
    out = []
    for a in arrays[:n_in]:
        if a.size <= 1 or not any(a.strides):
            out.append("s")
        elif a.flags.c_contiguous:
            out.append("v" if _address(a) % 16 == 0 else "c")
        elif row_dims and _one_row(a, row_dims):
            out.append("w" if _address(a) % 16 == 0 else "u")
        else:
            out.append("g")
    return "".join(out)


def _one_row(a, row_dims: int) -> bool:
    """Whether ``a`` is one C-contiguous row broadcast over its ``row_dims`` leading
    dimensions."""
    if any(a.strides[:row_dims]):
        return False
    expect = a.itemsize
    for n, st in zip(reversed(a.shape[row_dims:]), reversed(a.strides[row_dims:])):
        if n != 1 and st != expect:
            return False
        expect *= n
    return True


def row_variant(variant: str, length: int) -> str:
    """A row kernel's variant: ``v`` (``w``) inputs read as ``c`` (``u``) unless the row
    length is a multiple of ``VEC`` (only then does every row start 16-byte aligned); ``r<G>``
    appended when the row is ``G`` whole groups of ``VEC`` per lane, ``G`` at most
    ``REGISTER_GROUPS``: the row is read once, into registers, for every pass.

    >>> row_variant("vs", 1024), row_variant("vs", 1000), row_variant("vs", 1001)
    ('vsr8', 'vs', 'cs')
    >>> row_variant("g", 256), row_variant("g", 4096), row_variant("vw", 6)
    ('gr2', 'g', 'cu')
    """
    if length % VEC:
        variant = variant.replace("v", "c").replace("w", "u")
    groups, rest = divmod(length, WARP * VEC)
    return f"{variant}r{groups}" if rest == 0 and 0 < groups <= REGISTER_GROUPS else variant


def _gpu_gen_class():
    from ..lowering.codegen import _Gen  # xDSL: only when a kernel is being built
    from .cuda_rows import RowKernels

    class _GpuGen(RowKernels, _Gen):
        """Builds one variant of one spec as an NVPTX kernel (see the module doc)."""

        row_groups = 0  # > 0: each lane holds that many groups of VEC of its row

        def _sreg(self, name):
            B = self.B
            v = self.b.intrinsic(f"llvm.nvvm.read.ptx.sreg.{name}.x", [], B.i32)
            return self.b.zext(v, B.i64)

        def build(self):
            b, B, spec = self.b, self.B, self.spec
            n, rank = self.n_in + self.n_out, spec.rank
            data_types = [
                B.mem_type(spec.input_dtypes[i]) if cls == "k" else B.PTR
                for i, cls in enumerate(self.variant)
            ]
            types = data_types + [B.PTR] * self.n_out + [B.i64] * (rank + self.n_in * rank)
            args = b.function(self.name, types)
            self.data = args[:n]
            self.sizes = args[n : n + rank]
            flat = args[n + rank :]
            self.in_strides = [flat[i * rank : (i + 1) * rank] for i in range(self.n_in)]
            self.pre = {}
            for i, cls in enumerate(self.variant):
                if cls == "s":
                    self.pre[i] = self._load(self.data[i], spec.input_dtypes[i])
                elif cls == "k":  # the value itself is the parameter
                    v = self.data[i]
                    self.pre[i] = b.fpext(v, B.f32) if v.type == B.f16 else v
            if spec.reduce_rank == 0:
                self._grid_elementwise()
            else:
                self._warp_rows()
            b.ret()
            return b

        # ------------------------------------------------------------ helpers
        def _loop_step(self, lo, hi, step, body):
            """``for i = lo; i < hi; i += step: body(i)`` (``step`` an i64 value)."""
            b, B = self.b, self.B
            header, loop_body, exit_ = b.new_block([B.i64]), b.new_block(), b.new_block()
            b.br(header, lo)
            b.set_block(header)
            (i,) = header.args
            b.cond_br(b.icmp("slt", i, hi), loop_body, [], exit_, [])
            b.set_block(loop_body)
            body(i)
            b.br(header, b.add(i, step))
            b.set_block(exit_)

        def _if(self, cond, then):
            b = self.b
            yes, done = b.new_block(), b.new_block()
            b.cond_br(cond, yes, [], done, [])
            b.set_block(yes)
            then()
            b.br(done)
            b.set_block(done)

        def _accessors(self, flat, idx_of, lead=False, inner=None):
            """(load_input, index) at flat element ``flat``; ``idx_of()`` its index;
            ``lead``: ``flat`` starts a group of ``VEC`` (aligned loads of ``v`` and ``w``
            inputs); ``inner``: its position in its row (row kernels' ``w``/``u`` inputs)."""
            b, B, spec = self.b, self.B, self.spec
            memo: dict = {}

            def idx():
                if "idx" not in memo:
                    memo["idx"] = idx_of()
                return memo["idx"]

            def load_input(i):
                if i in memo:
                    return memo[i]
                cls, dtype = self.variant[i], spec.input_dtypes[i]
                if cls in "sk":
                    v = self.pre[i]
                elif cls in "cvwu":
                    at = flat if cls in "cv" else inner
                    ptr = b.gep(self.data[i], at, B.mem_type(dtype))
                    align = _group_align(dtype) if lead and cls in "vw" else None
                    v = self._load(ptr, dtype, align)
                else:
                    v = self._load(self._offset(self.data[i], idx(), self.in_strides[i]), dtype)
                memo[i] = v
                return v

            return load_input, lambda d: idx()[d]

        # -------------------------------------------------------- elementwise
        def _load(self, ptr, dtype, align=None):
            """``_Gen._load`` with an optional alignment (which lets LLVM's load-store
            vectorizer merge a group's loads into one 16-byte ``ld.global.v4``)."""
            if align is None:
                return super()._load(ptr, dtype)
            from xdsl.dialects import llvm as xllvm

            b, B = self.b, self.B
            name = np.dtype(dtype).name
            t = {"bool": B.i8, "float16": B.f16, "bfloat16": B.i16}.get(name, B.mem_type(dtype))
            raw = b._add(xllvm.LoadOp(ptr, t, alignment=align))
            if name == "bool":
                return b.icmp("ne", raw, b.const(0, B.i8))
            if name == "float16":
                return b.fpext(raw, B.f32)
            if name == "bfloat16":
                return b.bitcast(b.shl(b.zext(raw, B.i32), b.const(16, B.i32)), B.f32)
            return raw

        def _element_values(self, j, lead=False):
            """The outputs' values at flat element ``j`` (their loads emitted, no store)."""
            spec = self.spec
            load_input, index = self._accessors(
                j, lambda: self._unflatten(j, self.sizes), lead=lead
            )
            env: dict = {}
            vals = []
            for o, ref in enumerate(spec.outputs):
                dtype = self._out_dtype(o)
                hint = spec.input_dtypes[ref[1]] if ref[0] == "in" else dtype
                vals.append(self._eval(ref, env, load_input, index, hint))
            return vals

        def _store_values(self, j, vals, lead=False):
            b, B = self.b, self.B
            for o, v in enumerate(vals):
                dtype = self._out_dtype(o)
                ptr = b.gep(self.data[self.n_in + o], j, B.mem_type(dtype))
                self._store_aligned(v, ptr, dtype, lead)

        def _grid_elementwise(self):
            b, B = self.b, self.B
            total = self._product(self.sizes)
            threads = b.mul(self._sreg("ntid"), self._sreg("nctaid"))
            first = b.add(b.mul(self._sreg("ctaid"), self._sreg("ntid")), self._sreg("tid"))
            if set(self.variant) <= {"v", "s", "k"}:
                self._vector_elementwise(total, threads, first)
                return
            step = b.mul(threads, b.const(UNROLL, B.i64))

            def element(j):
                self._store_values(j, self._element_values(j))

            def chunk(c):
                for k in range(UNROLL):
                    j = b.add(c, b.mul(threads, b.const(k, B.i64))) if k else c
                    self._if(b.icmp("slt", j, total), lambda j=j: element(j))

            self._loop_step(first, total, step, chunk)

        def _vector_elementwise(self, total, threads, first):
            """Every input aligned and contiguous (or one element): thread ``t`` takes the
            groups of ``VEC`` consecutive elements ``t, t + T, ...``; all of a group's
            loads come before its stores, so LLVM merges them into vector accesses. The
            last ``total % VEC`` elements are one each, on the first threads."""
            b, B = self.b, self.B
            vec = b.const(VEC, B.i64)
            groups = b.sdiv(total, vec)

            def group(g):
                q = b.mul(g, vec)
                idx = [q if k == 0 else b.add(q, b.const(k, B.i64)) for k in range(VEC)]
                vals = [self._element_values(j, lead=k == 0) for k, j in enumerate(idx)]
                for k, (j, v) in enumerate(zip(idx, vals)):
                    self._store_values(j, v, lead=k == 0)

            self._loop_step(first, groups, threads, group)
            j = b.add(b.mul(groups, vec), first)
            self._if(
                b.icmp("slt", j, total), lambda: self._store_values(j, self._element_values(j))
            )

        def _store_aligned(self, v, ptr, dtype, lead):
            """A store, carrying a group's alignment when ``lead`` (a group's first)."""
            from xdsl.dialects import llvm as xllvm

            if lead and np.dtype(dtype).name not in ("bool", "float16", "bfloat16"):
                self.b._add(xllvm.StoreOp(v, ptr, alignment=_group_align(dtype)))
            else:
                self._store(v, ptr, dtype)

    return _GpuGen


def kernel_module(spec: KernelSpec, variant: str, name: str = FUNCTION_NAME):
    """The xDSL module of ``spec``'s GPU kernel for ``variant`` (one letter per input).

    >>> from fntorch.lowering.spec import KOp
    >>> f32 = np.dtype("float32")
    >>> spec = KernelSpec(1, 0, (f32,), (KOp("neg", (("in", 0),), (), f32),), (("op", 0),),
    ...                   (False,))
    >>> "llvm.func" in str(kernel_module(spec, "v"))
    True
    """
    letters, r, groups = variant.partition("r")
    fits = not r or (groups.isdigit() and 0 < int(groups) <= REGISTER_GROUPS)
    if len(letters) != len(spec.input_dtypes) or set(letters) - set("vcsgwuk") or not fits:
        raise ValueError(
            f"cuda_codegen.kernel_module: variant must be one of 'v', 'c', 's', 'g', 'k' (a "
            f"row kernel's also 'w', 'u') per input ({len(spec.input_dtypes)} inputs), then "
            f"optionally 'r<groups>' (1 to {REGISTER_GROUPS}) for a row kernel, got {variant!r}"
        )
    by_value = [np.dtype(d).name for c, d in zip(letters, spec.input_dtypes) if c == "k"]
    if by_value and (spec.reduce_rank or set(by_value) - BY_VALUE):
        raise ValueError(
            f"cuda_codegen.kernel_module: a 'k' input (passed by value) is for elementwise "
            f"kernels of {sorted(BY_VALUE)}, got variant {variant!r} of {spec.key()!r}"
        )
    if (r or set(letters) & set("wu")) and not spec.reduce_rank:
        raise ValueError(
            f"cuda_codegen.kernel_module: variant {variant!r} is a row kernel's, but the "
            f"kernel {spec.key()!r} has no reduction"
        )
    if not supports(spec):
        raise NotImplementedError(
            f"cuda_codegen.kernel_module: no GPU form for the kernel {spec.key()!r} "
            f"(supported reductions: {sorted(WARP_REDUCIBLE | ARG_REDUCTIONS)})"
        )
    gen = _gpu_gen_class()(spec, letters, (), name)
    gen.row_groups = int(groups or 0)
    return gen.build().module


def kernel_ir(spec: KernelSpec, variant: str, name: str = FUNCTION_NAME) -> str:
    """The LLVM IR text of ``spec``'s GPU kernel, its entry marked ``ptx_kernel``.

    >>> from fntorch.lowering.spec import KOp
    >>> f32 = np.dtype("float32")
    >>> spec = KernelSpec(1, 0, (f32,), (KOp("neg", (("in", 0),), (), f32),), (("op", 0),),
    ...                   (False,))
    >>> kernel_ir(spec, "g", name="neg").count('define ptx_kernel void @"neg"')
    1
    """
    from ..lowering.emit import emit_module

    mod = emit_module(kernel_module(spec, variant, name), triple="nvptx64-nvidia-cuda")
    mod.get_global(name).calling_convention = "ptx_kernel"
    return str(mod)
