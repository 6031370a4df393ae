"""``ft.nn.utils``: PyTorch's ``torch.nn.utils`` helpers over cells: gradient clipping
(``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``) and flattening parameters to one vector and back
(``parameters_to_vector``, ``vector_to_parameters``).

>>> import fntorch as ft
>>> p = ft.nn.Parameter(ft.zeros(2)); p.grad = ft.asarray([3.0, 4.0])
>>> total = ft.nn.utils.clip_grad_norm_([p], max_norm=1.0)
>>> total.item(), [round(g, 4) for g in p.grad.tolist()]
(5.0, [0.6, 0.8])
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
