"""Linear algebra of the Array API standard's core (matmul, tensordot, vecdot,
matrix_transpose), plus outer and einsum, all lowered to ``dot_general``.
"""

from __future__ import annotations

import string

import numpy as np

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from . import lax
from ._api_common import cast, is_pyscalar, normalize_axis, operand, promote_dtype
from ._api_creation import asarray
from ._api_manipulation import broadcast_to, matrix_transpose
from ._prims_elementwise import broadcast_shapes as _broadcast_shapes

__all__ = ["matmul", "tensordot", "vecdot", "matrix_transpose", "outer", "einsum"]


def _promoted(name, *xs) -> list[Tensor]:
    """The operands as tensors of their common dtype; Python scalars are weak (made
    tensors only after the promotion, so ``f16`` with ``2.0`` stays ``f16``)."""
    xs = [operand(x, asarray) for x in xs]
    dtype = promote_dtype(name, *xs)
    return [asarray(x, dtype=dtype) if is_pyscalar(x) else cast(x, dtype) for x in xs]


def _dot(a, b, contract, batch=((), ())):
    return lax.dot_general(a, b, (contract, batch))


# Products and sums of bools are numpy's (and dot_general's): ``and`` and ``or``.
def _product(a, b):
    return lax.bitwise_and(a, b) if a.dtype == dt.bool_ else lax.mul(a, b)


def _total(x, axes):
    return lax.reduce_or(x, axes) if x.dtype == dt.bool_ else lax.reduce_sum(x, axes)


