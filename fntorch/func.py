"""``ft.func``: PyTorch's ``torch.func`` spellings of fntorch's transforms.

fntorch's transforms already are torch.func's (JAX's): pure functions in, pure functions
out. Where ``torch.func`` uses the same arguments (``grad``, ``vjp``, ``hessian``,
``linearize``) the name here *is* the ``ft`` transform; where it differs there is a thin
wrapper that translates: ``vmap`` takes ``in_dims``/``out_dims``, ``grad_and_value``
returns ``(grad, value)`` (``ft.value_and_grad`` returns ``(value, grad)``), ``jvp`` takes
``has_aux``, ``jacrev`` ``chunk_size`` and ``jacfwd`` ``randomness``, and
``functional_call`` takes ``args=None`` for no arguments. ``stack_module_state`` stacks
the parameters and buffers of models of one class for an ensemble under ``vmap``.

>>> import fntorch as ft
>>> ft.func.grad(lambda x: (x ** 3).sum())(ft.asarray([1.0, 2.0])).tolist()
[3.0, 12.0]
>>> models = [ft.nn.Linear(3, 2) for _ in range(4)]
>>> params, buffers = ft.func.stack_module_state(models)
>>> ensemble = ft.func.vmap(lambda p, b, x: ft.func.functional_call(models[0], (p, b), (x,)),
...                         in_dims=(0, 0, None))
>>> ensemble(params, buffers, ft.ones((5, 3))).shape
(4, 5, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .nn.module import Module
from .nn.stateless import functional_call as _nn_functional_call
from .ops import api

# grad, vjp, linearize and hessian are ft's unchanged (same arguments, same results);
# the others are wrapped below under their torch.func names.
from .transforms.api import grad, hessian, linearize, value_and_grad, vjp
from .transforms.api import jacfwd as _ft_jacfwd
from .transforms.api import jacrev as _ft_jacrev
from .transforms.api import jvp as _ft_jvp
from .transforms.api import vmap as _ft_vmap

__all__ = [
    "functional_call",
    "stack_module_state",
    "grad",
    "grad_and_value",
    "vmap",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
]

_RANDOMNESS = ("error", "different", "same")


def _check_randomness(where: str, randomness) -> None:
    # Accepted for torch.func's signature: fntorch's randomness is explicit keys (a key
    # batched under vmap draws per lane) or the global key cell (one draw for all lanes).
    if randomness not in _RANDOMNESS:
        raise ValueError(f"{where}: randomness must be one of {_RANDOMNESS}, got {randomness!r}")


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:  # fmt: skip
    """``torch.func.vmap``: ``ft.vmap`` with torch's names (``in_dims`` is ``in_axes``,
    ``out_dims`` is ``out_axes``). ``randomness`` and ``chunk_size`` are accepted and do
    not change the result: every lane is computed in one batched call.

    >>> import fntorch as ft
    >>> ft.func.vmap(lambda x, y: x * y, in_dims=(0, None))(ft.ones((3, 2)), 2.0).shape
    (3, 2)
    """
    _check_randomness("vmap", randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size must be None or a positive int, got {chunk_size!r}")
    return _ft_vmap(func, in_axes=in_dims, out_axes=out_dims)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``torch.func.grad_and_value``: ``(grad, value)``, or ``(grad, (value, aux))`` with
    ``has_aux`` (``ft.value_and_grad`` in torch's order).

    >>> import fntorch as ft
    >>> g, v = ft.func.grad_and_value(lambda x: x * x)(3.0)
    >>> float(g), float(v)
    (6.0, 9.0)
    """
    value_and_grad_f = value_and_grad(func, argnums, has_aux)

    def grad_and_value_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return g, value

    return grad_and_value_f


