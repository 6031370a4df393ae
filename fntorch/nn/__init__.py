"""``ft.nn``: the stateful shim. ``Module``, ``Parameter`` and ``Buffer`` (cells), the
tape (``autograd``), ``functional``, ``init``, layers, containers and losses."""

from . import autograd, functional, init, parallel, utils
from .attention import *  # noqa: F403
from .containers import *  # noqa: F403
from .conv_transpose import *  # noqa: F403
from .layers import *  # noqa: F403
from .module import Module
from .parallel import SyncBatchNorm
from .parameter import Buffer, Parameter
from .recurrent import *  # noqa: F403
from .stateless import functional_call
from .transformer import *  # noqa: F403
