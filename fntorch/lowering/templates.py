"""Kernel templates beyond fusion: gather, scatter*, cumulative scans, reduce_window (and
``lu``/``lu_solve``, in ``templates_linalg``).

``compile_template(spec)`` compiles a ``spec_special`` spec into a ``TemplateKernel``;
``bind(params)`` gives the callable a program step uses, ``kernel(inputs, outputs)``,
with the primitive's own operands (numpy arrays, any strides) and one C-contiguous
output of the primitive's shape and dtype. Each kernel is the same exported function
as the fused ones (``kernels.py``): ``int32 fntorch_kernel(PyObject *arrays, int64 lo,
int64 hi)`` reading data pointers, sizes and byte strides from the ndarray structs, with
``[lo, hi)`` a range of its outer (parallel) loop; it goes through the same in-memory
and on-disk cache (``cache.load_or_build``; keys start with the template kind, so they
never meet a ``KernelSpec`` key).

Templates:

- **gather**: the operand is viewed with the indexed axes in front and the index
  tensors broadcast to the batch shape ``B`` (numpy views, no copies); per batch
  position the indices are clamped into range, then the trailing operand block is
  copied bit for bit. Parallel over ``B[:-1]``.
- **scatter**: ``numpy.copyto`` of the operand into the output, then one sequential
  loop over ``B`` in C order applying the combiner (``scatter``: overwrite, so the last
  duplicate wins, as the numpy impl; add/mul/min/max accumulate duplicates), skipping
  positions with any out-of-range index. Single-threaded: duplicates make the updates
  order-dependent.
- **scan**: loops over the dims before the axis (parallel), then sequentially along
  the axis (backwards when ``reverse``), carrying the running value in a register when
  the axis is last, else reading the previous output row (the inner loop over the
  dims after the axis is then independent per element).
- **reduce_window**: per output element, loops over the window taps (constant trip
  counts: LLVM unrolls small windows); a tap in padding or in a base-dilation hole
  reads the identity. Dims whose taps can never leave the input (no padding, no base
  dilation) get no bounds checks. Parallel over the output's leading dims.

Narrow floats (float16, bfloat16) are float32 in registers: scans and scatter
combiners round after every step (numpy's float16 ufuncs do too); window sums
accumulate in float32 and round once, as the numpy impl does.

>>> import numpy as np
>>> from fntorch.lowering.spec_special import ScanSpec
>>> k = compile_template(ScanSpec("cumsum", np.dtype("float32"), 1, 0, False))
>>> out = np.empty(4, np.float32)
>>> k.bind({"axis": 0, "reverse": False})([np.ones(4, np.float32)], [out]); out.tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import math

import numpy as np

from . import cache as _cache
from . import templates_linalg
from .codegen import _Gen
from .kernels import PARALLEL_THRESHOLD
from .spec import FUNCTION_NAME
from .spec_special import GatherSpec, LuSolveSpec, LuSpec, ScanSpec, ScatterSpec, WindowSpec
from .target import Target, default_target


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


def _identity_value(kind: str, dtype):
    """The identity of a scan or window reduction ``kind`` (a primitive name) in ``dtype``.
    Float sums start from -0.0, the one value with ``-0.0 + x == x`` for every x."""
    if kind.endswith("sum"):
        return -0.0 if _is_float(dtype) else 0
    if kind.endswith("prod"):
        return 1
    is_max = kind.endswith("max")
    if _is_float(dtype):
        return float("-inf") if is_max else float("inf")
    info = np.iinfo(dtype)
    return info.min if is_max else info.max


# ---------------------------------------------------------------------- codegen
class _TGen:
    """Emits one template kernel; borrows the fused kernels' value helpers."""

    # Narrow-float loads/stores/rounding and index arithmetic, shared with kernels.py.
    _load = _Gen._load
    _store = _Gen._store
    _round = _Gen._round
    _bf16_bits = _Gen._bf16_bits
    _unflatten = _Gen._unflatten
    _product = _Gen._product
    _offset = _Gen._offset

    def __init__(self, spec, abi: tuple, name: str = FUNCTION_NAME):
        from . import builder as B
        from .rules import lowering_rules

        self.B, self.spec, self.rules, self.name = B, spec, lowering_rules, name
        self.abi = abi  # the target's entry_abi()
        self.b = B.KernelBuilder()

    # ------------------------------------------------------------ prologue
    def start(self, ranks):
        """The exported function; loads data pointers, sizes and strides of the arrays
        (``ranks[i]`` dims each); returns ``(lo, hi)``."""
        b, B = self.b, self.B
        arrays, lo, hi = b.function(self.name, [B.PTR, B.i64, B.i64], ret=B.i32)
        off_data, off_dims, off_strides, items = self.abi
        objs = [b.load(b.gep_const(arrays, items + 8 * i), B.PTR) for i in range(len(ranks))]
        self.data = [b.load(b.gep_const(o, off_data), B.PTR) for o in objs]
        self.sizes, self.strides = [], []
        for o, n in zip(objs, ranks):
            dims = b.load(b.gep_const(o, off_dims), B.PTR) if n else None
            st = b.load(b.gep_const(o, off_strides), B.PTR) if n else None
            self.sizes.append([b.load(b.gep_const(dims, 8 * d), B.i64) for d in range(n)])
            self.strides.append([b.load(b.gep_const(st, 8 * d), B.i64) for d in range(n)])
        return lo, hi

    def finish(self):
        self.b.ret(self.b.const(0, self.B.i32))
        return self.b

    def i64(self, v):
        return self.b.const(v, self.B.i64)

    def hi_or_all(self, hi, total):
        b = self.b
        return b.select(b.icmp("slt", hi, self.i64(0)), total, hi)

    def nest(self, sizes, ptrs, strides, carried, body):
        """Row-major loops over ``sizes``; each pointer in ``ptrs`` advances by its
        byte ``strides`` (one per dim); ``body(ptrs, flat, carried) -> carried``."""
        b, B = self.b, self.B

        def level(d, ps, flat, cur):
            if d == len(sizes):
                return list(body(ps, flat, cur))

            def step(e, cur2):
                nps = [b.gep(p, b.mul(e, s[d]), B.i8) for p, s in zip(ps, strides)]
                return level(d + 1, nps, b.add(b.mul(flat, sizes[d]), e), cur2)

            return b.loop(self.i64(0), sizes[d], cur, step)

        return level(0, list(ptrs), self.i64(0), list(carried))

    def bits_type(self, dtype):
        """An integer type as wide as one element: gather/scatter move bits."""
        return self.B.int_type(np.dtype(dtype).itemsize * 8)

    def index(self, ptr, dtype, n, clamp: bool):
        """The index at ``ptr`` as i64 and, unless ``clamp``, whether it is in [0, n).

        Sign- or zero-extended by its dtype, an index is in range iff it is unsigned-
        less than ``n`` (negative values become huge), which covers uint64 too."""
        b, B = self.b, self.B
        dtype = np.dtype(dtype)
        v = b.int_resize(b.load(ptr, B.mem_type(dtype)), B.i64, signed=dtype.kind == "i")
        if not clamp:
            return v, b.icmp("ult", v, n)
        if dtype.kind == "i":
            v = b.select(b.icmp("slt", v, self.i64(0)), self.i64(0), v)
        return b.select(b.icmp("ult", v, n), v, b.sub(n, self.i64(1))), None

    # ------------------------------------------------------------- combiners
    def combine(self, kind: str, acc, x, dtype):
        """``acc (op) x`` for the scan/scatter/window ``kind``; numpy's argument order
        (``np.maximum(acc, x)``) so NaN and tie behaviour match the impls."""
        b = self.b
        f = _is_float(dtype)
        if kind.endswith("add") or kind.endswith("sum"):
            return b.fadd(acc, x) if f else b.add(acc, x)
        if kind.endswith("mul") or kind.endswith("prod"):
            return b.fmul(acc, x) if f else b.mul(acc, x)
        rule = self.rules["max" if kind.endswith("max") else "min"]
        return rule(b, acc, x, dtype=np.dtype(dtype))

    def identity(self, kind, dtype):
        B = self.B
        v = _identity_value(kind, dtype)
        t = B.reg_type(dtype)
        return self.b.const(v, t)

    # ------------------------------------------------------------- templates
    def gather(self):
        b, B, s = self.b, self.B, self.spec
        k, nb, nr = len(s.index_dtypes), s.batch_rank, s.rest_rank
        lo, hi = self.start([k + nr] + [nb] * k + [nb + nr])
        xs, x = self.sizes[0], self.data[0]
        batch = self.sizes[1][:nb]
        out = self.data[-1]
        rest_total = self._product(xs[k:])
        outer = batch[:-1]
        inner = batch[-1] if nb else self.i64(1)
        hi = self.hi_or_all(hi, self._product(outer))
        word = self.bits_type(s.dtype)

        def row(t, _):
            bidx = self._unflatten(t, outer) if outer else []
            bases = [
                self._offset(self.data[1 + i], bidx, self.strides[1 + i][:-1]) for i in range(k)
            ]

            def elem(j, _):
                src = x
                for i in range(k):
                    p = b.gep(bases[i], b.mul(j, self.strides[1 + i][-1]), B.i8) if nb else bases[i]
                    v, _ok = self.index(p, s.index_dtypes[i], xs[i], clamp=True)
                    src = b.gep(src, b.mul(v, self.strides[0][i]), B.i8)
                dst = b.mul(b.add(b.mul(t, inner), j), rest_total)

                def copy(ps, flat, _):
                    b.store(b.load(ps[0], word), b.gep(out, b.add(dst, flat), word))
                    return []

                self.nest(xs[k:], [src], [self.strides[0][k:]], [], copy)
                return []

            b.loop(self.i64(0), inner, [], elem)
            return []

        b.loop(lo, hi, [], row)
        return self.finish()

    def scatter(self):
        b, B, s = self.b, self.B, self.spec
        k, nb, nr = len(s.index_dtypes), s.batch_rank, s.rest_rank
        self.start([k + nr] + [nb] * k + [nb + nr])
        xs, dst0 = self.sizes[0], self.data[0]
        batch = self.sizes[-1][:nb]
        upd_strides = self.strides[-1]
        overwrite = s.kind == "scatter"
        word = self.bits_type(s.dtype)

        def position(ps, flat, _):
            dst, ok = dst0, None
            for i in range(k):
                v, in_range = self.index(ps[i], s.index_dtypes[i], xs[i], clamp=False)
                ok = in_range if ok is None else b.and_(ok, in_range)
                dst = b.gep(dst, b.mul(v, self.strides[0][i]), B.i8)
            yes, done = b.new_block(), b.new_block()
            b.cond_br(ok, yes, [], done, [])
            b.set_block(yes)

            def update(qs, _flat, _):
                d, u = qs
                if overwrite:
                    b.store(b.load(u, word), d)
                else:
                    new = self.combine(
                        s.kind, self._load(d, s.dtype), self._load(u, s.dtype), s.dtype
                    )
                    self._store(new, d, s.dtype)  # rounds narrow floats once per step
                return []

            self.nest(xs[k:], [dst, ps[k]], [self.strides[0][k:], upd_strides[nb:]], [], update)
            b.br(done)
            b.set_block(done)
            return []

        ptrs = [*self.data[1 : 1 + k], self.data[-1]]
        strides = [*(st[:nb] for st in self.strides[1 : 1 + k]), upd_strides[:nb]]
        self.nest(batch, ptrs, strides, [], position)
        return self.finish()

    def scan(self):
        b, B, s = self.b, self.B, self.spec
        r, a = s.rank, s.axis
        lo, hi = self.start([r, r])
        sizes, xst = self.sizes[0], self.strides[0]
        x, out = self.data
        pre, n, post = sizes[:a], sizes[a], sizes[a + 1 :]
        q = self._product(post)
        hi = self.hi_or_all(hi, self._product(pre))
        t_mem = B.mem_type(s.dtype)
        one = self.i64(1)

        def position(i):
            return b.sub(b.sub(n, one), i) if s.reverse else i

        def row(t, _):
            pidx = self._unflatten(t, pre) if pre else []
            xb = self._offset(x, pidx, xst[:a])
            obase = b.mul(t, b.mul(n, q))
            if not post:
                # The axis is last: the running value stays in a register.
                def step(i, acc):
                    pos = position(i)
                    v = self._load(b.gep(xb, b.mul(pos, xst[a]), B.i8), s.dtype)
                    acc = self._round(self.combine(s.kind, acc[0], v, s.dtype), s.dtype)
                    self._store(acc, b.gep(out, b.add(obase, pos), t_mem), s.dtype)
                    return [acc]

                b.loop(self.i64(0), n, [self.identity(s.kind, s.dtype)], step)
                return []

            def step(i, _):
                pos = position(i)
                first = b.icmp("eq", i, self.i64(0))
                prev = b.add(pos, one) if s.reverse else b.sub(pos, one)
                prev = b.select(first, pos, prev)  # a valid row; its value is not used
                orow = b.add(obase, b.mul(pos, q))
                prow = b.add(obase, b.mul(prev, q))
                xrow = b.gep(xb, b.mul(pos, xst[a]), B.i8)
                ident = self.identity(s.kind, s.dtype)

                def elem(ps, flat, _):
                    v = self._load(ps[0], s.dtype)
                    old = self._load(b.gep(out, b.add(prow, flat), t_mem), s.dtype)
                    acc = self.combine(s.kind, b.select(first, ident, old), v, s.dtype)
                    self._store(acc, b.gep(out, b.add(orow, flat), t_mem), s.dtype)
                    return []

                self.nest(post, [xrow], [xst[a + 1 :]], [], elem)
                return []

            b.loop(self.i64(0), n, [], step)
            return []

        b.loop(lo, hi, [], row)
        return self.finish()

    def window(self):
        b, B, s = self.b, self.B, self.spec
        r = s.rank
        lo, hi = self.start([r, r])
        xs, xst, x = self.sizes[0], self.strides[0], self.data[0]
        osz, out = self.sizes[1], self.data[1]
        # A 0-d operand has one window (no taps to skip): one row of one element.
        outer, inner = (osz[:-1], osz[-1]) if r else ([], self.i64(1))
        hi = self.hi_or_all(hi, self._product(outer))
        t_mem = B.mem_type(s.dtype)
        ident = self.identity(s.kind, s.dtype)
        # Sums add +0.0 for a padding tap, as the numpy impl (which pads with zeros) does.
        hole = self.b.const(0, B.reg_type(s.dtype)) if s.kind.endswith("sum") else ident
        trivial = [
            lo_ <= 0 and hi_ <= 0 and bd == 1 for (lo_, hi_), bd in zip(s.padding, s.base_dilation)
        ]

        def row(t, _):
            oidx = self._unflatten(t, outer) if outer else []

            def elem(j, _):
                p = [*oidx, j][:r]
                base = [
                    b.sub(b.mul(p[d], self.i64(s.window_strides[d])), self.i64(s.padding[d][0]))
                    for d in range(r)
                ]

                def taps(d, ptr, ok, acc):
                    if d == r:
                        v = self._load(ptr, s.dtype)
                        if ok is not None:
                            v = b.select(ok, v, hole)
                        return [self.combine(s.kind, acc[0], v, s.dtype)]

                    def tap(kk, cur):
                        qd = b.add(base[d], b.mul(kk, self.i64(s.window_dilation[d])))
                        okd = ok
                        if not trivial[d]:
                            bd = s.base_dilation[d]
                            src = b.sdiv(qd, self.i64(bd)) if bd > 1 else qd
                            good = b.and_(b.icmp("sge", qd, self.i64(0)), b.icmp("slt", src, xs[d]))
                            if bd > 1:
                                good = b.and_(
                                    good, b.icmp("eq", b.srem(qd, self.i64(bd)), self.i64(0))
                                )
                            okd = good if ok is None else b.and_(ok, good)
                            # A safe address for the masked load.
                            qd = b.select(good, src, self.i64(0))
                        nptr = b.gep(ptr, b.mul(qd, xst[d]), B.i8)
                        return taps(d + 1, nptr, okd, cur)

                    return b.loop(self.i64(0), self.i64(s.window_dimensions[d]), acc, tap)

                (acc,) = taps(0, x, None, [ident])
                self._store(acc, b.gep(out, b.add(b.mul(t, inner), j), t_mem), s.dtype)
                return []

            b.loop(self.i64(0), inner, [], elem)
            return []

        b.loop(lo, hi, [], row)
        return self.finish()

    def build(self):
        s = self.spec
        if isinstance(s, GatherSpec):
            return self.gather()
        if isinstance(s, ScatterSpec):
            return self.scatter()
        if isinstance(s, ScanSpec):
            return self.scan()
        if isinstance(s, WindowSpec):
            return self.window()
        if isinstance(s, LuSpec):
            return templates_linalg.lu(self)
        if isinstance(s, LuSolveSpec):
            return templates_linalg.lu_solve(self)
        raise TypeError(f"compile_template: not a template spec: {s!r}")


