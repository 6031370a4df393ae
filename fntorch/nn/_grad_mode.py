"""Grad mode: whether eager operations on cells that require grad are recorded now.

One context variable (``_grad_enabled``), so threads and tasks each have their own mode,
and PyTorch's context managers over it: ``set_grad_enabled``, ``no_grad``,
``enable_grad`` and ``inference_mode``, each also a decorator. The tape
(``_recording.py``) reads it before recording an operation, and a backward sets it for
its hooks (``_accumulate.py``). ``autograd`` and ``fntorch`` re-export the public names.

>>> import fntorch as ft
>>> with ft.no_grad():
...     (ft.nn.Parameter(ft.ones(1)) * 2).requires_grad
False
"""

from __future__ import annotations

import contextvars
import functools

_grad_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fntorch_grad_enabled", default=True
)


def is_grad_enabled() -> bool:
    """Whether operations on cells that require grad are recorded now.

    >>> import fntorch as ft
    >>> with ft.no_grad():
    ...     ft.is_grad_enabled()
    False
    """
    return _grad_enabled.get()


class set_grad_enabled:
    """Context manager and decorator: grad mode on (``True``) or off, as PyTorch's.

    >>> import fntorch as ft
    >>> with ft.set_grad_enabled(False):
    ...     (ft.nn.Parameter(ft.ones(1)) * 2).requires_grad
    False
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self._tokens: list = []

    def __enter__(self):
        self._tokens.append(_grad_enabled.set(self.mode))
        return self

    def __exit__(self, *exc):
        _grad_enabled.reset(self._tokens.pop())

    def __call__(self, fun):
        """As a decorator: ``fun`` runs in this grad mode.

        >>> import fntorch as ft
        >>> ft.no_grad()(ft.is_grad_enabled)()
        False
        """

        @functools.wraps(fun)
        def run(*args, **kwargs):
            with type(self)(self.mode) if type(self) is set_grad_enabled else type(self)():
                return fun(*args, **kwargs)

        return run


class no_grad(set_grad_enabled):
    """Grad mode off (PyTorch's ``torch.no_grad``): nothing is recorded inside.

    >>> import fntorch as ft
    >>> w = ft.nn.Parameter(ft.ones(2))
    >>> with ft.no_grad():
    ...     (w * 3).requires_grad
    False
    """

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Grad mode on inside, also within ``no_grad``.

    >>> import fntorch as ft
    >>> with ft.no_grad(), ft.enable_grad():
    ...     ft.is_grad_enabled()
    True
    """

    def __init__(self):
        super().__init__(True)


class inference_mode(set_grad_enabled):
    """``no_grad`` (PyTorch's ``inference_mode``: tensors are immutable anyway, so it
    has nothing more to forbid); ``inference_mode(False)`` turns grad mode on.

    >>> import fntorch as ft
    >>> with ft.inference_mode():
    ...     ft.is_grad_enabled()
    False
    """

    def __init__(self, mode: bool = True):
        super().__init__(not mode)
