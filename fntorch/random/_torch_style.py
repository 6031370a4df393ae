"""PyTorch-style randomness: a global key in a cell, split per draw.

``ft.manual_seed(seed)`` sets the key of ``ft.default_generator``; ``ft.rand``,
``randn``, ``randint``, ``randperm``, ``rand_like``, ``randn_like``, ``randint_like``,
``multinomial``, ``bernoulli`` and ``normal`` (PyTorch's signatures and overloads) each
split that key (or a ``generator=``'s), store one half back with ``cell.set_`` and draw
from the other with the pure samplers of ``ft.random``. The key lives in a
``fntorch.fx.cell.Cell`` so that ``jit`` can lift it as an implicit input and output.
The numbers differ from PyTorch's (threefry, not Mersenne Twister); the distributions
and the reproducibility (same seed, same draws) are the same.

``requires_grad=True`` gives a new leaf cell holding the draw, as ``x.requires_grad_()``
does (fntorch's values are immutable; see docs/pytorch.md).

>>> import fntorch as ft
>>> _ = ft.manual_seed(0); a = ft.rand(3)
>>> _ = ft.manual_seed(0); (ft.rand(3) == a).all().item()
True
"""

from __future__ import annotations

import operator
import secrets

import numpy as np

from ..fx import dtypes as _dt
from ..fx.cell import Cell
from ..fx.core import Tensor
from ..ops import api as _api
from . import _distributions as _d
from ._keys import key as _key
from ._keys import split as _split

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm", "rand_like",
    "randn_like", "randint_like", "multinomial", "bernoulli", "normal",
]  # fmt: skip

_DEFAULT_SEED = 67280421310721  # PyTorch's default_generator's initial seed


class Generator:
    """PyTorch's ``torch.Generator``: a key in a cell, split by each draw that takes it.

    >>> import fntorch as ft
    >>> g = ft.Generator().manual_seed(7)
    >>> a = ft.rand(2, generator=g); _ = g.manual_seed(7)
    >>> (ft.rand(2, generator=g) == a).all().item(), g.initial_seed()
    (True, 7)
    """

    def __init__(self, device="cpu", *, _name: str = "generator key"):
        self._device_spec = device
        self._seed = _DEFAULT_SEED
        self._name = _name
        self._key_cell: Cell | None = None  # made on first use: devices register after us

    @property
    def device(self):
        """The generator's device (its draws land on the default device unless given).

        >>> import fntorch as ft
        >>> ft.Generator().device
        device(type='cpu')
        """
        from ..fx.device import device as _device

        return _device(self._device_spec)

    @property
    def _cell(self) -> Cell:
        if self._key_cell is None:
            self._key_cell = Cell(_key(self._seed), name=self._name)
        return self._key_cell

    def manual_seed(self, seed) -> Generator:
        """Resets the key from ``seed`` (an int; PyTorch's range); returns the generator.

        >>> import fntorch as ft
        >>> ft.Generator().manual_seed(3).initial_seed()
        3
        """
        s = operator.index(seed)
        self._cell.set_(_key(s))
        self._seed = s
        return self

    def initial_seed(self) -> int:
        """The seed last set (by ``manual_seed`` or ``seed``).

        >>> import fntorch as ft
        >>> ft.Generator().manual_seed(5).initial_seed()
        5
        """
        return self._seed

    def seed(self) -> int:
        """Seeds the generator from the operating system's entropy; returns the seed.

        >>> import fntorch as ft
        >>> g = ft.Generator(); s = g.seed(); s == g.initial_seed()
        True
        """
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def get_state(self) -> Tensor:
        """The state, a uint8 tensor (the seed's and the key's bytes) for ``set_state``.

        >>> import fntorch as ft
        >>> g = ft.Generator(); st = g.get_state(); a = ft.rand(2, generator=g)
        >>> (ft.rand(2, generator=g.set_state(st)) == a).all().item()
        True
        """
        seed = np.array([self._seed & (2**64 - 1)], np.uint64).view(np.uint8)
        k = np.asarray(self._cell.data).astype(np.uint32).view(np.uint8)
        return _api.asarray(np.concatenate([seed, k]))

    def set_state(self, new_state) -> Generator:
        """Restores a state from ``get_state``; returns the generator.

        >>> import fntorch as ft
        >>> g = ft.Generator().manual_seed(1); st = g.get_state()
        >>> g.manual_seed(2).set_state(st).initial_seed()
        1
        """
        b = np.ascontiguousarray(np.asarray(new_state), dtype=np.uint8)
        if b.shape != (16,):
            raise ValueError(
                f"Generator.set_state: expected the 16-byte uint8 tensor of get_state(), "
                f"got shape {b.shape}"
            )
        self._cell.set_(_api.asarray(b[8:].view(np.uint32)))
        self._seed = int(b[:8].view(np.uint64)[0])
        return self

    def _next_key(self) -> Tensor:
        """One fresh key for a draw; the cell keeps the other half of the split."""
        keep, draw = _split(self._cell)
        self._cell.set_(keep)
        return draw

    def __repr__(self):
        return f"<fntorch.Generator object, device={self.device.type!r}>"


