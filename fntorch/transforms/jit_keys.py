"""jit's argument keys: how a call's arguments become a cache key (``_signature``, with
its fast path for positional CPU tensors), the split into dynamic and static arguments,
and the names of arguments and leaves that errors and miss explanations use.
``JitFunction`` inherits these methods from ``_ArgumentKeys``; transforms.jit
re-exports the names.
"""

from __future__ import annotations

import functools

import numpy as np
import optree

from .. import tree as tree_util
from ..fx import dtypes as dt
from ..fx.core import (
    Tensor,
    Tracer,
    buffer_devices,
    device_of_buffer,
    get_default_device,
    host_device,
)
from ._args import _as_tensor
from .staging import _path_str


@functools.cache
def _flat_structure(n: int):
    """The structure of ``n`` positional leaves and no keywords (the fast path's calls)."""
    return optree.tree_structure(((0,) * n, {}), none_is_leaf=False, namespace=tree_util.NAMESPACE)


def _type_key(v):
    """The type of a static value, and of its elements for tuples: ``(2,)`` and ``(2.0,)``
    are equal, but trace differently (an int or a float in the function).

    >>> _type_key((1, (2.0, "a")))
    (<class 'tuple'>, (<class 'int'>, (<class 'tuple'>, (<class 'float'>, <class 'str'>))))
    """
    if isinstance(v, tuple):
        return type(v), tuple(_type_key(x) for x in v)
    return type(v)


def positional_signature(args) -> tuple | None:
    """The leaf part of the key of a call with tensors as its only (positional) arguments
    (each buffer's shape and dtype, and its device when not the host's), else None.

    >>> import fntorch as ft
    >>> positional_signature((ft.ones(2),)), positional_signature((1.0,))
    ((((2,), dtype('float32')),), None)
    """
    sig = []
    for a in args:
        if type(a) is not Tensor:
            return None
        v = a._value
        if type(v) is np.ndarray:
            sig.append((v.shape, v.dtype))
            continue
        # a GPU buffer: the key says where (a numpy scalar takes the slow path, which
        # makes it an array)
        device = buffer_devices.get(type(v))
        if device is None or isinstance(v, np.generic):
            return None
        sig.append((v.shape, v.dtype, device))
    return tuple(sig)


