"""A ``Module`` as a pytree, and the parameters-only split that ``ft.grad`` uses.

Flattening a module gives its cells' values, parameters then buffers (tied parameters
once), in ``state_dict`` order; its structure (a ``ModuleStructure``) is the module, the
slots that hold each leaf and the ``training`` flags. Unflattening builds a *functional
copy*: the same classes and configuration, with the given values in place of the cells.

A copy remembers the structure it came from, so that it flattens to the same structure:
``ft.tree.map`` and the pure optimizers combine a model, its gradient and its optimizer
state, all copies of one model. A copy whose leaf is ``None`` (a gradient's buffer, a
parameter that got no gradient) flattens to a ``None`` subtree in that place.

``grad_split`` is what ``ft.grad`` differentiates a module through (API.md "Decisions"):
the parameters only, with the buffers held as constants and ``None`` as their gradient.

>>> import fntorch as ft
>>> bn = ft.nn.BatchNorm1d(2)
>>> g = ft.grad(lambda m, x: m(x).sum())(bn, ft.asarray([[1.0, 2.0], [3.0, 5.0]]))
>>> g.weight.shape, g.running_mean is None, g.num_batches_tracked is None
((2,), True, True)
>>> new = ft.tree.map(lambda p, d: p if d is None else p - 0.1 * d, bn, g)
>>> len(ft.tree.leaves(g)), type(new).__name__, new.running_var.tolist()
(2, 'BatchNorm1d', [1.0, 1.0])
"""

from __future__ import annotations

from collections import OrderedDict

from ..fx.cell import Cell

__all__ = ["ModuleStructure", "flatten_module", "unflatten_module", "grad_split"]

_PARAMS, _BUFFERS = "_parameters", "_buffers"
_SOURCE = "_pytree_structure"  # a functional copy's entry: the structure it came from


class ModuleStructure:
    """A module's pytree structure: the module, its slots (module path, table, name, leaf
    index; -1 for a slot holding None) and the training flags (an ``eval()`` model traces
    anew). Two structures are equal when they come from the same module.

    >>> import fntorch as ft
    >>> s = ft.tree.structure(ft.nn.Linear(2, 3))
    >>> s.num_leaves
    2
    """

    __slots__ = ("module", "slots", "flags", "_hash", "_plan")

    def __init__(self, module, slots, flags):
        self.module, self.slots, self.flags = module, slots, flags
        self._hash = hash((id(module), slots, flags))
        self._plan = None

    def __eq__(self, other):
        return (
            isinstance(other, ModuleStructure)
            and self.module is other.module
            and self.slots == other.slots
            and self.flags == other.flags
        )

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"<{type(self.module).__name__} structure, {len(self.slots)} slots>"

    def plan(self):
        """What ``unflatten_module`` walks, worked out once per structure (a jitted
        training step unflattens its model every call): per submodule of the tree as it
        was flattened, its path, the module, its children's positions in that list and
        its slots. The submodules' other attributes are still read at each unflatten."""
        if self._plan is None:
            mods = list(self.module.named_modules(remove_duplicate=True))
            where = {id(sub): k for k, (_, sub) in enumerate(mods)}
            slots: dict = {path: ([], []) for path, _ in mods}
            for path, key, name, i in self.slots:
                slots[path][key == _BUFFERS].append((name, i))
            self._plan = [
                (sub, [(n, None if c is None else where[id(c)])
                       for n, c in sub.__dict__["_modules"].items()], *slots[path])
                for path, sub in mods
            ]  # fmt: skip
        return self._plan


def flatten_module(m):
    """``(leaves, ModuleStructure)`` of module ``m`` (see the module docstring).

    >>> import fntorch as ft
    >>> leaves, s = flatten_module(ft.nn.Linear(2, 3))
    >>> [tuple(v.shape) for v in leaves], s
    ([(3, 2), (3,)], <Linear structure, 2 slots>)
    """
    source = m.__dict__.get(_SOURCE)
    holes = None  # the source's leaf index of each slot: a copy's None there is a None subtree
    leaves, index, slots = [], {}, []
    append, cell = slots.append, Cell
    mods = list(m.named_modules(remove_duplicate=True))
    for key in (_PARAMS, _BUFFERS):
        for path, sub in mods:
            for name, v in sub.__dict__[key].items():
                if v is None:
                    if holes is None:
                        holes = {s[:3]: s[3] for s in source.slots if s[3] >= 0} if source else {}
                    hole = holes.get((path, key, name))
                    if hole is None:
                        append((path, key, name, -1))
                        continue
                    ident = ("hole", hole)
                else:
                    ident = id(v)
                i = index.get(ident)
                if i is None:
                    i = index[ident] = len(leaves)
                    leaves.append(v._read() if isinstance(v, cell) else v)
                append((path, key, name, i))
    flags = tuple((path, sub.training) for path, sub in mods)
    module = m if source is None else source.module
    return leaves, ModuleStructure(module, tuple(slots), flags)


def unflatten_module(structure: ModuleStructure, leaves):
    """A functional copy of ``structure``'s module holding ``leaves`` (no cells).

    >>> import fntorch as ft
    >>> lin = ft.nn.Linear(2, 3)
    >>> leaves, s = flatten_module(lin)
    >>> copy = unflatten_module(s, [ft.zeros((3, 2)), None])
    >>> type(copy).__name__, copy.weight.tolist()[0], copy.bias is None
    ('Linear', [0.0, 0.0], True)
    """
    leaves = list(leaves)
    plan = structure.plan()
    copies, new_object, table = [], object.__new__, OrderedDict
    for sub, _, params, buffers in plan:
        new = new_object(type(sub))
        d = dict(sub.__dict__)
        d.pop(_SOURCE, None)
        d[_PARAMS] = table([(n, None if i < 0 else leaves[i]) for n, i in params])
        d[_BUFFERS] = table([(n, None if i < 0 else leaves[i]) for n, i in buffers])
        new.__dict__.update(d)
        copies.append(new)
    for new, (_, children, _, _) in zip(copies, plan):
        # by position: a module used twice is one copy
        new.__dict__["_modules"] = table(
            [(n, None if k is None else copies[k]) for n, k in children]
        )
    root = copies[0]
    root.__dict__[_SOURCE] = structure
    return root


def grad_split(m):
    """``(params, to_module, to_gradient)`` of module ``m``: its parameter values (the
    leaves ``ft.grad`` differentiates), a function building the module from new
    parameter values (buffers as they are, constants), and one building the gradient
    (a copy of ``m`` with the parameters' gradients and ``None`` for every buffer).

    >>> import fntorch as ft
    >>> params, to_module, to_gradient = grad_split(ft.nn.BatchNorm1d(3))
    >>> len(params), to_gradient(params).running_var is None
    (2, True)
    """
    leaves, structure = flatten_module(m)
    is_param = [False] * len(leaves)
    for _, key, _, i in structure.slots:
        if i >= 0 and key == _PARAMS:
            is_param[i] = True
    where = [i for i, p in enumerate(is_param) if p]

    def fill(values, rest):
        out = list(rest)
        for i, v in zip(where, values):
            out[i] = v
        return unflatten_module(structure, out)

    params = [leaves[i] for i in where]
    return (
        params,
        lambda values: fill(values, leaves),
        lambda grads: fill(grads, [None] * len(leaves)),
    )
