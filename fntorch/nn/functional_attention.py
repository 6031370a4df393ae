"""``multi_head_attention_forward``: PyTorch's functional multi-head attention on fntorch
tensors, with its argument order, mask conventions and returned weights.

Masks follow ``nn.MultiheadAttention``, not ``scaled_dot_product_attention``: a bool
``attn_mask`` or ``key_padding_mask`` is True where attention is NOT allowed; a float one
is added to the scores. Both become one additive float mask, as in PyTorch.

>>> import fntorch as ft
>>> E, H = 4, 2
>>> x = ft.ones((3, 1, E))  # (L, N, E)
>>> out, w = ft.nn.functional.multi_head_attention_forward(
...     x, x, x, E, H, ft.ones((3 * E, E)), None, None, None, False, 0.0,
...     ft.eye(E), None)
>>> out.shape, w.shape, w.sum(-1).tolist()
((3, 1, 4), (1, 3, 3), [[1.0, 1.0, 1.0]])
"""

from __future__ import annotations

import math

from ..fx import dtypes as _dt
from ..ops import api as _api

__all__ = ["multi_head_attention_forward"]

_WHERE = "multi_head_attention_forward"


def _additive(mask, dtype, arg):
    """A bool mask (True: masked out) as ``-inf``/``0``; a float one as it is."""
    if mask is None:
        return None
    if mask.dtype == _dt.bool_:
        return _api.where(mask, -_api.inf, 0.0).astype(dtype)
    if not _dt.is_float(mask.dtype):
        raise TypeError(f"{_WHERE}: {arg} must be a bool or float tensor, got {mask.dtype}")
    return mask.astype(dtype)


def _pad_last(mask):
    """One more key (a bias_k or zero-attention key), never masked."""
    if mask is None:
        return None
    return _api.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])


def _linear(x, w, b):
    y = _api.matmul(x, _api.matrix_transpose(w))
    return y if b is None else y + b


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched (3-d) or not (2-d), as PyTorch's shape check."""
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ValueError(
            f"{_WHERE}: query, key and value must all be 2-d (unbatched) or 3-d, got "
            f"{query.shape}, {key.shape} and {value.shape}"
        )
    batched = query.ndim == 3
    if key_padding_mask is not None and key_padding_mask.ndim != (2 if batched else 1):
        raise ValueError(
            f"{_WHERE}: key_padding_mask must be {'2' if batched else '1'}-d for "
            f"{query.ndim}-d query, got shape {key_padding_mask.shape}"
        )
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise ValueError(f"{_WHERE}: attn_mask must be 2-d or 3-d, got shape {attn_mask.shape}")
    if not batched and attn_mask is not None and attn_mask.ndim == 3:
        if attn_mask.shape[0] != num_heads:
            raise ValueError(
                f"{_WHERE}: a 3-d attn_mask of unbatched input must be (num_heads, L, S) "
                f"with num_heads={num_heads}, got shape {attn_mask.shape}"
            )
    return batched


