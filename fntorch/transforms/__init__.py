"""Transforms: autodiff, vmap, staging. Importing this registers every rule.

``api`` re-exports the public transforms of ``autodiff``, ``vectorize``, ``staging`` and
``custom``; ``_args`` holds the argument helpers they share.
"""

from . import (
    _args,
    ad,
    api,
    autodiff,
    batching,
    call,
    checkpoint,
    custom,
    custom_call,
    custom_jvp,
    custom_vjp,
    debug_rules,
    export,
    jvp_collective,
    jvp_control,
    jvp_elementwise,
    jvp_indexing,
    jvp_linalg,
    jvp_reduce,
    jvp_structural,
    rules_decomp,
    rules_fft,
    staging,
    vectorize,
    vmap_collective,
    vmap_control,
    vmap_elementwise,
    vmap_indexing,
    vmap_linalg,
    vmap_reduce,
    vmap_structural,
)