class _ArgumentKeys:
    """The key-building half of ``JitFunction`` (its base): reads ``_static_nums``,
    ``_static_names``, ``_params`` and ``_name`` of the instance."""

    # -------------------------------------------------------------------- keys

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key part, static positions)."""
        if not self._static_nums and not self._static_names:
            return args, kwargs, (), ()
        n = len(args)
        pos = tuple(sorted({i % n for i in self._static_nums if -n <= i < n}))
        statics = []
        for i in pos:
            statics.append((i, args[i]))
        dyn_kwargs = kwargs
        if kwargs and self._static_names:
            dyn_kwargs = {}
            for k, v in kwargs.items():
                if k in self._static_names:
                    statics.append((k, v))
                else:
                    dyn_kwargs[k] = v
        for where, v in statics:
            try:
                hash(v)
            except TypeError:
                raise TypeError(
                    f"jit({self._name}): static argument {self._arg_name(where)} must be "
                    f"hashable, got an unhashable {type(v).__name__} ({v!r:.80}); pass a tuple "
                    "instead of a list, or make it a dynamic (traced) argument"
                ) from None
        dyn = tuple(a for i, a in enumerate(args) if i not in pos) if pos else args
        key = tuple((w, _type_key(v), v) for w, v in statics)
        return dyn, dyn_kwargs, key, pos

    def _arg_name(self, where) -> str:
        if isinstance(where, str):
            return where
        if self._params is not None and where < len(self._params):
            return self._params[where]
        return f"argument {where}"

    def _signature(self, args, kwargs):
        """(key, flat buffers, leaves, split) or None when a leaf is a tracer.

        Fast path, for positional tensors only: the key's structure part is the
        argument count, and optree is not called. A key gets a fourth part, the default
        device, when no leaf is a tensor and that device is not the host's: the program
        is compiled for it."""
        if args and not kwargs and not self._static_nums:
            sig = positional_signature(args)
            if sig is not None:
                return (len(args), sig, ()), [a._value for a in args], args, (args, {}, ())
        dyn, dyn_kwargs, static_key, pos = self._split(args, kwargs)
        leaves, treedef = optree.tree_flatten(
            (dyn, dyn_kwargs), none_is_leaf=False, namespace=tree_util.NAMESPACE
        )
        sig = []
        bufs = []
        ndarray = np.ndarray
        for k, x in enumerate(leaves):
            if type(x) is Tensor:
                v = x._value
                t = type(v)
                # a model's hundreds of leaves: the common buffers without a call each (a
                # numpy scalar, an eager full reduction's value, goes on: it becomes an array)
                if t is ndarray:
                    bufs.append(v)
                    sig.append((v.shape, v.dtype))
                    continue
                device = buffer_devices.get(t)
                if device is not None and not isinstance(v, np.generic):
                    bufs.append(v)
                    sig.append((v.shape, v.dtype, device))
                    continue
            elif isinstance(x, Tracer):
                return None
            elif isinstance(x, Tensor):
                v = x._value
            elif isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
                d, _ = dt.dtype_and_weak(x)
                try:
                    bufs.append(np.asarray(x, d))
                except OverflowError:  # a Python int past int64: say which argument
                    name = self._leaf_names(dyn, dyn_kwargs, pos)[k]
                    raise OverflowError(
                        f"jit({self._name}): argument {name} = {x} does not fit in {d}; "
                        "pass it as a tensor of a wider dtype, or mark it static"
                    ) from None
                sig.append(((), d, True))
                continue
            elif isinstance(x, (np.ndarray, np.generic)):
                v = _as_tensor(x, f"jit({self._name})")._value
            else:
                name = self._leaf_names(dyn, dyn_kwargs, pos)[k]
                raise TypeError(
                    f"jit({self._name}): argument {name} is a {type(x).__name__}; expected a "
                    "tensor, an array or a number (or a pytree of them). Mark an argument "
                    "that configures the function static (static_argnums or static_argnames)."
                )
            if type(v) is not np.ndarray and isinstance(v, np.generic):
                v = np.asarray(v)  # an eager full reduction's value: a 0-d CPU array
            bufs.append(v)
            if type(v) is np.ndarray:
                sig.append((v.shape, v.dtype))
            else:
                sig.append((v.shape, v.dtype, device_of_buffer(v)))
        if not kwargs and not static_key and treedef == _flat_structure(len(args)):
            treedef = len(args)  # the fast path's key for the same structure: one entry
        key = (treedef, tuple(sig), static_key)
        if all(len(s) > 2 and s[2] is True for s in sig):  # no leaf says where to run
            default = get_default_device()
            if default is not host_device():
                key += (default,)
        return key, bufs, leaves, (dyn, dyn_kwargs, pos)

    # --------------------------------------------------------- explaining misses

    def _leaf_names(self, dyn, dyn_kwargs, pos) -> list:
        orig = [i for i in range(len(dyn) + len(pos)) if i not in pos]
        paths, _, _ = optree.tree_flatten_with_path(
            (dyn, dyn_kwargs), none_is_leaf=False, namespace=tree_util.NAMESPACE
        )
        names = []
        for p in paths:
            if p[0] == 0:
                names.append(self._arg_name(orig[p[1]]) + _path_str(p[2:]))
            else:
                names.append(str(p[1]) + _path_str(p[2:]))
        return names

    def _arg_structures(self, dyn, dyn_kwargs, pos) -> dict:
        """Each dynamic argument's own tree structure, by name (to say which one changed)."""
        orig = [i for i in range(len(dyn) + len(pos)) if i not in pos]
        out = {}
        for i, a in zip(orig, dyn):
            out[self._arg_name(i)] = tree_util.structure(a)
        for k, v in dyn_kwargs.items():
            out[k] = tree_util.structure(v)
        return out
