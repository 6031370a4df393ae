"""Tensor methods, conversions and identity: the dtype casts (``float``, ``double``,
``half``, ``long``, ``int``, ``bool``, ...), ``astype``, ``type_as``, ``to`` (dtype,
device or both, as PyTorch), ``to_device``, ``cpu``, ``cuda``; ``clone``, ``detach``
(the gradient stopped) and ``contiguous`` (``x`` itself); facts about ``x`` (``dim``,
``numel``, ``element_size``, ``is_floating_point``); and ``new_zeros``, ``new_ones``,
``new_empty``, ``new_full``, ``new_tensor`` (``x``'s dtype and device unless given).

Attached to Tensor when imported (by `fntorch.ops._tensor_methods`).
"""

from __future__ import annotations

from ..fx import dtypes as dt
from ..fx.core import Tensor
from ..fx.device import KNOWN_PLATFORMS, Device
from ..fx.device import device as _device
from . import api as _api
from ._tensor import _attach, _fn
from ._tensor_methods import _shape_args

# dtype conversions: method -> dtype.
_CASTS = {
    "float": dt.float32, "double": dt.float64, "half": dt.float16, "bfloat16": dt.bfloat16,
    "long": dt.int64, "int": dt.int32, "short": dt.int16, "char": dt.int8, "byte": dt.uint8,
    "bool": dt.bool_,
}  # fmt: skip


def _cast_method(dtype):
    def method(self):
        return self if self.dtype == dtype else _fn("astype")(self, dtype)

    return method


def _cast_doc(name: str, dtype) -> str:
    values = ("[False, True, True]" if dtype == dt.bool_ else
              "[0.0, 1.5, 2.0]" if dt.is_float(dtype) else "[0, 1, 2]")  # fmt: skip
    return (
        f"``x`` as {dtype} (``x.astype(ft.{dtype})``; ``x`` itself if it has that dtype).\n\n"
        f">>> import fntorch as ft\n>>> y = ft.asarray([0.0, 1.5, 2.0]).{name}()\n"
        f">>> y.dtype, y.tolist()\n({dtype!r}, {values})"
    )


for _m, _d in _CASTS.items():
    _attach(_m, _cast_method(_d), _cast_doc(_m, _d))


# --------------------------------------------------------------- dtype, device, identity


def astype(self, dtype, *, copy=True):
    """``x`` converted to ``dtype`` (``ft.astype``; floats truncate toward zero).

    >>> import fntorch as ft
    >>> ft.asarray([1.7, -1.7]).astype(ft.int32).tolist()
    [1, -1]
    """
    return _api.astype(self, dtype, copy=copy)


def _is_device_spec(a) -> bool:
    if isinstance(a, Device) or isinstance(getattr(a, "type", None), str):  # torch.device
        return True
    return isinstance(a, str) and a.partition(":")[0] in KNOWN_PLATFORMS


def to_device(self, device, /, *, stream=None):
    """The Array API's ``x.to_device(device)``: ``x.to(device)``.

    >>> import fntorch as ft
    >>> ft.ones(2).to_device("cpu").device
    device(type='cpu')
    """
    if stream is not None:
        raise ValueError(f"Tensor.to_device: stream must be None, got {stream!r}")
    return self.to(device)


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
    """PyTorch's ``to``: ``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)``,
    ``x.to(other)`` (its dtype and device), or keywords. Returns ``x`` itself when nothing
    changes (and ``copy`` is False).

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).to(ft.float32).dtype
    dtype('float32')
    """
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif _is_device_spec(a):
            device = a
        else:
            dtype = a
    out = self
    if dtype is not None:
        d = dt.canonicalize(dtype, where="Tensor.to")
        if d != out.dtype:
            out = _api.astype(out, d)
    if device is not None:
        target, current = _device(device), out.device
        if current is not None and current is not target:  # (None: a tracer's unknown)
            out = _api.asarray(out, device=target)
    if copy and out is self:
        out = clone(self)
    return out


def cpu(self):
    """``x.to("cpu")``.

    >>> import fntorch as ft
    >>> ft.ones(2).cpu().device
    device(type='cpu')
    """
    return to(self, "cpu")


def cuda(self, device=None):
    """``x.to("cuda")`` (or ``"cuda:<device>"``). Needs a CUDA device: where there is none,
    it raises RuntimeError, so this example is not run here (``x.cpu()`` is the way back).

    >>> import fntorch as ft
    >>> ft.ones(2).cuda().device  # doctest: +SKIP
    device(type='cuda', index=0)
    """
    if device is None or isinstance(device, int):
        return to(self, "cuda" if device is None else f"cuda:{device}")
    return to(self, device)  # "cuda:0", a Device or a torch.device, as PyTorch takes