default_generator = Generator(_name="global random key")


def draw_key(generator: Generator | None = None, device=None) -> Tensor:
    """A key for one draw from ``generator`` (the global one when None): the shim's
    randomness (``nn.init``, dropout) takes its keys here. With ``device`` the key is
    moved there, so the draw runs beside the tensor it is for (dropout on a GPU draws
    its mask on the GPU: the bits are the same on every device).

    >>> import fntorch as ft
    >>> from fntorch.random._torch_style import draw_key
    >>> draw_key().shape, draw_key(device=ft.device("cpu")).device.type
    ((2,), 'cpu')
    """
    if generator is None:
        key = default_generator._next_key()
    elif not isinstance(generator, Generator):
        raise TypeError(f"generator must be an ft.Generator, got {type(generator).__name__}")
    else:
        key = generator._next_key()
    return key if device is None or key.device is device else key.to(device)


def manual_seed(seed) -> Generator:
    """Seeds the global key (``ft.default_generator``); returns that generator.

    >>> import fntorch as ft
    >>> ft.manual_seed(42).initial_seed()
    42
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the global key from the operating system's entropy; returns the seed.

    >>> import fntorch as ft
    >>> ft.seed() == ft.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The global key's seed (PyTorch's default, 67280421310721, until one is set).

    >>> import fntorch as ft
    >>> _ = ft.manual_seed(3); ft.initial_seed()
    3
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The global generator's state (``ft.default_generator.get_state()``).

    >>> import fntorch as ft
    >>> st = ft.get_rng_state(); a = ft.randn(2); ft.set_rng_state(st)
    >>> (ft.randn(2) == a).all().item()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the global generator's state from ``ft.get_rng_state()``.

    >>> import fntorch as ft
    >>> ft.set_rng_state(ft.get_rng_state())
    """
    default_generator.set_state(new_state)


# ---------------------------------------------------------------------------- helpers


