"""PyTorch's top-level functions that are Tensor methods called with the tensor first
(``torch.unsqueeze(x, 0)`` is ``x.unsqueeze(0)``), made from one table, and a few that
model files use beside them: ``allclose``, ``isclose``, ``lerp``, ``as_tensor``,
``get_default_dtype``, and ``tril``/``triu`` taking PyTorch's ``diagonal`` as well as
the Array API's ``k=``; the reductions ``sum``, ``prod``, ``mean``, ``argmax``,
``argmin``, ``all``, ``any``, ``logsumexp``, ``softmax``, ``log_softmax`` and ``cumsum``
take PyTorch's ``dim`` (positional or keyword) and ``keepdim`` beside ``axis=`` and
``keepdims=``. Re-exported at top level by ``_api_torch``.

>>> import fntorch as ft
>>> ft.unsqueeze(ft.zeros(3), 0).shape, ft.transpose(ft.zeros((2, 3)), 0, 1).shape
((1, 3), (3, 2))
"""

from __future__ import annotations

import functools

from ..fx import dtypes as _dt
from ..fx.core import Tensor
from . import _api_creation, _api_elementwise_math, _api_reduce

# name: (example call, its printed result), the example run as the function's doctest
_METHODS = {
    "unsqueeze": ("ft.unsqueeze(ft.zeros(3), 1).shape", "(3, 1)"),
    "transpose": ("ft.transpose(ft.zeros((2, 3)), 0, 1).shape", "(3, 2)"),
    "permute": ("ft.permute(ft.zeros((2, 3, 4)), (2, 0, 1)).shape", "(4, 2, 3)"),
    "narrow": ("ft.narrow(ft.arange(5), 0, 1, 2).tolist()", "[1, 2]"),
    "gather": (
        "ft.gather(ft.asarray([[1, 2], [3, 4]]), 1, ft.asarray([[1], [0]])).tolist()",
        "[[2], [3]]",
    ),  # fmt: skip
    "index_select": ("ft.index_select(ft.arange(4), 0, ft.asarray([3, 0])).tolist()", "[3, 0]"),
    "masked_fill": (
        "ft.masked_fill(ft.ones(2), ft.asarray([True, False]), 0.0).tolist()",
        "[0.0, 1.0]",
    ),  # fmt: skip
    "repeat_interleave": ("ft.repeat_interleave(ft.asarray([1, 2]), 2).tolist()", "[1, 1, 2, 2]"),
    "clamp": (
        "ft.clamp(ft.asarray([-2.0, 0.5, 3.0]), min=0.0, max=1.0).tolist()",
        "[0.0, 0.5, 1.0]",
    ),  # fmt: skip
    "amax": ("ft.amax(ft.asarray([[1, 5], [7, 2]]), dim=1).tolist()", "[5, 7]"),
    "amin": ("ft.amin(ft.asarray([[1, 5], [7, 2]]), dim=0).tolist()", "[1, 2]"),
    "norm": ("float(ft.norm(ft.asarray([3.0, 4.0])))", "5.0"),
    "dot": ("float(ft.dot(ft.asarray([1.0, 2.0]), ft.asarray([3.0, 4.0])))", "11.0"),
    "mm": ("ft.mm(ft.ones((2, 3)), ft.ones((3, 4))).shape", "(2, 4)"),
    "bmm": ("ft.bmm(ft.ones((5, 2, 3)), ft.ones((5, 3, 4))).shape", "(5, 2, 4)"),
    "t": ("ft.t(ft.zeros((2, 3))).shape", "(3, 2)"),
    "clone": ("ft.clone(ft.ones(2)).tolist()", "[1.0, 1.0]"),
    "detach": ("ft.detach(ft.ones(2)).tolist()", "[1.0, 1.0]"),
    "movedim": ("ft.movedim(ft.zeros((2, 3, 4)), 0, -1).shape", "(3, 4, 2)"),
    "swapaxes": ("ft.swapaxes(ft.zeros((2, 3)), 0, 1).shape", "(3, 2)"),
    "unbind": (
        "[v.tolist() for v in ft.unbind(ft.asarray([[1, 2], [3, 4]]), 1)]",
        "[[1, 3], [2, 4]]",
    ),  # fmt: skip
    "neg": ("ft.neg(ft.asarray([1, -2])).tolist()", "[-1, 2]"),
    "is_floating_point": (
        "ft.is_floating_point(ft.ones(1)), ft.is_floating_point(ft.arange(2))",
        "(True, False)",
    ),  # fmt: skip
}


