"""Creation functions of the Array API standard (plus ``tensor``, ``from_numpy``).

Tensors made from host data are a numpy buffer put on a device (``device.put`` copies),
so a tensor never shares memory that the caller can still write. Functions of other
tensors (``*_like``, ``tril``, ``meshgrid``) are built on primitives and so trace.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import Tensor, Tracer
from ..fx.device import device as _device_of_spec
from ..fx.device import get_default_device, host_device
from . import lax
from ._api_common import as_index, is_pyscalar

__all__ = [
    "asarray", "tensor", "from_numpy", "from_dlpack", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace", "eye",
    "meshgrid", "tril", "triu",
]  # fmt: skip


def _device(device):
    return get_default_device() if device is None else _device_of_spec(device)


def _dtype(dtype, where: str):
    return None if dtype is None else dt.canonicalize(dtype, where=where)


def _unsupported(where: str, what) -> TypeError:
    names = ", ".join(str(d) for d in dt.all_dtypes)
    return TypeError(f"{where}: unsupported dtype {what}; fntorch supports {names}")


def _check_dtype(where: str, dtype) -> np.dtype:
    """The fntorch dtype of host data, in native byte order (files may hold ``>f4``)."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise _unsupported(where, dtype) from None
    if not d.isnative:
        d = np.dtype(d.type)  # numpy's own (native) dtype object
    if d not in dt.all_dtypes:
        raise _unsupported(where, d)
    return d


def _leaves(obj, out: list):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)
    return out


def _infer_dtype(leaves) -> np.dtype:
    """Python scalars are weak (float -> float32, int -> int64); numpy values keep theirs."""
    args = []
    for leaf in leaves:
        if is_pyscalar(leaf):
            args.append(leaf)
        elif isinstance(leaf, (np.ndarray, np.generic)):
            args.append(_check_dtype("asarray", leaf.dtype))
        elif isinstance(leaf, Tensor):
            args.append(leaf.dtype)
        else:
            args.append(_check_dtype("asarray", np.asarray(leaf).dtype))
    if not args:
        return dt.default_float
    return dt.dtype_and_weak(*args)[0]


def _put(arr: np.ndarray, device) -> Tensor:
    return Tensor(_device(device).put(arr))


def _transfer(x: Tensor, device) -> Tensor:
    dev = _device(device)
    if isinstance(x, Tracer) or x.device is dev:
        return x
    return Tensor(dev.put(x.device.to_host(x._value)))


def asarray(obj, dtype=None, device=None, copy=None) -> Tensor:
    """A tensor holding ``obj`` (a tensor, numpy array, Python scalar or nested list).

    Python floats become float32 and ints int64; numpy arrays keep their dtype. The
    result never shares memory that the caller can still write: a later write to a
    numpy source is never seen. ``copy=False`` refuses any copy (ValueError).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2], [3, 4]]).dtype, ft.asarray(1.5).dtype
    (dtype('int64'), dtype('float32'))
    """
    dtype = _dtype(dtype, "asarray")
    if isinstance(obj, Tensor):
        x = obj
        if dtype is not None and dtype != x.dtype:
            if copy is False:
                raise ValueError(
                    f"asarray: copy=False, but converting {x.dtype} to {dtype} needs a copy"
                )
            x = lax.convert_element_type(x, dtype)
        if device is not None:
            x = _transfer(x, device)
        if copy and x is obj:
            x = lax.copy(x)
        return x
    if copy is False:
        raise ValueError(
            f"asarray: copy=False, but a {type(obj).__name__} must be copied into a tensor "
            "(fntorch tensors never share memory the caller can write)"
        )
    if is_pyscalar(obj):
        arr = _from_python("asarray", obj, dtype or dt.dtype_and_weak(obj)[0])
    elif isinstance(obj, (np.ndarray, np.generic)):
        native = _check_dtype("asarray", obj.dtype)
        if dtype is None:
            arr = np.asarray(obj, dtype=native)
        else:  # fntorch's cast rules (saturating float -> int, one rounding to bfloat16)
            from ._prims_structural import convert_element_type_p

            cast = host_device().impls[convert_element_type_p]
            arr = cast(np.asarray(obj, native), new_dtype=dtype)
    elif isinstance(obj, (list, tuple)):
        leaves = _leaves(obj, [])
        if any(isinstance(leaf, Tensor) for leaf in leaves):
            return _stack_nested(obj, dtype, device)
        arr = _from_python("asarray", obj, dtype or _infer_dtype(leaves))
    elif isinstance(obj, (str, bytes)):
        raise _unsupported("asarray", type(obj).__name__)
    else:
        if hasattr(obj, "detach"):  # a torch tensor that requires grad
            obj = obj.detach()
        if hasattr(obj, "cpu"):
            obj = obj.cpu()
        if _is_bfloat16(obj) and hasattr(obj, "float"):
            # torch cannot hand bfloat16 to numpy; float32 holds every bfloat16 exactly.
            arr = np.asarray(obj.float()).astype(dt.bfloat16)
        else:
            arr = np.asarray(obj)
        native = _check_dtype("asarray", arr.dtype)
        arr = arr.astype(dtype or native, copy=False)
    return _put(arr, device)


