"""Abstract values and the errors about them: ``ShapedArray`` (a tensor's shape, dtype and
weak-type flag), the short dtype names it prints with (``f32[2,3]``), and the errors
raised when a traced abstract value is used where a concrete one is needed
(``ConcretizationError``) or after its transform is over (``UnexpectedTracerError``).
fx.core re-exports these names.
"""

from __future__ import annotations

import numpy as np

# ----------------------------------------------------------------------------- errors


class UnexpectedTracerError(Exception):
    """A traced value was used after the transform that made it had finished.

    >>> import fntorch as ft
    >>> leaked = []
    >>> _ = ft.grad(lambda x: leaked.append(x) or x * 1.0)(1.0)
    >>> try:
    ...     leaked[0] + 1.0
    ... except ft.UnexpectedTracerError as e:
    ...     print("escaped" in str(e))
    True
    """


class ConcretizationError(TypeError):
    """A Python-level decision (``if``, ``float()``, ``.item()``) was asked of an abstract value.

    >>> import fntorch as ft
    >>> try:
    ...     ft.make_graph(lambda x: float(x))(ft.ones(()))
    ... except ft.ConcretizationError as e:
    ...     print("static_argnums" in str(e))
    True
    """


def _concretization_message(what: str, aval, transform: str) -> str:
    return (
        f"{what} needs a concrete value, but got an abstract tensor {aval} traced by "
        f"{transform}. Python control flow cannot depend on a traced value. Fixes: mark "
        "the argument static (ft.jit(f, static_argnums=...) / static_argnames=...), or "
        "use ft.cond / ft.switch / ft.while_loop / ft.fori_loop instead of `if`/`while`, "
        "or ft.where for elementwise choices."
    )


# ----------------------------------------------------------------------- abstract values


class ShapedArray:
    """The abstract value of a tensor: its shape, dtype and weak-type flag.

    >>> ShapedArray((2, 3), np.dtype("float32"))
    f32[2,3]
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        """The number of dims."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other):
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def strong(self) -> ShapedArray:
        """The same abstract value without the weak-type flag (a Python scalar's)."""
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def str_short(self) -> str:
        """The short form, ``f32[2,3]``."""
        return f"{dtype_short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__ = str_short


_SHORT = {
    "bool": "bool",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
}  # fmt: skip


def dtype_short_name(dtype) -> str:
    return _SHORT.get(str(dtype), str(dtype))
