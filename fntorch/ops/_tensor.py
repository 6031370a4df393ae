"""The Tensor surface: operators, conversions and methods, attached to ``fx.core.Tensor``.

Attaching to the base class gives tracers (its subclasses) the same surface. Everything
forwards to the public functions of ``fntorch.ops.api`` (looked up at call time), so the
promotion and Python-scalar rules live in one place. Methods follow PyTorch's meaning and
spellings (``x.sum(dim=1, keepdim=True)``, ``x.max(dim=1)`` -> ``(values, indices)``,
``x.std()`` unbiased) and also accept the Array API's ``axis=``/``keepdims=``.

``x.size`` is the Array API's int property (the number of elements); PyTorch's
``x.size()`` / ``x.size(d)`` is ``x.shape`` / ``x.shape[d]`` here.

The operators here are the general path of every device; the CPU device wraps ``* + - /``
with its numpy fast path (``fntorch/devices/cpu_dispatch.py``).
"""

from __future__ import annotations

import builtins
import importlib
import types

import numpy as np

from ..fx import core
from ..fx import dtypes as dt
from ..fx.core import Tensor
from . import _indexing
from . import api as _api

# Members that fx.core defines (Tracer overrides them): never replaced here.
_PROTECTED = frozenset(
    {"aval", "shape", "dtype", "ndim", "size", "weak_type", "device", "_concrete",
     "__len__", "__setitem__", "__init__", "__hash__", "__repr__"}
)  # fmt: skip


def _attach(name: str, fn, doc: str | None = None):
    if name in _PROTECTED:
        raise AssertionError(f"_tensor: refusing to replace Tensor.{name}")
    if not isinstance(fn, property):
        if fn.__qualname__.startswith("Tensor."):  # an alias of an attached method: copy it
            fn = _copy_function(fn)
        fn.__name__ = name
        fn.__qualname__ = f"Tensor.{name}"
    if doc is not None:
        fn.__doc__ = doc
    setattr(Tensor, name, fn)


def _copy_function(fn):
    new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                             fn.__closure__)  # fmt: skip
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__doc__ = fn.__doc__
    return new


def _fn(name: str):
    """The public function ``ft.<name>`` (looked up late: api fills in after this module)."""
    try:
        return getattr(_api, name)
    except AttributeError:
        raise NotImplementedError(f"fntorch.{name} is not defined yet") from None


def _doc_of(fname: str, method: str) -> str:
    f = getattr(_api, fname, None)
    head = f"Method form of ``ft.{fname}(x, ...)``: ``x.{method}``."
    if f is not None and f.__doc__:
        return f"{head}\n\n{f.__doc__}"
    return head


# ------------------------------------------------------------------ operands, operators

_OPERAND_TYPES = (
    Tensor, builtins.bool, builtins.int, builtins.float, builtins.complex, np.ndarray, np.generic,
)  # fmt: skip


def _binary(fname: str, reflected: bool):
    def op(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        f = getattr(_api, fname)
        return f(other, self) if reflected else f(self, other)

    return op


def _comparison(fname: str, symbol: str):
    def op(self, other):
        if not isinstance(other, _OPERAND_TYPES):
            if isinstance(other, (list, tuple)):
                # Python would fall back to identity and answer a silent False (== and !=).
                raise TypeError(
                    f"x {symbol} {type(other).__name__}: tensors do not compare with a "
                    f"{type(other).__name__}; convert it first: x {symbol} ft.asarray(...)"
                )
            return NotImplemented
        return getattr(_api, fname)(self, other)

    return op


def _unary(fname: str):
    def op(self):
        return getattr(_api, fname)(self)

    return op


_OPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}  # fmt: skip
_COMPARISONS = {
    "lt": ("less", "<"), "le": ("less_equal", "<="), "gt": ("greater", ">"),
    "ge": ("greater_equal", ">="), "eq": ("equal", "=="), "ne": ("not_equal", "!="),
}  # fmt: skip
_UNARY_OPS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}
_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
    "rshift": ">>",
}  # fmt: skip


def _binary_doc(name: str, fname: str, reflected: bool) -> str:
    x, y = ("y", "x") if reflected else ("x", "y")
    return f"``{x} {_SYMBOLS[name]} {y}``: ``ft.{fname}({x}, {y})``."


for _name, _f in _OPS.items():
    _attach(f"__{_name}__", _binary(_f, False), _binary_doc(_name, _f, False))
    _attach(f"__r{_name}__", _binary(_f, True), _binary_doc(_name, _f, True))
for _name, (_f, _symbol) in _COMPARISONS.items():
    _attach(f"__{_name}__", _comparison(_f, _symbol), f"``x {_symbol} y``: ``ft.{_f}``.")
for _name, _f in _UNARY_OPS.items():
    _attach(f"__{_name}__", _unary(_f), f"``{_name}(x)``: ``ft.{_f}``.")


