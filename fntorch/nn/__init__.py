"""``ft.nn``: the stateful shim. ``Module``, ``Parameter`` and ``Buffer`` (cells), the
tape (``autograd``), ``functional``, ``init``; layers and losses."""

from . import autograd, functional, init
from .module import Module
from .parameter import Buffer, Parameter
