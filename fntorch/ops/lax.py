"""lax: one thin function per primitive, the vocabulary of rules and of the Array API layer.

No promotion and no Python-scalar handling beyond the elementwise wrappers' scalar
lifting: callers pass operands of the dtypes the primitive wants.
"""

import numpy as np

from ..fx.core import Tensor, constant_device
from ._prims_elementwise import *  # noqa: F403
from ._prims_fft import *  # noqa: F403
from ._prims_indexing import *  # noqa: F403
from ._prims_linalg import *  # noqa: F403
from ._prims_reduce import *  # noqa: F403
from ._prims_structural import *  # noqa: F403
from ._prims_structural import broadcast_in_dim


def full(shape, value, dtype, like=None):
    """A tensor of ``shape`` filled with ``value`` (a broadcast scalar, not a copy). A 0-d
    one is a host scalar of no device: it takes the device of the tensors it meets; a
    larger one goes to the default device, or to ``like``'s (see `on_device_of`)."""
    scalar = np.asarray(value, dtype=dtype)[()]
    if not shape:
        return Tensor(scalar)
    out = broadcast_in_dim(scalar, tuple(shape), ())
    return out if like is None else on_device_of(like, out)


def on_device_of(like, t):
    """``t``, a constant made from nothing (an ``iota``, a broadcast scalar), on the
    device of the tensor ``like`` when that is known and not the host; else ``t``.

    >>> import fntorch as ft
    >>> on_device_of(ft.ones(2), iota(np.dtype("int64"), (3,))).tolist()
    [0, 1, 2]
    """
    dev = constant_device(like)
    if dev is None or type(t) is not Tensor or t.device is dev:
        return t
    return Tensor(dev.put(np.asarray(t.device.to_host(t._value))))
