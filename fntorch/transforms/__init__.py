"""Transforms: autodiff, vmap, staging. Importing this registers every rule."""

from . import ad, batching
from . import jvp_elementwise, jvp_indexing, jvp_linalg, jvp_reduce, jvp_structural
from . import vmap_elementwise, vmap_indexing, vmap_linalg, vmap_reduce, vmap_structural
from . import custom, api
