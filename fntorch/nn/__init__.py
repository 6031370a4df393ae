"""``ft.nn``: the stateful shim. ``Parameter`` and ``Buffer`` (cells), ``functional``;
the Module, layers and losses are being built."""

from . import functional
from .parameter import Buffer, Parameter
