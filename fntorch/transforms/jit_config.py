"""``ft.config``: the process-wide jit settings (``Config``), read from the environment
at import and changed with ``ft.config.update(name, value)``.
"""

from __future__ import annotations

import os


class Config:
    """Process-wide jit settings: ``ft.config.update(name, value)``, read as attributes.

    - ``log_compiles`` (bool, env ``FNTORCH_LOG_COMPILES``): log each trace and its cause.
    - ``kernel_backend`` (env ``FNTORCH_KERNEL_BACKEND``): ``"auto"`` (the kernel
      compiler when importable, else the numpy interpreter), ``"compiled"``,
      ``"interpret"``.

    >>> config.update("log_compiles", False)
    >>> config.log_compiles
    False
    """

    _CHOICES = {"kernel_backend": ("auto", "compiled", "interpret")}

    def __init__(self):
        env = os.environ.get
        self._values = {
            "log_compiles": env("FNTORCH_LOG_COMPILES", "0").lower() in ("1", "true", "yes"),
            "kernel_backend": env("FNTORCH_KERNEL_BACKEND", "auto"),
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

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"config has no option {name!r}") from None


config = Config()
