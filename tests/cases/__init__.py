"""Test cases for every primitive, shared by the per-contract tests.

Each group module (`elementwise.py`, `structural.py`, ...) defines ``CASES``: a list of
`Case`. A case draws operands and params with hypothesis and knows the numpy reference.
The contract tests (impl vs numpy, jvp vs finite differences, transpose by the dot-product
identity, vmap vs a Python loop, later jit vs eager) run over every case of every group,
so a primitive is tested by every contract as soon as it has a case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from fntorch.fx import dtypes as dt


@dataclass
class Case:
    """One way to call a primitive.

    ``draw(data, dtype) -> (args, params)``: ``data`` is hypothesis' ``st.data()`` object;
    ``args`` are numpy arrays (operands), ``params`` keyword params of the primitive.
    ``reference(*args, **params)`` is the numpy result (a list for multiple results).
    ``diff_args``: positions of the float operands derivatives are checked for (jvp and
    vmap-of-jvp); empty for non-differentiable primitives. ``linear_args``: positions the
    primitive is linear in jointly (for the transpose test); None when it is not linear.
    """

    prim: object
    draw: Callable
    reference: Callable
    dtypes: tuple = (dt.float32, dt.float64)
    diff_args: tuple = ()
    linear_args: tuple | None = None
    name: str = ""
    rtol: float = 1e-5
    atol: float = 1e-6
    fd_rtol: float = 2e-3  # jvp vs finite differences, in float64
    fd_atol: float = 2e-4
    fd_eps: float = 1e-6
    batch: bool = True  # whether the vmap contract applies
    exact: bool = False  # integer/bool results compared exactly
    check_impl_dtype: bool = True
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.name:
            self.name = self.prim.name

    def __repr__(self):
        return f"Case({self.name})"


# ----------------------------------------------------------------- drawing helpers


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(
        tuple
    )


def array(data, shape, dtype, *, lo=-3.0, hi=3.0, special=False, imag=(-1.0, 1.0)):
    """A random array of ``dtype`` and ``shape``; floats in [lo, hi] (plus NaN/inf if
    ``special``), complex numbers with real parts in [lo, hi] and imaginary parts in
    ``imag``, ints in a small range, bools at random. Sometimes non-contiguous."""
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == dt.bool_:
        a = rng.random(shape) < 0.5
    elif dt.is_integer(dtype):
        info = np.iinfo(dtype)
        a = rng.integers(max(info.min, -20), min(info.max, 20) + 1, size=shape).astype(dtype)
    elif dt.is_complex(dtype):
        re = rng.uniform(lo, hi, size=shape)
        a = (re + 1j * rng.uniform(*imag, size=shape)).astype(dtype)
        if special and a.size:
            flat = a.reshape(-1)
            k = rng.integers(0, flat.size, size=min(3, flat.size))
            bad = rng.choice(np.array([np.nan, np.inf, -np.inf]), size=len(k))
            in_imag = np.empty(len(k), np.complex128)
            in_imag.real, in_imag.imag = 1.0, bad  # 1j * inf would be nan + inf j
            flat[k] = np.where(rng.random(len(k)) < 0.5, bad + 0j, in_imag)
    else:
        a = rng.uniform(lo, hi, size=shape).astype(dtype)
        if special and a.size:
            flat = a.reshape(-1)
            k = rng.integers(0, flat.size, size=min(3, flat.size))
            flat[k] = rng.choice(
                np.array([np.nan, np.inf, -np.inf], dtype=np.float64), size=len(k)
            ).astype(dtype)
    if data.draw(st.booleans(), label="noncontiguous") and a.ndim >= 1 and a.size:
        # A strided view with the same values: impls must not assume C order.
        big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), dtype)
        big[..., ::2] = a
        a = big[..., ::2]
    return a


def broadcastable_shapes(data, n=2, max_dims=3, max_side=4):
    base = data.draw(shapes(0, max_dims, 0, max_side), label="shape")
    out = []
    for _ in range(n):
        nd = data.draw(st.integers(0, len(base)), label="rank")
        s = list(base[len(base) - nd :])
        for i in range(len(s)):
            if data.draw(st.booleans(), label="ones"):
                s[i] = 1
        out.append(tuple(s))
    return out


def all_cases():
    from . import (
        collective,
        complex,
        control,
        debug,
        decomp,
        decomp_complex,
        elementwise,
        fft,
        indexing,
        linalg,
        reduce,
        structural,
    )

    out = []
    # The complex groups after the real ones: a primitive's first case is a real one
    # (tests/lowering/test_table.py compiles each kernel primitive's first case).
    groups = (elementwise, structural, indexing, reduce, linalg, decomp, fft, control)
    groups += (complex, decomp_complex)
    for m in (*groups, debug, collective):
        out.extend(getattr(m, "CASES", []))
    return out
