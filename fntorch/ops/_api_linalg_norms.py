"""``ft.linalg``'s norms and matrix helpers: ``vector_norm``, ``matrix_norm``, ``norm``
(``torch.linalg.norm``'s), ``diagonal``, ``trace``, ``cross`` and ``multi_dot``. Plain
Python over the Array API functions (``matrix_norm``'s 2, -2 and "nuc" through
``svdvals``); no rules of their own.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from ._api_common import cast, normalize_axes
from ._api_linalg_ext import as_float, as_float_matrix
from ._prims_decomp import svd as _svd
from .api import (
    abs,
    asarray,
    broadcast_arrays,
    count_nonzero,
    matmul,
    max,
    min,
    moveaxis,
    pow,
    reshape,
    sqrt,
    stack,
    sum,
)

__all__ = [
    "vector_norm", "matrix_norm", "norm", "diagonal", "trace", "cross", "multi_dot",
]  # fmt: skip

_INF = float("inf")


def _t(x):
    return x if isinstance(x, Tensor) else asarray(x)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The ``ord``-norm over ``axis`` (None: all dims; an int or a tuple): ``inf``,
    ``-inf``, 0 (the count of nonzeros), or any other number ``p``, ``sum(|x|**p)**(1/p)``.

    >>> import fntorch as ft
    >>> ft.linalg.vector_norm(ft.asarray([3.0, -4.0])).item()
    5.0
    """
    x = as_float("vector_norm", x, complex_ok=True)
    if dt.is_complex(x.dtype):
        x = abs(x)  # every norm is of the moduli
    if isinstance(ord, str) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise ValueError(f"vector_norm: ord must be a number, inf or -inf, got {ord!r}")
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes("vector_norm", axis, x.ndim)
    kw = dict(axis=axes, keepdims=keepdims)
    a = abs(x)
    if ord == _INF:
        return max(a, **kw)
    if ord == -_INF:
        return min(a, **kw)
    if ord == 0:
        return cast(count_nonzero(x, **kw), x.dtype)
    if ord == 1:
        return sum(a, **kw)
    if ord == 2:
        return sqrt(sum(x * x, **kw))
    p = float(ord)
    return pow(sum(pow(a, p), **kw), 1.0 / p)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """Norm of each matrix (the last two dims): ``"fro"``, ``"nuc"``, 1, -1, 2, -2,
    ``inf``, ``-inf``, as the standard's.

    >>> import fntorch as ft
    >>> ft.linalg.matrix_norm(ft.asarray([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
    6.0
    """
    x = as_float_matrix("matrix_norm", x, complex_ok=True)
    if dt.is_complex(x.dtype) and ord not in ("nuc", 2, -2):
        x = abs(x)  # the entrywise norms are of the moduli
    rows, cols = x.ndim - 2, x.ndim - 1
    if ord == "fro":
        return sqrt(sum(x * x, axis=(rows, cols), keepdims=keepdims))
    if ord in ("nuc", 2, -2):
        s = _svd(x, compute_uv=False)[0]
        out = sum(s, axis=-1) if ord == "nuc" else (max if ord == 2 else min)(s, axis=-1)
        return reshape(out, (*out.shape, 1, 1)) if keepdims else out
    if ord in (1, -1, _INF, -_INF):
        # Sums over the rows (1, -1) or the columns (inf, -inf), kept as a size-1 dim,
        # so the extreme over both dims is the extreme over the other one.
        inner = rows if ord in (1, -1) else cols
        pick = max if ord in (1, _INF) else min
        sums = sum(abs(x), axis=inner, keepdims=True)
        return pick(sums, axis=(rows, cols), keepdims=keepdims)
    raise ValueError(
        f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
    )


