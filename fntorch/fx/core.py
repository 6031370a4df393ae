"""The language core: primitives, tensors, tracers and the trace context.

``ShapedArray`` and the tracer errors live in fx/avals.py and are re-exported here.

Every operation bottoms out in ``prim.bind(*args, **params)``. ``bind`` hands the call to
the *current trace*, held in a ``contextvars.ContextVar`` so threads and nested
transforms never see each other's state. The bottom of the stack is the eager
``EvalTrace``, which runs the device impl. A transform (jvp, vmap, staging) installs its
own trace while it calls the user's function; that trace handles its own tracers and
treats every other value as a constant, and binds the work it derives on its *parent*
trace. This is JAX's "stackless" design: each transform instance is a fresh trace
object, so two nested ``grad``s can never mistake each other's tracers (no perturbation
confusion).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

import numpy as np

from . import dtypes as _dt
from .avals import (  # noqa: F401 - re-exported: fx.core is their home for importers
    _SHORT,
    ConcretizationError,
    ShapedArray,
    UnexpectedTracerError,
    _concretization_message,
    dtype_short_name,
)
from .device import (
    buffer_devices,  # noqa: F401 - re-exported: the fx-level name of the table
    device_of_buffer,
    get_default_device,
    host_device,
    operand_devices,
)
from .device import device_of_operand as _device_of_operand

# ----------------------------------------------------------------------- abstract values


def get_aval(x) -> ShapedArray:
    """The abstract value of a tensor, tracer, numpy array or Python scalar.

    >>> import fntorch as ft
    >>> get_aval(ft.ones((2, 3))), get_aval(2.0).weak_type
    (f32[2,3], True)
    """
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, Tensor):
        v = x._value
        return ShapedArray(v.shape, v.dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, x.dtype, isinstance(x, _dt.WeakScalar))
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        dtype, weak = _dt.dtype_and_weak(x)
        return ShapedArray((), dtype, weak)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(x.shape, _dt.canonicalize(x.dtype))
    raise TypeError(f"get_aval: expected a tensor, array or Python scalar, got {type(x).__name__}")


# ----------------------------------------------------------------------------- primitives

# The rule table this room owns: output abstract values from input abstract values.
# Rules take objects with `.shape` and `.dtype` (abstract values, tracers or raw
# buffers alike) and keyword params; they raise the shape and dtype errors.
abstract_eval_rules: dict[Primitive, Callable] = {}

# The primitive registry: name -> Primitive, filled as primitives are made. Export,
# the coverage test and lowering find primitives here (a name names one primitive).
primitives: dict[str, Primitive] = {}


class Primitive:
    """A named operation. Its behaviour lives in rule tables keyed by the primitive.

    >>> my_p = Primitive("my_doc_op")
    >>> my_p, primitives["my_doc_op"] is my_p
    (my_doc_op, True)
    """

    __slots__ = ("name", "multiple_results", "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False):
        if name in primitives:
            raise ValueError(f"Primitive: the name {name!r} is taken by another primitive")
        self.name = name
        self.multiple_results = multiple_results
        primitives[name] = self

    def bind(self, *args, **params):
        """Applies this primitive to ``args`` under the current trace (see ``bind``)."""
        return _current_trace.get().process_primitive(self, args, params)

    def abstract_eval(self, *avals, **params):
        """The output abstract value(s) for these inputs, from ``abstract_eval_rules``."""
        try:
            rule = abstract_eval_rules[self]
        except KeyError:
            raise NotImplementedError(
                f"primitive {self.name!r} has no abstract-eval rule"
            ) from None
        return rule(*avals, **params)

    def __repr__(self):
        return self.name


def bind(prim: Primitive, *args, **params):
    """Applies ``prim`` to ``args`` under the current trace.

    >>> import fntorch as ft
    >>> bind(ft.ops.lax.add_p, ft.ones(2), ft.ones(2)).tolist()
    [2.0, 2.0]
    """
    return prim.bind(*args, **params)  # the method, which ft.autocast may have swapped


# ------------------------------------------------------------------------ tensors


class Tensor:
    """An immutable n-d array value.

    Concrete tensors hold a device buffer (a numpy array on the CPU). Tracers, which
    stand for tensors inside a transform, are ``Tensor`` subclasses, so user code sees
    one type. Operators and methods are attached by ``fntorch.ops``.

    >>> import fntorch as ft
    >>> t = ft.asarray([1.0, 2.0])
    >>> (t * 2).tolist()
    [2.0, 4.0]
    """

    __slots__ = ("_value",)
    __array_priority__ = 100
    _taped = False  # whether eager operations on it are recorded (``nn/autograd.py``)
    # PyTorch's autograd attributes, for values that are not on the tape
    requires_grad = False
    grad_fn = None
    grad = None
    is_leaf = True

    def __init__(self, value):
        self._value = value

    # The few members that need the buffer; all others are defined on top of these.
    @property
    def aval(self) -> ShapedArray:
        """The abstract value: shape, dtype and weak-type flag.

        >>> import fntorch as ft
        >>> ft.ones((2, 3)).aval
        f32[2,3]
        """
        v = self._value
        return ShapedArray(v.shape, v.dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints.

        >>> import fntorch as ft
        >>> ft.zeros((2, 3)).shape
        (2, 3)
        """
        return self._value.shape

    @property
    def dtype(self):
        """The element type, a numpy dtype (``ft.float32`` and friends).

        >>> import fntorch as ft
        >>> ft.asarray([1, 2]).dtype
        dtype('int64')
        """
        return self._value.dtype

    @property
    def ndim(self) -> int:
        """The number of dims (``len(x.shape)``).

        >>> import fntorch as ft
        >>> ft.ones((2, 3)).ndim
        2
        """
        return self._value.ndim

    @property
    def size(self) -> int:
        """The number of elements (an int; PyTorch's ``x.size()`` is ``x.shape`` here).

        >>> import fntorch as ft
        >>> ft.ones((2, 3)).size
        6
        """
        return int(self._value.size)

    @property
    def weak_type(self) -> bool:
        """Whether this is a Python scalar's value, which never widens a tensor's dtype
        (a concrete tensor never is; a traced Python scalar is).

        >>> import fntorch as ft
        >>> ft.asarray(2.0).weak_type
        False
        """
        return False

    @property
    def device(self):
        """The device holding the buffer.

        >>> import fntorch as ft
        >>> ft.ones(2).device
        device(type='cpu')
        """
        v = self._value
        if isinstance(v, Tracer):  # a cell or taped value inside a jit trace
            return v.device
        return device_of_buffer(v)

    def _concrete(self, what: str):
        return self._value

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __setitem__(self, idx, value):
        raise TypeError(
            "fntorch tensors are immutable: `t[i] = v` is not supported. "
            "Use the functional update `t = t.at[i].set(v)` (also .add, .multiply, .min, .max)."
        )

    __hash__ = object.__hash__


