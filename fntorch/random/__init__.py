"""``ft.random``: explicit, splittable, counter-based random keys (threefry-2x32, as JAX).

A key is an ordinary ``uint32`` tensor of shape ``(2,)`` (JAX's "raw" legacy keys), so a
key array from ``split`` supports ``len``, indexing and unpacking, and keys pass through
``jit``, ``vmap`` and pytrees like any tensor. A draw is a pure function of its key: the
same key gives the same values eagerly, under ``ft.jit``, under ``ft.vmap`` over keys
and on every device. ``key``, ``split``, ``fold_in``, ``bits``, ``uniform`` (and hence
``bernoulli``, ``randint``, ``permutation``, ``choice``) give JAX's bits exactly
(``jax.random`` with its default threefry implementation, ``jax_threefry_partitionable``
on, the default since JAX 0.5); ``uniform`` with another range than [0, 1) agrees to an
ulp (XLA fuses its scale-and-shift into an FMA) and the draws that go through
``erf_inv``/``log`` (``normal``, ``truncated_normal``, ``gumbel``) to the rounding of
those functions. Eager and compiled draws are the same for float32, float16 and bfloat16
``normal``, ``truncated_normal`` and ``gumbel`` (``erf_inv``, ``erf`` and ``log``
compute in float64 and round once, eagerly and compiled: ~15 ms per 2**20 draws under
``jit``); float64 ones agree to ``erf_inv``'s float64 bound (~1e-12 in the tails), and
float64 ``gumbel``'s ``log`` can differ by an ulp between eager numpy and a kernel.

>>> import fntorch as ft
>>> k = ft.random.key(0)
>>> k1, k2 = ft.random.split(k)
>>> ft.random.uniform(k1, (2,)).shape
(2,)

Why threefry is plain code on the uint32 primitives (add, xor, shift_left,
shift_right_logical, or, iota, convert_element_type, ...; see ``ops/_threefry.py``)
rather than a dedicated ``threefry2x32`` primitive as in JAX: every rule table already
has entries for those, so eager evaluation (numpy), ``vmap`` (elementwise batch rules),
``grad`` (integer values carry no tangent) and ``jit`` work with no new rule-table
entries, and each new device gets randomness as soon as it runs elementwise ops. Under
``jit`` the ~120 ops of the 20 rounds fuse into one elementwise kernel together with
what consumes the bits (``jit(lambda k: uniform(k, (n,))).lower(k).plan`` is that kernel
plus a rank-0 one for the key schedule; dropout's mask and scaling join it too), so a
dedicated primitive would save only trace time while adding six rules to keep in sync.
Eagerly, on host values, the rounds skip dispatch and run as ~120 in-place numpy ops
vectorized over the whole output (the same bits; ``ops/_threefry.py``).

The keys are in ``_keys.py``, the samplers in ``_distributions.py``; PyTorch-style
randomness (``ft.manual_seed``, ``ft.rand``, ``ft.Generator``: a global key in a cell,
split per draw) in ``_torch_style.py``, exported at the top level.
"""

from . import _fills  # noqa: F401  (registers the samplers of t.normal_(), t.uniform_(), ...)
from ._distributions import (
    bernoulli,
    categorical,
    choice,
    gumbel,
    normal,
    permutation,
    randint,
    truncated_normal,
    uniform,
)
from ._keys import bits, fold_in, key, split, threefry_2x32
from ._torch_style import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "key",
    "split",
    "fold_in",
    "bits",
    "uniform",
    "normal",
    "truncated_normal",
    "bernoulli",
    "randint",
    "gumbel",
    "categorical",
    "permutation",
    "choice",
    "threefry_2x32",
    # PyTorch's torch.random (the global key): also at the top level
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
]
