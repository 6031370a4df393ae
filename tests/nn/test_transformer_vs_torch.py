"""MultiheadAttention and the Transformer layers against PyTorch: the same weights give the
same outputs, attention weights and gradients (``loss.backward()`` on both sides), in
eval mode (train mode: dropout draws differ, so it only runs), with PyTorch's state_dict
keys, order and shapes; and the pure side (grad, jit) of the same modules."""

import numpy as np
import pytest

import fntorch as ft
from tests.nn.same_weights import _same_weights

torch = pytest.importorskip("torch")
nn, tnn = ft.nn, torch.nn

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _conv(v, lib):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return ft.asarray(v) if lib == "ft" else torch.from_numpy(v)


def _check(ours, theirs, args, kwargs=None, train=False, rtol=1e-5, atol=1e-5):
    """Outputs (a tensor or a tuple of tensors / None) and parameter gradients equal."""
    kwargs = kwargs or {}
    _same_weights(ours, theirs)
    ours.train(train)
    theirs.train(train)
    got = ours(*[_conv(a, "ft") for a in args], **{k: _conv(v, "ft") for k, v in kwargs.items()})
    want = theirs(
        *[_conv(a, "torch") for a in args], **{k: _conv(v, "torch") for k, v in kwargs.items()}
    )
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    loss, tloss = 0.0, 0.0
    for a, b in zip(got, want, strict=True):
        if b is None:
            assert a is None
            continue
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=rtol, atol=atol)
        g = RNG.standard_normal(b.shape).astype(np.float32)
        loss = loss + (a * ft.asarray(g)).sum()
        tloss = tloss + (b * torch.from_numpy(g)).sum()
    loss.backward()
    tloss.backward()
    tp = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(tp)
    for name, p in ours.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None or not np.asarray(p.grad).any(), name
            continue
        np.testing.assert_allclose(
            np.asarray(p.grad), tp[name].grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name
        )
    return got


L, S, N, E, H = 5, 6, 2, 8, 2
BOOL_MASK = RNG.uniform(size=(L, S)) > 0.6
BOOL_MASK[:, 0] = False  # every query sees at least one key
FLOAT_MASK = _x(L, S)
PADDING = np.zeros((N, S), bool)
PADDING[0, -2:] = True
PADDING_FLOAT = np.where(PADDING, -1e4, 0.0).astype(np.float32)
MASK_3D = _x(N * H, L, S)


@pytest.mark.parametrize(
    "ctor, kwargs",
    [
        ({}, {}),
        ({}, {"attn_mask": BOOL_MASK}),
        ({}, {"attn_mask": FLOAT_MASK, "key_padding_mask": PADDING}),
        ({}, {"key_padding_mask": PADDING_FLOAT, "average_attn_weights": False}),
        ({}, {"attn_mask": MASK_3D, "need_weights": False}),
        ({"bias": False}, {"attn_mask": BOOL_MASK}),
        ({"kdim": 3, "vdim": 5}, {"key_padding_mask": PADDING}),
        ({"add_bias_kv": True}, {"attn_mask": BOOL_MASK, "key_padding_mask": PADDING}),
        ({"add_zero_attn": True}, {"attn_mask": FLOAT_MASK}),
        ({"add_bias_kv": True, "add_zero_attn": True, "kdim": 4}, {}),
        ({"batch_first": True}, {"key_padding_mask": PADDING}),
        ({"dropout": 0.3}, {}),  # eval mode: no dropout
    ],
)
def test_multihead_attention_equals_torch(ctor, kwargs):
    torch.manual_seed(0)
    ours, theirs = nn.MultiheadAttention(E, H, **ctor), tnn.MultiheadAttention(E, H, **ctor)
    kd, vd = ctor.get("kdim", E), ctor.get("vdim", E)
    if ctor.get("batch_first"):
        q, k, v = _x(N, L, E), _x(N, S, kd), _x(N, S, vd)
    else:
        q, k, v = _x(L, N, E), _x(S, N, kd), _x(S, N, vd)
    _check(ours, theirs, (q, k, v), kwargs)


