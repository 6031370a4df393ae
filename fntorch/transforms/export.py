"""``ft.export``: a function staged out once, at example arguments, into an ``Exported``
that runs compiled, composes with every transform, and serializes to versioned JSON
(``fntorch/fx/serialize.py`` holds the format; docs/export.md the schema).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import tree as tree_util
from .._version import __version__
from ..fx import dtypes as _dt
from ..fx import serialize as _ser
from ..fx.core import ShapedArray, Tensor, Tracer, check_callable, get_aval
from ..fx.graph import Graph, eval_graph, inline_custom_calls
from ._args import _as_tensor
from .jit import jit
from .staging import stage


class ShapeDtypeStruct:
    """A shape and a dtype standing for an argument, as JAX's: an example argument of
    ``ft.export`` (and anything that reads ``.shape`` and ``.dtype``).

    >>> import fntorch as ft
    >>> s = ft.ShapeDtypeStruct((2, 3), ft.float32)
    >>> s.shape, s.dtype
    ((2, 3), dtype('float32'))
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        try:
            self.shape = tuple(int(d) for d in shape)
        except TypeError:
            raise TypeError(
                f"ShapeDtypeStruct: shape must be a tuple of ints, got {shape!r}"
            ) from None
        if any(d < 0 for d in self.shape):
            raise ValueError(f"ShapeDtypeStruct: shape {self.shape} has a negative dim")
        self.dtype = _dt.canonicalize(dtype, where="ShapeDtypeStruct")
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        """The number of dims.

        >>> import fntorch as ft
        >>> ft.ShapeDtypeStruct((2, 3), ft.float32).ndim
        2
        """
        return len(self.shape)

    def __eq__(self, other):
        """Equal shape, dtype and weak-type flag.

        >>> import fntorch as ft
        >>> ft.ShapeDtypeStruct(2, ft.int8) == ft.ShapeDtypeStruct((2,), ft.int8)
        True
        """
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) == (
            other.shape,
            other.dtype,
            other.weak_type,
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


def _example_aval(x, where: str) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    if type(x) in (bool, int, float):
        return get_aval(x)  # weak, as under jit
    return get_aval(_as_tensor(x, where))


class Exported:
    """A function staged out at fixed input shapes and dtypes (``ft.export``'s result, or
    ``ft.fx.deserialize``'s). Calling it takes the arguments the function took and
    returns its pytree of outputs, run compiled (``ft.jit`` of the graph's evaluation);
    ``jit``, ``grad`` and ``vmap`` of it work as of any function.

    ``.graph`` (an ``ft.fx.Graph``, custom rules inlined), ``.in_avals``/``.out_avals``
    (flat abstract values), ``.in_tree`` (the structure of ``(args, kwargs)``),
    ``.out_tree``, ``.serialize()``.

    >>> import fntorch as ft
    >>> e = ft.export(lambda x, y: {"s": x + y}, ft.ones(2), 1.0)
    >>> e(ft.ones(2), 2.0)["s"].tolist(), e.in_avals
    ([3.0, 3.0], [f32[2], f32[]])
    """

    def __init__(self, graph: Graph, in_tree, out_tree, in_avals, out_avals, name="exported"):
        self.graph = graph
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = list(in_avals)
        self.out_avals = list(out_avals)
        self.__name__ = name
        # Not `_run`: jit(exported) copies this __dict__ onto its JitFunction.
        self._exported_run = jit(lambda *flat: eval_graph(graph, *flat))

    def __call__(self, *args, **kwargs):
        """Runs the graph compiled on arguments of the exported structure, shapes and
        dtypes (a different shape is a ValueError, a different dtype a TypeError).

        >>> import fntorch as ft
        >>> ft.export(ft.exp, ft.zeros(2))(ft.zeros(2)).tolist()
        [1.0, 1.0]
        """
        leaves, tree = tree_util.flatten((args, kwargs))
        if tree != self.in_tree and not self._same_format(tree):
            raise TypeError(
                f"Exported {self.__name__}: called with arguments of structure {tree}; it "
                f"was exported for {self.in_tree}"
            )
        flat = [self._check(k, x) for k, x in enumerate(leaves)]
        return tree_util.unflatten(self.out_tree, self._exported_run(*flat))

    def _same_format(self, tree) -> bool:
        # A deserialized namedtuple is a new type of the same name and fields: the
        # caller's own type matches it.
        try:
            mine = _ser.encode_tree(_skeleton(self.in_tree))
            return _ser.encode_tree(_skeleton(tree)) == mine
        except ValueError:
            return False

    def _check(self, k: int, x):
        aval = self.in_avals[k]
        if type(x) in (bool, int, float):
            if aval.shape != ():
                raise ValueError(self._mismatch(k, get_aval(x), aval))
            # A number reaches the graph as a numpy scalar of the exported dtype (weak
            # where the example was): primitives take no Python scalars.
            if aval.weak_type:
                return _dt.weak_scalar(x, aval.dtype)
            return np.asarray(x, aval.dtype)[()]
        if not isinstance(x, (Tensor, np.ndarray, np.generic)):
            raise TypeError(
                f"Exported {self.__name__}: argument leaf {k} is a {type(x).__name__}; it "
                "takes tensors, arrays or numbers"
            )
        got = x.aval if isinstance(x, Tracer) else get_aval(x)
        if tuple(got.shape) != aval.shape:
            raise ValueError(self._mismatch(k, got, aval))
        if got.dtype != aval.dtype:
            raise TypeError(self._mismatch(k, got, aval))
        return x

    def _mismatch(self, k, got, want) -> str:
        return (
            f"Exported {self.__name__}: argument leaf {k} is {got.str_short()}; it was "
            f"exported for {want.str_short()} (export again for other shapes or dtypes)"
        )

    def serialize(self) -> bytes:
        """The versioned JSON bytes of this export (docs/export.md), which
        ``ft.fx.deserialize`` reads back in any process.

        >>> import fntorch as ft
        >>> data = ft.export(ft.sin, ft.ones(2)).serialize()
        >>> ft.fx.deserialize(data)(ft.zeros(2)).tolist()
        [0.0, 0.0]
        """
        return _ser.encode(
            self.graph,
            _skeleton(self.in_tree),
            _skeleton(self.out_tree),
            self.in_avals,
            self.out_avals,
            __version__,
        )

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.__name__}: ({ins}) -> ({outs}))"


