"""The public Array API namespace: every name here is a top-level ``fntorch`` function.

fntorch is an Array API standard (2023.12) namespace, plus the extras of
``shared/API.md`` (sigmoid, erf, logsumexp, softmax, log_softmax, relu, gelu, einsum, pad,
take_along_axis, cumsum, top_k). The functions live in the private ``_api_*`` modules.
"""

from __future__ import annotations

import builtins
import math

from ..fx import dtypes as _dt
from ._api_complex import *  # noqa: F403
from ._api_complex import __all__ as _complex
from ._api_creation import *  # noqa: F403
from ._api_creation import __all__ as _creation
from ._api_device import *  # noqa: F403
from ._api_device import __all__ as _device
from ._api_elementwise import *  # noqa: F403
from ._api_elementwise import __all__ as _elementwise
from ._api_elementwise_math import *  # noqa: F403
from ._api_elementwise_math import __all__ as _elementwise_math
from ._api_linalg import *  # noqa: F403
from ._api_linalg import __all__ as _linalg
from ._api_manipulation import *  # noqa: F403
from ._api_manipulation import __all__ as _manipulation
from ._api_pad import *  # noqa: F403
from ._api_pad import __all__ as _pad
from ._api_reduce import *  # noqa: F403
from ._api_reduce import __all__ as _reduce
from ._api_set import *  # noqa: F403
from ._api_set import __all__ as _set
from ._api_torch import *  # noqa: F403
from ._api_torch import __all__ as _torch
from .control_flow import *  # noqa: F403
from .control_flow import __all__ as _control

__array_api_version__ = "2023.12"

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

_KINDS = {
    "bool": _dt.bool_dtypes,
    "signed integer": _dt.signed_dtypes,
    "unsigned integer": _dt.unsigned_dtypes,
    "integral": _dt.integer_dtypes,
    "real floating": _dt.float_dtypes,
    "complex floating": _dt.complex_dtypes,
    "numeric": _dt.integer_dtypes + _dt.float_dtypes + _dt.complex_dtypes,
}


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name (``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex
    floating"``, ``"numeric"``) or a tuple of these.

    >>> import fntorch as ft
    >>> ft.isdtype(ft.int8, "integral"), ft.isdtype(ft.float32, ("bool", "numeric"))
    (True, True)
    """
    dtype = _dt.canonicalize(dtype, where="isdtype")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {list(_KINDS)}")
        return dtype in _KINDS[kind]
    return dtype == _dt.canonicalize(kind, where="isdtype")


def can_cast(from_, to, /) -> bool:
    """Whether ``from_`` (a dtype or tensor) converts to ``to`` under the promotion rules,
    i.e. without loss of kind or range.

    >>> import fntorch as ft
    >>> ft.can_cast(ft.int8, ft.int32), ft.can_cast(ft.float32, ft.int32)
    (True, False)
    """
    src = from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, type) else from_
    src = _dt.canonicalize(src, where="can_cast")
    dst = _dt.canonicalize(to, where="can_cast")
    try:
        return _dt.promote_types(src, dst) == dst
    except TypeError:
        return False


class _NamespaceInfo:
    """What ``__array_namespace_info__()`` reports (the standard's inspection API)."""

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        from ..fx.device import get_default_device

        return get_default_device()

    def default_dtypes(self, *, device=None) -> dict:
        return {
            "real floating": _dt.default_float,
            "complex floating": _dt.default_complex,
            "integral": _dt.default_int,
            "indexing": _dt.int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        # The standard's dtypes: float16 and bfloat16 are fntorch's extras, outside it.
        return {
            str(d) if d != _dt.bool_ else "bool": d
            for d in _dt.all_dtypes
            if d not in (_dt.float16, _dt.bfloat16) and (kind is None or isdtype(d, kind))
        }

    def devices(self) -> list:
        from ..fx.device import devices

        return devices()


def __array_namespace_info__() -> _NamespaceInfo:
    """The standard's inspection object: default dtypes, devices, capabilities.

    >>> import fntorch as ft
    >>> ft.__array_namespace_info__().default_dtypes()["real floating"]
    dtype('float32')
    """
    return _NamespaceInfo()


__all__ = sorted(
    set(
        _creation
        + _complex
        + _device
        + _elementwise
        + _elementwise_math
        + _linalg
        + _manipulation
        + _pad
        + _reduce
        + _set
        + _torch
        + _control
    )
    | {"isdtype", "can_cast", "e", "pi", "inf", "nan", "newaxis"}
    | {"__array_api_version__", "__array_namespace_info__"}
)
