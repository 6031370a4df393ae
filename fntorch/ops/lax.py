"""lax: one thin function per primitive, the vocabulary of rules and of the Array API layer.

No promotion and no Python-scalar handling beyond the elementwise wrappers' scalar
lifting: callers pass operands of the dtypes the primitive wants.
"""

import numpy as np

from ..fx.core import Tensor
from ._prims_elementwise import *  # noqa: F403
from ._prims_indexing import *  # noqa: F403
from ._prims_linalg import *  # noqa: F403
from ._prims_reduce import *  # noqa: F403
from ._prims_structural import *  # noqa: F403
from ._prims_structural import broadcast_in_dim


def full(shape, value, dtype):
    """A tensor of ``shape`` filled with ``value`` (a broadcast scalar, not a copy). A 0-d
    one is a host scalar of no device: it takes the device of the tensors it meets."""
    scalar = np.asarray(value, dtype=dtype)[()]
    if not shape:
        return Tensor(scalar)
    return broadcast_in_dim(scalar, tuple(shape), ())
