"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict and the loss modules.

>>> import fntorch as ft
>>> net = ft.nn.Sequential(ft.nn.Linear(2, 3), ft.nn.ReLU())
>>> [n for n, _ in net.named_parameters()]
['0.weight', '0.bias']
"""

from __future__ import annotations

from collections import OrderedDict

from . import functional as F
from ._factory import functional_class, store_settings
from .module import Module
from .parameter import Parameter

__all__ = [
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
]  # fmt: skip


class Sequential(Module):
    """Runs its modules in order (from arguments or an OrderedDict).

    >>> import fntorch as ft
    >>> net = ft.nn.Sequential(ft.nn.Linear(2, 3), ft.nn.ReLU())
    >>> len(net), net(ft.ones((1, 2))).shape
    (2, (1, 3))
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):  # noqa: A002
        """``input`` through each module in order."""
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(OrderedDict(list(self._modules.items())[i]))
        return mods[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module) -> Sequential:
        """Adds ``module`` at the end; returns this Sequential."""
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered as ``0``, ``1``, ...

    >>> import fntorch as ft
    >>> layers = ft.nn.ModuleList([ft.nn.Linear(2, 2)]).extend([ft.nn.Linear(2, 1)])
    >>> len(layers), [n for n, _ in layers.named_parameters()][-1]
    (2, '1.bias')
    """

    def __init__(self, modules=None):
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module) -> ModuleList:
        """Adds ``module`` at the end; returns this list."""
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules) -> ModuleList:
        """Adds each of ``modules`` at the end; returns this list."""
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        mods = list(self._modules.values())
        return ModuleList(mods[i]) if isinstance(i, slice) else mods[i]

    def __setitem__(self, i, module):
        self.add_module(list(self._modules)[i], module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    """A dict of modules, registered under their keys.

    >>> import fntorch as ft
    >>> acts = ft.nn.ModuleDict({"relu": ft.nn.ReLU()})
    >>> list(acts.keys()), acts["relu"](ft.asarray([-1.0])).tolist()
    (['relu'], [0.0])
    """

    def __init__(self, modules=None):
        super().__init__()
        for k, m in dict(modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, k):
        return self._modules[k]

    def __setitem__(self, k, m):
        self.add_module(k, m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, k):
        return k in self._modules

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self):
        """The (key, module) pairs, in insertion order."""
        return self._modules.items()


class ParameterList(Module):
    """A list of parameters, registered as ``0``, ``1``, ...

    >>> import fntorch as ft
    >>> ps = ft.nn.ParameterList([ft.nn.Parameter(ft.ones(2))]).append(ft.nn.Parameter(ft.zeros(3)))
    >>> len(ps), [n for n, _ in ps.named_parameters()]
    (2, ['0', '1'])
    """

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value) -> ParameterList:
        """Adds ``value`` (made a Parameter if it is not one) at the end; returns this list."""
        p = value if isinstance(value, Parameter) else Parameter(value)
        self.register_parameter(str(len(self._parameters)), p)
        return self

    def __getitem__(self, i):
        return list(self._parameters.values())[i]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())


class ParameterDict(Module):
    """A dict of parameters, registered under their keys.

    >>> import fntorch as ft
    >>> ps = ft.nn.ParameterDict({"w": ft.nn.Parameter(ft.ones(2))})
    >>> list(ps.keys()), ps["w"].shape
    (['w'], (2,))
    """

    def __init__(self, parameters=None):
        super().__init__()
        for k, v in dict(parameters or {}).items():
            self[k] = v

    def __setitem__(self, k, v):
        self.register_parameter(k, v if isinstance(v, Parameter) else Parameter(v))

    def __getitem__(self, k):
        return self._parameters[k]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        """The keys, in insertion order."""
        return self._parameters.keys()

    def items(self):
        """The (key, parameter) pairs, in insertion order."""
        return self._parameters.items()

    def values(self):
        """The parameters, in insertion order."""
        return self._parameters.values()


# ----------------------------------------------------------------------------- losses


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """``functional.cross_entropy`` with ``weight``, ``ignore_index``, ``label_smoothing``.

    >>> import fntorch as ft
    >>> loss = ft.nn.CrossEntropyLoss()(ft.asarray([[0.0, 0.0]]), ft.asarray([1]))
    >>> round(loss.item(), 4)
    0.6931
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):  # fmt: skip
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        """The cross entropy of the logits ``input`` against ``target`` (indices or
        probabilities).
        """
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction,
                               label_smoothing=self.label_smoothing)  # fmt: skip