def _skeleton(treedef):
    return tree_util.unflatten(treedef, [_ser.LEAF] * treedef.num_leaves)


def _from_parts(parts: dict) -> Exported:
    return Exported(
        parts["graph"],
        tree_util.structure(parts["in_tree"]),
        tree_util.structure(parts["out_tree"]),
        parts["in_avals"],
        parts["out_avals"],
        name="deserialized",
    )


_ser.exported_constructor[:] = [_from_parts]


def export(fun: Callable, *example_args, **example_kwargs) -> Exported:
    """``fun`` staged out at the example arguments' shapes and dtypes (tensors, numpy
    arrays, Python scalars, which stay weakly typed, or ``ft.ShapeDtypeStruct``s, in any
    pytree of tuples, lists, dicts, None and namedtuples). Custom rules (``custom_jvp``,
    ``custom_vjp``) are inlined: the export differentiates by its primitives' own rules.

    >>> import fntorch as ft
    >>> e = ft.export(lambda x: ft.exp(x) + 1.0, ft.ShapeDtypeStruct((3,), ft.float32))
    >>> [eq.primitive.name for eq in e.graph.eqns], e(ft.zeros(3)).tolist()
    (['exp', 'add'], [2.0, 2.0, 2.0])
    """
    check_callable("export", "fun", fun)
    leaves, in_tree = tree_util.flatten((example_args, example_kwargs))
    avals = [_example_aval(x, "export") for x in leaves]
    graph, out_tree = stage(
        fun, example_args, (), in_tree, avals, name="export", check_outputs=True
    )
    graph = inline_custom_calls(graph)
    name = getattr(fun, "__name__", type(fun).__name__)
    return Exported(graph, in_tree, out_tree, avals, graph.out_avals, name=name)
