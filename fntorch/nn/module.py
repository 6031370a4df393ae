"""``nn.Module``: PyTorch's stateful module, holding its state in cells, and a pytree.

A module stores its parameters (``Parameter`` cells), buffers (``Buffer`` cells) and
submodules in three ordered dicts, as PyTorch does, so attribute access, ``state_dict``
keys and their order are PyTorch's. Calling it runs the forward pre-hooks, ``forward``
and the forward hooks.

A module is also a pytree (registered for every subclass): its leaves are its cells'
values, parameters then buffers (tied parameters once), in ``state_dict`` order, and
its structure is the module itself with its submodules' ``training`` flags. Unflattening
builds a *functional copy*: the same classes and configuration, with the given values in
place of the cells (no cells, so a traced value may sit there), which is what ``ft.grad``,
``ft.vmap`` and ``ft.jit`` call ``forward`` on. So ``ft.grad(loss)(model, x, y)`` returns
a module-shaped gradient.

>>> import fntorch as ft
>>> class Affine(ft.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = ft.nn.Parameter(ft.ones(2))
...         self.register_buffer("shift", ft.zeros(2))
...     def forward(self, x):
...         return x * self.w + self.shift
>>> m = Affine()
>>> list(m.state_dict()), len(ft.tree.leaves(m))
(['w', 'shift'], 2)
>>> g = ft.grad(lambda m, x: m(x).sum())(m, ft.asarray([3.0, 4.0]))
>>> type(g).__name__, g.w.tolist()
('Affine', [3.0, 4.0])
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple

import numpy as np

from .. import tree as tree_util
from ..fx.cell import Cell
from ..fx.core import Tensor, Tracer
from ..ops import api as _api
from .module_tree import flatten_module, grad_split, unflatten_module
from .parameter import Buffer, Parameter

__all__ = ["Module"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _Handle:
    """What ``register_forward_hook`` returns: ``.remove()`` takes the hook away."""

    _ids = itertools.count()

    def __init__(self, table: dict):
        self.table, self.id = table, next(self._ids)

    def remove(self) -> None:
        self.table.pop(self.id, None)


class Module:
    """Base class of layers and models, as ``torch.nn.Module`` (see the module docstring).

    >>> import fntorch as ft
    >>> lin = ft.nn.Module(); lin.weight = ft.nn.Parameter(ft.ones((2, 3)))
    >>> [n for n, _ in lin.named_parameters()], lin.training
    (['weight'], True)
    """

    _version = 1
    # jacfwd/jacrev of a model: integer buffers (num_batches_tracked) are state, not inputs
    _grad_allows_int_leaves = True
    # ft.grad(loss)(model) differentiates the parameters only (nn/module_tree.py)
    _grad_split = grad_split

    def __init__(self, *args, **kwargs):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        tree_util.register_node(cls, flatten_module, unflatten_module)

    # ------------------------------------------------------------ attributes

    def __setattr__(self, name, value):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() call (call "
                "super().__init__() first in your __init__)"
            )
        params, buffers, modules = d["_parameters"], d["_buffers"], d["_modules"]
        if isinstance(value, Parameter):
            self._drop(name)
            params[name] = value
        elif isinstance(value, Module):
            self._drop(name)
            modules[name] = value
        elif name in params:
            if value is not None and not isinstance(value, (Tensor, Tracer)):
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter {name!r} "
                    "(nn.Parameter or None expected)"
                )
            params[name] = value  # a functional copy's value, or None
        elif name in buffers:
            old = buffers[name]
            if isinstance(old, Buffer) and isinstance(value, Tensor) and _storable(value):
                old.set_(value)  # BatchNorm's `self.running_mean = ...` writes the cell
            else:
                buffers[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as child module {name!r} "
                    "(nn.Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            self.__dict__[key].pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            table = d.get(key)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[key]:
                del self.__dict__[key][name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Adds a buffer (a ``Buffer`` cell holding ``tensor``; None allowed).

        >>> import fntorch as ft
        >>> m = ft.nn.Module(); m.register_buffer("mean", ft.zeros(3)); m.mean.shape
        (3,)
        """
        if "." in name or not name:
            raise KeyError(f"register_buffer: bad buffer name {name!r}")
        self._drop(name)
        if tensor is not None and not isinstance(tensor, Cell) and _storable(tensor):
            tensor = Buffer(tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Adds ``param`` (a ``Parameter`` or None) under ``name``.

        >>> import fntorch as ft
        >>> m = ft.nn.Module(); m.register_parameter("bias", None); m.bias is None
        True
        """
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter: cannot assign {type(param).__name__} as parameter "
                f"{name!r} (nn.Parameter or None expected)"
            )
        self._drop(name)
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Adds a child module (or None) under ``name``.

        >>> import fntorch as ft
        >>> m = ft.nn.Module(); m.add_module("inner", ft.nn.Module()); len(list(m.children()))
        1
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        self._drop(name)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""``: this module)."""
        m = self
        for part in target.split(".") if target else ():
            m = m._modules[part]
        return m

    # ----------------------------------------------------------- traversal

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """``(path, module)`` for this module and every descendant, each once.

        >>> import fntorch as ft
        >>> [n for n, _ in ft.nn.Module().named_modules()]
        ['']
        """
        # A stack, not a generator per level: a jitted training step flattens and
        # unflattens its model (``module_tree``) every call. Same order: a module, then
        # each child's subtree in turn.
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            path, m = stack.pop()
            if remove_duplicate:
                if id(m) in memo:
                    continue
                memo.add(id(m))
            yield path, m
            children = m._modules
            if children:
                stack.extend(
                    (f"{path}.{name}" if path else name, c)
                    for name, c in reversed(children.items())
                    if c is not None
                )

    def modules(self):
        """Every module of the tree, this one first."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """``(name, module)`` of the direct children."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named(self, key, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for path, m in mods:
            for name, v in m.__dict__[key].items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (f"{path}.{name}" if path else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        """``(dotted name, Parameter)``, tied parameters once.

        >>> import fntorch as ft
        >>> m = ft.nn.Module(); m.w = ft.nn.Parameter(ft.ones(1)); m.v = m.w
        >>> [n for n, _ in m.named_parameters()]
        ['w']
        """
        yield from self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """The parameters, tied ones once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        """``(dotted name, buffer)``."""
        yield from self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """The buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---------------------------------------------------------- state dicts

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """PyTorch's state dict: per module its parameters, then its persistent buffers,
        then its children's; the values are detached aliases of the cells (``keep_vars``:
        the cells themselves).

        >>> import fntorch as ft
        >>> m = ft.nn.Module(); m.w = ft.nn.Parameter(ft.ones(1)); list(m.state_dict())
        ['w']
        """
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars or not isinstance(p, Cell) else p.data
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                out[prefix + name] = b if keep_vars or not isinstance(b, Cell) else b.data
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=out, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copies ``state_dict``'s values (fntorch, numpy, PyTorch or any ``__array__`` /
        ``__dlpack__`` tensors) into the cells; with ``strict``, missing or unexpected keys
        raise ``RuntimeError`` listing both. Nothing is written when it raises.

        >>> import fntorch as ft, numpy as np
        >>> m = ft.nn.Module(); m.w = ft.nn.Parameter(ft.ones(2))
        >>> m.load_state_dict({"w": np.array([3.0, 4.0], np.float32)})
        IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> m.w.tolist()
        [3.0, 4.0]
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}: missing keys: "
                f"{missing}; unexpected keys: {unexpected}"
            )
        new = {}
        for k, cell in own.items():
            if k not in state_dict:
                continue
            value = _as_array(state_dict[k], k)
            if tuple(value.shape) != tuple(cell.shape):
                raise RuntimeError(
                    f"Error(s) in loading state_dict for {type(self).__name__}: size mismatch "
                    f"for {k}: copying a param with shape {tuple(value.shape)} from checkpoint, "
                    f"the shape in current model is {tuple(cell.shape)}"
                )
            new[k] = value if assign else value.astype(cell.dtype, copy=False)
        for k, value in new.items():  # every value checked first: nothing half-written
            own[k].set_(value)
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------- modes, dtypes

    def train(self, mode: bool = True) -> Module:
        """Training mode on (or off) for this module and every descendant."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Sets ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears every parameter's ``.grad`` (None, or zeros with ``set_to_none=False``)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None  # a blind write: a compiled step does not depend on the old one
            elif p.grad is not None:
                p.grad = _api.zeros_like(p.grad)

    def apply(self, fn) -> Module:
        """Calls ``fn`` on every submodule (children first), then on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _cast(self, fn) -> Module:
        for m in self.modules():
            for table in (m._parameters, m._buffers):
                for v in table.values():
                    if isinstance(v, Cell):
                        new = fn(v._read())
                        if new is not None:
                            v.set_(new)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Moves (``"cpu"``, a device) or casts (a float dtype) every float cell in place."""
        from ..fx import dtypes as dt

        target = kwargs.get("dtype", kwargs.get("device"))
        for a in args:
            target = a
        if target is None:
            return self
        if isinstance(target, Tensor):
            target = target.dtype
        try:
            dtype = np.dtype(target)
        except TypeError:
            dtype = None
        if dtype is not None and not isinstance(target, str):
            return self._cast(lambda t: t.astype(dtype) if dt.is_float(t.dtype) else None)
        return self._cast(lambda t: t.to(target))

    def float(self) -> Module:
        """Float cells to float32."""
        return self.to(np.float32)

    def double(self) -> Module:
        """Float cells to float64."""
        return self.to(np.float64)

    def half(self) -> Module:
        """Float cells to float16."""
        return self.to(np.float16)

    def bfloat16(self) -> Module:
        """Float cells to bfloat16."""
        from ..fx import dtypes as dt

        return self.to(dt.bfloat16)

    def cpu(self) -> Module:
        """Every cell on the CPU."""
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        """Every cell on a CUDA device."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    # --------------------------------------------------------------- calling

    def forward(self, *args, **kwargs):
        """The computation of this module; subclasses define it (here it raises
        NotImplementedError)."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        """``forward(*args, **kwargs)``, with the forward pre-hooks run before it (one may
        replace the arguments) and the forward hooks after it (one may replace the output)."""
        for hook in list(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_hook(self, hook) -> _Handle:
        """``hook(module, args, output)`` after each forward (a non-None return replaces
        the output)."""
        h = _Handle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    def register_forward_pre_hook(self, hook) -> _Handle:
        """``hook(module, args)`` before each forward (a non-None return replaces args)."""
        h = _Handle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    # ---------------------------------------------------------------- repr

    def extra_repr(self) -> str:
        """The configuration shown inside the module's repr (subclasses override)."""
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        name = type(self).__name__
        if not lines:
            return f"{name}()"
        if len(lines) == 1 and not self._modules:
            return f"{name}({lines[0]})"
        return f"{name}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        keys = list(super().__dir__())
        for key in ("_parameters", "_buffers", "_modules"):
            keys += list(self.__dict__[key])
        return sorted(set(keys))


def _storable(v) -> bool:
    return isinstance(v, Tensor) and not isinstance(v, Tracer)


def _as_array(v, key):
    """A state-dict value as a numpy array (PyTorch tensors through ``detach``)."""
    if isinstance(v, Tensor):
        return np.asarray(v._value)
    if hasattr(v, "detach") and hasattr(v, "cpu"):
        v = v.detach().cpu()
    try:
        return np.asarray(v)
    except Exception as e:  # noqa: BLE001 - named below
        raise TypeError(
            f"load_state_dict: the value of {key!r} ({type(v).__name__}) is not an array"
        ) from e
