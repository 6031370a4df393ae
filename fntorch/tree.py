"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes.

A thin layer over optree (the C++ pytree library PyTorch and JAX-adjacent projects
use). All fntorch registrations live in the ``"fntorch"`` namespace so they never
clash with other libraries' registrations.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import optree

__all__ = [
    "map",
    "leaves",
    "flatten",
    "unflatten",
    "structure",
    "register_dataclass",
    "register_node",
]

NAMESPACE = "fntorch"
PyTreeSpec = optree.PyTreeSpec


def flatten(tree, is_leaf=None) -> tuple[list, PyTreeSpec]:
    """Leaves and structure of a pytree.

    >>> flatten({"a": 1, "b": (2, 3)})[0]
    [1, 2, 3]
    """
    return optree.tree_flatten(tree, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def unflatten(treedef: PyTreeSpec, leaves) -> Any:
    """Rebuilds a pytree from its structure and leaves.

    >>> leaves, tdef = flatten((1, [2]))
    >>> unflatten(tdef, [5, 6])
    (5, [6])
    """
    if not isinstance(treedef, PyTreeSpec):
        raise TypeError(
            "tree.unflatten: treedef must be a tree structure (from ft.tree.flatten or "
            f"ft.tree.structure), got {type(treedef).__name__}"
        )
    return optree.tree_unflatten(treedef, leaves)


def leaves(tree, is_leaf=None) -> list:
    """The leaves of a pytree, in order.

    >>> leaves([1, (2, None)])
    [1, 2]
    """
    return optree.tree_leaves(tree, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def structure(tree, is_leaf=None) -> PyTreeSpec:
    """The structure (treedef) of a pytree.

    >>> structure((1, 2)).num_leaves
    2
    """
    return optree.tree_structure(tree, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 - the public name is fixed by the API
    """Applies ``f`` to the leaves of one or more pytrees of the same structure.

    >>> map(lambda x, y: x + y, (1, 2), (10, 20))
    (11, 22)
    """
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def register_dataclass(cls):
    """Class decorator: a dataclass whose fields are children, except static ones.

    Fields with ``field(metadata={"static": True})`` are part of the structure.

    >>> from dataclasses import dataclass, field
    >>> @register_dataclass
    ... @dataclass
    ... class P:
    ...     w: object
    ...     name: str = field(default="p", metadata={"static": True})
    >>> leaves(P(w=3.0))
    [3.0]
    """
    if not isinstance(cls, type):
        raise TypeError(
            "tree.register_dataclass: expected a class (it is a class decorator), "
            f"got {type(cls).__name__}"
        )
    if not dataclasses.is_dataclass(cls):
        cls = dataclasses.dataclass(cls)
    fields = dataclasses.fields(cls)
    data = tuple(f.name for f in fields if not f.metadata.get("static", False))
    meta = tuple(f.name for f in fields if f.metadata.get("static", False))

    def flatten_fn(obj):
        return (
            tuple(getattr(obj, n) for n in data),
            tuple(getattr(obj, n) for n in meta),
            data,
        )

    def unflatten_fn(metadata, children):
        obj = object.__new__(cls)
        for n, v in zip(data, children):
            object.__setattr__(obj, n, v)
        for n, v in zip(meta, metadata):
            object.__setattr__(obj, n, v)
        return obj

    optree.register_pytree_node(cls, flatten_fn, unflatten_fn, namespace=NAMESPACE)
    return cls


def register_node(cls, flatten_fn, unflatten_fn):
    """Registers a class as a pytree node (optree's protocol, fntorch's namespace).

    ``flatten_fn(obj) -> (children, metadata)``; ``unflatten_fn(metadata, children)``.

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> _ = register_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> leaves(Pair(1, (2, 3)))
    [1, 2, 3]
    """
    optree.register_pytree_node(cls, flatten_fn, unflatten_fn, namespace=NAMESPACE)
    return cls


def tree_prefix_broadcast(prefix, tree, what: str, of: str = "arguments") -> list:
    """Broadcasts a pytree prefix (e.g. vmap's ``in_axes``) to ``tree``: one entry per
    element of ``leaves(tree)``. In ``prefix`` a ``None`` is an entry; in ``tree`` it is an
    empty subtree, which gets none, so the entries line up with the leaves.

    Raises ``ValueError`` naming both structures when ``prefix`` is not a prefix.

    >>> tree_prefix_broadcast((0, None), ([1, None, 2], 3), "in_axes")
    [0, 0, None]
    """
    try:
        full = optree.broadcast_prefix(prefix, tree, none_is_leaf=True, namespace=NAMESPACE)
    except ValueError as e:
        prefix_tree = optree.tree_structure(prefix, none_is_leaf=True, namespace=NAMESPACE)
        raise ValueError(
            f"{what} must be a tree prefix of the {of}, but it is {prefix!r} (structure "
            f"{prefix_tree}) and the {of} have structure {structure(tree)} ({e})"
        ) from None
    with_none = optree.tree_leaves(tree, none_is_leaf=True, namespace=NAMESPACE)
    return [p for p, leaf in zip(full, with_none) if leaf is not None]
