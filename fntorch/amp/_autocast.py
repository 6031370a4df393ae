"""``ft.autocast``: PyTorch's autocast as a policy that ``fx.autocast`` consults in
``bind`` and in the operations ``ops`` and ``nn`` mark (``_lists.py`` says which).

A ``_Policy`` is made per scope: its device type, its low dtype, the dtype each listed
operation casts to, and the cache of parameter casts. It only inserts
``convert_element_type`` primitives; the transforms see nothing else.
"""

from __future__ import annotations

import functools
import warnings

from ..fx import autocast as _fx_autocast
from ..fx import dtypes as dt
from ..fx.cell import Cell
from ..fx.core import EVAL_TRACE, Tensor, Tracer, current_trace, device_of_buffer
from ..fx.device import devices as _devices
from ..ops._prims_structural import convert_element_type
from . import _lists

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]

_DEVICE_TYPES = ("cpu", "cuda")
# Operands autocast may cast: float64 and non-float operands are never touched (PyTorch).
_ELIGIBLE = frozenset({dt.float16, dt.bfloat16, dt.float32})


class _Policy:
    """What one autocast scope casts: ``cast_primitive`` for ``bind``, ``call`` for the
    marked operations (the protocol of ``fx.autocast``)."""

    __slots__ = ("device_type", "dtype", "ops", "key", "cache")

    def __init__(self, device_type: str, dtype, cache_enabled: bool):
        self.device_type = device_type
        self.dtype = dtype
        ops = dict.fromkeys(_lists.FLOAT32[device_type], dt.float32)
        ops.update(dict.fromkeys(_lists.LOW_PRECISION[device_type], dtype))
        self.ops = ops
        # jit keys carry it: a function traced under this policy is not reused outside.
        self.key = ("autocast", device_type, dtype.name)
        self.cache = {} if cache_enabled else None

    def cast_primitive(self, prim, args):
        if prim not in _lists.LOW_PRECISION_PRIMITIVES:
            return args
        return tuple(self._cast(a, self.dtype) for a in args)

    def call(self, name, fn, args, kwargs):
        target = self.ops.get(name)
        if target is None:  # not listed here: runs under the policy, in its inputs' dtypes
            return fn(*args, **kwargs)
        args = tuple(self._cast_tree(a, target) for a in args)
        if kwargs:
            kwargs = {k: self._cast_tree(v, target) for k, v in kwargs.items()}
        return _fx_autocast.run_suspended(fn, args, kwargs)

    def _cast_tree(self, x, target):
        if isinstance(x, Tensor):
            return self._cast(x, target)
        if type(x) in (list, tuple):  # cat-style sequences of tensors
            return type(x)(self._cast_tree(v, target) for v in x)
        return x

    def _applies(self, x) -> bool:
        """Whether ``x`` is on this autocast's device type; a staged value's device is not
        known while jit traces, and the policy applies to it."""
        if type(x) is Tensor:
            return device_of_buffer(x._value).type == self.device_type
        d = x.device
        return d is None or d.type == self.device_type

    def _cast(self, x, target):
        if not isinstance(x, Tensor):
            return x
        d = x.dtype
        if d == target or d not in _ELIGIBLE or not self._applies(x):
            return x
        cache = self.cache
        # PyTorch caches the casts of parameters within a scope. Here only eagerly and
        # for untaped cells (inference, frozen weights): a recorded cast belongs to one
        # tape, and a backward inside the scope starts a new one.
        if (
            cache is not None
            and isinstance(x, Cell)
            and not isinstance(x, Tracer)
            and not x._taped
            and current_trace() is EVAL_TRACE
        ):
            buf = x._value
            hit = cache.get((id(x), target))
            if hit is not None and hit[0] is buf:
                return hit[1]
            out = convert_element_type(x, target)
            cache[(id(x), target)] = (buf, out)
            return out
        return convert_element_type(x, target)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``ft.autocast`` supports ``device_type`` ("cpu" and "cuda").

    >>> import fntorch as ft
    >>> ft.amp.is_autocast_available("cpu"), ft.amp.is_autocast_available("mps")
    (True, False)
    """
    return device_type in _DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast scope is in force here (for ``device_type``, when given).

    >>> import fntorch as ft
    >>> with ft.autocast("cpu"):
    ...     ft.is_autocast_enabled("cpu"), ft.is_autocast_enabled("cuda")
    (True, False)
    >>> ft.is_autocast_enabled()
    False
    """
    policy = _fx_autocast.current_policy()
    return policy is not None and device_type in (None, policy.device_type)


