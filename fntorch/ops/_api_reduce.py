"""Statistical, searching and sorting functions of the Array API standard, plus
logsumexp, softmax, log_softmax, cumsum, cumprod, top_k, diff.
"""

from __future__ import annotations

import builtins
import numbers

from ..fx import dtypes as dt
from ..fx.autocast import autocast_op as _autocast_op
from ..fx.core import Tensor
from . import lax
from ._api_common import (
    as_index,
    cast,
    is_pyscalar,
    normalize_axes,
    normalize_axis,
    operand,
    promote,
    size_of,
)
from ._api_creation import asarray
from ._api_manipulation import concat, ravel

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "argmax", "argmin",
    "cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "sort", "argsort", "top_k",
    "searchsorted", "count_nonzero", "diff", "logsumexp", "softmax", "log_softmax",
]  # fmt: skip


def _t(x) -> Tensor:
    return asarray(x) if is_pyscalar(x) else operand(x, asarray)


def _keep(out, axes, keepdims: bool):
    return lax.expand_dims(out, axes) if keepdims and axes else out


def _accumulate_dtype(x, dtype, where: str):
    """The standard's sum/prod dtype: small ints widen to int64 (uint64 if unsigned)."""
    if dtype is not None:
        dtype = dt.canonicalize(dtype, where=where)
        if dtype == dt.bool_:
            raise TypeError(f"{where}: dtype must be a numeric dtype to accumulate in, got bool")
        return dtype
    d = x.dtype
    if d == dt.bool_ or (dt.is_signed(d) and d.itemsize < 8):
        return dt.int64
    if dt.is_integer(d) and not dt.is_signed(d) and d.itemsize < 8:
        return dt.uint64
    return d


def _reduction(name, reducer):
    def f(x, /, *, axis=None, dtype=None, keepdims: bool = False):
        x = _t(x)
        axes = normalize_axes(name, axis, x.ndim)
        x = cast(x, _accumulate_dtype(x, dtype, name))
        return _keep(reducer(x, axes), axes, keepdims)

    return f


sum = _autocast_op("sum")(_reduction("sum", lax.reduce_sum))  # noqa: A001 - the standard's name
sum.__name__ = sum.__qualname__ = "sum"
sum.__doc__ = """Sum over ``axis`` (all when None); small ints accumulate as int64.

    >>> import fntorch as ft
    >>> ft.sum(ft.asarray([[1, 2], [3, 4]]), axis=0).tolist()
    [4, 6]
    """
prod = _autocast_op("prod")(_reduction("prod", lax.reduce_prod))
prod.__name__ = prod.__qualname__ = "prod"
prod.__doc__ = """Product over ``axis`` (all when None); small ints accumulate as int64.

    >>> import fntorch as ft
    >>> ft.prod(ft.asarray([[1, 2], [3, 4]]), axis=1).tolist()
    [2, 12]
    """


def _acc_dtype(dtype):
    """The dtype to accumulate ``dtype`` in: float32 for half precision."""
    return dt.float32 if dtype in (dt.float16, dt.bfloat16) else dtype


def _float_acc(x):
    """``x`` as a float tensor to accumulate in (half precision accumulates in float32)."""
    out = x.dtype if dt.is_inexact(x.dtype) else dt.default_float
    return cast(x, _acc_dtype(out)), out


def _mean(x, axes):
    xa, out = _float_acc(x)
    n = size_of(x.shape[a] for a in axes)
    return lax.div(lax.reduce_sum(xa, axes), cast(float(n), xa.dtype)), out