# ------------------------------------------------------------------------ conversions


def _host(x, what: str) -> np.ndarray:
    """The concrete value of ``x`` as a numpy array (ConcretizationError if traced)."""
    buf = x._concrete(what)
    if not isinstance(buf, (np.ndarray, np.generic)):
        buf = core.device_of_buffer(buf).to_host(buf)
    return np.asarray(buf)


def _read_only(buf: np.ndarray) -> np.ndarray:
    """A view of ``buf`` that cannot be made writable again: its base is a read-only
    memoryview (through an unsigned view of the same itemsize, for bfloat16's sake)."""
    if buf.dtype.kind == "c":  # no 16-byte unsigned dtype; the buffer protocol has "Zd"
        return np.asarray(memoryview(buf).toreadonly())
    u = buf.view(f"u{buf.dtype.itemsize}")
    return np.asarray(memoryview(u).toreadonly()).view(buf.dtype)


def numpy(self) -> np.ndarray:
    """The value as a read-only numpy array (``flags.writeable`` is False).

    >>> import fntorch as ft
    >>> ft.asarray([1.0, 2.0]).numpy().flags.writeable
    False
    """
    buf = self._concrete("numpy()")
    if not isinstance(buf, (np.ndarray, np.generic)):
        buf = core.device_of_buffer(buf).to_host(buf)  # a fresh host copy
    if isinstance(buf, np.ndarray) and buf.dtype != dt.float0:
        return _read_only(buf)
    a = np.array(buf)  # a numpy scalar: a fresh 0-d copy
    a.flags.writeable = False
    return a


def __array__(self, dtype=None, copy=None):
    """``np.asarray(t)``: a read-only view (or a writable copy with ``copy=True``)."""
    a = numpy(self)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError(f"__array__: converting {a.dtype} to {np.dtype(dtype)} needs a copy")
        return a.astype(dtype)
    return a.copy() if copy else a


def _scalar_value(self, what: str):
    a = _host(self, what)
    if a.size != 1:
        raise ValueError(
            f"{what}: only a tensor with one element can be converted to a Python scalar, "
            f"got shape {tuple(a.shape)}"
        )
    a = a.reshape(())
    if a.dtype == dt.bfloat16:
        return builtins.float(a)
    return a.item()


def item(self):
    """The value of a one-element tensor as a Python scalar.

    >>> import fntorch as ft
    >>> ft.asarray([2.5]).item()
    2.5
    """
    return _scalar_value(self, "item()")


def tolist(self):
    """The value as nested Python lists of Python scalars.

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2]]).tolist()
    [[1, 2]]
    """
    a = _host(self, "tolist()")
    if a.dtype == dt.bfloat16:
        a = a.astype(np.float32)
    return a.tolist()


def __float__(self):
    """``float(t)`` of a one-element tensor."""
    return builtins.float(_scalar_value(self, "float()"))


def __int__(self):
    """``int(t)`` of a one-element tensor (floats truncate toward zero)."""
    return builtins.int(_scalar_value(self, "int()"))


def __bool__(self):
    """``bool(t)`` of a one-element tensor; ``if t:`` on a traced value raises
    ``ft.ConcretizationError``."""
    a = _host(self, "bool()")
    if a.size != 1:
        raise ValueError(
            f"bool(): the truth value of a tensor of shape {tuple(a.shape)} is ambiguous; "
            "use .any() or .all()"
        )
    return builtins.bool(a.reshape(()))


def __index__(self):
    """``operator.index(t)`` of a one-element integer tensor (so ``range(t)`` works)."""
    if not dt.is_integer(self.dtype):
        raise TypeError(
            f"__index__: only integer tensors can be used as an index, got dtype {self.dtype}"
        )
    return builtins.int(_scalar_value(self, "__index__()"))


def __complex__(self):
    """``complex(t)`` of a one-element tensor."""
    return builtins.complex(_scalar_value(self, "complex()"))


_DEFAULT_DTYPES = (dt.float32, dt.int64, dt.bool_)


def __repr__(self):
    """PyTorch-like: ``tensor([1., 2.])``, with ``dtype=`` when it is not a default."""
    a = _host(self, "repr()")
    if a.dtype == dt.bfloat16:
        a = a.astype(np.float32)
    body = np.array2string(a, separator=", ", prefix="tensor(")
    extra = []
    if a.size == 0 and a.ndim != 1:
        extra.append(f"size={tuple(a.shape)}")
    if self.dtype not in _DEFAULT_DTYPES:
        extra.append(f"dtype={self.dtype}")
    dev = self.device
    if dev is not None and dev.platform != "cpu":
        extra.append(f"device='{dev}'")
    return "tensor(" + ", ".join([body, *extra]) + ")"