def _from_python(where: str, obj, dtype) -> np.ndarray:
    """Python numbers (maybe nested lists) as an array of ``dtype``, with errors that say
    which call and which dtype (numpy's alone say neither)."""
    try:
        return np.asarray(obj, dtype=dtype)
    except OverflowError:
        raise OverflowError(
            f"{where}: a Python int does not fit in {dtype}; pass a wider dtype="
        ) from None
    except ValueError as e:
        if "sequence" not in str(e):
            raise
        raise ValueError(f"{where}: nested sequences must be rectangular (numpy: {e})") from None


def _is_bfloat16(obj) -> bool:
    return str(getattr(obj, "dtype", "")).endswith("bfloat16")  # torch's, jax's, ml_dtypes'


def _stack_nested(obj, dtype, device) -> Tensor:
    """Nested sequences holding tensors (maybe traced): built with ``stack``."""
    from ._api_manipulation import stack

    if not isinstance(obj, (list, tuple)):
        return asarray(obj, dtype=dtype, device=device)
    if dtype is None:
        dtype = _infer_dtype(_leaves(obj, []))
    return stack([_stack_nested(o, dtype, device) for o in obj])


def tensor(obj, dtype=None, device=None, copy=None, *, requires_grad=False,
           pin_memory=False) -> Tensor:  # fmt: skip
    """``asarray``, also with PyTorch's ``requires_grad=True``: then a new leaf cell (an
    ``nn.Parameter``) holding the value, as ``t.requires_grad_()`` returns.

    >>> import fntorch as ft
    >>> x = ft.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * 3).sum().backward(); x.grad.tolist()
    [3.0, 3.0]
    """
    t = asarray(obj, dtype=dtype, device=device, copy=copy)
    return t.requires_grad_() if requires_grad else t


def from_numpy(array: np.ndarray, dtype=None, device=None) -> Tensor:
    """A tensor holding a copy of the numpy ``array`` (its dtype kept).

    >>> import numpy as np, fntorch as ft
    >>> ft.from_numpy(np.arange(3, dtype=np.int32)).dtype
    dtype('int32')
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return asarray(array, dtype=dtype, device=device)


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A tensor holding a copy of the DLPack-capable ``x`` (numpy, torch, ...).

    >>> import numpy as np, fntorch as ft
    >>> ft.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    if isinstance(x, Tensor):
        return asarray(x, device=device, copy=copy)
    if _is_bfloat16(x):  # numpy's DLPack import has no bfloat16
        return asarray(x, device=device)
    return asarray(np.from_dlpack(x), device=device)


def _shape(shape, where: str) -> tuple[int, ...]:
    if isinstance(shape, (builtins.int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"{where}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None
    if any(s < 0 for s in out):
        raise ValueError(f"{where}: negative dimension in shape {out}")
    return out


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of zeros (float32 by default).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).shape
    (2, 3)
    """
    return _put(
        np.zeros(_shape(shape, "zeros"), _dtype(dtype, "zeros") or dt.default_float), device
    )


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """A tensor of ones (float32 by default).

    >>> import fntorch as ft
    >>> ft.ones(2, dtype=ft.int32).tolist()
    [1, 1]
    """
    return _put(np.ones(_shape(shape, "ones"), _dtype(dtype, "ones") or dt.default_float), device)


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """An uninitialised tensor; in fntorch it holds zeros (values are immutable anyway).

    >>> import fntorch as ft
    >>> ft.empty((0, 2)).shape
    (0, 2)
    """
    return zeros(shape, dtype=dtype, device=device)


