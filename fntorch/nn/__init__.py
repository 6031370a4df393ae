"""``ft.nn``: the stateful shim. ``Module``, ``Parameter`` and ``Buffer`` (cells), the
tape (``autograd``), ``functional``; layers and losses."""

from . import autograd, functional
from .module import Module
from .parameter import Buffer, Parameter
