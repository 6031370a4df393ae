"""The CUDA device's eager impl table: CuPy for the primitives it computes as fntorch
does, the CPU's impl through the host for the rest.

``build_impls(cupy)`` fills the table when the first CUDA device registers (CuPy is
imported then, never at ``import fntorch``). Every CPU primitive gets an entry:

- *native*: a CuPy ufunc or function whose result equals the CPU impl's (the float
  ufuncs, comparisons, bitwise ops, sums/products/max/min/all/any, the structural and
  view primitives, ``select_n``, ``rsqrt``, ``logistic``, ``sign``, ``signbit``,
  ``erf`` (the CPU's float32 rational function), float ``pow``, ``dot_general`` as one
  batched product through cuBLAS, ``cuda_gemm``);
- *native* too: ``gather`` and ``scatter_add`` (``cuda_indexing``: no host sync);
- the CPU's own impls written over an array module and built over CuPy: convolution
  and the window reductions (``cpu_linalg``: im2col and tap loops, products through
  cuBLAS); ``fft`` (cuFFT through ``cupy.fft``, complex operands included); ``sort``,
  ``cumsum``/``cumprod`` but for half floats (a parallel scan: float sums within
  rounding of the CPU's, not bit for bit) and ``cummax``/``cummin`` (``cpu_reduce``);
  integer ``div``/``rem`` with XLA's edge cases, ``integer_pow``, the shifts, the complex
  parts, ``pad`` and the dynamic slices (``xp_impls``);
- ``cholesky``: cuSOLVER through ``cupy.linalg`` (a batch with a matrix it fails on
  takes the host, which gives that matrix NaNs); ``eigh``, ``qr``, ``svd``, ``solve``,
  ``triangular_solve``, ``lu_solve`` and ``lu`` the same way (``cuda_solver``: within
  rounding of the CPU's, vectors up to their signs, which are the solver's choice);
- *through the host*: every other primitive (integer ``pow``, erf_inv, lgamma, digamma,
  nextafter, the other scatters, ``eig``) copies its operands to the host,
  runs the CPU impl and copies the results back. Correct and bit-identical to the CPU,
  but slow: ``host_primitives(table)`` names them, so the gap is visible.

The random draws (threefry: uint32 adds, xors and shifts, all native) are the CPU's bits.

Control flow (``cond``, ``while_loop``, ``scan``) runs its sub-graphs as compiled
programs on the device (PTX kernels and cuBLAS, one program per sub-graph, compiled on
first use); ``while_loop`` reads its predicate on the host once per iteration.

>>> "reduce_sum" in NATIVE_NAMES and "lgamma" not in NATIVE_NAMES
True
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor
from ..ops import _prims_control as pc
from ..ops import _prims_elementwise as ew
from ..ops import _prims_indexing as pi
from ..ops import _prims_reduce as r
from ..ops import _prims_structural as ps
from ._device import cpu_impls
from .cpu_elementwise import _UFUNCS, erf_impl
from .cpu_fft import fft_impl
from .cpu_linalg import conv_impl, reduce_window_impl
from .cpu_reduce import cum_extreme_impls, scan_impls, sort_impl
from .cpu_structural import float_to_int
from .cuda_bf16 import Bf16Array, as_device, bf16_aware, to_device
from .cuda_gemm import gemm
from .cuda_indexing import indexing_impls
from .cuda_solver import solver_impls
from .xp_impls import xp_impls

# Names of the primitives computed natively by CuPy (the rest go through the host).
NATIVE_NAMES = frozenset(
    {p.name for p in _UFUNCS}
    | {
        "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
        "reduce_or", "argmax", "argmin", "convert_element_type", "iota",
        "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "rev",
        "slice", "concatenate", "copy", "stop_gradient", "select_n", "clamp", "max",
        "min", "dot_general", "cond", "while_loop", "scan", "jit_call", "rsqrt",
        "logistic", "sign", "signbit", "erf", "div", "rem", "pow (float)", "gather",
        "scatter_add (float32/64, int32, uint32)", "conv_general_dilated",
        "reduce_window_sum", "reduce_window_max", "reduce_window_min", "fft", "cholesky",
        "eigh", "qr", "svd", "solve", "triangular_solve", "lu_solve", "lu (with cupyx)",
        "integer_pow", "shift_left", "shift_right_logical", "shift_right_arithmetic", "real",
        "imag", "conj", "complex", "pad", "dynamic_slice", "dynamic_update_slice", "sort",
        "cumsum (not float16)", "cumprod (not float16)", "cummax", "cummin",
    }
)  # fmt: skip


def _acc(dtype):
    return dt.float32 if dt.is_float(dtype) and dtype.itemsize == 2 else dtype


def _native(cp) -> dict:
    """The CuPy impls, keyed by primitive (each equal to the CPU impl's result)."""
    impls = {}
    for prim, uf in _UFUNCS.items():
        impls[prim] = getattr(cp, uf.__name__)

    from ..lowering.fusion import column_sum_shape

    matmul = _matmul(cp)

    def reduce_sum(x, *, axes):
        # A float sum over leading axes of a contiguous array (bias gradients) as
        # ones @ x, one cuBLAS call, as the CPU's programs use gemv: CuPy's generic
        # reduction took 13 us a call on average for W11's 35 such sums on an H200.
        if x.flags.c_contiguous and column_sum_shape(x.dtype, x.shape, axes):
            k = len(axes)
            rows, cols = math.prod(x.shape[:k]), math.prod(x.shape[k:])
            ones = cp.ones((1, rows), x.dtype)
            return matmul(ones, x.reshape(rows, cols)).reshape(x.shape[k:])
        return cp.sum(x, axis=axes, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)

    def reduce_prod(x, *, axes):
        return cp.prod(x, axis=axes, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)

    def signbit(x):  # the bit itself: CuPy's signbit does not read a NaN's sign
        if x.dtype.kind != "f":
            return x < 0
        return as_device(cp, x).view(np.dtype(f"i{x.dtype.itemsize}")) < 0

    def extreme(fn, prim, positive):
        # The CPU's rules on the device, with no host read: the identity over empty
        # axes, and a zero result signed as the kernels order zeros (-0 below +0): a max
        # is +0 when any +0 was reduced, a min -0 when any -0 was (cpu_reduce).
        def run(x, *, axes):
            if x.size == 0:  # no data to move: the identity of the result's shape
                return cp.asarray(cpu_impls[prim](np.empty(x.shape, x.dtype), axes=axes))
            res = fn(x, axis=axes)
            if not dt.is_float(x.dtype):
                return res
            hit = cp.any((x == 0) & (signbit(x) != positive), axis=axes)
            zero = cp.zeros((), res.dtype)
            return cp.where(res == 0, cp.where(hit == positive, zero, -zero), res)

        return run

    impls[r.reduce_sum_p] = reduce_sum
    impls[r.reduce_prod_p] = reduce_prod
    impls[r.reduce_max_p] = extreme(cp.amax, r.reduce_max_p, True)
    impls[r.reduce_min_p] = extreme(cp.amin, r.reduce_min_p, False)
    impls[r.reduce_and_p] = lambda x, *, axes: cp.all(x, axis=axes)
    impls[r.reduce_or_p] = lambda x, *, axes: cp.any(x, axis=axes)
    impls[r.argmax_p] = lambda x, *, axes, index_dtype: cp.argmax(x, axis=axes[0]).astype(
        index_dtype
    )
    impls[r.argmin_p] = lambda x, *, axes, index_dtype: cp.argmin(x, axis=axes[0]).astype(
        index_dtype
    )

    def convert(x, *, new_dtype):
        x = as_device(cp, x)
        if dt.is_float(x.dtype) and dt.is_integer(new_dtype):
            return float_to_int(x, np.dtype(new_dtype), cp)  # saturating, as XLA's
        return x.astype(new_dtype)

    impls[ps.convert_element_type_p] = convert

    def iota(*, dtype, shape, dimension):
        n = shape[dimension]
        line = cp.arange(n, dtype=np.int64).astype(dtype)
        line = line.reshape((1,) * dimension + (n,) + (1,) * (len(shape) - dimension - 1))
        return cp.broadcast_to(line, shape)

    impls[ps.iota_p] = iota

    def broadcast_in_dim(x, *, shape, broadcast_dimensions):
        x = as_device(cp, x)
        if list(broadcast_dimensions) != sorted(broadcast_dimensions):
            order = sorted(range(x.ndim), key=lambda i: broadcast_dimensions[i])
            x = x.transpose(order)
            broadcast_dimensions = sorted(broadcast_dimensions)
        if x.ndim != len(shape):
            expanded = [1] * len(shape)
            for i, d in enumerate(broadcast_dimensions):
                expanded[d] = x.shape[i]
            x = x.reshape(expanded)
        return cp.broadcast_to(x, shape)

    impls[ps.broadcast_in_dim_p] = broadcast_in_dim
    impls[ps.reshape_p] = lambda x, *, new_sizes: cp.reshape(x, new_sizes)
    impls[ps.transpose_p] = lambda x, *, permutation: cp.transpose(x, permutation)
    impls[ps.squeeze_p] = lambda x, *, dimensions: cp.squeeze(x, axis=dimensions)
    impls[ps.expand_dims_p] = lambda x, *, dimensions: cp.expand_dims(x, dimensions)
    impls[ps.rev_p] = lambda x, *, dimensions: cp.flip(x, dimensions)

    def slice_(x, *, start_indices, limit_indices, strides):
        strides = strides or (1,) * len(start_indices)
        return as_device(cp, x)[tuple(map(slice, start_indices, limit_indices, strides))]

    impls[ps.slice_p] = slice_
    impls[ps.concatenate_p] = lambda *xs, dimension: cp.concatenate(xs, axis=dimension)
    impls[ps.copy_p] = lambda x: cp.array(x, copy=True)
    impls[ps.stop_gradient_p] = lambda x: x

    def select_n(which, *cases):
        if len(cases) == 1:
            shape = cp.broadcast_shapes(cp.shape(which), cp.shape(cases[0]))
            return cp.array(cp.broadcast_to(as_device(cp, cases[0]), shape))
        if which.dtype == np.bool_:
            return cp.where(which, cases[1], cases[0])
        choices = cp.stack(cp.broadcast_arrays(*[as_device(cp, c) for c in cases]))
        return cp.choose(which, choices, mode="clip")

    impls[ew.select_n_p] = select_n
    impls[ew.clamp_p] = lambda lo, x, hi: cp.minimum(cp.maximum(x, lo), hi)
    # of two equal values (+0.0 and -0.0) the second, as the CPU's impl
    impls[ew.max_p] = lambda x, y: cp.where(cp.equal(x, y), y, cp.maximum(x, y))
    impls[ew.min_p] = lambda x, y: cp.where(cp.equal(x, y), y, cp.minimum(x, y))

    # float forms of primitives whose integer forms keep XLA's edge cases on the host
    def float_or_host(prim, fn):
        host = cpu_impls[prim]

        def run(x, y):
            if getattr(x, "dtype", np.dtype(float)).kind in "iub":
                return _through_host(cp, host)(x, y)
            return fn(x, y)

        run.through_host = "integer operands"  # listed by host_primitives
        return run

    impls[ew.pow_p] = float_or_host(ew.pow_p, cp.power)
    impls[ew.rsqrt_p] = lambda x: cp.reciprocal(cp.sqrt(x))

    def logistic(x):  # the CPU's formula: exp of a non-positive number never overflows
        e = cp.exp(-cp.abs(x))
        r = cp.reciprocal(1 + e)
        return cp.where(x >= 0, r, e * r)

    impls[ew.logistic_p] = logistic

    def sign(x):  # by comparisons: numpy's NaN (kept) and zeros (+0.0) by construction
        one, zero = cp.ones((), x.dtype), cp.zeros((), x.dtype)
        if x.dtype.kind == "u":
            return cp.where(x > 0, one, zero)
        r = cp.where(x > 0, one, cp.where(x < 0, -one, zero))
        return cp.where(cp.isnan(x), x, r) if x.dtype.kind == "f" else r

    impls[ew.sign_p] = sign

    impls[ew.signbit_p] = signbit
    impls[ew.erf_p] = erf_impl(cp)  # float32 steps round as numpy's: the CPU's bits

    from ..ops import _prims_decomp as pd
    from ..ops import _prims_fft as pf
    from ..ops import _prims_linalg as pl

    impls[pl.dot_general_p] = _dot_general(cp, matmul)
    impls[pl.conv_general_dilated_p] = conv_impl(cp, matmul)
    impls[pl.reduce_window_sum_p] = reduce_window_impl(cp, "sum")
    impls[pl.reduce_window_max_p] = reduce_window_impl(cp, "max")
    impls[pl.reduce_window_min_p] = reduce_window_impl(cp, "min")
    impls[pf.fft_p] = fft_impl(cp)
    impls[pd.cholesky_p] = _cholesky(cp, _through_host(cp, cpu_impls[pd.cholesky_p]))
    solved = (pd.eigh_p, pd.qr_p, pd.svd_p, pd.solve_p, pd.triangular_solve_p, pd.lu_solve_p,
              pd.lu_p)  # fmt: skip
    impls.update(solver_impls(cp, {p: _through_host(cp, cpu_impls[p]) for p in solved}))
    impls.update(xp_impls(cp))  # div/rem, integer_pow, shifts, complex parts, pad, slices
    impls[r.sort_p] = sort_impl(cp)
    for prim, native in scan_impls(cp).items():
        impls[prim] = _not_half(native, _through_host(cp, cpu_impls[prim]))
    impls.update(cum_extreme_impls(cp))
    impls.update(_control(cp))
    host_scatter_add = _through_host(cp, cpu_impls[pi.scatter_add_p])
    impls.update(indexing_impls(cp, host_scatter_add))
    return impls


def _not_half(native, host):
    """``native``, or ``host`` for float16 operands: a running float16 sum rounds at
    every step, so only the CPU's order of steps gives the CPU's result."""

    def run(x, **params):
        if x.dtype.kind == "f" and x.dtype.itemsize == 2:
            return host(x, **params)
        return native(x, **params)

    return run


def _cholesky(cp, host):
    try:  # CuPy reads cuSOLVER's status only when asked to raise
        import cupyx

        raising = functools.partial(cupyx.errstate, linalg="raise")
    except ImportError:  # numpy standing in for CuPy (tests) raises by itself
        raising = contextlib.nullcontext

    def cholesky(x):
        # the lower triangle is the matrix (what LAPACK reads): cuSOLVER then reads the
        # same numbers whichever triangle it takes
        strict = cp.swapaxes(cp.tril(x, -1), -1, -2)
        full = cp.tril(x) + (strict.conj() if x.dtype.kind == "c" else strict)
        try:
            with raising():
                return cp.linalg.cholesky(full).astype(x.dtype, copy=False)
        except np.linalg.LinAlgError:  # what CuPy raises too
            return host(x)

    return cholesky


def _matmul(cp):
    def matmul(a, b):
        c = gemm(cp, a, b)  # cuBLAS directly: capturable in a CUDA graph (cuda_gemm)
        return cp.matmul(a, b) if c is None else c

    return matmul


def _grouped(x, groups):
    """``x`` with its axes in the order of ``groups`` (lists of axes), each group merged
    where it is a run of consecutive axes: merged first (in ``x``'s own axis order, a view
    of a contiguous ``x``), then transposed, so a weight gradient's ``(batch, seq, d)``
    contracted over its first two axes reaches cuBLAS as a transposed view, not a copy.
    Other groupings transpose first (a reshape that copies where it must).

    >>> x = np.zeros((2, 3, 4))
    >>> g = _grouped(x, ([], [2], [0, 1]))
    >>> g.shape, np.shares_memory(g, x)
    ((4, 6), True)
    """
    runs = [list(g) for g in groups if g]
    order = [d for g in groups for d in g]
    if not all(g == list(range(g[0], g[0] + len(g))) for g in runs):
        return x.transpose(order)
    by_axis = sorted(range(len(runs)), key=lambda i: runs[i][0])
    merged = x.reshape([math.prod(x.shape[d] for d in runs[i]) for i in by_axis])
    return merged.transpose([by_axis.index(i) for i in range(len(runs))])


def _dot_general(cp, matmul):
    def dot_general(lhs, rhs, *, dimension_numbers, preferred_element_type):
        # As one batched matrix product: (batch, free, contract) @ (batch, contract, free)
        # through cupy.matmul (cuBLAS for floats). cupy.einsum reaches the same cuBLAS call
        # but parses its subscripts and plans the contraction on every call: measured on
        # W5's step, its 8 products cost more host time than the GPU spends on them.
        (lc, rc), (lb, rb) = dimension_numbers
        lf = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
        rf = [j for j in range(rhs.ndim) if j not in rc and j not in rb]
        # in the result dtype (int8 x int8 -> int32 accumulates in int32, as on the CPU)
        want = np.dtype(preferred_element_type or np.result_type(lhs.dtype, rhs.dtype))
        lhs, rhs = lhs.astype(want, copy=False), rhs.astype(want, copy=False)
        size = lambda shape, dims: math.prod(shape[d] for d in dims)
        nb, m, k, n = (
            size(lhs.shape, lb),
            size(lhs.shape, lf),
            size(lhs.shape, lc),
            size(rhs.shape, rf),
        )
        a = _grouped(lhs, (lb, lf, lc)).reshape((nb, m, k) if lb else (m, k))
        b = _grouped(rhs, (rb, rc, rf)).reshape((nb, k, n) if rb else (k, n))
        out_shape = tuple(lhs.shape[i] for i in (*lb, *lf)) + tuple(rhs.shape[j] for j in rf)
        return matmul(a, b).reshape(out_shape)

    return dot_general


def _control(cp) -> dict:
    def buffer(o):
        return o._value if isinstance(o, Tensor) else o

    # The sub-graphs run as compiled programs on the operands' GPU (``compiled`` memoizes
    # them by structure): a scan step is then a few kernel launches instead of one eager
    # dispatch per primitive (W8's 100-step RNN: 219 ms eagerly per call on an H100).
    # A while_loop reads its predicate on the host once per iteration: deciding on the
    # device would need the loop itself in a kernel or a conditional CUDA graph node.
    def program(graph, args):
        from ..fx.device import device_of_operand, get_default_device
        from ..lowering.pipeline import compiled

        dev = next((d for d in map(device_of_operand, args) if d is not None), None)
        run = compiled(graph, (dev or get_default_device()).target)
        return lambda *xs: run(*[on_gpu(x, v) for x, v in zip(xs, graph.invars)])

    def on_gpu(a, v):
        a = buffer(a)
        if isinstance(a, (cp.ndarray, Bf16Array)):
            return a
        return to_device(cp, np.asarray(a, v.aval.dtype))

    def cond(index, *operands, branches):
        i = min(max(int(index), 0), len(branches) - 1)
        return program(branches[i], operands)(*operands)

    def while_(*args, cond_graph, body_graph, cond_nconsts, body_nconsts):
        cc = args[:cond_nconsts]
        bc = args[cond_nconsts : cond_nconsts + body_nconsts]
        carry = list(args[cond_nconsts + body_nconsts :])
        test, step = program(cond_graph, args), program(body_graph, args)
        while bool(test(*cc, *carry)[0]):  # one host read each
            carry = step(*bc, *carry)
        return [on_gpu(c, v) for c, v in zip(carry, body_graph.invars[body_nconsts:])]

    def scan(*args, body, num_consts, num_carry, length, reverse):
        consts = list(args[:num_consts])
        carry = list(args[num_consts : num_consts + num_carry])
        split = num_consts + num_carry
        xs = [on_gpu(x, v) for x, v in zip(args[split:], body.invars[split:])]
        ys = [cp.empty((length, *a.shape), a.dtype) for a in body.out_avals[num_carry:]]
        run = program(body, args)
        for i in reversed(range(length)) if reverse else range(length):
            outs = run(*consts, *carry, *[x[i, ...] for x in xs])
            carry = outs[:num_carry]
            for buf, y in zip(ys, outs[num_carry:]):
                buf[i] = y
        return [on_gpu(c, v) for c, v in zip(carry, body.invars[num_consts:split])] + ys

    def call(*args, graph, name):
        # a jit'ed function called under another transform: its program on this device
        return program(graph, args)(*args)

    return {pc.cond_p: cond, pc.while_p: while_, pc.scan_p: scan, pc.call_p: call}


def _through_host(cp, impl):
    """``impl`` (a CPU impl) run on host copies of CuPy operands; results copied back."""

    def back(o):
        if isinstance(o, (list, tuple)):
            return [back(x) for x in o]
        if isinstance(o, (np.ndarray, np.generic)):
            return to_device(cp, o)
        return o

    def run(*args, **params):
        host = [cp.asnumpy(a) if isinstance(a, cp.ndarray) else a for a in args]
        return back(impl(*host, **params))

    run.through_host = True
    return run


def build_impls(cp, table: dict) -> dict:
    """Fills ``table`` (the CUDA ImplTable) for CuPy module ``cp``: native impls first,
    every other CPU primitive through the host. Returns ``table``. (numpy stands in for
    CuPy here: the table is only built, not run.)

    >>> t = build_impls(np, {})
    >>> set(cpu_impls) <= set(t), "lgamma" in host_primitives(t), "exp" in host_primitives(t)
    (True, True, False)
    """
    native = _native(cp)
    for prim, impl in cpu_impls.items():
        host = _through_host(cp, impl)
        fast = native.get(prim)
        if fast is not None and prim.name not in _COMPLEX_OK:
            fast = _real_operands_only(fast, host)
        table[prim] = fast or host
    for prim, impl in native.items():
        table.setdefault(prim, impl)
    for prim, impl in list(table.items()):
        table[prim] = bf16_aware(cp, prim, impl)
    return table


# CuPy's complex math (thrust's) is not the CPU's at the special values the Array API
# fixes (infinities and NaNs in either part; numpy's own complex expm1 is replaced on the
# CPU) and rounds its products and sums differently: these take the host with complex
# operands.
# The native impls that move or select complex values without arithmetic (exact), and
# the FFT.
_COMPLEX_OK = frozenset(
    {
        "broadcast_in_dim", "concatenate", "copy", "expand_dims", "reshape", "rev",
        "select_n", "slice", "squeeze", "stop_gradient", "transpose", "iota", "gather",
        "cond", "scan", "while_loop", "jit_call", "eq", "ne", "real", "imag", "conj",
        "complex", "pad", "dynamic_slice", "dynamic_update_slice",
        # not exact, but no special-value contract: cuFFT rounds as pocketfft does
        "fft",
    }
)  # fmt: skip


def _real_operands_only(fast, host):
    def run(*args, **params):
        for a in args:
            if isinstance(a, complex) or getattr(getattr(a, "dtype", None), "kind", None) == "c":
                return host(*args, **params)
        return fast(*args, **params)

    if hasattr(fast, "through_host"):  # host_primitives still lists a partial host route
        run.through_host = fast.through_host
    return run


def host_primitives(table: dict) -> list[str]:
    """The names of the primitives ``table`` runs through the host, sorted.

    >>> host_primitives({})
    []
    """
    return sorted(p.name for p, f in table.items() if getattr(f, "through_host", False))