def _size(size, where: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(ft.Size(...))`` alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        return tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(
            f"{where}: size must be ints or one sequence of ints, got {size!r}"
        ) from None


def _float(dtype, where: str):
    d = _dt.float32 if dtype is None else _dt.canonicalize(dtype, where=where)
    if not _dt.is_float(d):
        raise TypeError(f"{where}: dtype must be a float dtype, got {d}")
    return d


def _place(x: Tensor, device, requires_grad: bool = False) -> Tensor:
    x = x if device is None else _api.asarray(x, device=device)
    # a leaf cell (Tensor.requires_grad_, attached by nn): the draw itself is a value
    return x.requires_grad_() if requires_grad else x


# ------------------------------------------------------------------------------ draws


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform floats in ``[0, 1)`` of shape ``size`` (float32 unless ``dtype``).

    >>> import fntorch as ft
    >>> x = ft.rand(2, 3); x.shape, bool(((0 <= x) & (x < 1)).all())
    ((2, 3), True)
    """
    shape = _size(size, "rand")
    x = _d.uniform(draw_key(generator), shape, _float(dtype, "rand"))
    return _place(x, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal floats of shape ``size`` (float32 unless ``dtype``).

    >>> import fntorch as ft
    >>> ft.randn(2, 3, dtype=ft.float64).dtype
    dtype('float64')
    """
    shape = _size(size, "randn")
    x = _d.normal(draw_key(generator), shape, _float(dtype, "randn"))
    return _place(x, device, requires_grad)


def randint(*args, size=None, low=None, high=None, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:  # fmt: skip
    """Integers in ``[low, high)``: PyTorch's ``randint(high, size)`` and
    ``randint(low, high, size)`` (int64 unless ``dtype``).

    >>> import fntorch as ft
    >>> x = ft.randint(3, 7, (100,)); x.dtype, bool(((3 <= x) & (x < 7)).all())
    (dtype('int64'), True)
    """
    pos = list(args)
    if size is None:
        if not pos:
            raise TypeError("randint: missing the size argument, e.g. randint(10, (3,))")
        size = pos.pop()
    if high is None:
        if not pos:
            raise TypeError("randint: missing the high argument, e.g. randint(10, (3,))")
        high = pos.pop()
    if low is None:
        low = pos.pop() if pos else 0
    if pos:
        raise TypeError(f"randint: too many arguments {args!r}; expected (low, high, size)")
    d = _dt.int64 if dtype is None else _dt.canonicalize(dtype, where="randint")
    shape = _size((size,), "randint")
    if _dt.is_integer(d):
        return _place(_d.randint(draw_key(generator), shape, low, high, dtype=d), device)
    out = _d.randint(draw_key(generator), shape, low, high)  # PyTorch allows float dtypes
    return _place(_api.astype(out, d), device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``).

    >>> import fntorch as ft
    >>> sorted(ft.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    n = operator.index(n)
    out = _d.permutation(draw_key(generator), _api.arange(n, dtype=_dt.int64))
    if dtype is not None:
        out = _api.astype(out, _dt.canonicalize(dtype, where="randperm"))
    return _place(out, device)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """``ft.rand(input.shape)`` with ``input``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> ft.rand_like(ft.zeros((2, 2), dtype=ft.float64)).dtype
    dtype('float64')
    """
    d = _float(dtype or input.dtype, "rand_like")
    return rand(input.shape, generator=generator, dtype=d, device=device or input.device,
                requires_grad=requires_grad)  # fmt: skip


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """``ft.randn(input.shape)`` with ``input``'s dtype and device (unless given).

    >>> import fntorch as ft
    >>> ft.randn_like(ft.zeros((2, 3))).shape
    (2, 3)
    """
    d = _float(dtype or input.dtype, "randn_like")
    return randn(input.shape, generator=generator, dtype=d, device=device or input.device,
                 requires_grad=requires_grad)  # fmt: skip


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad=False) -> Tensor:  # fmt: skip
    """``ft.randint(low, high, input.shape)`` with ``input``'s dtype and device;
    ``randint_like(input, high)`` draws from ``[0, high)``.

    >>> import fntorch as ft
    >>> x = ft.randint_like(ft.zeros(50, dtype=ft.int32), 4); x.dtype, int(x.max()) < 4
    (dtype('int32'), True)
    """
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device)  # fmt: skip


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:  # noqa: A002
    """Indices drawn with probability proportional to the weights ``input`` (a vector, or
    one row per draw set): ``num_samples`` of them, distinct unless ``replacement``
    (Gumbel-top-k; with replacement, Gumbel-max per sample). int64.

    >>> import fntorch as ft
    >>> ft.multinomial(ft.asarray([0.0, 1.0, 0.0]), 1).tolist()
    [1]
    """
    w = input if isinstance(input, Tensor) else _api.asarray(input)
    if w.ndim not in (1, 2):
        raise ValueError(f"multinomial: input must be 1-d or 2-d, got shape {w.shape}")
    n, k = w.shape[-1], operator.index(num_samples)
    if k <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    if not replacement and k > n:
        raise RuntimeError(
            f"multinomial: cannot take num_samples={k} > {n} categories without replacement"
        )
    logits = _api.log(w if _dt.is_float(w.dtype) else _api.astype(w, _dt.float32))
    key = draw_key(generator)
    if replacement:
        g = _d.gumbel(key, (*w.shape[:-1], k, n), logits.dtype)
        return _api.argmax(_api.expand_dims(logits, axis=-2) + g, axis=-1)
    g = _d.gumbel(key, w.shape, logits.dtype)
    return _api.astype(_api.top_k(logits + g, k)[1], _dt.int64)


def bernoulli(input, p=None, *, generator=None) -> Tensor:  # noqa: A002
    """0s and 1s of ``input``'s shape and dtype, 1 with probability ``input`` (or ``p``).

    >>> import fntorch as ft
    >>> ft.bernoulli(ft.asarray([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    prob = input if p is None else p
    out = _d.bernoulli(draw_key(generator), prob, shape=tuple(input.shape))
    return _api.astype(out, input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False) -> Tensor:  # fmt: skip
    """PyTorch's ``normal`` overloads: ``normal(mean, std)`` with tensors (elementwise,
    broadcast), or ``normal(mean, std, size)`` with numbers.

    >>> import fntorch as ft
    >>> ft.normal(ft.zeros(3), 1.0).shape, ft.normal(2.0, 0.5, (2, 2)).shape
    ((3,), (2, 2))
    """
    tensors = [a for a in (mean, std) if isinstance(a, Tensor)]
    if size is not None:
        shape = _size((size,), "normal")
    elif tensors:
        shape = tuple(np.broadcast_shapes(*(t.shape for t in tensors)))
    else:
        raise TypeError("normal: give size= when mean and std are numbers, e.g. normal(0, 1, (3,))")
    floats = [t.dtype for t in tensors if _dt.is_float(t.dtype)]
    if dtype is None and floats:
        dtype = _dt.result_type(*floats)
    d = _float(dtype, "normal")
    z = _d.normal(draw_key(generator), shape, d)
    return _place(_api.astype(z * std + mean, d), device, requires_grad)
