"""Parameters to one flat vector and back, as ``torch.nn.utils.convert_parameters``.

``vector_to_parameters`` rebinds each cell (``p.data = ...``); it checks every parameter
and the vector's length before writing any, so bad input changes nothing.

>>> import fntorch as ft
>>> m = ft.nn.Linear(2, 1)
>>> v = ft.nn.utils.parameters_to_vector(m.parameters()); v.shape
(3,)
>>> ft.nn.utils.vector_to_parameters(ft.arange(3.0), m.parameters()); m.bias.tolist()
[2.0]
"""

from __future__ import annotations

import math

from ...fx.cell import Cell
from ...fx.core import Tensor
from ...ops import api
from .clip_grad import _as_list

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """The values of ``parameters`` (an iterable of tensors), flattened and concatenated,
    as ``torch.nn.utils.parameters_to_vector``. Differentiable (on the tape and under
    ``ft.grad``), as PyTorch's.

    >>> import fntorch as ft
    >>> ft.nn.utils.parameters_to_vector([ft.ones((2, 2)), ft.zeros(1)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    params = _as_list(parameters, "parameters_to_vector", "parameters")
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(
                f"parameters_to_vector: parameters[{i}] must be a tensor, got {type(p).__name__}"
            )
    if not params:
        raise ValueError("parameters_to_vector: expected at least one parameter, got none")
    return api.concat([api.reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec, parameters) -> None:
    """Writes consecutive slices of ``vec`` (a 1-d tensor with exactly as many elements as
    the parameters hold) into the cells ``parameters``, reshaped and cast to each one, as
    ``torch.nn.utils.vector_to_parameters``.

    >>> import fntorch as ft
    >>> ps = [ft.nn.Parameter(ft.zeros(2)), ft.nn.Parameter(ft.zeros((1, 1)))]
    >>> ft.nn.utils.vector_to_parameters(ft.asarray([1.0, 2.0, 3.0]), ps)
    >>> ps[0].tolist(), ps[1].tolist()
    ([1.0, 2.0], [[3.0]])
    """
    where = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"{where}: expected vec to be a tensor, but got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"{where}: vec must be 1-d, got shape {tuple(vec.shape)}")
    params = _as_list(parameters, where, "parameters")
    for i, p in enumerate(params):
        if not isinstance(p, Cell):
            raise TypeError(
                f"{where}: parameters[{i}] must be a cell (nn.Parameter or a registered "
                f"buffer) to be written, got {type(p).__name__}: fntorch tensors are immutable"
            )
    sizes = [math.prod(p.shape) for p in params]
    if sum(sizes) != vec.shape[0]:
        raise ValueError(
            f"{where}: vec has {vec.shape[0]} elements, but the parameters hold {sum(sizes)}"
        )
    values, start = [], 0
    for p, n in zip(params, sizes):
        piece = api.reshape(vec[start : start + n], tuple(p.shape))
        values.append(api.astype(piece, p.dtype) if piece.dtype != p.dtype else piece)
        start += n
    for p, v in zip(params, values):
        p.data = v