# ------------------------------------------------------------------------ kernels


class TemplateKernel:
    """A compiled template spec. ``bind(params)`` gives ``kernel(inputs, outputs)``;
    ``run(arrays, outer, work)`` is the raw call on the arrays the template reads."""

    def __init__(self, spec, target: Target | None = None):
        self.spec = spec
        self.target = target = target or default_target()
        key = f"{spec.key()}|abi={target.entry_abi()}"

        def build(name: str) -> bytes:
            from .emit import emit_module

            return target.compile_object(str(emit_module(self.module(name))))

        self._hold, self._release = target.callables(_cache.load_or_build(key, build, target))

    def module(self, name: str = FUNCTION_NAME):
        """The kernel's xDSL module (``llvm`` dialect), its function called ``name``."""
        return _TGen(self.spec, self.target.entry_abi(), name).build().module

    def as_text(self) -> str:
        """The kernel's xDSL IR, as xDSL prints it."""
        return str(self.module())

    def run(self, arrays: tuple, outer: int, work: int, parallel: bool = True) -> None:
        """Calls the kernel on ``arrays``; splits ``[0, outer)`` across the threads when
        ``work`` (elements touched) is large and ``parallel``."""
        threads = self.target.num_threads()
        if not parallel or work < PARALLEL_THRESHOLD or threads < 2 or outer < 2:
            fn = self._hold if work < PARALLEL_THRESHOLD else self._release
            fn(id(arrays), 0, -1)
            return
        self.target.run_split(self._release, id(arrays), outer, min(threads, outer))

    def bind(self, params: dict):
        """``kernel(inputs, outputs)`` for a primitive with these ``params``.

        >>> import numpy as np
        >>> from fntorch.lowering.spec_special import GatherSpec
        >>> i64, f32 = np.dtype("int64"), np.dtype("float32")
        >>> g = compile_template(GatherSpec(f32, (i64,), 1, 0)).bind({"axes": (0,)})
        >>> out = np.empty(3, f32)
        >>> g([np.arange(4, dtype=f32), np.array([3, 9, -1])], [out]); out.tolist()
        [3.0, 3.0, 0.0]
        """
        s = self.spec
        if isinstance(s, GatherSpec):
            return _BoundGather(self, tuple(params["axes"]))
        if isinstance(s, ScatterSpec):
            return _BoundScatter(self, tuple(params["axes"]))
        if isinstance(s, ScanSpec):
            return _BoundScan(self)
        if isinstance(s, LuSpec):
            return templates_linalg.BoundLu(self)
        if isinstance(s, LuSolveSpec):
            return templates_linalg.BoundLuSolve(self)
        return _BoundWindow(self)


