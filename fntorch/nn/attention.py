"""``MultiheadAttention`` with PyTorch's constructor signature, parameter names and order
(``in_proj_weight`` or ``q/k/v_proj_weight``, ``in_proj_bias``, ``bias_k``, ``bias_v``,
``out_proj.weight``, ``out_proj.bias``), default initialisation and numerics
(``functional_attention``).

>>> import fntorch as ft
>>> mha = ft.nn.MultiheadAttention(8, 2, batch_first=True)
>>> out, w = mha(ft.ones((3, 5, 8)), ft.ones((3, 4, 8)), ft.ones((3, 4, 8)))
>>> out.shape, w.shape, list(mha.state_dict())
((3, 5, 8), (3, 5, 4), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'])
"""

from __future__ import annotations

from ..fx import dtypes as _dt
from ..ops import api as _api
from . import init
from .functional_attention import multi_head_attention_forward
from .layers import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for ``MultiheadAttention.out_proj``'s class: a plain ``Linear``.

    >>> import fntorch as ft
    >>> NonDynamicallyQuantizableLinear(2, 3).weight.shape
    (3, 2)
    """


class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's ``nn.MultiheadAttention``): ``forward(query, key,
    value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights or None)``.
    ``kdim``/``vdim`` other than ``embed_dim`` give separate ``q/k/v_proj_weight``;
    ``add_bias_kv`` appends learned ``bias_k``/``bias_v``; ``add_zero_attn`` a zero key.

    >>> import fntorch as ft
    >>> mha = ft.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True)
    >>> [n for n, _ in mha.named_parameters()][:4]
    ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias']
    >>> mha(ft.ones((2, 1, 4)), ft.ones((6, 1, 3)), ft.ones((6, 1, 5)))[1].shape
    (1, 2, 7)
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads}"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                f"num_heads ({num_heads})"
            )
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        dt = dtype or _dt.float32
        empty = lambda *s: Parameter(_api.zeros(s, dtype=dt))  # noqa: E731
        # registration order is PyTorch's: it fixes named_parameters and state_dict
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)  # fmt: skip
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):  # fmt: skip
        """The attention output and its weights (averaged over heads when
        ``average_attn_weights``; None unless ``need_weights``), as PyTorch's.
        """
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (_api.moveaxis(t, 0, 1) for t in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )  # fmt: skip
        if self.batch_first and batched:
            out = _api.moveaxis(out, 0, 1)
        return out, weights

    def extra_repr(self):
        """``embed_dim`` and ``num_heads``, for ``repr``."""
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
