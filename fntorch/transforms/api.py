"""The public transforms, re-exported: jvp, linearize, vjp, grad, jacobians and
stop_gradient (``autodiff``), vmap (``vectorize``), make_graph (``staging``), and the
custom-derivative functions (``custom``).

``_as_tensor``, ``_check_argnums`` (``_args``) and ``_vmap`` stay importable from here, as
``custom`` imports them.
"""

from __future__ import annotations

from ._args import _as_tensor, _check_argnums  # noqa: F401 (custom imports them here)
from .autodiff import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
)
from .custom import checkpoint, custom_jvp, custom_vjp
from .staging import make_graph
from .vectorize import _vmap, vmap  # noqa: F401

__all__ = [
    "jvp",
    "linearize",
    "vjp",
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "hessian",
    "vmap",
    "make_graph",
    "stop_gradient",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
]