def _fill_dtype(fill_value, dtype, where):
    if dtype is not None:
        return dt.canonicalize(dtype, where=where)
    if is_pyscalar(fill_value):
        return dt.dtype_and_weak(fill_value)[0]
    return _check_dtype(where, np.asarray(fill_value).dtype)


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (its dtype from the value by default).

    >>> import fntorch as ft
    >>> ft.full((2,), 7).tolist(), ft.full((), 0.5).dtype
    ([7, 7], dtype('float32'))
    """
    shape = _shape(shape, "full")
    if isinstance(fill_value, Tensor):
        v = fill_value if dtype is None else lax.convert_element_type(fill_value, dtype)
        if v.ndim != 0:
            raise ValueError(f"full: fill_value must be 0-d, got a tensor of shape {v.shape}")
        return lax.broadcast_in_dim(v, shape, ())
    dtype = _fill_dtype(fill_value, dtype, "full")
    if is_pyscalar(fill_value):
        fill_value = _from_python("full", fill_value, dtype)
    return _put(np.full(shape, fill_value, dtype=dtype), device)


def _like(x):
    """The tensor (or numpy array) whose shape and dtype a ``*_like`` takes; a list, a
    Python scalar or a torch tensor goes through ``asarray`` first, as numpy's do."""
    return x if isinstance(x, (Tensor, np.ndarray, np.generic)) else asarray(x)


def _like_device(x, device):
    if device is not None:
        return device
    if isinstance(x, Tensor) and not isinstance(x, Tracer):
        return x.device
    return None


