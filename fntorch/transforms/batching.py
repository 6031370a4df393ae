"""vmap's machinery: the batch trace, its rule table and the helpers rules share.

``batch_rules[prim](axis_size, args, dims, **params) -> (out, out_dim)``: ``args`` are
the physical values, ``dims`` the batch axis of each (``None``: not batched). A rule
moves batch axes only when it must; ``out_dim`` may be any axis (or ``None``). For
multiple-result primitives ``out`` and ``out_dim`` are lists.

``named_batch_rules[prim]`` (same signature) hold what a collective does over the axis
of a batch trace whose ``axis_name`` it names (``vmap(f, axis_name="i")``): there
``psum`` is a sum over the batch axis. They run whether or not an operand is batched
(``axis_index`` has none); a collective over another axis name takes ``batch_rules``.
"""

from __future__ import annotations

import contextvars

from ..fx.core import ShapedArray, Tensor, Trace, Tracer, check_tracer, get_aval, set_current_trace

batch_rules: dict = {}
named_batch_rules: dict = {}

# The axis name of the batch trace whose rule runs now: a rule that batches a sub-graph
# (jit_call, cond, scan, while_loop) names the sub-graph's batch trace after it, so the
# collectives inside still see their vmap's axis.
_rule_axis_name: contextvars.ContextVar = contextvars.ContextVar(
    "fntorch_batch_rule_axis_name", default=None
)


def rule_axis_name():
    """The axis name of the batch trace whose batching rule is running (or None).

    >>> rule_axis_name() is None
    True
    """
    return _rule_axis_name.get()


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim: int):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = get_aval(self.val)
        shape = a.shape[: self.bdim] + a.shape[self.bdim + 1 :]
        return ShapedArray(shape, a.dtype, a.weak_type)


class BatchTrace(Trace):
    def __init__(self, parent: Trace, axis_size: int, name: str = "vmap", axis_name=None):
        self.parent = parent
        self.axis_size = axis_size
        self.transform_name = name
        self.axis_name = axis_name

    def device_of(self, tracer):
        v = tracer.val
        return v.device if isinstance(v, Tensor) else None

    def unpack(self, args, where):
        vals, dims, batched = [], [], False
        for a in args:
            if isinstance(a, BatchTracer) and a._trace is self:
                vals.append(a.val)
                dims.append(a.bdim)
                batched = True
            else:
                if isinstance(a, Tracer):
                    check_tracer(a, where)
                vals.append(a)
                dims.append(None)
        return vals, dims, batched

    def wrap(self, val, dim):
        return val if dim is None else BatchTracer(self, val, dim)

    def process_primitive(self, prim, args, params):
        vals, dims, batched = self.unpack(args, prim.name)
        if self.axis_name is not None and prim in named_batch_rules:
            if params.get("axis_name") == self.axis_name:
                prim.abstract_eval(*[get_aval(a) for a in args], **params)  # the shape errors
                with set_current_trace(self.parent):
                    out, out_dim = named_batch_rules[prim](self.axis_size, vals, dims, **params)
                return self.wrap(out, out_dim)
        with set_current_trace(self.parent):
            if not batched:
                return prim.bind(*vals, **params)
            try:
                rule = batch_rules[prim]
            except KeyError:
                raise NotImplementedError(
                    f"primitive {prim.name!r} has no batching rule "
                    f"(transform: {self.transform_name})"
                ) from None
            if _rule_axis_name.get() == self.axis_name:
                out, out_dim = rule(self.axis_size, vals, dims, **params)
            else:
                token = _rule_axis_name.set(self.axis_name)
                try:
                    out, out_dim = rule(self.axis_size, vals, dims, **params)
                finally:
                    _rule_axis_name.reset(token)
        if prim.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dim)]
        return self.wrap(out, out_dim)

    def process_custom(self, kind, call, args):
        vals, dims, batched = self.unpack(args, kind)
        with set_current_trace(self.parent):
            if not batched:
                return call.bind_with(vals)
            outs = call.batched(self.axis_size, dims).bind_with(vals)
        return [self.wrap(o, 0) for o in outs]


# ----------------------------------------------------------------- rule helpers


def moveaxis(x, src: int, dst: int):
    """Moves axis ``src`` of ``x`` to ``dst`` (a transpose; nothing if already there)."""
    from ..ops import lax

    nd = get_aval(x).ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, tuple(perm))


def bdim_at_front(x, dim, axis_size: int):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast along a new one."""
    from ..ops import lax

    if dim is None:
        a = get_aval(x)
        return lax.broadcast_in_dim(x, (axis_size, *a.shape), tuple(range(1, a.ndim + 1)))
    return moveaxis(x, dim, 0)


def bdim_to(x, dim, dst: int, axis_size: int):
    """``x`` with its batch axis at ``dst`` (broadcast first if unbatched)."""
    return moveaxis(bdim_at_front(x, dim, axis_size), 0, dst)