def as_tensor_leaf(x, where: str) -> Tensor:
    """A pytree leaf handed to a transform: tensors stay, numbers and arrays become tensors.

    >>> as_tensor_leaf(2.0, "grad").dtype
    dtype('float32')
    """
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return Tensor(np.asarray(x, dtype=_dt.dtype_and_weak(x)[0]))
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.array(x)
        _dt.canonicalize(a.dtype, where=where)
        return Tensor(a)
    raise TypeError(
        f"{where}: expected tensors (or numbers/arrays) as pytree leaves, got {type(x).__name__}"
    )


def check_callable(where: str, arg: str, value) -> None:
    """The error for a function argument that is not callable, naming both.

    >>> check_callable("grad", "fun", 3)
    Traceback (most recent call last):
      ...
    TypeError: grad: fun must be a function (a callable), got int 3
    """
    if not callable(value):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        got = f"{type(value).__name__} {shown}"
        raise TypeError(f"{where}: {arg} must be a function (a callable), got {got}")


def _new_tensor(value) -> Tensor:
    t = _tensor_new(Tensor)
    t._value = value
    return t


_tensor_new = object.__new__


class Tracer(Tensor):
    """A tensor that stands for a value inside a transform. ``_trace`` is its owner.

    >>> import fntorch as ft
    >>> seen = []
    >>> _ = ft.vmap(lambda x: seen.append(isinstance(x, ft.fx.Tracer)) or x)(ft.ones(2))
    >>> seen
    [True]
    """

    __slots__ = ("_trace",)

    @property
    def aval(self) -> ShapedArray:  # pragma: no cover - each tracer defines it
        """The abstract value this tracer stands for."""
        raise NotImplementedError

    @property
    def shape(self):
        """The shape of the value this tracer stands for."""
        return self.aval.shape

    @property
    def dtype(self):
        """The dtype of the value this tracer stands for."""
        return self.aval.dtype

    @property
    def ndim(self):
        """The number of dims of the value this tracer stands for."""
        return len(self.aval.shape)

    @property
    def size(self):
        """The number of elements of the value this tracer stands for."""
        return self.aval.size

    @property
    def weak_type(self):
        """Whether the value this tracer stands for is weakly typed (a Python scalar's)."""
        return self.aval.weak_type

    @property
    def device(self):
        """The device of the value, where its trace knows it (None while staging)."""
        return self._trace.device_of(self)

    @property
    def _value(self):
        raise ConcretizationError(
            _concretization_message("this operation", self.aval, self._trace.transform_name)
        )

    def _concrete(self, what: str):
        """The concrete buffer behind this tracer, or ConcretizationError."""
        raise ConcretizationError(
            _concretization_message(what, self.aval, self._trace.transform_name)
        )

    def __repr__(self):
        return f"Traced<{self.aval}>({self._trace.transform_name})"


