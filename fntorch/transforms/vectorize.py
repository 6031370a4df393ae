"""``vmap``: a function applied along an axis of its arguments, by one batched trace.

``_vmap`` adds what the custom-function rules need: a batch trace that owns the tracers
of another live batch trace of the same axis (``_AdoptingBatchTrace``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

import numpy as np

from .. import tree as tree_util
from ..fx.axes import vmap_axis
from ..fx.core import (
    Tensor,
    Tracer,
    check_callable,
    check_tracer,
    constant_device,
    current_trace,
    set_current_trace,
)
from ..fx.device import default_device
from ._args import _as_tensor, _flatten_raw
from .batching import BatchTrace, BatchTracer, moveaxis


class _AdoptingBatchTrace(BatchTrace):
    """A batch trace that also owns the tracers of ``adopted``, a live batch trace of the
    same axis (JAX's batch-trace tags). A batch trace that hands a custom call down to
    its parent vmaps the call's user functions with one of these, since they may close
    over the handing trace's tracers, which its parent cannot read."""

    def __init__(self, parent, axis_size, adopted):
        super().__init__(parent, axis_size, adopted.transform_name, adopted.axis_name)
        # Adoption is transitive: ``adopted`` may itself stand for another batch trace.
        self.adopted = (adopted, *getattr(adopted, "adopted", ()))

    def adopt(self, x):
        if isinstance(x, BatchTracer) and x._trace in self.adopted:
            return BatchTracer(self, x.val, x.bdim)
        return x

    def unpack(self, args, where):
        return super().unpack([self.adopt(a) for a in args], where)


def vmap(
    fun: Callable, in_axes=0, out_axes=0, axis_size: int | None = None, axis_name: str | None = None
):
    """Vectorizing map: ``fun`` applied along an axis of its arguments, batched.

    ``axis_name`` names the mapped axis for the collectives inside ``fun``
    (``ft.psum(x, axis_name)`` is then a sum over the batch, as in JAX).

    >>> import fntorch as ft
    >>> ft.vmap(lambda r: r.sum())(ft.ones((3, 4))).tolist()
    [4.0, 4.0, 4.0]
    >>> ft.vmap(lambda r: r / ft.psum(r, "b"), axis_name="b")(ft.asarray([1.0, 3.0])).tolist()
    [0.25, 0.75]
    """
    check_callable("vmap", "fun", fun)
    if axis_size is not None and (
        isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer)) or axis_size < 0
    ):
        raise ValueError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(
            f"vmap: axis_name must be a str or None, got {type(axis_name).__name__} {axis_name!r}"
        )
    return _vmap(fun, in_axes, out_axes, axis_size, axis_name=axis_name)


