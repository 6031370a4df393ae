"""The eager fast paths: ``* + - /`` (numpy's buffers, and another device's handlers
registered by ``register_fast_binary``), ``t[idx]`` and ``t.at[idx]`` updates.

``fntorch.ops`` attaches to ``Tensor`` the general operators of every device (promotion,
weak scalars, then ``bind``). For the CPU, ``x * 2.0`` and ``x + y`` of same-dtype
float16/32/64 numpy buffers go straight to the numpy ufunc instead: numpy 2's NEP 50 rule
for Python scalars is exactly fntorch's weak-scalar promotion, so the result is the same,
at about a third of the general path's cost (W1 measures it). Anything else (another
buffer type, a tracer, other dtypes, a broadcasting error, ``ft.config``'s
``debug_nans`` / ``debug_infs`` on) falls through to the general operator, which words the
errors and runs the checks. Indexing with concrete indices, and the functional
updates, take numpy's own indexing (``ufunc.at`` for the combining modes), registered in
ops' ``eager_reads`` / ``eager_updates`` tables for numpy buffers. Importing this module
installs all three.

>>> import fntorch as ft
>>> (ft.asarray([1.0, 2.0]) * 2.0).tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import builtins
import functools

import numpy as np

from ..fx import core as _core
from ..fx.core import EVAL_TRACE, Tensor, _current_trace, _new_tensor, _tensor_new
from ..ops import _index_read, _index_update
from ..ops._index_parse import _NO, _numpy_index
from ..ops._tensor import _attach

_get_trace = _current_trace.get
_ndarray = np.ndarray

# Python scalar -> 0-d read-only array of a float dtype, per dtype (keyed by the dtype
# object: ``dtype.char`` costs a lookup more). A 0-d array operand is cheaper for numpy
# than converting a Python scalar on every call (330 against 590 ns a multiply here).
# Zeros are never cached (0.0 == -0.0 would alias them); NaNs miss every time.
_SCALARS: dict = {np.dtype(c): {} for c in "efd"}
_SCALAR_CACHE_SIZE = 256


def _scalar_const(cache: dict, value, dtype):
    if not value:
        return value  # NEP 50 handles the Python scalar itself
    if len(cache) >= _SCALAR_CACHE_SIZE:
        cache.clear()
    s = np.array(value, dtype=dtype)
    s.flags.writeable = False
    cache[value] = s
    return s


def _fast_binary(name, ufunc, general, reflected: bool):
    """``general`` (ops' operator) behind the eager numpy fast path (floats only), and
    behind other devices' registered ones (``register_fast_binary``). W1 measures this
    path, so it is written flat: the names it reads are closure cells or locals, and the
    result tensor is made inline rather than by ``_new_tensor``."""
    py_float, py_int, tensor, ndarray = builtins.float, builtins.int, Tensor, _ndarray
    scalars, get_trace, new, eval_trace = _SCALARS, _get_trace, _tensor_new, EVAL_TRACE

    def op(self, other):
        # With debug_nans / debug_infs on (``_core._debug_check`` set), the general path
        # runs, so that its check sees these operators' results too.
        if type(self) is tensor and get_trace() is eval_trace and _core._debug_check is None:
            v = self._value
            if type(v) is ndarray:
                t = type(other)
                if t is py_float or t is py_int:
                    cache = scalars.get(v.dtype)
                    if cache is not None:
                        s = cache.get(other)
                        if s is None:
                            try:
                                s = _scalar_const(cache, other, v.dtype)
                            except OverflowError:  # the general path's ft.<fname> words it
                                s = None
                        if s is not None:
                            out = new(tensor)
                            out._value = ufunc(s, v) if reflected else ufunc(v, s)
                            return out
                elif t is tensor:
                    ov = other._value
                    if type(ov) is ndarray and ov.dtype is v.dtype and v.dtype in scalars:
                        try:
                            r = ufunc(ov, v) if reflected else ufunc(v, ov)
                        except ValueError:
                            return general(self, other)  # broadcasting: the general path words it
                        out = new(tensor)
                        out._value = r
                        return out
            else:
                handlers = _DEVICE_BINARY.get(type(v))
                if handlers is not None:
                    r = handlers[name](v, other, reflected)
                    if r is not None:
                        out = new(tensor)
                        out._value = r
                        return out
        return general(self, other)

    return op


# A second device's buffer type -> its fast-path handlers, by operator name.
_DEVICE_BINARY: dict[type, dict] = {}


def register_fast_binary(buffer_type: type, handlers: dict) -> None:
    """Sends ``self <op> other`` of a ``buffer_type`` tensor (``op``: add, sub, mul,
    truediv) to ``handlers[op](buffer, other, reflected)`` before the general path, as
    numpy buffers take numpy's ufuncs. A handler returns the result's buffer, or None
    for the general path (which words every error); ``reflected`` is True for
    ``other <op> self``. ``ufunc_handlers`` makes them from ufuncs. The CUDA device
    registers ``cuda_eager``'s: the general path's promotion, abstract evaluation and
    impl lookup cost several microseconds a call in Python, more than a launch.

    >>> class Buf(np.ndarray): ...
    >>> register_fast_binary(Buf, ufunc_handlers({"add": np.add, "sub": np.subtract,
    ...                                           "mul": np.multiply, "truediv": np.true_divide}))
    >>> _DEVICE_BINARY.pop(Buf)["mul"](np.ones(2).view(Buf), 3.0, False).tolist()
    [3.0, 3.0]
    """
    missing = set(_FAST_OPS) - set(handlers)
    if missing:
        raise ValueError(f"register_fast_binary: handlers lacks {sorted(missing)}")
    _DEVICE_BINARY[buffer_type] = dict(handlers)


def ufunc_handlers(ufuncs: dict) -> dict:
    """Fast-path handlers (``register_fast_binary``) from ufuncs that follow NEP 50 for
    numpy scalars of the buffer's dtype (a Python scalar is passed as one: fntorch's
    weak-scalar rule) and raise ValueError for shapes that do not broadcast: for two
    same-dtype float16/32/64 buffers of one type, or one and a Python scalar.

    >>> ufunc_handlers({"add": np.add})["add"](np.ones(2, np.float32), 1, True).tolist()
    [2.0, 2.0]
    """
    return {name: functools.partial(device_binary, uf) for name, uf in ufuncs.items()}


def device_binary(ufunc, v, other, reflected: bool):
    """``ufunc`` of device buffer ``v`` and ``other`` when the fast path applies, else
    None (the general path).

    >>> device_binary(np.subtract, np.ones(2, np.float32), 3, True).tolist()
    [2.0, 2.0]
    """
    dtype = v.dtype
    if dtype.char not in "efd":
        return None
    t = type(other)
    if t is builtins.float or t is builtins.int:
        try:
            s = dtype.type(other)
        except OverflowError:
            return None
        return ufunc(s, v) if reflected else ufunc(v, s)
    if t is Tensor:
        ov = other._value
        if type(ov) is type(v) and ov.dtype is dtype:
            try:
                return ufunc(ov, v) if reflected else ufunc(v, ov)
            except ValueError:
                return None
    return None


_FAST_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}

for _name, _ufunc in _FAST_OPS.items():
    for _op, _reflected in ((f"__{_name}__", False), (f"__r{_name}__", True)):
        _general = getattr(Tensor, _op)
        _attach(_op, _fast_binary(_name, _ufunc, _general, _reflected), _general.__doc__)


def _eager_read(x, idx):
    """``x[idx]`` by numpy's indexing, or None for the general path (which words errors)."""
    np_idx = _numpy_index(idx)
    if np_idx is _NO:
        return None
    try:
        r = x._value[np_idx]
    except (IndexError, ValueError, TypeError):
        return None
    return _new_tensor(r if type(r) is np.ndarray else np.asarray(r))


_AT_UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _eager_update(x, idx, v, mode):
    """``x.at[idx]`` updated by numpy's own indexed assignment (``ufunc.at`` for the
    combining modes), or None for the general path."""
    buf = x._value
    if mode in ("add", "multiply") and buf.dtype == np.bool_:
        return None
    np_idx = _numpy_index(idx)
    if np_idx is _NO:
        return None
    if isinstance(v, Tensor):
        if type(v) is not Tensor:
            return None  # a tracer: the general path
        v = v._value
        if not isinstance(v, (np.ndarray, np.generic)):
            return None
    try:
        if isinstance(v, (np.ndarray, np.generic)):
            v = np.asarray(v).astype(buf.dtype, copy=False)
        else:  # Python values: the same cast (and overflow errors) as the general path
            v = np.asarray(v, dtype=buf.dtype)
        out = buf.copy()
        if mode == "set":
            out[np_idx] = v
        else:
            _AT_UFUNCS[mode].at(out, np_idx, v)
    except (IndexError, ValueError, TypeError, OverflowError):
        return None
    return _new_tensor(out)


_index_read.eager_reads[np.ndarray] = _eager_read
_index_update.eager_updates[np.ndarray] = _eager_update