# ------------------------------------------------------------------------- traces


class Trace:
    """Interprets primitives. Subclasses: EvalTrace (eager), JVPTrace, BatchTrace, GraphTrace.

    >>> import fntorch as ft
    >>> isinstance(ft.fx.current_trace(), ft.fx.Trace)
    True
    """

    transform_name = "trace"
    parent: Trace | None = None
    dead = False

    def process_primitive(self, prim: Primitive, args, params):
        """Applies ``prim`` to ``args`` (this trace's tracers or constants)."""
        raise NotImplementedError

    def process_custom(self, kind: str, call, args):
        """Higher-order calls (custom_jvp, custom_vjp, checkpoint) first reach the trace.

        ``call`` is the `CustomCall` object of `fntorch.transforms`; the default is to
        run its plain function, inlining it into this trace.
        """
        return call.inline(*args)

    def device_of(self, tracer):
        """The device of ``tracer``'s value, or None where this trace cannot know it."""
        return None

    def is_own(self, x) -> bool:
        """Whether ``x`` is one of this trace's tracers."""
        return isinstance(x, Tracer) and x._trace is self


def escaped_tracer_error(t: Tracer, where: str) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"{where}: got a tracer {t.aval} from {t._trace.transform_name}, which has already "
        "returned (the tracer escaped it, e.g. through a global, a closure or a side "
        "effect). Return values out of the transformed function instead of storing them."
    )


def check_tracer(t: Tracer, where: str):
    """For a tracer that is not the current trace's own: fail if its transform is over."""
    if t._trace.dead:
        raise escaped_tracer_error(t, where)


# The tape's recorder (``nn/autograd.py`` sets it): ``(prim, args, params) -> outputs``,
# called by eager dispatch when an operand is ``_taped``.
tape_hook: list = [None]


class EvalTrace(Trace):
    """The bottom trace: runs each primitive's device impl on concrete buffers.

    >>> import fntorch as ft
    >>> type(ft.fx.current_trace()).__name__
    'EvalTrace'
    """

    transform_name = "eager evaluation"

    def process_primitive(self, prim, args, params):
        """Checks shapes and dtypes with the abstract-eval rule, then runs the device impl."""
        vals = []
        device = None
        host_consts = False
        for a in args:
            if type(a) is Tensor:
                v = a._value
            elif isinstance(a, Tracer):
                raise escaped_tracer_error(a, f"primitive {prim.name}")
            elif isinstance(a, Tensor):
                if a._taped:  # a cell that requires grad, or a value recorded from one
                    return tape_hook[0](prim, args, params)
                v = a._value
            elif type(a) is _ndarray:
                # A raw host array is a constant (an index array, a rule's 0-d zero):
                # like a scalar, of no device; put on the device of the tensors it meets.
                host_consts = True
                vals.append(a)
                continue
            else:
                v = a
            try:
                d = operand_devices[type(v)]
            except KeyError:
                d = _device_of_operand(v)
            if device is None:
                device = d
            elif d is not None and d is not device:
                raise ValueError(
                    f"{prim.name}: operands are on different devices ({device} and {d}); "
                    "move them to one device with t.to(device) or ft.device_put"
                )
            vals.append(v)
        if host_consts and device is not None and device is not host_device():
            vals = [device.put(v) if type(v) is _ndarray else v for v in vals]
        scalars_only = device is None and bool(vals)
        if device is None:
            # Only scalars (or nothing): computed on the host when there are operands, so
            # that a 0-d result stays a scalar of no device (a cast of a numpy scalar
            # meets a tensor on any device); anything larger goes to the default device.
            device = host_device() if vals else get_default_device()
        try:
            rule = abstract_eval_rules[prim]
        except KeyError:
            raise NotImplementedError(
                f"primitive {prim.name!r} has no abstract-eval rule"
            ) from None
        rule(*vals, **params)  # shape and dtype errors, the same as under tracing
        try:
            impl = device.impls[prim]  # an ImplTable: universal_impls behind it
        except KeyError:
            raise NotImplementedError(
                f"primitive {prim.name!r} has no impl on device {device}"
            ) from None
        out = impl(*vals, **params)
        if _debug_check is not None:  # ft.config debug_nans / debug_infs: the one check
            _debug_check(prim, vals, params, out)
        if scalars_only:
            out = [_scalar_result(o) for o in out] if prim.multiple_results else _scalar_result(out)
        if prim.multiple_results:
            return [_new_tensor(o) for o in out]
        return _new_tensor(out)