class _Bound:
    __slots__ = ("kernel", "axes")

    def __init__(self, kernel: TemplateKernel, axes=()):
        self.kernel, self.axes = kernel, axes


def _to(x, shape):
    """``x`` broadcast to ``shape`` as an ndarray (the kernel reads its struct); ``x``
    itself when it is one of that shape (a compiled program calls a template with the
    same shapes every time, and ``np.broadcast_to`` costs ~2.6 us where the template's
    loop may take less)."""
    return x if type(x) is np.ndarray and x.shape == shape else np.broadcast_to(x, shape)


def _front(x, axes):
    k = len(axes)
    if axes == tuple(range(k)):
        return x
    return np.moveaxis(x, axes, tuple(range(k)))


def _gather_fallback(inputs, outputs, axes, impls):
    """The target's impl, for an empty indexed axis (nothing to clamp into: it raises)."""
    from ..ops._prims_indexing import gather_p

    outputs[0][...] = impls[gather_p](*inputs, axes=axes)


class _BoundGather(_Bound):
    def __call__(self, inputs, outputs) -> None:
        x, *idx = inputs
        (out,) = outputs
        if out.size == 0:
            return
        if x.size == 0:  # nothing to clamp into: numpy says why
            _gather_fallback(inputs, outputs, self.axes, self.kernel.target.impls)
            return
        batch = out.shape[: self.kernel.spec.batch_rank]
        arrays = (_front(x, self.axes), *[_to(i, batch) for i in idx], out)
        outer = math.prod(batch[:-1])
        self.kernel.run(arrays, outer, out.size)


