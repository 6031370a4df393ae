"""Transformer layers with PyTorch's constructor signatures, submodule names and order,
default initialisation and numerics: ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, ``TransformerEncoder``, ``TransformerDecoder`` and
``Transformer``. Stacks hold copies of one layer (the same initial weights), as PyTorch's
``deepcopy`` gives.

>>> import fntorch as ft
>>> layer = ft.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
>>> enc = ft.nn.TransformerEncoder(layer, num_layers=2)
>>> enc.eval()(ft.ones((3, 5, 8))).shape
(3, 5, 8)
"""

from __future__ import annotations

import copy

from ..fx.cell import Cell
from ..ops import api as _api
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .parameter import Buffer, Parameter

__all__ = [
    "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerDecoder", "Transformer",
]  # fmt: skip

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation, where):
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"{where}: activation should be 'relu' or 'gelu' (or a callable), got "
                f"{activation!r}"
            )
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(
            f"{where}: activation should be 'relu', 'gelu' or a callable, got "
            f"{type(activation).__name__}"
        )
    return activation


def _copy(module: Module) -> Module:
    """A deep copy with new cells holding the same values (a cell is not deep-copyable:
    its value is read-only)."""
    memo = {}
    for m in module.modules():
        for table in (m._parameters, m._buffers):
            for v in table.values():
                if isinstance(v, Parameter) and id(v) not in memo:
                    memo[id(v)] = Parameter(v._read(), requires_grad=v.requires_grad)
                elif isinstance(v, Buffer) and id(v) not in memo:
                    memo[id(v)] = Buffer(v._read())
                elif isinstance(v, Cell) and id(v) not in memo:
                    memo[id(v)] = Cell(v._read())
    return copy.deepcopy(module, memo)


def _get_clones(module, n):
    return ModuleList([_copy(module) for _ in range(n)])


def _causal_mask(size, dtype):
    return _api.where(_api.triu(_api.ones((size, size), dtype="bool"), k=1), -_api.inf, 0.0
                      ).astype(dtype)  # fmt: skip


class _Layer(Module):
    """What the encoder and decoder layers share: the feed-forward block and activation."""

    def _init_ff(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                 batch_first, norm_first, bias, dtype, n_norms):  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                dtype=dtype))  # fmt: skip
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        # a Module activation is a submodule (PyTorch's), a function an attribute
        self.activation = _activation(activation, type(self).__name__)
        self.batch_first = batch_first

    def _ff_block(self, x, dropout):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return dropout(x)

    def _attend(self, attn, q, kv, mask, key_padding_mask, is_causal, dropout):
        x = attn(q, kv, kv, attn_mask=mask, key_padding_mask=key_padding_mask,
                 need_weights=False, is_causal=is_causal)[0]  # fmt: skip
        return dropout(x)


