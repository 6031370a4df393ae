"""The argument handling every transform shares: pytree leaves as tensors, which leaves
are weakly typed Python scalars, ``fun`` as a function of flat lists, the ``has_aux``
outputs, and the ``argnums`` checks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import tree as tree_util
from ..fx.core import Tensor, Tracer, as_tensor_leaf

_as_tensor = as_tensor_leaf


def _flatten_raw(args, where):
    """``args``' leaves as given (a Python scalar stays one: weak), as tensors, and the
    tree structure."""
    leaves, treedef = tree_util.flatten(args)
    return leaves, [_as_tensor(x, where) for x in leaves], treedef


def _is_weak(raw) -> list[bool]:
    """Which leaves are Python scalars: weakly typed, so that differentiating one never
    lets it widen a tensor (``f16 * 3.0`` stays float16), as in JAX."""
    return [type(r) in (bool, int, float) for r in raw]


def _weak_as_given(raw, flat) -> list:
    """The leaves to differentiate at: Python scalars as given (so a transform built on
    ``jvp`` or ``vjp`` sees them weak, ``_is_weak``), the others as tensors."""
    return [r if w else x for r, x, w in zip(raw, flat, _is_weak(raw))]


def _flat_fun(fun, in_tree, out_box, where, has_aux=False):
    """``fun`` as a function of a flat list returning a flat list; records output trees."""

    def flat(xs):
        out = fun(*tree_util.unflatten(in_tree, xs))
        if has_aux:
            out, aux = _unpack_aux(out, where)
            aux_leaves = _split_aux(aux, out_box)
        else:
            aux_leaves = []
        leaves, out_box["out_tree"] = tree_util.flatten(out)
        out_box["n_out"] = len(leaves)
        return [_as_tensor(x, where) for x in leaves] + list(aux_leaves)

    return flat


def _unpack_aux(out, where):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"{where} with has_aux=True: the function must return a pair (output, aux), "
            f"got {'a Tensor' if isinstance(out, (Tensor, Tracer)) else type(out).__name__}"
        )
    return out


def _split_aux(aux, box) -> list:
    """The array leaves of ``aux``, which the transform carries out as values; the others
    (strings, None-like markers, any object) are kept in ``box`` and come back unchanged
    (``_join_aux``), as in JAX: aux is not differentiated."""
    leaves, box["aux_tree"] = tree_util.flatten(aux)
    keep = (Tensor, np.ndarray, np.generic, bool, int, float)
    box["aux_static"] = {i: x for i, x in enumerate(leaves) if not isinstance(x, keep)}
    return [x for i, x in enumerate(leaves) if i not in box["aux_static"]]


def _join_aux(box, traced):
    it = iter(traced)
    static = box["aux_static"]
    n = box["aux_tree"].num_leaves
    return tree_util.unflatten(
        box["aux_tree"], [static[i] if i in static else next(it) for i in range(n)]
    )


def _as_argnums(argnums):
    """``argnums`` with numpy integers made Python ints, as JAX takes any index."""
    if isinstance(argnums, np.integer):
        return int(argnums)
    if isinstance(argnums, (tuple, list)):
        return tuple(int(a) if isinstance(a, np.integer) else a for a in argnums)
    return argnums


def _check_argnums(argnums, nargs, where, distinct=False):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, Sequence) and all(isinstance(a, int) for a in argnums):
        nums = tuple(argnums)
    else:
        raise TypeError(f"{where}: argnums must be an int or a tuple of ints, got {argnums!r}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{where}: argnums {argnums!r} out of range for a function called with {nargs} "
                "positional arguments"
            )
    nums = tuple(a % nargs for a in nums)
    # One argument differentiated twice would take only the last slot's value.
    if distinct and len(set(nums)) != len(nums):
        raise ValueError(f"{where}: argnums {argnums!r} names an argument more than once")
    return nums