def jvp(func: Callable, primals: Sequence, tangents: Sequence, *, strict: bool = False,
        has_aux: bool = False):  # fmt: skip
    """``torch.func.jvp``: ``(output, jvp_out)``, or ``(output, jvp_out, aux)`` when
    ``func`` returns ``(output, aux)`` and ``has_aux`` (``aux`` is a pytree of tensors;
    its tangent is dropped). ``strict`` is accepted.

    >>> import fntorch as ft
    >>> out, t, aux = ft.func.jvp(lambda x: (x * x, x + 1), (2.0,), (1.0,), has_aux=True)
    >>> float(out), float(t), float(aux)
    (4.0, 4.0, 3.0)
    """
    if not has_aux:
        return _ft_jvp(func, primals, tangents)

    def with_aux(*args):
        res = func(*args)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError(
                "jvp(has_aux=True): func must return a tuple (output, aux), got "
                f"{type(res).__name__}"
            )
        return res

    (out, aux), (t_out, _) = _ft_jvp(with_aux, primals, tangents)
    return out, t_out, aux


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:  # fmt: skip
    """``torch.func.jacrev``: ``ft.jacrev``; ``chunk_size`` is accepted (every row is
    computed in one batched pullback).

    >>> import fntorch as ft
    >>> ft.func.jacrev(lambda x: x * x)(ft.asarray([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"jacrev: chunk_size must be None or a positive int, got {chunk_size!r}")
    return _ft_jacrev(func, argnums, has_aux)


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:  # fmt: skip
    """``torch.func.jacfwd``: ``ft.jacfwd``; ``randomness`` as ``vmap``'s.

    >>> import fntorch as ft
    >>> ft.func.jacfwd(lambda x: 3.0 * x)(ft.asarray([1.0, 2.0])).tolist()
    [[3.0, 0.0], [0.0, 3.0]]
    """
    _check_randomness("jacfwd", randomness)
    return _ft_jacfwd(func, argnums, has_aux)


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):  # fmt: skip
    """``torch.func.functional_call``: ``ft.nn.functional_call``, with ``args=None`` for a
    call without positional arguments, as torch's.

    >>> import fntorch as ft
    >>> lin = ft.nn.Linear(2, 1)
    >>> p = {"weight": ft.ones((1, 2)), "bias": ft.zeros(1)}
    >>> ft.func.functional_call(lin, p, ft.ones((1, 2))).tolist()
    [[2.0]]
    """
    return _nn_functional_call(
        module,
        parameter_and_buffer_dicts,
        () if args is None else args,
        kwargs,
        tie_weights=tie_weights,
        strict=strict,
    )


def _stack(models, named: str, what: str) -> dict:
    """``{name: stacked values}`` of ``named`` ("named_parameters"/"named_buffers"),
    after checking every model has the same names and shapes."""
    tables = [dict(getattr(m, named)()) for m in models]
    first = tables[0]
    for i, t in enumerate(tables[1:], 1):
        if list(t) != list(first):
            raise ValueError(
                f"stack_module_state: models[{i}] has {what} {list(t)}, but models[0] has "
                f"{list(first)}"
            )
        for name, v in t.items():
            if tuple(v.shape) != tuple(first[name].shape) or v.dtype != first[name].dtype:
                raise ValueError(
                    f"stack_module_state: {what[:-1]} {name!r} of models[{i}] is "
                    f"{v.dtype}{list(v.shape)}, but models[0]'s is "
                    f"{first[name].dtype}{list(first[name].shape)}"
                )
    # values, read through .data: the stack is a new value, never recorded on the tape
    return {name: api.stack([t[name].data for t in tables]) for name in first}


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: dicts by ``state_dict`` name of the models' parameters and
    buffers, stacked on a new leading axis, as ``torch.func.stack_module_state``, for
    ``vmap`` over ``functional_call`` of one of them. The models must be of one class,
    all in training or all in eval mode, with the same names and shapes.

    The stacked values are plain tensors (PyTorch returns new leaves that require grad):
    differentiate them with ``ft.func.grad``, or make leaves with ``.requires_grad_()``.

    >>> import fntorch as ft
    >>> params, buffers = ft.func.stack_module_state([ft.nn.Linear(3, 2) for _ in range(5)])
    >>> {k: v.shape for k, v in params.items()}, buffers
    ({'weight': (5, 2, 3), 'bias': (5, 2)}, {})
    """
    if isinstance(models, Module):
        raise TypeError("stack_module_state: models must be a sequence of modules, got a Module")
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    for i, m in enumerate(models):
        if not isinstance(m, Module):
            raise TypeError(
                f"stack_module_state: models[{i}] must be an ft.nn.Module, got {type(m).__name__}"
            )
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = _stack(models, "named_parameters", "parameters")
    buffers = _stack(models, "named_buffers", "buffers")
    return params, buffers
