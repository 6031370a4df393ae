"""What the module factories of ``layers_extra`` and ``containers`` share: the settings a
generated class's ``__init__`` stores, and the class built around a functional call.

>>> import fntorch as ft
>>> def forward(self, input):
...     return ft.relu(input)
>>> R = functional_class("R", ft.nn.Module, ft.relu, forward, __name__, "A ReLU.")
>>> R.__doc__, R()(ft.asarray([-1.0, 2.0])).tolist()
('A ReLU.', [0.0, 2.0])
"""

from __future__ import annotations


def store_settings(module, fields, defaults, args, kwargs) -> None:
    """Sets each of ``fields`` on ``module``: its default, overridden by the positional
    argument at its place, overridden by its keyword; other keywords are set too.
    ``object.__setattr__`` keeps settings out of ``Module``'s cell bookkeeping.

    >>> import fntorch as ft
    >>> m = ft.nn.Module()
    >>> store_settings(m, ("alpha", "inplace"), (1.0, False), (0.5,), {"inplace": True})
    >>> m.alpha, m.inplace
    (0.5, True)
    """
    values = dict(zip(fields, defaults))
    values.update(zip(fields, args))
    values.update(kwargs)
    for k, v in values.items():
        object.__setattr__(module, k, v)


def functional_class(name, base, fn, forward, module, doc, forward_doc=None, **methods) -> type:
    """A ``base`` subclass ``name`` (of module ``module``, docstring ``doc``) whose
    ``forward`` calls ``fn``; ``forward_doc`` (by default the settings' call of ``fn``)
    becomes its docstring; ``methods`` go in the class too (``__init__``, ...).

    >>> import fntorch as ft
    >>> C = functional_class("C", ft.nn.Module, ft.relu, lambda self, x: x, "m", "C.", "Id.")
    >>> C.__module__, C.__doc__, C.forward.__doc__
    ('m', 'C.', 'Id.')
    """
    if forward_doc is None:
        forward_doc = f"``functional.{fn.__name__}`` of ``input`` with this module's settings."
    forward.__doc__ = forward_doc
    namespace = {**methods, "forward": forward, "__doc__": doc, "__module__": module}
    return type(name, (base,), namespace)