def mean(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis``; integers average as float32.

    >>> import fntorch as ft
    >>> ft.mean(ft.asarray([1.0, 2.0, 6.0])).tolist()
    3.0
    """
    x = _t(x)
    axes = normalize_axes("mean", axis, x.ndim)
    m, out = _mean(x, axes)
    return _keep(cast(m, out), axes, keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    """Variance over ``axis``, divided by ``N - correction`` (``correction=0`` by default,
    as the standard; PyTorch's ``x.var()`` is ``correction=1``).

    >>> import fntorch as ft
    >>> x = ft.asarray([1.0, 3.0])
    >>> ft.var(x).tolist(), ft.var(x, correction=1).tolist()
    (1.0, 2.0)
    """
    v, axes, out = _variance("var", x, axis, correction)
    return _keep(cast(v, out), axes, keepdims)


def _variance(name, x, axis, correction):
    """The variance in the accumulation dtype, the reduced axes, and the result dtype."""
    x = _t(x)
    axes = normalize_axes(name, axis, x.ndim)
    xa, out = _float_acc(x)
    m, _ = _mean(xa, axes)
    d = lax.sub(xa, lax.expand_dims(m, axes))
    if dt.is_complex(d.dtype):  # the mean squared modulus, real (numpy's and PyTorch's)
        d, out = lax.abs(d), dt.real_dtype(out)
    acc = d.dtype
    n = size_of(x.shape[a] for a in axes)
    # Clamped as numpy and PyTorch do: correction >= N gives inf (or NaN), never a
    # negative variance.
    if isinstance(correction, Tensor):
        # With tensor ops, as JAX: a traced correction (jit, vmap) has no Python
        # value to clamp, and float() of one under grad would drop its gradient.
        if correction.ndim:
            raise ValueError(f"{name}: correction must be 0-d, got shape {correction.shape}")
        c = cast(correction, acc)
        dof = lax.max(lax.sub(cast(float(n), acc), c), cast(0, acc))
    elif isinstance(correction, numbers.Real):
        dof = cast(float(builtins.max(n - correction, 0)), acc)
    else:
        raise TypeError(f"{name}: correction must be a real number, got {correction!r}")
    v = lax.div(lax.reduce_sum(lax.square(d), axes), dof)
    return v, axes, out


def std(x, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    """Standard deviation over ``axis`` (``sqrt(var)``, ``correction=0`` by default).

    >>> import fntorch as ft
    >>> ft.std(ft.asarray([1.0, 3.0])).tolist()
    1.0
    """
    v, axes, out = _variance("std", x, axis, correction)
    # The root is taken before rounding to half precision, whose range the variance
    # can leave: std([0, 1000]) in float16 is 500, not sqrt(inf) (as PyTorch).
    return _keep(cast(lax.sqrt(v), out), axes, keepdims)


def _extreme(name, reducer):
    def f(x, /, *, axis=None, keepdims: bool = False):
        x = _t(x)
        axes = normalize_axes(name, axis, x.ndim)
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(
                f"{name}: cannot reduce over an empty axis (tensor of shape {tuple(x.shape)}, "
                f"axes {axes}): the result has no identity"
            )
        return _keep(reducer(x, axes), axes, keepdims)

    f.__name__ = f.__qualname__ = name
    word = "Maximum" if name == "max" else "Minimum"
    f.__doc__ = f"""{word} over ``axis`` (all when None); NaN propagates. Returns values only
    (``x.{name}(dim=...)`` returns values and indices).

    >>> import fntorch as ft
    >>> ft.{name}(ft.asarray([[1, 5], [3, 2]]), axis=1).tolist()
    {[5, 3] if name == "max" else [1, 2]}
    """
    return f


max = _extreme("max", lax.reduce_max)  # noqa: A001
min = _extreme("min", lax.reduce_min)  # noqa: A001


def _to_bool(x):
    return x if x.dtype == dt.bool_ else lax.ne(x, cast(0, x.dtype))


def all(x, /, *, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether every element along ``axis`` is nonzero.

    >>> import fntorch as ft
    >>> ft.all(ft.asarray([[True, False], [True, True]]), axis=1).tolist()
    [False, True]
    """
    x = _t(x)
    axes = normalize_axes("all", axis, x.ndim)
    return _keep(lax.reduce_and(_to_bool(x), axes), axes, keepdims)


def any(x, /, *, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether some element along ``axis`` is nonzero.

    >>> import fntorch as ft
    >>> ft.any(ft.asarray([[0, 0], [0, 1]]), axis=1).tolist()
    [False, True]
    """
    x = _t(x)
    axes = normalize_axes("any", axis, x.ndim)
    return _keep(lax.reduce_or(_to_bool(x), axes), axes, keepdims)


def _arg(name, fn):
    def f(x, /, *, axis=None, keepdims: bool = False):
        x = _t(x)
        nd = x.ndim
        if axis is None:
            y, ax = ravel(x), 0
        else:
            y, ax = x, normalize_axis(name, axis, nd)
        if y.shape[ax] == 0:
            raise ValueError(f"{name}: cannot take the {name} of an empty axis (shape {x.shape})")
        out = fn(y, ax, dt.int64)
        if keepdims:
            out = lax.reshape(out, (1,) * nd) if axis is None else lax.expand_dims(out, (ax,))
        return out

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Index of the first {name[3:]}imum along ``axis`` (of the flattened tensor when
    None), as int64; NaN counts as the extreme.

    >>> import fntorch as ft
    >>> ft.{name}(ft.asarray([[1, 5], [3, 2]]), axis=1).tolist()
    {[1, 0] if name == "argmax" else [0, 1]}
    """
    return f


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _scan(name, scanner, x, axis, dtype, include_initial=False, identity=0):
    x = _t(x)
    if axis is None:
        x, axis = ravel(x), 0
    ax = normalize_axis(name, axis, x.ndim)
    out_dtype = _accumulate_dtype(x, dtype, name)
    # Half floats scan in float32 and round each output once, as sum does (and PyTorch
    # and JAX): rounding the running total at every step stalls it (0.1 added 3000
    # times is 32 in bfloat16).
    out = cast(scanner(cast(x, _acc_dtype(out_dtype)), ax), out_dtype)
    if include_initial:
        cfg = [(0, 0, 0)] * x.ndim
        cfg[ax] = (1, 0, 0)
        out = lax.pad(out, cast(identity, out.dtype), cfg)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    """Inclusive running sum along ``axis`` (required for rank > 1); with
    ``include_initial`` a leading zero.

    >>> import fntorch as ft
    >>> ft.cumulative_sum(ft.asarray([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    x = _t(x)
    if axis is None and x.ndim > 1:
        raise ValueError(
            f"cumulative_sum: axis is required for a tensor of rank {x.ndim} "
            "(ft.cumsum(x) flattens instead)"
        )
    return _scan("cumulative_sum", lax.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    """Inclusive running product along ``axis`` (required for rank > 1).

    >>> import fntorch as ft
    >>> ft.cumulative_prod(ft.asarray([1, 2, 3])).tolist()
    [1, 2, 6]
    """
    x = _t(x)
    if axis is None and x.ndim > 1:
        raise ValueError(f"cumulative_prod: axis is required for a tensor of rank {x.ndim}")
    return _scan("cumulative_prod", lax.cumprod, x, axis, dtype, include_initial, 1)


@_autocast_op("cumsum")
def cumsum(x, /, axis=None, *, dtype=None) -> Tensor:
    """Running sum along ``axis``, of the flattened tensor when None (numpy's ``cumsum``).

    >>> import fntorch as ft
    >>> ft.cumsum(ft.asarray([[1, 2], [3, 4]])).tolist()
    [1, 3, 6, 10]
    """
    return _scan("cumsum", lax.cumsum, x, axis, dtype)


@_autocast_op("cumprod")
def cumprod(x, /, axis=None, *, dtype=None) -> Tensor:
    """Running product along ``axis``, of the flattened tensor when None.

    >>> import fntorch as ft
    >>> ft.cumprod(ft.asarray([1, 2, 3])).tolist()
    [1, 2, 6]
    """
    return _scan("cumprod", lax.cumprod, x, axis, dtype)


def _sorted(name, x, axis, descending, stable, with_indices):
    x = _t(x)
    if x.ndim == 0:
        raise ValueError(f"{name}: expected a tensor of rank >= 1, got a 0-d tensor")
    ax = normalize_axis(name, axis, x.ndim)
    idx = lax.on_device_of(x, lax.iota(dt.int64, x.shape, ax))
    if descending:  # reversed, sorted stably, reversed back: ties keep their order
        x, idx = lax.rev(x, (ax,)), lax.rev(idx, (ax,))
    if with_indices:
        vals, perm = lax.sort([x, idx], ax, bool(stable) or descending, 1)
    else:
        (vals,), perm = lax.sort([x], ax, bool(stable) or descending, 1), None
    if descending:
        vals = lax.rev(vals, (ax,))
        perm = None if perm is None else lax.rev(perm, (ax,))
    return vals, perm


def sort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """``x`` sorted along ``axis``; NaNs last (first when ``descending``).

    >>> import fntorch as ft
    >>> ft.sort(ft.asarray([3, 1, 2]), descending=True).tolist()
    [3, 2, 1]
    """
    return _sorted("sort", x, axis, descending, stable, False)[0]


def argsort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The int64 indices that sort ``x`` along ``axis`` (ties in their original order).

    >>> import fntorch as ft
    >>> ft.argsort(ft.asarray([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    return _sorted("argsort", x, axis, descending, stable, True)[1]


def top_k(x, k: int, /) -> tuple[Tensor, Tensor]:
    """The ``k`` largest entries along the last axis, largest first: ``(values, indices)``.

    >>> import fntorch as ft
    >>> v, i = ft.top_k(ft.asarray([1.0, 4.0, 2.0, 3.0]), 2)
    >>> v.tolist(), i.tolist()
    ([4.0, 3.0], [1, 3])
    """
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("top_k: expected a tensor of rank >= 1, got a 0-d tensor")
    n = x.shape[-1]
    k = as_index("top_k", "k", k)
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} is out of range for a last axis of size {n}")
    vals, idx = _sorted("top_k", x, -1, True, True, True)
    starts, limits = [0] * x.ndim, list(x.shape)
    limits[-1] = k
    return lax.slice(vals, starts, limits), lax.slice(idx, starts, limits)


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> Tensor:
    """Where to insert ``x2`` into the sorted 1-d ``x1`` to keep it sorted (int64).

    >>> import fntorch as ft
    >>> ft.searchsorted(ft.asarray([1, 2, 2, 3]), ft.asarray([2, 5])).tolist()
    [1, 4]
    """
    from ._api_manipulation import take

    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x1 = _t(x1)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, got shape {tuple(x1.shape)}")
    if sorter is not None:
        # Checked here: take would accept a shorter sorter and search part of x1.
        sorter = _t(sorter)
        if not dt.is_integer(sorter.dtype):
            raise TypeError(f"searchsorted: sorter must be an integer tensor, got {sorter.dtype}")
        if tuple(sorter.shape) != tuple(x1.shape):
            raise ValueError(
                f"searchsorted: sorter must have x1's shape {tuple(x1.shape)}, "
                f"got {tuple(sorter.shape)}"
            )
        x1 = take(x1, sorter, axis=0)
    a, v = promote("searchsorted", x1, operand(x2, asarray))
    v = _t(v)
    # By sorting, not by comparing every value with every entry: that is O(n m) memory
    # (a 2000-entry x1 and 200k values took 3.5 GB). In a stable sort of the values and
    # x1 put together, a value's rank counts the entries before it (x1 first for
    # "right", so equal entries count; last for "left") plus the values before it,
    # which are its rank among the values alone. NaNs sort last, as in sort.
    n, m = a.shape[0], size_of(v.shape)
    q = lax.reshape(v, (m,))
    if side == "left":
        r = _slice(_stable_ranks(lax.concatenate([q, a], 0)), 0, 0, m)
    else:
        r = _slice(_stable_ranks(lax.concatenate([a, q], 0)), 0, n, n + m)
    return lax.reshape(lax.sub(r, _stable_ranks(q)), v.shape)


def _stable_ranks(x):
    """Each element's position in the stable sort of the 1-d ``x`` (int64)."""
    iota = lax.on_device_of(x, lax.iota(dt.int64, x.shape, 0))
    perm = lax.sort([x, iota], 0, True, 1)[1]
    return lax.sort([perm, iota], 0, True, 1)[1]  # the inverse permutation


def count_nonzero(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """The number of nonzero elements along ``axis``, as int64.

    >>> import fntorch as ft
    >>> ft.count_nonzero(ft.asarray([[0, 1], [2, 3]]), axis=1).tolist()
    [1, 2]
    """
    x = _t(x)
    axes = normalize_axes("count_nonzero", axis, x.ndim)
    nz = lax.convert_element_type(_to_bool(x), dt.int64)
    return _keep(lax.reduce_sum(nz, axes), axes, keepdims)


def diff(x, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> Tensor:
    """The ``n``-th discrete difference along ``axis``.

    >>> import fntorch as ft
    >>> ft.diff(ft.asarray([1, 4, 9, 16])).tolist()
    [3, 5, 7]
    """
    from ._api_elementwise import not_equal, subtract

    x = _t(x)
    ax = normalize_axis("diff", axis, x.ndim)
    n = as_index("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    if prepend is not None or append is not None:
        parts = [x]
        if prepend is not None:
            parts.insert(0, _edge(prepend, x, ax))
        if append is not None:
            parts.append(_edge(append, x, ax))
        x = concat(parts, axis=ax)
    for _ in range(n):
        m = x.shape[ax]
        hi = _slice(x, ax, builtins.min(1, m), m)
        lo = _slice(x, ax, 0, builtins.max(m - 1, 0))
        x = not_equal(hi, lo) if x.dtype == dt.bool_ else subtract(hi, lo)
    return x


def _slice(x, ax, start, stop):
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[ax], limits[ax] = start, stop
    return lax.slice(x, starts, limits)


def _edge(v, x, ax):
    from ._api_manipulation import broadcast_to

    v = _t(v)
    if v.ndim == 0:
        shape = list(x.shape)
        shape[ax] = 1
        v = broadcast_to(v, tuple(shape))
    return v


# ----------------------------------------------------------- log-sum-exp and softmax


def _float_tensor(x):
    """``x`` as the float tensor to compute in, and the result dtype. Half precision
    computes in float32, where a sum of many exponentials stays in range: softmax of
    70000 equal float16 logits is 1/70000 each, not 1/inf = 0 (as PyTorch)."""
    return _float_acc(_t(x))


def _safe_max(x, axes):
    """The shift for ``logsumexp``: the maximum, or 0 where it is infinite (so that a
    row of -inf gives -inf, not NaN). softmax and log_softmax shift by the maximum
    itself, as JAX and PyTorch do: ``softmax([3, inf])`` is NaN throughout, not ``[0, nan]``."""
    m = lax.reduce_max(x, axes)
    return lax.stop_gradient(lax.select(lax.is_finite(m), m, cast(0, m.dtype)))


def logsumexp(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably (the maximum subtracted first).

    >>> import fntorch as ft
    >>> round(float(ft.logsumexp(ft.asarray([1000.0, 1000.0]))), 3)  # 1000 + log(2)
    1000.693
    """
    x, out = _float_tensor(x)
    axes = normalize_axes("logsumexp", axis, x.ndim)
    m = _safe_max(x, axes)
    s = lax.reduce_sum(lax.exp(lax.sub(x, lax.expand_dims(m, axes))), axes)
    return _keep(cast(lax.add(lax.log(s), m), out), axes, keepdims)


@_autocast_op("softmax")
def softmax(x, /, axis=-1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int or a tuple), computed stably.

    >>> import fntorch as ft
    >>> ft.softmax(ft.asarray([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    x, out = _float_tensor(x)
    axes = normalize_axes("softmax", axis, x.ndim)
    m = lax.expand_dims(lax.stop_gradient(lax.reduce_max(x, axes)), axes)
    e = lax.exp(lax.sub(x, m))
    return cast(lax.div(e, lax.expand_dims(lax.reduce_sum(e, axes), axes)), out)


@_autocast_op("log_softmax")
def log_softmax(x, /, axis=-1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``, computed stably.

    >>> import fntorch as ft
    >>> [round(v, 4) for v in ft.log_softmax(ft.asarray([0.0, 0.0])).tolist()]
    [-0.6931, -0.6931]
    """
    x, out = _float_tensor(x)
    axes = normalize_axes("log_softmax", axis, x.ndim)
    shifted = lax.sub(x, lax.expand_dims(lax.stop_gradient(lax.reduce_max(x, axes)), axes))
    lse = lax.log(lax.reduce_sum(lax.exp(shifted), axes))
    return cast(lax.sub(shifted, lax.expand_dims(lse, axes)), out)
