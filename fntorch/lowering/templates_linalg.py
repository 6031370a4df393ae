"""Kernel templates of the LU factorization and solve (``lu``, ``lu_solve``), for
compiled programs on the CPU.

Eagerly these primitives call LAPACK through ctypes, one call per matrix
(``devices/cpu_lapack``): for a batch of small matrices most of that time is the calls
(ctypes, LAPACKE's row-major transposes, OpenBLAS's small-size dispatch), not the
arithmetic. Here one compiled loop runs over the batch, split across the threads like
every template, and each matrix is a few loop nests LLVM vectorizes:

- **lu**: the bound kernel copies the operand into the ``lu`` output (numpy, any
  strides); the kernel factors each matrix in place, right-looking: per column the
  first largest ``|pivot|``, the row swap (of the factors and of the permutation, which
  is built as it goes), the column divided by the pivot (not where it is zero) and the
  rank-1 update of the trailing rows, a contiguous loop each.
- **lu_solve**: ``op(a) x = b`` with ``a[perm] = L U``. Untransposed: ``x = b[perm]``,
  then ``L`` and ``U`` by substitution (one right-hand side: a dot product per row;
  several: whole rows of ``x`` at a time). Transposed (``U^T L^T (P x) = b``): the
  column-oriented substitutions (each step a contiguous update of the rows below or
  above, along a row of ``U`` or ``L``) in a copy of ``b``, then its rows gathered into
  the output by the inverse permutation.

The arithmetic is LAPACK's unblocked algorithms (getf2, trsv), so results agree with the
eager impls to rounding (products may be fused, dot products reassociated).
"""

from __future__ import annotations

import math

import numpy as np


def lu(g):
    """The ``lu`` kernel: arrays ``(lu, pivots, permutation)``, C-contiguous
    ``(nb, m, n)``, ``(nb, k)``, ``(nb, m)``; ``lu`` holds the matrices on entry."""
    b, B, t = g.b, g.B, g.B.mem_type(g.spec.dtype)
    lo, hi = g.start([3, 2, 2])
    lu0, piv0, perm0 = g.data
    nb, m, n = g.sizes[0]
    k = g.sizes[1][1]
    hi = g.hi_or_all(hi, nb)
    zero, one = b.const(0.0, t), g.i64(1)
    i32 = B.i32
    contract = (B.FastMathFlag.ALLOW_CONTRACT,)

    def matrix(q, _):
        a = b.gep(lu0, b.mul(q, b.mul(m, n)), t)
        piv = b.gep(piv0, b.mul(q, k), i32)
        perm = b.gep(perm0, b.mul(q, m), i32)

        def identity(i, _):
            b.store(b.trunc(i, i32), b.gep(perm, i, i32))
            return []

        b.loop(g.i64(0), m, [], identity)

        def column(j, _):
            def at(i, c):
                return b.gep(a, b.add(b.mul(i, n), c), t)

            def search(i, cur):  # LAPACK's isamax: the first largest |a[i, j]|
                p, best = cur
                v = b.fabs(b.load(at(i, j), t))
                bigger = b.fcmp("ogt", v, best)
                return [b.select(bigger, i, p), b.select(bigger, v, best)]

            j1 = b.add(j, one)
            p, _best = b.loop(j1, m, [j, b.fabs(b.load(at(j, j), t))], search)
            b.store(b.trunc(p, i32), b.gep(piv, j, i32))
            rj, rp = at(j, g.i64(0)), at(p, g.i64(0))

            def swap(c, _):  # p == j swaps a row with itself
                x, y = b.load(b.gep(rj, c, t), t), b.load(b.gep(rp, c, t), t)
                b.store(y, b.gep(rj, c, t))
                b.store(x, b.gep(rp, c, t))
                return []

            b.loop(g.i64(0), n, [], swap)
            pj, pp = b.gep(perm, j, i32), b.gep(perm, p, i32)
            x, y = b.load(pj, i32), b.load(pp, i32)
            b.store(y, pj)
            b.store(x, pp)
            pivot = b.load(at(j, j), t)
            singular = b.fcmp("oeq", pivot, zero)

            def row(i, _):
                ri = at(i, g.i64(0))
                q = b.gep(ri, j, t)
                v = b.load(q, t)
                # a zero column stays as it is (getf2 skips the scaling; numpy's loop too)
                l = b.select(singular, zero, b.fdiv(v, pivot))
                b.store(b.select(singular, v, l), q)

                def update(c, _):
                    d = b.gep(ri, c, t)
                    lu_jc = b.fmul(l, b.load(b.gep(rj, c, t), t), flags=contract)
                    b.store(b.fsub(b.load(d, t), lu_jc, flags=contract), d)
                    return []

                b.loop(j1, n, [], update)
                return []

            b.loop(j1, m, [], row)
            return []

        b.loop(g.i64(0), k, [], column)
        return []

    b.loop(lo, hi, [], matrix)
    return g.finish()