class TransformerEncoderLayer(_Layer):
    """Self-attention then feed-forward, each with a residual and a LayerNorm (after,
    or before with ``norm_first``), as PyTorch's ``nn.TransformerEncoderLayer``.

    >>> import fntorch as ft
    >>> layer = ft.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, activation="gelu")
    >>> [n for n, _ in layer.named_children()][:3], layer(ft.ones((5, 2, 4))).shape
    (['self_attn', 'linear1', 'dropout'], (5, 2, 4))
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)  # fmt: skip
        self._init_ff(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias, dtype, 2)  # fmt: skip

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """Self-attention over ``src`` then the feed-forward block, each with a residual
        and a LayerNorm (before the block when ``norm_first``, after it otherwise).
        """

        def sa(x):
            return self._attend(self.self_attn, x, x, src_mask, src_key_padding_mask,
                                is_causal, self.dropout1)  # fmt: skip

        x = src
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + sa(x))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over ``memory``, then feed-forward, each with a residual
    and a LayerNorm, as PyTorch's ``nn.TransformerDecoderLayer``.

    >>> import fntorch as ft
    >>> layer = ft.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, norm_first=True)
    >>> layer(ft.ones((3, 2, 4)), ft.ones((5, 2, 4))).shape
    (3, 2, 4)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = dict(dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **kw)
        self._init_ff(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias, dtype, 3)  # fmt: skip

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=False, memory_is_causal=False):  # fmt: skip
        """Self-attention over ``tgt``, attention over ``memory``, then the feed-forward
        block, each with a residual and a LayerNorm.
        """

        def sa(x):
            return self._attend(self.self_attn, x, x, tgt_mask, tgt_key_padding_mask,
                                tgt_is_causal, self.dropout1)  # fmt: skip

        def mha(x):
            return self._attend(self.multihead_attn, x, memory, memory_mask,
                                memory_key_padding_mask, memory_is_causal,
                                self.dropout2)  # fmt: skip

        x = tgt
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + mha(self.norm2(x))
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + sa(x))
            x = self.norm2(x + mha(x))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` run in order, then ``norm`` if given.
    ``enable_nested_tensor`` and ``mask_check`` are accepted (PyTorch's fast-path
    switches; there is no fast path here).

    >>> import fntorch as ft
    >>> enc = ft.nn.TransformerEncoder(ft.nn.TransformerEncoderLayer(4, 1, 8), 3)
    >>> len(enc.layers), enc(ft.ones((2, 1, 4))).shape
    (3, (2, 1, 4))
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):  # fmt: skip
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(
                f"TransformerEncoder: encoder_layer must be a Module, got "
                f"{type(encoder_layer).__name__}"
            )
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        if norm is None:
            self.register_module("norm", None)
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """``src`` through each layer in order (with ``mask`` and the padding mask),
        then ``norm`` if given.
        """
        x = src
        for mod in self.layers:
            x = mod(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                    is_causal=bool(is_causal))  # fmt: skip
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` run in order over ``memory``, then
    ``norm`` if given.

    >>> import fntorch as ft
    >>> dec = ft.nn.TransformerDecoder(ft.nn.TransformerDecoderLayer(4, 1, 8), 2)
    >>> dec(ft.ones((3, 1, 4)), ft.ones((2, 1, 4))).shape
    (3, 1, 4)
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(
                f"TransformerDecoder: decoder_layer must be a Module, got "
                f"{type(decoder_layer).__name__}"
            )
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        if norm is None:
            self.register_module("norm", None)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=None, memory_is_causal=False):  # fmt: skip
        """``tgt`` through each layer in order, attending to ``memory``, then ``norm``
        if given.
        """
        x = tgt
        for mod in self.layers:
            x = mod(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                    tgt_key_padding_mask=tgt_key_padding_mask,
                    memory_key_padding_mask=memory_key_padding_mask,
                    tgt_is_causal=bool(tgt_is_causal),
                    memory_is_causal=memory_is_causal)  # fmt: skip
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """PyTorch's ``nn.Transformer``: an encoder and a decoder stack, each ending in a
    LayerNorm, every parameter of more than one dim re-drawn from Xavier uniform.

    >>> import fntorch as ft
    >>> t = ft.nn.Transformer(8, 2, 1, 1, dim_feedforward=16, batch_first=True)
    >>> mask = ft.nn.Transformer.generate_square_subsequent_mask(3)
    >>> t(ft.ones((2, 4, 8)), ft.ones((2, 3, 8)), tgt_mask=mask).shape
    (2, 3, 8)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                  layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                  norm_first=norm_first, bias=bias, dtype=dtype)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):  # fmt: skip
        """Encodes ``src`` into memory and decodes ``tgt`` against it; the decoder's
        output, shaped as ``tgt``.
        """
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise ValueError(
                f"Transformer.forward: the batch size of src ({src.shape[batch_dim]}) and "
                f"tgt ({tgt.shape[batch_dim]}) must be equal"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(
                f"Transformer.forward: the feature size of src ({src.shape[-1]}) and tgt "
                f"({tgt.shape[-1]}) must be d_model={self.d_model}"
            )
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)  # fmt: skip
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float ``(sz, sz)`` mask: ``-inf`` above the diagonal, 0 elsewhere.

        >>> import fntorch as ft
        >>> ft.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        return _causal_mask(sz, dtype or "float32")