def zeros_like(x, /, *, dtype=None, device=None) -> Tensor:
    """Zeros with the shape and dtype of ``x``.

    >>> import fntorch as ft
    >>> ft.zeros_like(ft.asarray([1, 2])).tolist()
    [0, 0]
    """
    x = _like(x)
    return zeros(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def ones_like(x, /, *, dtype=None, device=None) -> Tensor:
    """Ones with the shape and dtype of ``x``.

    >>> import fntorch as ft
    >>> ft.ones_like(ft.asarray([1.5, 2.5])).tolist()
    [1.0, 1.0]
    """
    x = _like(x)
    return ones(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def empty_like(x, /, *, dtype=None, device=None) -> Tensor:
    """An uninitialised (zero) tensor with the shape and dtype of ``x``.

    >>> import fntorch as ft
    >>> ft.empty_like(ft.asarray([1.5, 2.5])).shape
    (2,)
    """
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """``fill_value`` with the shape and dtype of ``x``.

    >>> import fntorch as ft
    >>> ft.full_like(ft.asarray([1, 2]), 9).tolist()
    [9, 9]
    """
    x = _like(x)
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=_like_device(x, device))


def _scalar(v, where):
    if isinstance(v, Tensor):
        v = v._concrete(where)
        return v.item() if hasattr(v, "item") else v
    return v


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """``start, start + step, ...`` below ``stop``; int64 for ints, float32 if any is a float
    (a tensor's or numpy scalar's own dtype counts).

    >>> import fntorch as ft
    >>> ft.arange(4).tolist(), ft.arange(0, 1, 0.25).tolist()
    ([0, 1, 2, 3], [0.0, 0.25, 0.5, 0.75])
    """
    if dtype is None:
        # Before the values become Python scalars: a tensor's dtype counts, as a numpy
        # scalar's does (and as in linspace).
        dtype = dt.result_type(*(v for v in (start, stop, step) if v is not None))
        if dtype == dt.bool_:
            dtype = dt.default_int
    else:
        dtype = dt.canonicalize(dtype, where="arange")
    start, stop, step = (_scalar(v, "ft.arange") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    length = (stop - start) / step
    if not math.isfinite(length):
        raise ValueError(f"arange: start={start}, stop={stop}, step={step} give no finite length")
    n = builtins.max(0, math.ceil(length))
    if dt.is_float(dtype):
        values = start + np.arange(n, dtype=np.float64) * step
    else:
        # numpy's rule: the first two values, cast to the integer dtype, fix the increment,
        # so float arguments still give evenly spaced integers (-2.5, -1.5 -> -2, -1, 0, ...).
        # Computed modulo 2**64: exact in every integer dtype, wrapping as C casts do.
        first = int(start)
        delta = int(start + step) - first
        ramp = np.arange(n, dtype=np.uint64) * np.uint64(delta % 2**64)
        values = ramp + np.uint64(first % 2**64)
    return _put(values.astype(dtype), device)


def linspace(start, stop, /, num: int, *, dtype=None, device=None, endpoint: bool = True) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (float32 by default).

    >>> import fntorch as ft
    >>> ft.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    # numpy's default dtype: start and stop with a (weak) float, so float64 ends stay float64.
    dtype = _dtype(dtype, "linspace") or dt.result_type(start, stop, 1.0)
    start, stop = _scalar(start, "ft.linspace"), _scalar(stop, "ft.linspace")
    num = as_index("linspace", "num", num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    wide = np.complex128 if dt.is_complex(dtype) else np.float64
    values = np.linspace(start, stop, num, endpoint=endpoint, dtype=wide)
    if not dt.is_inexact(dtype):
        values = np.floor(values)  # numpy rounds integer samples down, not toward zero
    return _put(values.astype(dtype), device)


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype=None, device=None
) -> Tensor:
    """A 2-d tensor with ones on the ``k``-th diagonal.

    >>> import fntorch as ft
    >>> ft.eye(2, 3, k=1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    dtype = _dtype(dtype, "eye") or dt.default_float
    n = as_index("eye", "n_rows", n_rows)
    m = n if n_cols is None else as_index("eye", "n_cols", n_cols)
    if n < 0 or m < 0:
        raise ValueError(f"eye: n_rows and n_cols must be non-negative, got {n_rows}, {n_cols}")
    return _put(np.eye(n, m, as_index("eye", "k", k), dtype), device)


def meshgrid(*arrays, indexing: str = "xy") -> tuple:
    """Coordinate grids from 1-d tensors (a tuple); ``indexing`` is ``"xy"`` or ``"ij"``.

    >>> import fntorch as ft
    >>> X, Y = ft.meshgrid(ft.arange(3), ft.arange(2))
    >>> X.shape, Y.tolist()
    ((2, 3), [[0, 0, 0], [1, 1, 1]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    arrays = [asarray(a) for a in arrays]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"meshgrid: expected 1-d tensors, got one of shape {a.shape}")
    dims = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) >= 2:
        dims[0], dims[1] = 1, 0
    sizes = [0] * len(arrays)
    for a, d in zip(arrays, dims):
        sizes[d] = a.shape[0]
    return tuple(lax.broadcast_in_dim(a, tuple(sizes), (d,)) for a, d in zip(arrays, dims))


def _triangle(name: str, x, k: int, lower: bool) -> Tensor:
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a tensor of rank >= 2, got shape {x.shape}")
    n, m = x.shape[-2:]
    k = as_index(name, "k", k)
    keep = np.tri(n, m, k, dtype=bool)  # lower triangle incl. the k-th diagonal
    if not lower:
        keep = ~np.tri(n, m, k - 1, dtype=bool)
    return lax.select_n(keep, np.zeros((), x.dtype), x)


def tril(x, /, *, k: int = 0) -> Tensor:
    """``x`` with the entries above the ``k``-th diagonal (of the last two dims) zeroed.

    >>> import fntorch as ft
    >>> ft.tril(ft.ones((2, 2))).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return _triangle("tril", x, k, True)


def triu(x, /, *, k: int = 0) -> Tensor:
    """``x`` with the entries below the ``k``-th diagonal (of the last two dims) zeroed.

    >>> import fntorch as ft
    >>> ft.triu(ft.ones((2, 2))).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return _triangle("triu", x, k, False)