def lu_solve(g):
    """The ``lu_solve`` kernel: arrays ``(lu, rows, w, out)``, C-contiguous ``(nb, n, n)``,
    ``(nb, n)``, ``(nb, n, k)``, ``(nb, n, k)``. Untransposed, ``w`` is ``b`` and ``rows``
    the permutation (``x = b[rows]``, then the solves in ``out``); transposed, ``w`` is a
    copy of ``b`` the kernel solves in and ``rows`` the inverse permutation (``out =
    w[rows]``). Row indices are clamped into range: garbage in, never a wild read."""
    b, B, s = g.b, g.B, g.spec
    t = B.mem_type(s.dtype)
    lo, hi = g.start([3, 2, 3, 3])
    lu0, rows0, w0, out0 = g.data
    nb, n, k = g.sizes[2]
    hi = g.hi_or_all(hi, nb)
    zero, one = g.i64(0), g.i64(1)
    contract = (B.FastMathFlag.ALLOW_CONTRACT,)
    vector = s.vector  # rows of x are one element: no loop over them

    def loop(lo_, hi_, body):
        b.loop(lo_, hi_, [], lambda i, _: body(i) or [])

    def down(lo_, hi_, body):  # i = hi_ - 1, ..., lo_
        last = b.sub(hi_, one)
        loop(lo_, hi_, lambda r: body(b.sub(b.add(last, lo_), r)))

    def each(body):  # body(c) for every column of a row of x
        if vector:
            body(zero)
        else:
            loop(zero, k, body)

    def axpy(dst, coef, src):
        """``dst[:] -= coef * src[:]`` along a row; ``src`` a value where ``vector``
        (loaded before the loop over rows: LLVM need not prove no store reaches it)."""

        def el(c):
            x = src if vector else b.load(b.gep(src, c, t), t)
            d = b.gep(dst, c, t)
            b.store(b.fsub(b.load(d, t), b.fmul(coef, x, flags=contract), flags=contract), d)

        each(el)

    def matrix(q, _):
        a = b.gep(lu0, b.mul(q, b.mul(n, n)), t)
        rows = b.gep(rows0, b.mul(q, n), B.i32)
        w = b.gep(w0, b.mul(q, b.mul(n, k)), t)
        out = b.gep(out0, b.mul(q, b.mul(n, k)), t)

        def lu_at(i, c):
            return b.load(b.gep(a, b.add(b.mul(i, n), c), t), t)

        def row(x, i):
            return b.gep(x, b.mul(i, k), t)

        def permuted(i):
            r = b.sext(b.load(b.gep(rows, i, B.i32), B.i32), B.i64)
            return b.select(b.icmp("ult", r, n), r, zero)

        def move(src, dst):
            each(lambda c: b.store(b.load(b.gep(src, c, t), t), b.gep(dst, c, t)))

        def divide(x, d):
            each(lambda c: b.store(b.fdiv(b.load(b.gep(x, c, t), t), d), b.gep(x, c, t)))

        if not s.transpose_a:  # x = b[perm], then L y = x and U x = y in place
            x = out
            loop(zero, n, lambda i: move(row(w, permuted(i)), row(x, i)))
            if vector:  # a dot product per row (reassociated: LLVM vectorizes it)

                def dot(i, lo_, hi_):  # x[i] - sum_{c in [lo_, hi_)} a[i, c] x[c]
                    def term(c, acc):
                        p = b.fmul(lu_at(i, c), b.load(b.gep(x, c, t), t), flags=B.REDUCE_FLAGS)
                        return [b.fsub(acc[0], p, flags=B.REDUCE_FLAGS)]

                    return b.loop(lo_, hi_, [b.load(b.gep(x, i, t), t)], term)[0]

                loop(one, n, lambda i: b.store(dot(i, zero, i), b.gep(x, i, t)))
                down(zero, n, lambda i: b.store(b.fdiv(dot(i, b.add(i, one), n), lu_at(i, i)),
                                                b.gep(x, i, t)))  # fmt: skip
                return []

            def lower(i):
                loop(zero, i, lambda c: axpy(row(x, i), lu_at(i, c), row(x, c)))

            def upper(i):
                loop(b.add(i, one), n, lambda c: axpy(row(x, i), lu_at(i, c), row(x, c)))
                divide(row(x, i), lu_at(i, i))

            loop(one, n, lower)
            down(zero, n, upper)
            return []

        # U^T L^T (P x) = b in w, column-oriented: step j updates the rows after it (U^T)
        # or before it (L^T) along row j of a; then x = P^T w, gathered by the inverse.
        def source(j):
            return b.load(row(w, j), t) if vector else row(w, j)

        def forward(j):
            divide(row(w, j), lu_at(j, j))
            wj = source(j)
            loop(b.add(j, one), n, lambda i: axpy(row(w, i), lu_at(j, i), wj))

        def backward(j):
            wj = source(j)
            loop(zero, j, lambda i: axpy(row(w, i), lu_at(j, i), wj))

        loop(zero, n, forward)
        down(zero, n, backward)
        loop(zero, n, lambda i: move(row(w, permuted(i)), row(out, i)))
        return []

    b.loop(lo, hi, [], matrix)
    return g.finish()


