"""Autocast's op lists: which operations run in the low dtype and which in float32, per
device type, as PyTorch's autocast lists them (fntorch's own tables, written from
PyTorch's documentation and checked against ``torch.autocast`` in the tests).

Keys are primitives (``dot_general`` and ``conv_general_dilated`` catch every matmul and
convolution, whatever function reached them: ``@``, ``einsum``, ``tensordot``, ``bmm``)
or the names that ``fx.autocast.autocast_op`` gives functions of ``ops`` and ``nn``
(operations cast as a whole: ``linear`` with its bias, a loss in float32). Operations in
no list run in their inputs' dtypes; fntorch's binary operations and ``concat``/``stack``
already widen mixed float inputs, which is PyTorch's "promote" list.

>>> import fntorch as ft
>>> "cross_entropy" in FLOAT32["cpu"], "softmax" in FLOAT32["cpu"], "softmax" in FLOAT32["cuda"]
(True, False, True)
"""

from __future__ import annotations

from ..ops import _prims_linalg as _pl

# Primitives cast to the autocast dtype on every device type.
LOW_PRECISION_PRIMITIVES = frozenset({_pl.dot_general_p, _pl.conv_general_dilated_p})

# Operations cast as a whole to the autocast dtype (bias and all).
_LOW_COMMON = frozenset({
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "prelu", "scaled_dot_product_attention", "matmul",
})  # fmt: skip

LOW_PRECISION = {"cpu": _LOW_COMMON, "cuda": _LOW_COMMON}

# The losses: float32 on every device type.
_LOSSES = frozenset({
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "poisson_nll_loss", "hinge_embedding_loss", "margin_ranking_loss", "soft_margin_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "multi_margin_loss",
    "multilabel_margin_loss", "gaussian_nll_loss",
})  # fmt: skip

# Operations cast to float32 first (only float16/bfloat16 operands: float64 stays).
# PyTorch's CPU list is short (losses, prod, cdist, trace, linalg); its CUDA list adds
# softmax, the norms, the reductions and the transcendental elementwise functions.
FLOAT32 = {
    "cpu": _LOSSES | {"prod", "cdist", "trace", "inv", "pinv", "cholesky"},
    "cuda": _LOSSES | {
        "softmax", "log_softmax", "softmin", "layer_norm", "group_norm", "norm",
        "normalize", "cosine_similarity", "softplus", "cdist", "dist", "pdist",
        "sum", "prod", "cumsum", "cumprod", "exp", "expm1", "log", "log2", "log10",
        "log1p", "pow", "reciprocal", "rsqrt", "acos", "asin", "cosh", "sinh", "tan",
        "erfinv", "renorm",
    },
}  # fmt: skip

# The default low dtype per device type (PyTorch's): bfloat16 on the CPU, float16 on CUDA.
DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}
