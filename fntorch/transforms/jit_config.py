"""``ft.config``: the process-wide jit settings (``Config``), read from the environment
at import and changed with ``ft.config.update(name, value)``; and ``disable_jit``, the
one setting local to a thread or task (a context variable).
"""

from __future__ import annotations

import contextlib
import contextvars
import os

# ``hook(name, value)`` run after each ``config.update`` (the debug checks follow theirs).
on_update: list = []


class Config:
    """Process-wide jit settings: ``ft.config.update(name, value)``, read as attributes.

    - ``log_compiles`` (bool, env ``FNTORCH_LOG_COMPILES``): log each trace and its cause.
    - ``kernel_backend`` (env ``FNTORCH_KERNEL_BACKEND``): ``"auto"`` (the kernel
      compiler when importable, else the numpy interpreter), ``"compiled"``,
      ``"interpret"``.
    - ``debug_nans`` / ``debug_infs`` (bool, env ``FNTORCH_DEBUG_NANS`` /
      ``FNTORCH_DEBUG_INFS``): a NaN (an inf) that a primitive produces raises
      ``FloatingPointError`` naming the primitive and the source line that called it.
    - ``explain_cache_misses`` (bool, env ``FNTORCH_EXPLAIN_CACHE_MISSES``): log why each
      retrace happened; ``max_retraces`` (int, default 8): past that many retraces of
      one function, warn once naming the argument that keeps changing.

    >>> config.update("log_compiles", False)
    >>> config.log_compiles
    False
    """

    _CHOICES = {"kernel_backend": ("auto", "compiled", "interpret")}

    def __init__(self):
        env = os.environ.get

        def flag(name):
            return env(name, "0").lower() in ("1", "true", "yes")

        self._values = {
            "log_compiles": flag("FNTORCH_LOG_COMPILES"),
            "kernel_backend": env("FNTORCH_KERNEL_BACKEND", "auto"),
            "debug_nans": flag("FNTORCH_DEBUG_NANS"),
            "debug_infs": flag("FNTORCH_DEBUG_INFS"),
            "explain_cache_misses": flag("FNTORCH_EXPLAIN_CACHE_MISSES"),
            "max_retraces": 8,
        }

    def update(self, name: str, value) -> None:
        if name not in self._values:
            raise ValueError(
                f"config.update: unknown option {name!r}; options: {sorted(self._values)}"
            )
        choices = self._CHOICES.get(name)
        if choices and value not in choices:
            raise ValueError(f"config.update: {name} must be one of {choices}, got {value!r}")
        self._values[name] = value
        for hook in on_update:
            hook(name, value)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"config has no option {name!r}") from None


config = Config()


# ------------------------------------------------------------------- disable_jit

_jit_disabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fntorch_jit_disabled",
    default=os.environ.get("FNTORCH_DISABLE_JIT", "0").lower() in ("1", "true", "yes"),
)
# [how many disable_jit contexts are open in any thread, plus one for the environment
# variable]: while zero, a jit call skips the context variable's look-up.
_disable_state = [int(_jit_disabled.get())]


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within this context (of this thread or task), ``jit``'ed functions run as plain
    Python, op by op, as ``jax.disable_jit``: prints, breakpoints and side effects run
    on every call. Nests (``disable_jit(False)`` turns jit back on inside); also a
    decorator. ``FNTORCH_DISABLE_JIT=1`` starts every thread with jit disabled.

    >>> import fntorch as ft
    >>> calls = []
    >>> f = ft.jit(lambda x: calls.append(1) or x * 2.0)
    >>> with ft.disable_jit():
    ...     _ = f(ft.ones(2)); _ = f(ft.ones(2))
    >>> len(calls), f.stats["traces"]
    (2, 0)
    """
    token = _jit_disabled.set(bool(disable))
    _disable_state[0] += 1
    try:
        yield
    finally:
        _disable_state[0] -= 1
        _jit_disabled.reset(token)
