"""``ft.nn``: the stateful shim. ``Parameter`` and ``Buffer`` (cells), ``functional``, ``init``;
the Module, layers and losses are being built."""

from . import functional, init
from .parameter import Buffer, Parameter
