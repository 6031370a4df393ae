"""The CPU device's eager dispatch fast path for ``* + - /``.

``fntorch.ops`` attaches to ``Tensor`` the general operators of every device (promotion,
weak scalars, then ``bind``). For the CPU, ``x * 2.0`` and ``x + y`` of same-dtype
float16/32/64 numpy buffers go straight to the numpy ufunc instead: numpy 2's NEP 50 rule
for Python scalars is exactly fntorch's weak-scalar promotion, so the result is the same,
at about a third of the general path's cost (W1 measures it). Anything else (another
buffer type, a tracer, other dtypes, a broadcasting error) falls through to the general
operator, which words the errors. Importing this module wraps the operators.

>>> import fntorch as ft
>>> (ft.asarray([1.0, 2.0]) * 2.0).tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import builtins

import numpy as np

from ..fx.core import EVAL_TRACE, Tensor, _current_trace, _new_tensor
from ..ops._tensor import _attach

_get_trace = _current_trace.get
_ndarray = np.ndarray

# Python scalar -> 0-d read-only array of a float dtype, per dtype char. A 0-d array
# operand is cheaper for numpy than converting a Python scalar on every call. Zeros are
# never cached (0.0 == -0.0 would alias them); NaNs miss every time (NaN != NaN).
_SCALARS: dict[str, dict] = {"e": {}, "f": {}, "d": {}}
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


def _fast_binary(ufunc, general, reflected: bool):
    """``general`` (ops' operator) behind the eager numpy fast path (floats only)."""

    def op(self, other):
        if type(self) is Tensor and _get_trace() is EVAL_TRACE:
            v = self._value
            t = type(other)
            if t is builtins.float or t is builtins.int:
                if type(v) is _ndarray:
                    cache = _SCALARS.get(v.dtype.char)
                    if cache is not None:
                        s = cache.get(other)
                        if s is None:
                            try:
                                s = _scalar_const(cache, other, v.dtype)
                            except OverflowError:  # the general path's ft.<fname> words it
                                s = None
                        if s is not None:
                            return _new_tensor(ufunc(s, v) if reflected else ufunc(v, s))
            elif t is Tensor:
                ov = other._value
                if type(v) is _ndarray and type(ov) is _ndarray and ov.dtype is v.dtype:
                    if v.dtype.char in "efd":
                        try:
                            return _new_tensor(ufunc(ov, v) if reflected else ufunc(v, ov))
                        except ValueError:
                            pass  # a broadcasting error: the general path words it
        return general(self, other)

    return op


_FAST_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}

for _name, _ufunc in _FAST_OPS.items():
    for _op, _reflected in ((f"__{_name}__", False), (f"__r{_name}__", True)):
        _general = getattr(Tensor, _op)
        _attach(_op, _fast_binary(_ufunc, _general, _reflected), _general.__doc__)
