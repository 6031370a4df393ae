"""Transforms: autodiff, vmap, staging. Importing this registers every rule."""

from . import (
    ad,
    api,
    batching,
    checkpoint,
    custom,
    custom_call,
    custom_jvp,
    custom_vjp,
    jvp_control,
    jvp_elementwise,
    jvp_indexing,
    jvp_linalg,
    jvp_reduce,
    jvp_structural,
    vmap_control,
    vmap_elementwise,
    vmap_indexing,
    vmap_linalg,
    vmap_reduce,
    vmap_structural,
)