def get_autocast_dtype(device_type: str):
    """The low dtype of the autocast scope in force for ``device_type``, else its default
    (bfloat16 on the CPU, float16 on CUDA), as PyTorch's ``torch.get_autocast_dtype``.

    >>> import fntorch as ft
    >>> with ft.autocast("cpu", dtype=ft.float16):
    ...     ft.get_autocast_dtype("cpu")
    dtype('float16')
    """
    _check_device_type("get_autocast_dtype", device_type)
    policy = _fx_autocast.current_policy()
    if policy is not None and policy.device_type == device_type:
        return policy.dtype
    return dt.canonicalize(_lists.DEFAULT_DTYPE[device_type])


def _check_device_type(where: str, device_type) -> None:
    if device_type not in _DEVICE_TYPES:
        raise ValueError(
            f"{where}: device_type must be one of {', '.join(map(repr, _DEVICE_TYPES))}, "
            f"got {device_type!r}"
        )


class autocast:
    """PyTorch's ``torch.autocast``: inside it, matmuls and convolutions (``@``,
    ``linear``, ``conv*``, ``einsum``, attention) run in ``dtype``, and the operations
    PyTorch lists as float32 ones (the losses everywhere; on CUDA also softmax, the norms,
    the reductions, ``exp``/``log``/``pow``) in float32; other operations follow their
    inputs. A context manager and a decorator; it works eagerly, under ``jit`` (the casts
    are in the graph, and the jit cache keys on the autocast state), under ``grad`` and
    on the tape (gradients of float32 parameters come back in float32).

    ``device_type`` ("cpu" or "cuda") says which tensors it casts and the default dtype
    (bfloat16 on the CPU, float16 on CUDA). ``enabled=False`` turns autocast off inside
    an enclosing one. ``cache_enabled`` (default True) reuses a weight's cast within the
    scope where that is safe (eager, not recorded on the tape).

    >>> import fntorch as ft
    >>> x, w = ft.ones((2, 3)), ft.ones((3, 4))
    >>> with ft.autocast("cpu", dtype=ft.bfloat16):
    ...     y = x @ w
    ...     loss = ft.nn.functional.mse_loss(y, ft.zeros((2, 4)))
    >>> y.dtype, loss.dtype, float(loss)
    (dtype(bfloat16), dtype('float32'), 9.0)
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        _check_device_type("autocast", device_type)
        if dtype is None:
            dtype = _lists.DEFAULT_DTYPE[device_type]
        dtype = dt.canonicalize(dtype, where="autocast")
        if dtype not in (dt.float16, dt.bfloat16):
            raise ValueError(
                f"autocast: dtype must be float16 or bfloat16 (the low precision that "
                f"matmuls run in), got {dtype}"
            )
        enabled = bool(enabled)
        if enabled and device_type == "cuda" and not any(d.type == "cuda" for d in _devices()):
            # PyTorch's behaviour: autocast("cuda") without a GPU warns and does nothing.
            warnings.warn(
                "autocast: device_type 'cuda' was given but no CUDA device is available; "
                "autocast is disabled",
                UserWarning,
                stacklevel=2,
            )
            enabled = False
        self.device_type = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        self._tokens: list = []

    def __enter__(self):
        policy = None
        if self._enabled:
            policy = _Policy(self.device_type, self.fast_dtype, self._cache_enabled)
        self._tokens.append(_fx_autocast.enter(policy))
        return self

    def __exit__(self, *exc):
        _fx_autocast.exit(self._tokens.pop())
        return False

    def __call__(self, fun):
        """Used as a decorator: ``fun`` runs inside this autocast on every call."""

        @functools.wraps(fun)
        def autocast_fun(*args, **kwargs):
            with self:
                return fun(*args, **kwargs)

        return autocast_fun

    def __repr__(self):
        return (
            f"autocast(device_type={self.device_type!r}, dtype={self.fast_dtype}, "
            f"enabled={self._enabled})"
        )