class _BoundScatter(_Bound):
    __slots__ = ("shapes",)

    def __init__(self, kernel: TemplateKernel, axes=()):
        super().__init__(kernel, axes)
        # operands' shapes -> the batch and update shapes and the work they give: a
        # compiled program calls with the same shapes every time
        self.shapes: dict = {}

    def __call__(self, inputs, outputs) -> None:
        x, *idx, upd = inputs
        (out,) = outputs
        np.copyto(out, x)
        key = (out.shape, *[i.shape for i in idx])
        shapes = self.shapes.get(key)
        if shapes is None:
            batch = np.broadcast_shapes(*key[1:])
            gshape = batch + _front(out, self.axes).shape[len(self.axes) :]
            shapes = self.shapes[key] = batch, gshape, out.size and math.prod(gshape)
        batch, gshape, work = shapes
        if not work:
            return
        view = _front(out, self.axes)  # writes go to ``out`` itself
        arrays = (view, *[_to(i, batch) for i in idx], _to(upd, gshape))
        self.kernel.run(arrays, 1, work, parallel=False)


class _BoundScan(_Bound):
    def __call__(self, inputs, outputs) -> None:
        (x,), (out,) = inputs, outputs
        if out.size == 0:
            return
        axis = self.kernel.spec.axis
        arrays = (x, out)
        self.kernel.run(arrays, math.prod(x.shape[:axis]), out.size)


