"""Autocast's hooks in the language core: the policy in force, and where it is consulted.

``ft.autocast`` (``fntorch/amp``) makes a *policy*: an object that says, for a primitive
or for a named operation, to which dtype its floating operands are cast first. While one
is open, two places consult it, and nothing else changes:

- ``Primitive.bind`` (swapped for ``_autocast_bind`` while any autocast scope is open in
  any thread, so eager dispatch pays nothing when none is): the policy's primitive rules
  (``dot_general``, ``conv_general_dilated``: matmuls and convolutions in the low dtype);
- functions marked ``@autocast_op(name)`` in ``ops`` and ``nn`` (``linear``,
  ``softmax``, the losses, ...): an operation PyTorch's autocast lists as a whole, such
  as a loss computed in float32, or ``linear`` whose bias is cast with its matmul.

The casts are ordinary ``convert_element_type`` primitives bound on the current trace,
before the operation: ``grad``, ``vmap``, ``jit`` staging and the tape see them as they
see any primitive, so gradients flow through them and a float32 parameter's gradient
comes back in float32 (PyTorch's autocast sits above autograd the same way). While an
operation or primitive runs, the policy is suspended: what it and the transforms' rules
bind inside follows the dtypes it was given, so a rule never sees a dtype its primal did
not have. The state is a ``contextvars.ContextVar``, as the trace is: threads never see
each other's autocast.

>>> import fntorch as ft
>>> current_policy() is None
True
>>> with ft.autocast("cpu"):
...     current_policy().key
('autocast', 'cpu', 'bfloat16')
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable

from . import core

_policy: contextvars.ContextVar = contextvars.ContextVar("fntorch_autocast", default=None)

# Autocast scopes open now, in any thread. While 0, ``Primitive.bind`` is the plain one
# and ``@autocast_op`` functions read only this list: autocast costs nothing when off.
_open = [0]
_lock = threading.Lock()
_plain_bind = core.Primitive.bind


def _autocast_bind(self, *args, **params):
    """``Primitive.bind`` while an autocast scope is open somewhere."""
    policy = _policy.get()
    if policy is None:
        return core._current_trace.get().process_primitive(self, args, params)
    token = _policy.set(None)  # the casts and the primitive's own rules run without it
    try:
        args = policy.cast_primitive(self, args)
        return core._current_trace.get().process_primitive(self, args, params)
    finally:
        _policy.reset(token)


def enter(policy) -> contextvars.Token:
    """Makes ``policy`` (None: autocast disabled) the one in force; returns the token
    that ``exit`` takes. Scopes nest; the innermost one's policy applies."""
    with _lock:
        if _open[0] == 0:
            core.Primitive.bind = _autocast_bind
        _open[0] += 1
    return _policy.set(policy)


def exit(token: contextvars.Token) -> None:  # noqa: A001 - the pair of ``enter``
    """Closes the scope ``enter`` opened (restoring the policy before it)."""
    _policy.reset(token)
    with _lock:
        _open[0] -= 1
        if _open[0] == 0:
            core.Primitive.bind = _plain_bind


def current_policy():
    """The autocast policy in force in this context, or None.

    >>> current_policy() is None
    True
    """
    return _policy.get() if _open[0] else None


def cache_key():
    """What a jit cache key holds about autocast: None when off, else the policy's key.

    >>> cache_key() is None
    True
    """
    if not _open[0]:
        return None
    policy = _policy.get()
    return None if policy is None else policy.key


class suspended:
    """Runs a block with no autocast policy (jit's compiler, the tape's backward): code
    that binds primitives of a finished trace must bind them with their recorded dtypes.

    >>> import fntorch as ft
    >>> with ft.autocast("cpu"), suspended():
    ...     current_policy() is None
    True
    """

    __slots__ = ("token",)

    def __enter__(self):
        self.token = _policy.set(None) if _open[0] else None
        return self

    def __exit__(self, *exc):
        if self.token is not None:
            _policy.reset(self.token)


def autocast_op(name: str) -> Callable:
    """Marks a function as the operation ``name`` of autocast's lists: under a policy
    that lists it, its floating tensor arguments are cast first (``policy.call``).

    >>> @autocast_op("my_doc_loss")
    ... def my_loss(x):
    ...     return x.sum()
    >>> my_loss.autocast_name
    'my_doc_loss'
    """

    def mark(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if _open[0]:
                policy = _policy.get()
                if policy is not None:
                    return policy.call(name, fn, args, kwargs)
            return fn(*args, **kwargs)

        op.autocast_name = name
        return op

    return mark


def run_suspended(fn, args, kwargs):
    """``fn(*args, **kwargs)`` with the policy suspended (a policy's ``call`` after its
    casts: an operation's inside follows the dtypes it was given)."""
    token = _policy.set(None)
    try:
        return fn(*args, **kwargs)
    finally:
        _policy.reset(token)