def type_as(self, other):
    """``x`` converted to ``other``'s dtype.

    >>> import fntorch as ft
    >>> ft.asarray([1, 2]).type_as(ft.zeros(1)).dtype
    dtype('float32')
    """
    return self if self.dtype == other.dtype else _api.astype(self, other.dtype)


def clone(self):
    """A copy (a new buffer; values are immutable, so this is rarely needed).

    >>> import fntorch as ft
    >>> x = ft.asarray([1, 2])
    >>> y = x.clone()
    >>> y.tolist(), y is x
    ([1, 2], False)
    """
    from . import lax

    return lax.copy(self)


def detach(self):
    """``x`` with its gradient stopped (``ft.stop_gradient``).

    >>> import fntorch as ft
    >>> ft.grad(lambda x: (x * x.detach()).sum())(ft.asarray([3.0])).tolist()
    [3.0]
    """
    from . import lax

    return lax.stop_gradient(self)


def contiguous(self):
    """``x`` itself: fntorch tensors have no user-visible layout.

    >>> import fntorch as ft
    >>> x = ft.ones(2)
    >>> x.contiguous() is x
    True
    """
    return self


def dim(self):
    """The number of dims (``x.ndim``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).dim()
    2
    """
    return self.ndim


def numel(self):
    """The number of elements (``x.size``; PyTorch's ``x.size()`` is ``x.shape`` here).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).numel()
    6
    """
    return self.size


def element_size(self):
    """The size of one element in bytes.

    >>> import fntorch as ft
    >>> ft.zeros(2, dtype=ft.float16).element_size()
    2
    """
    return self.dtype.itemsize


def _nbytes(self):
    """The bytes the elements take: ``numel() * element_size()`` (PyTorch's ``t.nbytes``).

    >>> import fntorch as ft
    >>> ft.zeros((2, 3)).nbytes
    24
    """
    return self.size * self.dtype.itemsize


def is_floating_point(self):
    """Whether the dtype is a float dtype.

    >>> import fntorch as ft
    >>> ft.ones(2).is_floating_point(), ft.asarray([1]).is_floating_point()
    (True, False)
    """
    return dt.is_float(self.dtype)


def is_complex(self):
    """Whether the dtype is complex64 or complex128.

    >>> import fntorch as ft
    >>> ft.ones(2, dtype=ft.complex64).is_complex(), ft.ones(2).is_complex()
    (True, False)
    """
    return dt.is_complex(self.dtype)


def _new(fname):
    def method(self, size, *rest, dtype=None, device=None):
        shape = _shape_args((size, *rest), f"Tensor.new_{fname}")
        return getattr(_api, fname)(shape, dtype=dtype or self.dtype, device=device or self.device)

    method.__doc__ = (
        f"``ft.{fname}(size)`` with ``x``'s dtype and device (unless given).\n\n"
        f">>> import fntorch as ft\n>>> y = ft.ones(2, dtype=ft.int32).new_{fname}((2, 3))\n"
        f">>> y.shape, y.dtype\n((2, 3), dtype('int32'))"
    )
    return method


def new_full(self, size, fill_value, *, dtype=None, device=None):
    """``ft.full(size, fill_value)`` with ``x``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> y = ft.zeros(2, dtype=ft.int32).new_full((2, 2), 7)
    >>> y.dtype, y.tolist()
    (dtype('int32'), [[7, 7], [7, 7]])
    """
    return _api.full(
        tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device
    )


def new_tensor(self, data, *, dtype=None, device=None):
    """``ft.asarray(data)`` with ``x``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> y = ft.zeros(2, dtype=ft.float16).new_tensor([1, 2])
    >>> y.dtype, y.tolist()
    (dtype('float16'), [1.0, 2.0])
    """
    return _api.asarray(data, dtype=dtype or self.dtype, device=device or self.device)


for _f in (astype, to, to_device, cpu, cuda, type_as, clone, detach, contiguous, dim, numel,
           element_size, is_floating_point, is_complex, new_full, new_tensor):  # fmt: skip
    _attach(_f.__name__, _f)
_attach("nbytes", property(_nbytes))
for _name in ("zeros", "ones", "empty"):
    _attach(f"new_{_name}", _new(_name))