def _method_function(name: str, example: str, result: str):
    def fn(input, *args, **kwargs):  # noqa: A002 - PyTorch's name
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected a Tensor as input, got {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = (
        f"PyTorch's ``torch.{name}(input, ...)``: ``input.{name}(...)``.\n\n"
        f"    >>> import fntorch as ft\n    >>> {example}\n    {result}\n    "
    )
    return fn


for _name, (_example, _result) in _METHODS.items():
    globals()[_name] = _method_function(_name, _example, _result)


_UNSET = object()


def _torch_dims(fn):
    """``fn`` (an Array API reduction, ``axis=``/``keepdims=``) also taking PyTorch's
    ``dim`` (positional or keyword) and ``keepdim``: ``ft.sum(x, 1, keepdim=True)``."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapped(x, /, *args, dim=_UNSET, keepdim=_UNSET, **kwargs):
        if len(args) > 1:
            raise TypeError(f"{name}: takes one positional dim after the input, got {args!r}")
        given = [v for v in (*args, dim) if v is not _UNSET]
        if len(given) + ("axis" in kwargs) > 1:
            raise TypeError(f"{name}: give the dims once, as axis=, dim= or positionally")
        if given:
            kwargs["axis"] = given[0]
        if keepdim is not _UNSET:
            if "keepdims" in kwargs:
                raise TypeError(f"{name}: give keepdims= or keepdim=, not both")
            kwargs["keepdims"] = keepdim
        return fn(x, **kwargs)

    return wrapped


_REDUCTIONS = ("sum", "prod", "mean", "argmax", "argmin", "all", "any", "logsumexp",
               "softmax", "log_softmax", "cumsum")  # fmt: skip
for _name in _REDUCTIONS:
    globals()[_name] = _torch_dims(getattr(_api_reduce, _name))


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _api_creation.asarray(x)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):  # noqa: A002
    """Elementwise ``|input - other| <= atol + rtol * |other|``, as PyTorch's ``isclose``.

    >>> import fntorch as ft
    >>> ft.isclose(ft.asarray([1.0, 2.0]), ft.asarray([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    """
    a, b = _t(input), _t(other)
    close = _api_elementwise_math.abs(a - b) <= atol + rtol * _api_elementwise_math.abs(b)
    if equal_nan:
        close = close | (_api_elementwise_math.isnan(a) & _api_elementwise_math.isnan(b))
    return close | (a == b)  # equal infinities are close


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):  # noqa: A002
    """Whether every element is ``isclose``: a Python bool, as PyTorch's ``allclose``.

    >>> import fntorch as ft
    >>> ft.allclose(ft.ones(3), ft.ones(3) + 1e-9), ft.allclose(ft.ones(2), ft.zeros(2))
    (True, False)
    """
    return bool(_api_reduce.all(isclose(input, other, rtol, atol, equal_nan)))


def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)``, as PyTorch's ``lerp``.

    >>> import fntorch as ft
    >>> ft.lerp(ft.zeros(2), ft.asarray([2.0, 4.0]), 0.5).tolist()
    [1.0, 2.0]
    """
    a = _t(input)
    return a + weight * (_t(end) - a)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """PyTorch's ``as_tensor``: ``ft.asarray(data, dtype=dtype, device=device)`` (a tensor
    of the same dtype and device is returned as it is).

    >>> import fntorch as ft
    >>> ft.as_tensor([1, 2], dtype=ft.float32).tolist()
    [1.0, 2.0]
    """
    return _api_creation.asarray(data, dtype=dtype, device=device)


def _diagonal_arg(where, diagonal, k) -> int:
    if k is not None and diagonal:
        raise TypeError(f"{where}: give the diagonal once, as k= or as diagonal=, not both")
    return diagonal if k is None else k


def tril(input, diagonal: int = 0, *, k=None) -> Tensor:  # noqa: A002
    """Entries above the diagonal (of the last two dims) zeroed: the Array API's
    ``tril(x, k=)`` and PyTorch's ``tril(x, diagonal)`` alike.

    >>> import fntorch as ft
    >>> ft.tril(ft.ones((2, 2))).tolist(), ft.tril(ft.ones((2, 2)), diagonal=-1).tolist()
    ([[1.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 0.0]])
    """
    return _api_creation.tril(input, k=_diagonal_arg("tril", diagonal, k))


def triu(input, diagonal: int = 0, *, k=None) -> Tensor:  # noqa: A002
    """Entries below the diagonal (of the last two dims) zeroed: the Array API's
    ``triu(x, k=)`` and PyTorch's ``triu(x, diagonal)`` alike.

    >>> import fntorch as ft
    >>> ft.triu(ft.ones((2, 2)), k=1).tolist(), ft.triu(ft.ones((2, 2)), 1).tolist()
    ([[0.0, 1.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]])
    """
    return _api_creation.triu(input, k=_diagonal_arg("triu", diagonal, k))


def get_default_dtype():
    """The default float dtype (float32), as PyTorch's ``get_default_dtype``.

    >>> import fntorch as ft
    >>> ft.get_default_dtype() == ft.float32
    True
    """
    return _dt.default_float


__all__ = [
    *_METHODS, *_REDUCTIONS,
    "isclose", "allclose", "lerp", "as_tensor", "tril", "triu", "get_default_dtype",
]  # fmt: skip
