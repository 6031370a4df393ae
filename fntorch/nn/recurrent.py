"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells, with PyTorch's
constructor signatures, parameter names and order (``weight_ih_l0``,
``weight_hh_l0_reverse``, ``bias_ih_l1``, ``weight_hr_l0``), default initialisation
(U(-1/sqrt(hidden), 1/sqrt(hidden)) from the global key) and numerics.

The recurrence over time is an ``ft.scan``: one staged step, so ``jit`` compiles it once
and ``grad``, ``vmap`` and the tape go through it. The input projection of every time
step is one matmul done before the scan; only ``h @ W_hh^T`` is inside it.

>>> import fntorch as ft
>>> lstm = ft.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
>>> out, (h, c) = lstm(ft.ones((2, 5, 3)))
>>> out.shape, h.shape, c.shape
((2, 5, 8), (4, 2, 4), (4, 2, 4))
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..fx.core import Tensor
from ..ops import api as _api
from ..ops import control_flow as _cf
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x, w, b):
    y = _api.matmul(x, _api.matrix_transpose(w))
    return y if b is None else y + b


# One time step per mode: ``xw`` is the input's projection (bias_ih included), ``state``
# the carry (h, or (h, c) for LSTM); each returns the new carry.


def _rnn_step(act, xw, state, w_hh, b_hh, w_hr=None):
    return act(xw + _linear(state, w_hh, b_hh))


def _lstm_step(xw, state, w_hh, b_hh, w_hr=None):
    h, c = state
    gates = xw + _linear(h, w_hh, b_hh)
    n = c.shape[-1]
    i, f = _api.sigmoid(gates[..., :n]), _api.sigmoid(gates[..., n : 2 * n])
    g, o = _api.tanh(gates[..., 2 * n : 3 * n]), _api.sigmoid(gates[..., 3 * n :])
    c = f * c + i * g
    h = o * _api.tanh(c)
    return (h if w_hr is None else _linear(h, w_hr, None)), c


def _gru_step(xw, h, w_hh, b_hh, w_hr=None):
    gh = _linear(h, w_hh, b_hh)
    n = h.shape[-1]
    r = _api.sigmoid(xw[..., :n] + gh[..., :n])
    z = _api.sigmoid(xw[..., n : 2 * n] + gh[..., n : 2 * n])
    cand = _api.tanh(xw[..., 2 * n :] + r * gh[..., 2 * n :])
    return (1 - z) * cand + z * h


def _relu_step(*args):
    return _rnn_step(_api.relu, *args)