def constant_device(*tensors):
    """The device that a constant made for ``tensors`` (an index array, a zero
    cotangent, a broadcast scalar) must be made on: theirs where one of them is known to
    be on a device other than the host, else None (the host, or no device known: a
    staged value), where host constants already belong.

    >>> import fntorch as ft
    >>> constant_device(ft.ones(2), 2.0) is None
    True
    """
    host = host_device()
    for x in tensors:
        if isinstance(x, Tracer):
            d = x.device
        elif isinstance(x, Tensor):  # a plain tensor, or a cell or taped value holding one
            v = x._value
            d = v.device if isinstance(v, Tracer) else device_of_buffer(v)
        else:
            continue
        if d is not None and d is not host:
            return d
    return None


def _scalar_result(out):
    """A result computed from scalars and raw host arrays alone: 0-d stays a host scalar
    (of no device), a larger one (a broadcast scalar) moves to the default device."""
    if getattr(out, "ndim", 1) == 0:
        return out[()]
    default = get_default_device()
    return out if default is host_device() else default.put(out)


_ndarray = np.ndarray
EVAL_TRACE = EvalTrace()

# ``fn(prim, vals, params, out)`` run after every eager impl while ``ft.config``'s
# ``debug_nans`` or ``debug_infs`` is on, else None (``transforms/debug_rules.py`` sets
# it): one global read is all eager dispatch pays with both off.
_debug_check: Callable | None = None


def set_debug_check(check: Callable | None) -> None:
    """Installs ``check(prim, vals, params, out)``, run after every eager impl (None: off).

    >>> import fntorch as ft
    >>> x, seen = ft.ones(2), []
    >>> set_debug_check(lambda prim, vals, params, out: seen.append(prim.name))
    >>> _ = ft.sin(x); set_debug_check(None); seen
    ['sin']
    """
    global _debug_check
    _debug_check = check


_current_trace: contextvars.ContextVar[Trace] = contextvars.ContextVar(
    "fntorch_current_trace", default=EVAL_TRACE
)


def current_trace() -> Trace:
    """The trace that ``bind`` hands primitives to now (innermost transform first).

    >>> import fntorch as ft
    >>> names = []
    >>> _ = ft.grad(lambda x: names.append(current_trace().transform_name) or x * x)(1.0)
    >>> names, current_trace().transform_name
    (['vjp'], 'eager evaluation')
    """
    return _current_trace.get()


class set_current_trace:
    """Context manager installing ``trace`` as the current trace."""

    __slots__ = ("trace", "token")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self):
        self.token = _current_trace.set(self.trace)
        return self.trace

    def __exit__(self, *exc):
        _current_trace.reset(self.token)


def bind_on(trace: Trace, prim: Primitive, args, params):
    """Binds ``prim`` with ``trace`` as the current trace (how a trace hands work to its parent)."""
    token = _current_trace.set(trace)
    try:
        return trace.process_primitive(prim, args, params)
    finally:
        _current_trace.reset(token)