class NLLLoss(_Loss):
    """``functional.nll_loss``: minus the log-probability of the target, averaged.

    >>> import fntorch as ft
    >>> ft.nn.NLLLoss()(ft.asarray([[-1.0, -2.0]]), ft.asarray([1])).item()
    2.0
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        """Minus the log-probabilities ``input`` at the ``target`` indices, reduced."""
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)  # fmt: skip


def _simple(name, fn, extra=(), example=""):
    """A loss class calling ``fn(input, target, reduction, **extra)``; ``extra`` holds
    (setting, default) pairs, taken by position or keyword (other keywords, PyTorch's
    deprecated ``size_average`` and ``reduce``, are accepted and dropped); ``example`` is
    the doctest its docstring carries."""
    fields = tuple(k for k, _ in extra)
    defaults = tuple(d for _, d in extra)

    def __init__(self, *args, **kwargs):
        _Loss.__init__(self, reduction=kwargs.pop("reduction", "mean"))
        store_settings(self, fields, defaults, args, {k: kwargs[k] for k in fields if k in kwargs})

    def forward(self, input, target):  # noqa: A002
        return fn(input, target, reduction=self.reduction, **{k: getattr(self, k) for k in fields})

    doc = f"``functional.{fn.__name__}``.\n\n>>> import fntorch as ft\n{example}\n"
    forward_doc = f"``functional.{fn.__name__}`` of ``input`` against ``target``."
    return functional_class(name, _Loss, fn, forward, __name__, doc, forward_doc, __init__=__init__)


def _pair_example(name, value):
    """The doctest of ``ft.nn.<name>()`` on input ``[0, 2]`` and target ``[1, 0]``."""
    return f"""
>>> ft.nn.{name}()(ft.asarray([0.0, 2.0]), ft.asarray([1.0, 0.0])).item()
{value}"""


MSELoss = _simple("MSELoss", F.mse_loss, example=_pair_example("MSELoss", "2.5"))
L1Loss = _simple("L1Loss", F.l1_loss, example=_pair_example("L1Loss", "1.5"))
SmoothL1Loss = _simple("SmoothL1Loss", F.smooth_l1_loss, (("beta", 1.0),),
                       _pair_example("SmoothL1Loss", "1.0"))  # fmt: skip
HuberLoss = _simple("HuberLoss", F.huber_loss, (("delta", 1.0),), _pair_example("HuberLoss", "1.0"))
BCELoss = _simple("BCELoss", F.binary_cross_entropy, (("weight", None),), """
>>> round(ft.nn.BCELoss()(ft.asarray([0.5]), ft.asarray([1.0])).item(), 4)
0.6931""")  # fmt: skip
BCEWithLogitsLoss = _simple("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                            (("weight", None), ("pos_weight", None)), """
>>> loss = ft.nn.BCEWithLogitsLoss()(ft.asarray([0.0]), ft.asarray([1.0]))
>>> round(loss.item(), 4)
0.6931""")  # fmt: skip
KLDivLoss = _simple("KLDivLoss", F.kl_div, (("log_target", False),), """
>>> p = ft.asarray([0.5, 0.5])
>>> ft.nn.KLDivLoss(reduction="sum")(ft.log(p), p).item()
0.0""")  # fmt: skip