def _vmap(fun, in_axes=0, out_axes=0, axis_size=None, _adopt=None, axis_name=None):
    """``vmap``; with ``_adopt``, a live batch trace whose tracers this one treats as its
    own (``_AdoptingBatchTrace``; the custom-function rules use it)."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap({name}): in_axes is a tuple of length {len(in_axes)} but the function "
                f"got {len(args)} positional arguments; in_axes must match the arguments "
                f"(in_axes structure {tree_util.structure(in_axes)}, arguments structure "
                f"{tree_util.structure(args)})"
            )
        raw, flat, in_tree = _flatten_raw(args, f"vmap({name})")
        axes = tree_util.tree_prefix_broadcast(in_axes, args, "vmap: in_axes")
        kw_raw, kw_flat, kw_tree = _flatten_raw(kwargs, f"vmap({name})")
        flat_all = flat + kw_flat
        axes_all = list(axes) + [0] * len(kw_flat)
        size = _batch_size(
            name,
            flat_all,
            axes_all,
            axis_size,
            lambda: _leaf_names(args, "args") + _leaf_names(kwargs, "kwargs"),
        )
        if _adopt is None:
            trace = BatchTrace(current_trace(), size, "vmap", axis_name)
        else:
            trace = _AdoptingBatchTrace(current_trace(), size, _adopt)
        ins = []
        for x, leaf, ax in zip(flat_all, raw + kw_raw, axes_all):
            if ax is None:
                # An unmapped Python scalar stays weak, as it is eagerly and under jit; an
                # unmapped numpy scalar stays a host scalar, of no device.
                if type(leaf) in (bool, int, float):
                    ins.append(leaf)
                else:
                    ins.append(Tensor(x._value[()]) if isinstance(leaf, np.generic) else x)
            else:
                ins.append(BatchTracer(trace, x, ax % x.ndim))
        try:
            named = contextlib.nullcontext() if axis_name is None else vmap_axis(axis_name, size)
            with set_current_trace(trace), named:
                a = tree_util.unflatten(in_tree, ins[: len(flat)])
                k = tree_util.unflatten(kw_tree, ins[len(flat) :])
                out = fun(*a, **k)
            out_flat, out_tree = tree_util.flatten(out)
            oaxes = tree_util.tree_prefix_broadcast(out_axes, out, "vmap: out_axes", "outputs")
            if _adopt is not None:
                out_flat = [trace.adopt(o) for o in out_flat]
            # Unbatched outputs broadcast along the axis go where the mapped inputs are.
            dev = constant_device(*(x for x, ax in zip(flat_all, axes_all) if ax is not None))
            res = [_out_value(trace, o, ax, size, name, dev) for o, ax in zip(out_flat, oaxes)]
        finally:
            trace.dead = True
        return tree_util.unflatten(out_tree, res)

    return vmapped


def _leaf_names(tree, root):
    """Python expressions for the leaves of ``tree`` (``args[0]['w']``), for error messages."""
    import optree

    accessors = optree.tree_accessors(tree, none_is_leaf=False, namespace=tree_util.NAMESPACE)
    return [a.codify(root) for a in accessors]


def _batch_size(name, flat, axes, axis_size, leaf_names):
    """The mapped axis' size; ``leaf_names()`` names the leaves of ``flat`` for the errors
    (only then, as it walks the arguments again)."""
    sizes = []
    for i, (x, ax) in enumerate(zip(flat, axes)):
        if ax is None:
            continue
        # A bool is an int to Python, but in_axes=True is a mistake, never axis 1.
        if isinstance(ax, bool) or not isinstance(ax, int):
            raise ValueError(f"vmap({name}): in_axes entries must be int or None, got {ax!r}")
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(
                f"vmap({name}): in_axes={ax} is out of range for {leaf_names()[i]} of rank "
                f"{x.ndim} (shape {x.shape})"
            )
        sizes.append((i, x.shape[ax]))
    if axis_size is not None:
        sizes_set = {s for _, s in sizes} | {axis_size}
    else:
        sizes_set = {s for _, s in sizes}
    if not sizes_set:
        raise ValueError(
            f"vmap({name}): no argument is mapped (all in_axes are None); pass axis_size="
        )
    if len(sizes_set) > 1:
        names = leaf_names()
        listed = ", ".join(f"{names[i]} has size {s}" for i, s in sizes)
        extra = f" and axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(
            f"vmap({name}) got inconsistent sizes for the mapped axis: {listed}{extra}"
        )
    return sizes_set.pop()


def _out_axis(ax, ndim: int, name: str) -> int:
    """``out_axes`` entry ``ax`` for an output of rank ``ndim`` (mapped axis included)."""
    if isinstance(ax, bool) or not isinstance(ax, int) or not -ndim <= ax < ndim:
        raise ValueError(
            f"vmap({name}): out_axes entry {ax!r} is out of range for an output of rank "
            f"{ndim} (the mapped axis included): expected an int in [{-ndim}, {ndim})"
        )
    return ax % ndim


def _out_value(trace, o, ax, size, name, dev):
    from ..ops import lax

    if isinstance(o, BatchTracer) and o._trace is trace:
        if ax is None:
            raise ValueError(
                f"vmap({name}): out_axes is None for an output that is batched; "
                "only outputs that do not depend on the mapped axis can have out_axes=None"
            )
        return moveaxis(o.val, o.bdim, _out_axis(ax, o.val.ndim, name))
    if isinstance(o, Tracer):
        check_tracer(o, "vmap")
    scalar = not isinstance(o, Tensor)
    o = _as_tensor(o, "vmap")
    if ax is None:
        return o
    if scalar and o.ndim == 0:  # a Python or numpy scalar: a host scalar, of no device
        o = Tensor(np.asarray(o._value)[()])
    shape = list(o.shape)
    ax = _out_axis(ax, o.ndim + 1, name)
    shape.insert(ax, size)
    dims = [d for d in range(o.ndim + 1) if d != ax]
    if dev is None:
        return lax.broadcast_in_dim(o, tuple(shape), tuple(dims))
    with default_device(dev):  # a host scalar's broadcast goes to the default device
        return lax.broadcast_in_dim(o, tuple(shape), tuple(dims))