def test_multihead_attention_self_attention_unbatched_and_causal():
    torch.manual_seed(0)
    ours, theirs = nn.MultiheadAttention(E, H), tnn.MultiheadAttention(E, H)
    x = _x(L, N, E)
    _check(ours, theirs, (x, x, x))
    x1 = _x(L, E)
    _check(ours, theirs, (x1, x1, x1), {"key_padding_mask": PADDING[0, :L]})
    causal = np.triu(np.ones((L, L), bool), 1)
    _check(ours, theirs, (x, x, x), {"attn_mask": causal, "is_causal": True})
    # without the mask PyTorch refuses; here is_causal alone builds the same mask
    a, _ = ours(*[ft.asarray(x)] * 3, attn_mask=ft.asarray(causal))
    b, _ = ours(*[ft.asarray(x)] * 3, is_causal=True)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_functional_multi_head_attention_forward_equals_torch():
    torch.manual_seed(0)
    theirs = tnn.MultiheadAttention(E, H)
    q, k = _x(L, N, E), _x(S, N, E)
    args = [theirs.in_proj_weight, theirs.in_proj_bias, None, None, False, 0.0,
            theirs.out_proj.weight, theirs.out_proj.bias]  # fmt: skip
    want = tnn.functional.multi_head_attention_forward(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(k), E, H, *args,
        attn_mask=torch.from_numpy(BOOL_MASK),
    )  # fmt: skip
    ours = [a if a is None or isinstance(a, (bool, float)) else ft.asarray(a.detach().numpy())
            for a in args]  # fmt: skip
    got = ft.nn.functional.multi_head_attention_forward(
        ft.asarray(q), ft.asarray(k), ft.asarray(k), E, H, *ours,
        attn_mask=ft.asarray(BOOL_MASK),
    )  # fmt: skip
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_multihead_attention_default_initialisation_is_torchs():
    ft.manual_seed(0)
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = np.sqrt(6 / (16 + 48))  # xavier_uniform of (3E, E)
    w = np.asarray(m.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not np.asarray(m.in_proj_bias).any() and not np.asarray(m.out_proj.bias).any()
    assert np.abs(np.asarray(m.out_proj.weight)).max() <= 1 / 4  # Linear's kaiming bound
    assert np.asarray(m.bias_k).std() > 0


LAYER_CONFIGS = [
    {},
    {"norm_first": True},
    {"activation": "gelu", "batch_first": True},
    {"activation": "relu", "bias": False, "layer_norm_eps": 1e-3},
]


def _enc_layer(m, **kw):
    return m.TransformerEncoderLayer(E, H, dim_feedforward=16, **kw)


def _dec_layer(m, **kw):
    return m.TransformerDecoderLayer(E, H, dim_feedforward=16, **kw)


def _src_tgt(kw):
    bf = kw.get("batch_first")
    return (_x(N, S, E), _x(N, L, E)) if bf else (_x(S, N, E), _x(L, N, E))


@pytest.mark.parametrize("kw", LAYER_CONFIGS)
def test_encoder_layer_equals_torch(kw):
    torch.manual_seed(0)
    src, _ = _src_tgt(kw)
    mask = np.triu(np.ones((S, S), bool), 1)
    _check(_enc_layer(nn, **kw), _enc_layer(tnn, **kw), (src,))
    _check(_enc_layer(nn, **kw), _enc_layer(tnn, **kw), (src,),
           {"src_mask": mask, "src_key_padding_mask": PADDING})  # fmt: skip


def test_encoder_layer_with_a_callable_activation():
    torch.manual_seed(0)
    src, _ = _src_tgt({})
    ours = _enc_layer(nn, activation=nn.functional.silu)
    theirs = _enc_layer(tnn, activation=tnn.functional.silu)
    _check(ours, theirs, (src,))
    # a Module activation is a submodule, as PyTorch's
    ours, theirs = _enc_layer(nn, activation=nn.GELU()), _enc_layer(tnn, activation=tnn.GELU())
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    _check(ours, theirs, (src,))


@pytest.mark.parametrize("kw", LAYER_CONFIGS)
def test_decoder_layer_equals_torch(kw):
    torch.manual_seed(0)
    src, tgt = _src_tgt(kw)
    causal = np.triu(np.ones((L, L), bool), 1)
    _check(_dec_layer(nn, **kw), _dec_layer(tnn, **kw), (tgt, src))
    _check(_dec_layer(nn, **kw), _dec_layer(tnn, **kw), (tgt, src),
           {"tgt_mask": causal, "memory_key_padding_mask": PADDING,
            "tgt_is_causal": True})  # fmt: skip
    _check(_dec_layer(nn, **kw), _dec_layer(tnn, **kw), (tgt, src),
           {"memory_mask": FLOAT_MASK, "tgt_key_padding_mask": PADDING[:, :L]})  # fmt: skip


def test_stacks_and_the_full_transformer_equal_torch():
    torch.manual_seed(0)
    src, tgt = _src_tgt({})
    enc = (nn.TransformerEncoder(_enc_layer(nn), 2, nn.LayerNorm(E)),
           tnn.TransformerEncoder(_enc_layer(tnn), 2, tnn.LayerNorm(E),
                                  enable_nested_tensor=False))  # fmt: skip
    _check(*enc, (src,), {"src_key_padding_mask": PADDING})
    dec = (nn.TransformerDecoder(_dec_layer(nn), 2), tnn.TransformerDecoder(_dec_layer(tnn), 2))
    _check(*dec, (tgt, src))
    mask = nn.Transformer.generate_square_subsequent_mask(L)
    tmask = tnn.Transformer.generate_square_subsequent_mask(L)
    np.testing.assert_array_equal(np.asarray(mask), tmask.numpy())
    for kw in ({}, {"norm_first": True, "activation": "gelu", "batch_first": True}):
        s, t = _src_tgt(kw)
        make = lambda m: m.Transformer(E, H, 2, 1, dim_feedforward=16, **kw)  # noqa: E731
        _check(make(nn), make(tnn), (s, t), {"tgt_mask": tmask.numpy(),
                                             "src_key_padding_mask": PADDING})  # fmt: skip


def test_stack_layers_are_independent_copies_with_the_same_start():
    ft.manual_seed(0)
    enc = nn.TransformerEncoder(_enc_layer(nn), 2)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    enc(ft.asarray(_x(S, N, E))).sum().backward()
    assert enc.layers[0].linear1.weight.grad is not None
    assert not np.array_equal(np.asarray(a.grad), np.asarray(b.grad))


def test_train_mode_runs_with_dropout():
    ft.manual_seed(0)
    t = nn.Transformer(E, H, 1, 1, dim_feedforward=16, dropout=0.5)
    src, tgt = _src_tgt({})
    y = t(ft.asarray(src), ft.asarray(tgt))
    assert y.shape == (L, N, E) and np.isfinite(np.asarray(y)).all()
    y.sum().backward()
    assert t.encoder.layers[0].self_attn.in_proj_weight.grad is not None
    y2 = t.eval()(ft.asarray(src), ft.asarray(tgt))
    y3 = t(ft.asarray(src), ft.asarray(tgt))
    np.testing.assert_array_equal(np.asarray(y2), np.asarray(y3))


def test_the_pure_side_grad_and_jit():
    ft.manual_seed(0)
    layer = _enc_layer(nn, norm_first=True).eval()
    x = ft.asarray(_x(S, N, E))
    pad = ft.asarray(PADDING)

    def loss(m, x):
        return (m(x, src_key_padding_mask=pad) ** 2).sum()

    g = ft.grad(loss)(layer, x)
    assert type(g) is type(layer)
    loss(layer, x).backward()
    grads = g.state_dict()
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(
            np.asarray(grads[name]), np.asarray(p.grad), rtol=1e-4, atol=1e-5, err_msg=name
        )
    f = ft.jit(lambda m, x: m(x, src_key_padding_mask=pad))
    want = layer(x, src_key_padding_mask=pad)
    np.testing.assert_allclose(np.asarray(f(layer, x)), np.asarray(want), rtol=1e-5, atol=1e-5)
    # vmap over the batch of unbatched calls gives the batched call
    per = ft.vmap(lambda x: layer(x), in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(np.asarray(per), np.asarray(layer(x)), rtol=1e-5, atol=1e-5)
    mha = nn.MultiheadAttention(E, H)
    gm = ft.jit(ft.grad(lambda m, x: m(x, x, x)[0].sum()))(mha, x)
    assert gm.in_proj_weight.shape == (3 * E, E)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="embed_dim \\(6\\) must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    m = nn.MultiheadAttention(E, H)
    x = ft.ones((L, N, E))
    with pytest.raises(ValueError, match="attn_mask should have shape \\(5, 5\\)"):
        m(x, x, x, attn_mask=ft.zeros((5, 4)))
    with pytest.raises(ValueError, match="expected key_padding_mask of shape"):
        m(x, x, x, key_padding_mask=ft.zeros((N, 3), dtype="bool"))
    with pytest.raises(ValueError, match="activation should be 'relu' or 'gelu'"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
    t = nn.Transformer(E, H, 1, 1, dim_feedforward=8)
    with pytest.raises(ValueError, match="batch size of src"):
        t(ft.ones((3, 2, E)), ft.ones((3, 1, E)))


def test_float64_transformer_matches_torch_to_rounding():
    torch.manual_seed(0)
    make = lambda m: m.Transformer(E, H, 1, 1, dim_feedforward=16).double().eval()  # noqa: E731
    ours, theirs = make(nn), make(tnn)
    _same_weights(ours, theirs)
    src, tgt = RNG.standard_normal((S, N, E)), RNG.standard_normal((L, N, E))
    got = ours(ft.asarray(src), ft.asarray(tgt))
    want = theirs(torch.from_numpy(src), torch.from_numpy(tgt))
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want.detach().numpy(), rtol=1e-10, atol=1e-10)