def __format__(self, spec: str):
    """``f"{t:.3f}"`` formats a one-element tensor's value; an empty spec gives ``str(t)``."""
    if spec and self.size == 1:
        return format(_scalar_value(self, "format()"), spec)
    try:
        return format(str(self), spec)  # string specs such as ">40"
    except ValueError:
        raise TypeError(
            f"format(): the spec {spec!r} formats a number, but the tensor has shape "
            f"{tuple(self.shape)}; format one element, or t.tolist()"
        ) from None


def __iter__(self):
    """Iterates over the first axis (``t[0]``, ``t[1]``, ...)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (_indexing.getitem(self, i) for i in range(self.shape[0]))


def __contains__(self, value):
    """``value in t``: whether any element equals ``value``."""
    return builtins.bool(_fn("any")(_fn("equal")(self, value)))


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export (numpy's) of a copy, so the tensor's buffer is never handed out
    writable: consumers such as ``torch.from_dlpack`` ignore DLPack's read-only flag.
    ``copy=False`` exports the buffer itself, flagged read-only (BufferError where the
    consumer's DLPack version cannot say so).

    >>> import fntorch as ft
    >>> import numpy as np
    >>> np.from_dlpack(ft.asarray([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    buf = self._concrete("__dlpack__")
    if not isinstance(buf, (np.ndarray, np.generic)):
        return buf.__dlpack__(stream=stream)
    if copy is False:
        a = numpy(self)
    else:
        a, copy = np.array(buf), None  # already a fresh copy
    return a.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def __dlpack_device__(self):
    """The DLPack ``(device_type, device_id)`` of the buffer (``1``: DLPack's CPU).

    >>> import fntorch as ft
    >>> ft.ones(2).__dlpack_device__()
    (1, 0)
    """
    buf = self._concrete("__dlpack_device__")
    if isinstance(buf, np.generic):
        buf = np.asarray(buf)
    return buf.__dlpack_device__()


def __array_namespace__(self, *, api_version=None):
    """The Array API namespace of this tensor: the ``fntorch`` module.

    >>> import fntorch as ft
    >>> ft.ones(2).__array_namespace__() is ft
    True
    """
    if api_version not in (None, "2021.12", "2022.12", "2023.12"):
        raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}")
    return importlib.import_module("fntorch")


def _T(self):
    """The transpose of a tensor of rank <= 2 (use ``.mT`` or ``.permute`` for more dims).

    >>> import fntorch as ft
    >>> ft.asarray([[1, 2], [3, 4]]).T.tolist()
    [[1, 3], [2, 4]]
    """
    if self.ndim > 2:
        raise ValueError(
            f".T needs a tensor of rank <= 2, got shape {tuple(self.shape)}; use x.mT for a "
            "batch of matrices, or x.permute(...)"
        )
    return self if self.ndim < 2 else _fn("permute_dims")(self, (1, 0))


def _mT(self):
    """The transpose of the last two axes (a batch of matrices).

    >>> import fntorch as ft
    >>> ft.zeros((5, 2, 3)).mT.shape
    (5, 3, 2)
    """
    if self.ndim < 2:
        raise ValueError(f".mT needs a tensor of rank >= 2, got shape {tuple(self.shape)}")
    return _fn("matrix_transpose")(self)


def _mH(self):
    """The conjugate transpose of the last two axes (``x.mT`` for real tensors).

    >>> import fntorch as ft
    >>> ft.asarray([[1 + 2j, 3j]]).mH.tolist()
    [[(1-2j)], [-3j]]
    """
    return _fn("conj")(_mT(self))


def _real(self):
    """The real part (``ft.real``): a float tensor for a complex one, else ``x`` itself.

    >>> import fntorch as ft
    >>> ft.asarray([1 + 2j]).real.tolist()
    [1.0]
    """
    return _fn("real")(self)


def _imag(self):
    """The imaginary part (``ft.imag``): a float tensor for a complex one.

    >>> import fntorch as ft
    >>> ft.asarray([1 + 2j]).imag.tolist()
    [2.0]
    """
    return _fn("imag")(self)


def _t(self):
    """PyTorch's ``x.t()``: ``x.T`` for rank <= 2.

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).t().shape
    (3, 2)
    """
    return _T(self)


for _fn_ in (numpy, __array__, item, tolist, __float__, __int__, __bool__, __index__,
             __complex__, __format__, __iter__, __contains__, __dlpack__, __dlpack_device__,
             __array_namespace__):  # fmt: skip
    _attach(_fn_.__name__, _fn_)
Tensor.__repr__ = __repr__  # Tracer keeps its own
_attach("T", property(_T))
_attach("mT", property(_mT))
_attach("mH", property(_mH))
_attach("real", property(_real))
_attach("imag", property(_imag))
_attach("t", _t)

from . import _tensor_methods  # noqa: E402,F401  (the method table)