def norm(A, /, ord=None, dim=None, keepdim: bool = False) -> Tensor:
    """``torch.linalg.norm``: a vector norm over ``dim`` (an int, or None for a 1-d
    ``A`` or ``ord=None``: all dims), a matrix norm over a 2-tuple ``dim`` (None: a 2-d
    ``A`` with ``ord`` given).

    >>> import fntorch as ft
    >>> ft.linalg.norm(ft.ones((2, 2))).item(), ft.linalg.norm(ft.ones((2, 2)), ord=1).item()
    (2.0, 2.0)
    """
    A = as_float("norm", A, complex_ok=True)
    if dim is None:
        if ord is None:
            return vector_norm(A, keepdims=keepdim)
        if A.ndim == 1:
            return vector_norm(A, ord=ord, keepdims=keepdim)
        if A.ndim == 2:
            return matrix_norm(A, ord=ord, keepdims=keepdim)
        raise ValueError(
            f"norm: with ord={ord!r} and dim=None, A must be 1-d or 2-d, got shape "
            f"{tuple(A.shape)}; pass dim"
        )
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if len(dims) == 1:
        return vector_norm(A, axis=dims, keepdims=keepdim, ord=2 if ord is None else ord)
    if len(dims) != 2:
        raise ValueError(f"norm: dim must be an int or a 2-tuple, got {dim!r}")
    r, c = (int(a) % A.ndim if -A.ndim <= a < A.ndim else a for a in dims)
    if not (0 <= r < A.ndim and 0 <= c < A.ndim) or r == c:
        raise ValueError(f"norm: dim={dim!r} must name two distinct dims of shape {tuple(A.shape)}")
    x = moveaxis(A, (r, c), (-2, -1))
    out = matrix_norm(x, ord="fro" if ord is None else ord, keepdims=keepdim)
    return moveaxis(out, (-2, -1), (r, c)) if keepdim else out


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The ``offset``-th diagonal of each matrix (the last two dims), as the standard's.

    >>> import fntorch as ft
    >>> ft.linalg.diagonal(ft.asarray([[1, 2], [3, 4]]), offset=1).tolist()
    [2]
    """
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must be at least 2-d, got shape {tuple(x.shape)}")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"diagonal: offset must be an int, got {offset!r}")
    m, n = x.shape[-2:]
    offset = int(offset)
    k = builtins.max(0, builtins.min(m + builtins.min(offset, 0), n - builtins.max(offset, 0)))
    idx = np.arange(k)
    return x[..., idx - builtins.min(offset, 0), idx + builtins.max(offset, 0)]


@_autocast_op("trace")
def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """Sum of the ``offset``-th diagonal of each matrix.

    >>> import fntorch as ft
    >>> ft.linalg.trace(ft.asarray([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """Cross product of 3-vectors along ``axis`` (the other dims broadcast).

    >>> import fntorch as ft
    >>> ft.linalg.cross(ft.asarray([1.0, 0.0, 0.0]), ft.asarray([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    a, b = _t(x1), _t(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"cross: operands must be at least 1-d, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    try:
        a, b = broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(
            f"cross: shapes {tuple(_t(x1).shape)} and {tuple(_t(x2).shape)} cannot be "
            "broadcast together"
        ) from None
    ax = normalize_axes("cross", axis, a.ndim)[0]
    if a.shape[ax] != 3:
        raise ValueError(
            f"cross: axis {axis} must have size 3 in both operands, got shapes "
            f"{tuple(_t(x1).shape)} and {tuple(_t(x2).shape)}"
        )
    a, b = moveaxis(a, ax, -1), moveaxis(b, ax, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, ax)


def _chain_order(dims):
    """Optimal parenthesization of a matrix chain (``dims[i] x dims[i+1]`` matrices):
    ``split[i][j]``, the textbook dynamic program."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors, /) -> Tensor:
    """Product of two or more matrices in the cheapest order; a 1-d first (last) operand
    is a row (column) vector, as ``torch.linalg.multi_dot``.

    >>> import fntorch as ft
    >>> ft.linalg.multi_dot([ft.ones(2), ft.ones((2, 3)), ft.ones(3)]).item()
    6.0
    """
    xs = [_t(t) for t in tensors]
    if len(xs) < 2:
        raise ValueError(f"multi_dot: expected at least 2 tensors, got {len(xs)}")
    first_vec, last_vec = xs[0].ndim == 1, xs[-1].ndim == 1
    if first_vec:
        xs[0] = reshape(xs[0], (1, -1))
    if last_vec:
        xs[-1] = reshape(xs[-1], (-1, 1))
    for i, x in enumerate(xs):
        if x.ndim != 2:
            raise ValueError(
                f"multi_dot: tensor {i} must be 2-d (the first and last may be 1-d), got "
                f"shape {tuple(tensors[i].shape)}"
            )
    for i in range(len(xs) - 1):
        if xs[i].shape[1] != xs[i + 1].shape[0]:
            raise ValueError(
                f"multi_dot: tensors {i} and {i + 1} cannot be multiplied: shapes "
                f"{tuple(xs[i].shape)} and {tuple(xs[i + 1].shape)}"
            )
    split = _chain_order([xs[0].shape[0]] + [x.shape[1] for x in xs])

    def product(i, j):
        if i == j:
            return xs[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    out = product(0, len(xs) - 1)
    if first_vec and last_vec:
        return reshape(out, ())
    if first_vec:
        return reshape(out, (-1,))
    if last_vec:
        return reshape(out, (-1,))
    return out