class _BoundWindow(_Bound):
    def __call__(self, inputs, outputs) -> None:
        (x,), (out,) = inputs, outputs
        if out.size == 0:
            return
        s = self.kernel.spec
        if x.size == 0:  # every tap is padding
            out.fill(_identity_value(s.kind, s.dtype) if not s.kind.endswith("sum") else 0)
            return
        arrays = (x, out)
        taps = math.prod(s.window_dimensions)
        self.kernel.run(arrays, math.prod(out.shape[:-1]), out.size * taps)


def compile_template(spec, target: Target | None = None) -> TemplateKernel:
    """The compiled ``TemplateKernel`` of a ``spec_special`` spec (memoized in memory
    and on disk, like ``kernels.compile_kernel``).

    >>> import numpy as np
    >>> from fntorch.lowering.spec_special import WindowSpec
    >>> spec = WindowSpec("reduce_window_max", np.dtype("float32"), (2,), (2,), ((0, 0),),
    ...                   (1,), (1,))
    >>> out = np.empty(2, np.float32)
    >>> compile_template(spec).bind({})([np.arange(4, dtype=np.float32)], [out])
    >>> out.tolist()
    [1.0, 3.0]
    """
    target = target or default_target()
    return _cache.memoized(("template", spec.key(), target), lambda: TemplateKernel(spec, target))


def template_kernel(prim: str, in_avals, params: dict, target: Target | None = None):
    """``kernel(inputs, outputs)`` computing primitive ``prim`` (by name) on operands of
    ``in_avals``, or None when no template supports it (the caller keeps the numpy impl).

    >>> import numpy as np
    >>> x = np.array([[1, 5, 2]], np.int32)
    >>> k = template_kernel("cummax", [x], {"axis": 1, "reverse": True})
    >>> out = np.empty_like(x); k([x], [out]); out.tolist()
    [[5, 5, 2]]
    """
    from .spec_special import spec_for

    spec = spec_for(prim, in_avals, params)
    if spec is None:
        return None
    return compile_template(spec, target).bind(params)
