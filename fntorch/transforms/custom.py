"""User-defined derivatives (custom_jvp, custom_vjp) and rematerialization (checkpoint).

The names other modules import from here (``api``; ``lowering.table`` finds
``custom_lin_p`` among this module's values), gathered from where they live:

- ``custom_call``: the machinery every custom call shares (``_Call``, argument handling);
- ``custom_jvp``: ``custom_jvp``;
- ``custom_vjp``: ``custom_vjp`` and its linear primitive ``custom_lin`` (``custom_lin_p``),
  through which reverse mode of custom_vjp and checkpoint goes;
- ``checkpoint``: ``checkpoint``, whose backward pass recomputes its forward pass.
"""

from .checkpoint import checkpoint
from .custom_jvp import custom_jvp
from .custom_vjp import custom_lin_p, custom_vjp

__all__ = ["checkpoint", "custom_jvp", "custom_lin_p", "custom_vjp"]
