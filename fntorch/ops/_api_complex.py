"""PyTorch's constructors and views of complex tensors: ``complex(real, imag)``,
``polar(abs, angle)``, ``view_as_real`` and ``view_as_complex``. fntorch tensors are
values, so the "views" are new tensors (no memory is shared, none can be written).
``ft.real``, ``imag``, ``conj`` and ``angle`` are in `_api_elementwise_math`.
"""

from __future__ import annotations

from ..fx import dtypes as dt
from . import lax
from ._api_common import promote
from ._api_elementwise_math import _float_tensor, _operand

__all__ = ["complex", "polar", "view_as_real", "view_as_complex"]


def _real_pair(name, a, b):
    a, b = _operand(name, a, "real"), _operand(name, b, "imag")
    a, b = promote(name, a, b)
    if not dt.is_float(a.dtype):
        raise TypeError(f"{name}: expected real float operands, got {a.dtype}")
    return a, b


def complex(real, imag):  # noqa: A001 - PyTorch's name
    """``real + 1j * imag`` from two float tensors of one dtype (float64 gives
    complex128, float32 complex64), broadcasting, as ``torch.complex``.

    >>> import fntorch as ft
    >>> ft.complex(ft.asarray([1.0]), ft.asarray([2.0])).tolist()
    [(1+2j)]
    """
    re, im = _real_pair("complex", real, imag)
    return lax.complex(re, im)


def polar(abs, angle):  # noqa: A002 - PyTorch's names
    """``abs * (cos(angle) + 1j * sin(angle))``, as ``torch.polar``.

    >>> import fntorch as ft
    >>> round(ft.polar(ft.asarray(2.0), ft.asarray(0.0)).item().real, 6)
    2.0
    """
    r, t = _real_pair("polar", abs, angle)
    return lax.complex(lax.mul(r, lax.cos(t)), lax.mul(r, lax.sin(t)))


def view_as_real(x):
    """A complex tensor as its (real, imag) pairs along a new last axis of 2.

    >>> import fntorch as ft
    >>> ft.view_as_real(ft.asarray([1 + 2j])).tolist()
    [[1.0, 2.0]]
    """
    x = _float_tensor("view_as_real", x)
    if not dt.is_complex(x.dtype):
        raise TypeError(f"view_as_real: expected a complex tensor, got {x.dtype}")
    nd = len(x.shape)
    parts = [lax.expand_dims(p(x), (nd,)) for p in (lax.real, lax.imag)]
    return lax.concatenate(parts, nd)


def view_as_complex(x):
    """(real, imag) pairs along a last axis of 2 as one complex tensor.

    >>> import fntorch as ft
    >>> ft.view_as_complex(ft.asarray([[1.0, 2.0]])).tolist()
    [(1+2j)]
    """
    x = _float_tensor("view_as_complex", x, complex_ok=False)
    if not x.shape or x.shape[-1] != 2:
        raise ValueError(
            f"view_as_complex: expected a last axis of size 2, got shape {tuple(x.shape)}"
        )
    nd = len(x.shape)
    start = (0,) * nd
    re = lax.slice(x, start, (*x.shape[:-1], 1))
    im = lax.slice(x, (*start[:-1], 1), tuple(x.shape))
    return lax.complex(lax.squeeze(re, (nd - 1,)), lax.squeeze(im, (nd - 1,)))
