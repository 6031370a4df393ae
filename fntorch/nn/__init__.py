"""``ft.nn``: the stateful shim. ``Parameter`` and ``Buffer`` (cells), the tape
(``autograd``), ``functional``; the Module, layers and losses are being built."""

from . import autograd, functional
from .parameter import Buffer, Parameter