@_autocast_op("matmul")
def matmul(x1, x2, /) -> Tensor:
    """Matrix product with the standard's rules: 1-d operands are vectors (their added dim
    is removed again), leading dims broadcast.

    >>> import fntorch as ft
    >>> ft.matmul(ft.ones((2, 3)), ft.ones(3)).tolist()
    [3.0, 3.0]
    """
    a, b = _promoted("matmul", x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: operands must be at least 1-d, "
            f"got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    sa, sb = tuple(a.shape), tuple(b.shape)
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = lax.expand_dims(a, (0,))
    if vb:
        b = lax.expand_dims(b, (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: shapes {sa} and {sb} do not match: the contracted dims have sizes "
            f"{a.shape[-1]} and {b.shape[-2]}"
        )
    if b.ndim == 2:  # (..., m, k) @ (k, n): one dot, no broadcast
        out = _dot(a, b, ((a.ndim - 1,), (0,)))
    elif a.ndim == 2:  # (m, k) @ (..., k, n): dot gives (m, ..., n)
        out = _dot(a, b, ((1,), (b.ndim - 2,)))
        nb = b.ndim - 2
        out = lax.transpose(out, tuple(range(1, nb + 1)) + (0, nb + 1))
    else:
        try:
            batch = _broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(
                f"matmul: batch dims of shapes {sa} and {sb} cannot be broadcast together"
            ) from None
        a = broadcast_to(a, batch + tuple(a.shape[-2:]))
        b = broadcast_to(b, batch + tuple(b.shape[-2:]))
        nb = len(batch)
        out = _dot(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    squeeze = []
    if va:
        squeeze.append(out.ndim - 2)
    if vb:
        squeeze.append(out.ndim - 1)
    return lax.squeeze(out, tuple(squeeze)) if squeeze else out


def tensordot(x1, x2, /, *, axes=2) -> Tensor:
    """Contraction over ``axes``: an int ``n`` (the last ``n`` dims of ``x1`` with the first
    ``n`` of ``x2``) or a pair of axis sequences.

    >>> import fntorch as ft
    >>> ft.tensordot(ft.ones((2, 3, 4)), ft.ones((3, 4, 5)), axes=2).shape
    (2, 5)
    """
    a, b = _promoted("tensordot", x1, x2)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(
                f"tensordot: axes={n} is out of range for shapes "
                f"{tuple(a.shape)} and {tuple(b.shape)}"
            )
        ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        try:
            ax_a, ax_b = axes
            ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
            ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
        except (TypeError, ValueError):
            raise TypeError(
                f"tensordot: axes must be an int or a pair (axes of x1, axes of x2), got {axes!r}"
            ) from None
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: axes {axes} must name as many dims of x1 as of x2")
        ca = tuple(normalize_axis("tensordot", i, a.ndim) for i in ax_a)
        cb = tuple(normalize_axis("tensordot", i, b.ndim) for i in ax_b)
        if len(set(ca)) != len(ca) or len(set(cb)) != len(cb):
            raise ValueError(f"tensordot: axes {axes} must not name a dim twice")
    for i, j in zip(ca, cb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: contracted dims differ: shapes {tuple(a.shape)} and {tuple(b.shape)} "
                f"(axis {i} of size {a.shape[i]} vs axis {j} of size {b.shape[j]})"
            )
    return _dot(a, b, (ca, cb))


def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """Dot product of vectors along ``axis`` (the other dims broadcast); complex ``x1`` is
    conjugated, as the standard says (``sum(conj(x1) * x2)``).

    >>> import fntorch as ft
    >>> ft.vecdot(ft.asarray([[1.0, 2.0], [3.0, 4.0]]), ft.asarray([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    a, b = _promoted("vecdot", x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"vecdot: operands must be at least 1-d, "
            f"got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    sa, sb = tuple(a.shape), tuple(b.shape)
    ax_a = normalize_axis("vecdot", axis, a.ndim)
    ax_b = normalize_axis("vecdot", axis, b.ndim)
    if sa[ax_a] != sb[ax_b]:
        raise ValueError(
            f"vecdot: the contracted dims differ: shapes {sa} and {sb} along axis {axis}"
        )
    # As numpy's gufunc: ``axis`` is a dim of each operand (not of the broadcast shape,
    # which differs for a non-negative axis and operands of different ranks); the other
    # dims broadcast.
    a, b = _axis_to_last(a, ax_a), _axis_to_last(b, ax_b)
    try:
        batch = _broadcast_shapes("vecdot", a.shape[:-1], b.shape[:-1])
    except ValueError:
        raise ValueError(
            f"vecdot: shapes {sa} and {sb} cannot be broadcast together outside axis {axis}"
        ) from None
    shape = batch + (sa[ax_a],)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    if dt.is_complex(a.dtype):
        a = lax.conj(a)
    return _total(_product(a, b), (len(batch),))


def _axis_to_last(x, axis):
    if axis == x.ndim - 1:
        return x
    return lax.transpose(x, (*range(axis), *range(axis + 1, x.ndim), axis))


def outer(x1, x2, /) -> Tensor:
    """Outer product of two 1-d tensors.

    >>> import fntorch as ft
    >>> ft.outer(ft.asarray([1, 2]), ft.asarray([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    a, b = _promoted("outer", x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"outer: expected 1-d tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    return _product(lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)))


# --------------------------------------------------------------------------- einsum


def _parse_term(term: str, ndim: int, ell_rank: int, subscripts: str) -> list[str]:
    """Labels of one operand: letters, and ``"0"``, ``"1"``... for the ellipsis dims
    (right-aligned against the widest ellipsis, so they broadcast)."""
    if "..." in term:
        head, _, tail = term.partition("...")
        if "." in head or "." in tail:
            raise ValueError(f"einsum: malformed ellipsis in {subscripts!r}")
        n = ndim - len(head) - len(tail)
        if n < 0:
            raise ValueError(
                f"einsum: term {term!r} of {subscripts!r} has more labels than its operand has "
                f"dims ({ndim})"
            )
        _check_letters(head + tail, subscripts)
        labels = list(head) + [str(ell_rank - n + j) for j in range(n)] + list(tail)
    else:
        _check_letters(term, subscripts)
        labels = list(term)
        if len(labels) != ndim:
            raise ValueError(
                f"einsum: term {term!r} of {subscripts!r} names {len(labels)} dims, but its "
                f"operand has {ndim}"
            )
    return labels


def _check_letters(labels: str, subscripts: str) -> None:
    # Digits name the ellipsis dims internally: a digit label would alias one of them.
    for c in labels:
        if c not in string.ascii_letters:
            raise ValueError(
                f"einsum: invalid label {c!r} in {subscripts!r}; labels must be letters a-z, A-Z"
            )


def _diagonal(x, labels):
    """Repeated labels in one operand take the diagonal."""
    while len(set(labels)) != len(labels):
        l = next(c for c in labels if labels.count(c) > 1)
        p = labels.index(l)
        q = labels.index(l, p + 1)
        n = x.shape[p]
        if x.shape[q] != n:  # broadcasting is across operands, never within one
            raise ValueError(
                f"einsum: label {l!r} is repeated in one operand with different sizes "
                f"{x.shape[p]} and {x.shape[q]} (operand shape {tuple(x.shape)})"
            )
        ar = np.arange(n, dtype=np.int64)
        x = lax.gather(x, [ar, ar], (p, q))
        labels = [l] + [c for i, c in enumerate(labels) if i not in (p, q)]
    return x, labels


def _sum_labels(x, labels, drop):
    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return x, labels
    return _total(x, axes), [c for c in labels if c not in drop]


def einsum(subscripts: str, /, *operands) -> Tensor:
    """Einstein summation (numpy's spec strings, with ``...`` and the implicit output),
    lowered to diagonals, sums and ``dot_general`` contractions, left to right.

    >>> import fntorch as ft
    >>> a, b = ft.ones((2, 3)), ft.ones((3, 4))
    >>> ft.einsum("ij,jk->ik", a, b).shape, ft.einsum("ii", ft.eye(3)).tolist()
    ((2, 4), 3.0)
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    if not operands:
        raise ValueError("einsum: expected at least one operand")
    xs = _promoted("einsum", *operands)
    spec = subscripts.replace(" ", "")
    lhs, arrow, out_term = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(xs):
        raise ValueError(
            f"einsum: {subscripts!r} names {len(terms)} operands, but {len(xs)} were given"
        )
    ell_rank = 0
    for t, x in zip(terms, xs):
        if "..." in t:
            ell_rank = max(ell_rank, x.ndim - len(t) + 3)
    labels = [_parse_term(t, x.ndim, ell_rank, subscripts) for t, x in zip(terms, xs)]
    ell = [str(j) for j in range(ell_rank)]
    if arrow:
        if out_term.count("...") > 1 or ("." in out_term.replace("...", "")):
            raise ValueError(f"einsum: malformed output in {subscripts!r}")
        head, dots, tail = out_term.partition("...")
        _check_letters(head + tail, subscripts)
        out = list(head) + (ell if dots else []) + list(tail)
        seen = {c for ls in labels for c in ls}
        for c in out:
            if c not in seen:
                raise ValueError(f"einsum: output label {c!r} of {subscripts!r} is in no input")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: repeated output label in {subscripts!r}")
    else:
        counts: dict[str, int] = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and not c.isdigit())
    # Sizes: equal, or 1 (broadcast).
    sizes: dict[str, int] = {}
    for ls, x in zip(labels, xs):
        for c, s in zip(ls, x.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = s
            elif s not in (1, sizes[c]):
                raise ValueError(
                    f"einsum: label {c!r} of {subscripts!r} has sizes {sizes[c]} and {s} "
                    f"(operand shapes {[tuple(x.shape) for x in xs]})"
                )
    ops = []
    for i, (x, ls) in enumerate(zip(xs, labels)):
        x, ls = _diagonal(x, ls)
        elsewhere = set(out).union(*(set(l2) for j, l2 in enumerate(labels) if j != i))
        x, ls = _sum_labels(x, ls, {c for c in ls if c not in elsewhere})
        full = tuple(sizes[c] for c in ls)
        if tuple(x.shape) != full:
            x = lax.broadcast_in_dim(x, full, tuple(range(len(full))))
        ops.append((x, ls))
    x, ls = ops[0]
    for k in range(1, len(ops)):
        y, ly = ops[k]
        needed = set(out).union(*(set(l2) for _, l2 in ops[k + 1 :]))
        x, ls = _sum_labels(x, ls, {c for c in ls if c not in needed and c not in ly})
        y, ly = _sum_labels(y, ly, {c for c in ly if c not in needed and c not in ls})
        shared = [c for c in ls if c in ly]
        batch = [c for c in shared if c in needed]
        contract = [c for c in shared if c not in needed]
        dn = (
            (tuple(ls.index(c) for c in contract), tuple(ly.index(c) for c in contract)),
            (tuple(ls.index(c) for c in batch), tuple(ly.index(c) for c in batch)),
        )
        x = lax.dot_general(x, y, dn)
        ls = batch + [c for c in ls if c not in shared] + [c for c in ly if c not in shared]
    x, ls = _sum_labels(x, ls, {c for c in ls if c not in out})
    return lax.transpose(x, tuple(ls.index(c) for c in out))