def multi_head_attention_forward(
    query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
    bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
    training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
    use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
    v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
    is_causal=False,
):  # fmt: skip
    """Multi-head attention of ``(L, N, E)`` queries over ``(S, N, kdim)`` keys and
    ``(S, N, vdim)`` values (or unbatched ``(L, E)``), PyTorch's ``F.multi_head_attention_
    forward``: returns ``(output (L, N, E), weights)``, the weights ``(N, L, S)`` averaged
    over heads (``(N, H, L, S)`` unless ``average_attn_weights``) or None unless
    ``need_weights``. ``is_causal`` without ``attn_mask`` masks the future (PyTorch asks
    for the mask too). Dropout on the weights draws from the global key when training.

    >>> import fntorch as ft
    >>> x = ft.ones((2, 4))
    >>> out, w = ft.nn.functional.multi_head_attention_forward(
    ...     x, x, x, 4, 1, ft.ones((12, 4)), ft.zeros(12), None, None, False, 0.0,
    ...     ft.eye(4), ft.zeros(4), need_weights=False)
    >>> out.tolist(), w
    ([[4.0, 4.0, 4.0, 4.0], [4.0, 4.0, 4.0, 4.0]], None)
    """
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query[:, None], key[:, None], value[:, None]
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask[None]
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise ValueError(
            f"{_WHERE}: expected query's last dim to be embed_dim_to_check="
            f"{embed_dim_to_check}, got {embed_dim}"
        )
    if embed_dim % num_heads:
        raise ValueError(
            f"{_WHERE}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
        )
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"{_WHERE}: key {key.shape} and value {value.shape} must agree on (S, N)")
    head_dim = embed_dim // num_heads
    dtype = query.dtype
    key_padding_mask = _additive(key_padding_mask, dtype, "key_padding_mask")
    attn_mask = _additive(attn_mask, dtype, "attn_mask")
    if is_causal and attn_mask is None:
        causal = _api.triu(_api.ones((tgt_len, src_len), dtype=_dt.bool_, device=query.device), k=1)
        attn_mask = _additive(causal, dtype, "attn_mask")

    # the input projections
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError(
                f"{_WHERE}: use_separate_proj_weight=True needs q_proj_weight, "
                "k_proj_weight and v_proj_weight"
            )
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if in_proj_weight is None:
            raise ValueError(f"{_WHERE}: in_proj_weight is None (use_separate_proj_weight=False)")
        ws = tuple(in_proj_weight[i * embed_dim : (i + 1) * embed_dim] for i in range(3))
    bs = (None,) * 3
    if in_proj_bias is not None:
        bs = tuple(in_proj_bias[i * embed_dim : (i + 1) * embed_dim] for i in range(3))
    q = _linear(query, ws[0], bs[0])
    k = _linear(key, ws[1], bs[1])
    v = _linear(value, ws[2], bs[2])

    if attn_mask is not None:
        want = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise ValueError(f"{_WHERE}: attn_mask should have shape {want}, got {attn_mask.shape}")
        if attn_mask.ndim == 2:
            attn_mask = attn_mask[None]
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise ValueError(f"{_WHERE}: bias_k/bias_v cannot be used with static_k/static_v")
        k = _api.concat([k, _api.broadcast_to(bias_k, (1, bsz, embed_dim))], axis=0)
        v = _api.concat([v, _api.broadcast_to(bias_v, (1, bsz, embed_dim))], axis=0)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise ValueError(f"{_WHERE}: bias_k and bias_v must be given together")

    # (len, N, E) -> (N * H, len, head_dim), PyTorch's head-major batch
    def heads(t):
        return _api.moveaxis(_api.reshape(t, (t.shape[0], bsz * num_heads, head_dim)), 0, 1)

    q = heads(q)
    k = heads(k) if static_k is None else static_k
    v = heads(v) if static_v is None else static_v
    if add_zero_attn:
        zeros = _api.zeros((bsz * num_heads, 1, head_dim), dtype=dtype, device=k.device)
        k = _api.concat([k, zeros], axis=1)
        v = _api.concat([v, zeros], axis=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ValueError(
                f"{_WHERE}: expected key_padding_mask of shape {(bsz, src_len)}, got "
                f"{key_padding_mask.shape}"
            )
        kpm = _api.broadcast_to(key_padding_mask[:, None, None, :], (bsz, num_heads, 1, src_len))
        kpm = _api.reshape(kpm, (bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    scores = _api.matmul(q * math.sqrt(1.0 / head_dim), _api.matrix_transpose(k))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = _api.softmax(scores, axis=-1)
    if training and dropout_p > 0.0:
        from .functional import dropout

        weights = dropout(weights, dropout_p, training=True)
    out = _api.matmul(weights, v)  # (N * H, L, head_dim)
    out = _api.reshape(_api.moveaxis(out, 0, 1), (tgt_len, bsz, embed_dim))
    out = _linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return (out if batched else out[:, 0]), None
    weights = _api.reshape(weights, (bsz, num_heads, tgt_len, src_len))
    if average_attn_weights:
        weights = _api.mean(weights, axis=1)
    if not batched:
        return out[:, 0], weights[0]
    return out, weights