def _tanh_step(*args):
    return _rnn_step(_api.tanh, *args)


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _hidden(state):
    return state[0] if isinstance(state, tuple) else state


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence shared by RNN, LSTM and GRU
    (PyTorch's ``nn.RNNBase``); ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or
    ``"GRU"``.

    >>> import fntorch as ft
    >>> m = ft.nn.RNNBase("GRU", 2, 3, bias=False)
    >>> list(m.state_dict())
    ['weight_ih_l0', 'weight_hh_l0']
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError(f"{name}: unknown mode {mode!r}; expected one of {sorted(_GATES)}")
        for arg, v in (("input_size", input_size), ("hidden_size", hidden_size),
                       ("num_layers", num_layers)):  # fmt: skip
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{name}: {arg} must be a positive int, got {v!r}")
        if isinstance(dropout, bool) or not 0 <= float(dropout) <= 1:
            raise ValueError(f"{name}: dropout must be a number in [0, 1], got {dropout!r}")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"{name}: proj_size must be a non-negative int, got {proj_size!r}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size is supported only by LSTM, got {proj_size}")
        if proj_size >= hidden_size:
            raise ValueError(
                f"{name}: proj_size ({proj_size}) must be smaller than hidden_size ({hidden_size})"
            )
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size or hidden_size
        gate = _GATES[mode] * hidden_size
        dt = dtype or _dt.float32
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                in_size = input_size if layer == 0 else real_hidden * dirs
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, in_size)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for pname, shape in shapes:
                    setattr(self, pname + sfx, Parameter(_api.zeros(shape, dtype=dt)))
                    self._flat_weights_names.append(pname + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)),
        as PyTorch.
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def flatten_parameters(self):
        """PyTorch's cuDNN weight compaction: nothing to do here."""

    @property
    def all_weights(self):
        """Per layer and direction, its parameters in PyTorch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i : i + per]] for i in range(0, len(names), per)]

    def _weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + sfx, None)  # noqa: E731
        return get("weight_ih"), get("bias_ih"), get("weight_hh"), get("bias_hh"), get("weight_hr")

    def _check_input(self, input):  # noqa: A002
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}.forward: input must be a tensor (PackedSequence is not supported), "
                f"got {type(input).__name__}"
            )
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{name}.forward: expected input to be 2-d (unbatched) or 3-d, got shape "
                f"{input.shape}"
            )
        if input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}.forward: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def _initial(self, hx, batch, unbatched, dtype, device=None):
        """The initial states, each ``(layers * dirs, N, size)``: given, or zeros."""
        name = type(self).__name__
        n = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [self.proj_size or self.hidden_size]
        if self.mode == "LSTM":
            sizes.append(self.hidden_size)
            if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
                raise TypeError(f"{name}.forward: hx must be a tuple (h_0, c_0) for LSTM")
        elif hx is not None and not isinstance(hx, Tensor):
            raise TypeError(f"{name}.forward: hx must be a tensor, got {type(hx).__name__}")
        given = (list(hx) if self.mode == "LSTM" else [hx]) if hx is not None else None
        out = []
        for i, size in enumerate(sizes):
            want = (n, size) if unbatched else (n, batch, size)
            if given is None:
                out.append(_api.zeros((n, batch, size), dtype=dtype, device=device))
                continue
            h = given[i]
            if tuple(h.shape) != want:
                which = ("h_0", "c_0")[i] if self.mode == "LSTM" else "hx"
                raise ValueError(f"{name}.forward: expected {which} of shape {want}, got {h.shape}")
            out.append(h[:, None] if unbatched else h)
        return out

    def forward(self, input, hx=None):  # noqa: A002
        """Runs every layer (and direction) over the sequence: ``(output, h_n)``, or
        ``(output, (h_n, c_n))`` for an LSTM; ``hx`` is the initial state (zeros when None).
        """
        self._check_input(input)
        unbatched = input.ndim == 2
        x = input[:, None] if unbatched else input
        if self.batch_first and not unbatched:
            x = _api.moveaxis(x, 0, 1)
        states = self._initial(hx, x.shape[1], unbatched, x.dtype, x.device)
        step = _STEPS[self.mode]
        dirs = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, b_ih, w_hh, b_hh, w_hr = self._weights(layer, d)
                k = layer * dirs + d
                init_state = tuple(s[k] for s in states)
                init_state = init_state if self.mode == "LSTM" else init_state[0]
                xw = _linear(x, w_ih, b_ih)  # every time step's input projection at once

                def body(state, xw_t, w_hh=w_hh, b_hh=b_hh, w_hr=w_hr):
                    new = step(xw_t, state, w_hh, b_hh, w_hr)
                    return new, _hidden(new)

                last, ys = _cf.scan(body, init_state, xw, reverse=bool(d))
                outs.append(ys)
                for acc, s in zip(finals, last if isinstance(last, tuple) else (last,)):
                    acc.append(s)
            x = outs[0] if dirs == 1 else _api.concat(outs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        final = [_api.stack(acc, axis=0) for acc in finals]
        if unbatched:
            x, final = x[:, 0], [f[:, 0] for f in final]
        elif self.batch_first:
            x = _api.moveaxis(x, 0, 1)
        return x, (tuple(final) if self.mode == "LSTM" else final[0])

    def extra_repr(self):
        """The sizes and the settings that differ from the defaults, for ``repr``."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """Elman RNN ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)`` with ``nonlinearity``
    ``"tanh"`` or ``"relu"``; returns ``(output, h_n)`` as PyTorch.

    >>> import fntorch as ft
    >>> out, h = ft.nn.RNN(3, 4, 2, nonlinearity="relu")(ft.ones((5, 2, 3)))
    >>> out.shape, h.shape
    ((5, 2, 4), (2, 2, 4))
    """

    def __init__(self, *args, **kwargs):
        args = list(args)
        # PyTorch's RNN takes nonlinearity as its 4th positional argument
        nonlinearity = args.pop(3) if len(args) > 3 else kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o as PyTorch; ``proj_size`` for a
    projected hidden state); returns ``(output, (h_n, c_n))``.

    >>> import fntorch as ft
    >>> out, (h, c) = ft.nn.LSTM(3, 4, proj_size=2)(ft.ones((5, 3)))
    >>> out.shape, h.shape, c.shape
    ((5, 2), (1, 2), (1, 4))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n as PyTorch); returns ``(output, h_n)``.

    >>> import fntorch as ft
    >>> out, h = ft.nn.GRU(3, 4, batch_first=True)(ft.ones((2, 5, 3)))
    >>> out.shape, h.shape
    ((2, 5, 4), (1, 2, 4))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


# ------------------------------------------------------------------------------ cells


class RNNCellBase(Module):
    """One time step of a recurrence: ``weight_ih``, ``weight_hh``, ``bias_ih``,
    ``bias_hh`` (PyTorch's ``nn.RNNCellBase``).

    >>> import fntorch as ft
    >>> list(ft.nn.GRUCell(2, 3).state_dict())
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    """

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=1, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        dt = dtype or _dt.float32
        gate = num_chunks * hidden_size
        self.weight_ih = Parameter(_api.zeros((gate, input_size), dtype=dt))
        self.weight_hh = Parameter(_api.zeros((gate, hidden_size), dtype=dt))
        if bias:
            self.bias_ih = Parameter(_api.zeros((gate,), dtype=dt))
            self.bias_hh = Parameter(_api.zeros((gate,), dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def forward(self, input, hx=None):  # noqa: A002
        """One time step: the new hidden state, or ``(h, c)`` for an LSTM cell, from
        ``input`` and ``hx`` (zeros when None).
        """
        name = type(self).__name__
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}.forward: expected input of shape (N, {self.input_size}) or "
                f"({self.input_size},), got {input.shape}"
            )
        unbatched = input.ndim == 1
        x = input[None] if unbatched else input
        zeros = _api.zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
        if hx is None:
            state = (zeros, zeros) if self._mode == "LSTM" else zeros
        else:
            state = tuple(hx) if self._mode == "LSTM" else hx
            if unbatched:
                state = tuple(s[None] for s in state) if self._mode == "LSTM" else state[None]
        xw = _linear(x, self.weight_ih, self.bias_ih)
        new = _STEPS[self._mode](xw, state, self.weight_hh, self.bias_hh)
        if unbatched:
            new = tuple(s[0] for s in new) if self._mode == "LSTM" else new[0]
        return new

    def extra_repr(self):
        """The sizes, and ``bias=False`` when there is none, for ``repr``."""
        s = f"{self.input_size}, {self.hidden_size}"
        return s if self.bias else s + ", bias=False"


class RNNCell(RNNCellBase):
    """One Elman step; returns ``h'``.

    >>> import fntorch as ft
    >>> ft.nn.RNNCell(3, 4, nonlinearity="relu")(ft.ones((2, 3))).shape
    (2, 4)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}"
            )
        super().__init__(input_size, hidden_size, bias, 1, dtype=dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``.

    >>> import fntorch as ft
    >>> [t.shape for t in ft.nn.LSTMCell(3, 4)(ft.ones((2, 3)))]
    [(2, 4), (2, 4)]
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype=dtype)


class GRUCell(RNNCellBase):
    """One GRU step; returns ``h'``.

    >>> import fntorch as ft
    >>> ft.nn.GRUCell(3, 4)(ft.ones(3)).shape
    (4,)
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype=dtype)