# ------------------------------------------------------------------------ bound kernels


class BoundLu:
    """``kernel(inputs, outputs)`` of ``lu``: the operand copied into the factors' output
    (any strides, by numpy), then factored in place over the flattened batch."""

    __slots__ = ("kernel",)

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, inputs, outputs) -> None:
        (x,), (lu, pivots, perm) = inputs, outputs
        np.copyto(lu, x)
        *batch, m, n = lu.shape
        k = min(m, n)
        nb = math.prod(batch)
        if lu.size == 0:  # no elimination: the identity permutation
            perm[...] = np.arange(m, dtype=perm.dtype)
            return
        arrays = (lu.reshape(nb, m, n), pivots.reshape(nb, k), perm.reshape(nb, m))
        self.kernel.run(arrays, nb, nb * m * n * k)


class BoundLuSolve:
    """``kernel(inputs, outputs)`` of ``lu_solve``: operands made C-contiguous (views when
    they are), the batch flattened; transposed, a copy of ``b`` to solve in and the
    inverse permutation (the stable argsort: the eager impl's rows for any input)."""

    __slots__ = ("kernel",)

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, inputs, outputs) -> None:
        lu, perm, rhs = inputs
        (out,) = outputs
        *batch, n, k = out.shape
        nb = math.prod(batch)
        if out.size == 0:
            return
        lu = np.ascontiguousarray(lu).reshape(nb, n, n)
        perm = np.ascontiguousarray(perm).reshape(nb, n)
        if self.kernel.spec.transpose_a:
            rows = np.argsort(perm, axis=-1, kind="stable").astype(np.int32, copy=False)
            w = np.array(rhs, order="C", copy=True)
        else:
            rows, w = perm, np.ascontiguousarray(rhs)
        arrays = (lu, rows, w.reshape(nb, n, k), out.reshape(nb, n, k))
        self.kernel.run(arrays, nb, nb * n * n * k)
