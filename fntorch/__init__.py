"""fntorch: PyTorch's user surface on JAX's core.

Programs are pure functions of immutable tensors; ``grad``, ``vjp``, ``jvp``, ``vmap``
and ``jit`` are composable transforms over one small set of primitives.

>>> import fntorch as ft
>>> ft.grad(lambda x: (x * x).sum())(ft.asarray([1.0, 2.0])).tolist()
[2.0, 4.0]
"""

# Registers the CPU device and its impls. `ft.devices` is the function (from ops.api);
# the room stays importable as `fntorch.devices`.
from . import amp, cuda, fx, nn, ops, optim, random, transforms, tree, utils
from . import devices as _devices

# isort: split
from . import debug, distributed, func, profiler
from ._version import __version__
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .compile import compile  # noqa: A004 - torch.compile's name
from .distributed import shard_map
from .fx import dtypes as _dtypes
from .fx.core import ConcretizationError, Tensor, UnexpectedTracerError
from .fx.dtypes import (
    bfloat16,
    complex64,
    complex128,
    finfo,
    float0,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .fx.dtypes import (
    bool_ as bool,  # noqa: A001 - the public dtype name
)
from .nn import autograd
from .nn.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .ops import fft, linalg
from .ops.api import *  # noqa: F403
from .ops.collectives import *  # noqa: F403
from .ops.collectives import __all__ as _collectives
from .random._torch_style import *  # noqa: F403
from .random._torch_style import __all__ as _torch_random
from .serialization import load, save
from .transforms.api import *  # noqa: F403
from .transforms.export import Exported, ShapeDtypeStruct, export
from .transforms.jit import config, disable_jit, jit

# The public surface, explicit (STYLE.md: Equinox's public `__init__`): the Array API
# namespace, the transforms, and the names imported above. Submodules (`ft.random`,
# `ft.fx`, `ft.tree`, `ft.nn`) are reached as attributes.
__all__ = sorted(
    {*ops.api.__all__, *transforms.api.__all__}
    | {"ConcretizationError", "Tensor", "UnexpectedTracerError", "config", "jit"}
    | {"disable_jit", "profiler", "compile"}
    | {"Exported", "ShapeDtypeStruct", "export"}
    | {"autograd", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled"}
    | {"is_grad_enabled"}
    | set(_collectives)
    | {"distributed", "shard_map"}
    | {"save", "load"}
    | {"autocast", "is_autocast_enabled", "get_autocast_dtype"}
    | {"finfo", "iinfo", "result_type", "float0"}
    | {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}
    | set(_torch_random)
    | {"long", "int", "float", "double", "half", "short", "cfloat", "cdouble"}
)

# PyTorch's dtype names (after the code above, which must not see them shadow builtins).
long = int64
int = int32  # noqa: A001
float = float32  # noqa: A001
double = float64
half = float16
short = int16
cfloat = complex64
cdouble = complex128
