"""Complex values inside fused kernels: (re, im) pairs of floats (``rules_complex``,
``mathlib_complex``).

Every complex primitive a kernel computes matches eager (numpy's complex loops): on a
grid of special values bit for bit in NaN-ness, infinities and signs of zero, and to a
few ulp elsewhere; chains of them fuse into one kernel; the ones without a complex rule
stay library steps between kernels.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.lowering.fusion import KernelStep, LibraryStep
from fntorch.lowering.rules_complex import complex_rules, fuses_complex
from fntorch.ops import lax
from tests.cases import array, broadcastable_shapes

COMPLEX = (np.complex64, np.complex128)
UNARY = {
    "neg": lambda z: -z,
    "conj": ft.conj,
    "real": ft.real,
    "imag": ft.imag,
    "abs": ft.abs,
    "sign": ft.sign,
    "square": ft.square,
    "isfinite": ft.isfinite,
    "reciprocal": lambda z: lax.integer_pow(z, -1),
    "cube": lambda z: lax.integer_pow(z, 3),
    "exp": ft.exp,
    "expm1": ft.expm1,
    "log": ft.log,
    "log1p": ft.log1p,
    "sqrt": ft.sqrt,
    "rsqrt": ft.rsqrt,
    "sin": ft.sin,
    "cos": ft.cos,
    "tan": ft.tan,
    "sinh": ft.sinh,
    "cosh": ft.cosh,
    "tanh": ft.tanh,
    "asin": ft.asin,
    "asinh": ft.asinh,
    "atan": ft.atan,
    "atanh": ft.atanh,
    "acos": ft.acos,
    "acosh": ft.acosh,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}
# Zeros of both signs, small, moderate and large finite values, the infinities and NaN.
# No part reaches 2**50: sin and cos of such parts are NaN in kernels (mathlib_complex).
SPECIAL = [0.0, -0.0, 1e-30, 0.5, -1.5, 2.0, 3.0, 30.0, -100.0, 800.0, np.inf, -np.inf, np.nan]
RTOL = {np.complex64: 2e-6, np.complex128: 4e-15}


def _grid(dtype, values=SPECIAL):
    re, im = np.meshgrid(values, values)
    z = np.empty(re.size, dtype)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def _same_part(got, want, rtol):
    """NaN where NaN, equal values with equal signs (zeros too), else close."""
    both_nan = np.isnan(got) & np.isnan(want)
    equal = (got == want) & (np.signbit(got) == np.signbit(want))
    finite = np.isfinite(got) & np.isfinite(want)
    tiny = np.finfo(want.dtype).tiny
    with np.errstate(invalid="ignore"):
        close = finite & (np.abs(got - want) <= rtol * np.maximum(np.abs(want), tiny))
    return both_nan | equal | close


def _mismatches(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype == np.bool_:
        return np.flatnonzero(got != want)
    if want.dtype.kind == "c":
        ok = _same_part(got.real, want.real, rtol) & _same_part(got.imag, want.imag, rtol)
    else:
        ok = _same_part(got, want, rtol)
    return np.flatnonzero(~ok)


def _only_kernels(f, *args):
    plan = ft.jit(f).lower(*args).plan
    assert not plan.library_calls, plan.summary()
    return plan


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_values_match_eager(name, dtype):
    f = UNARY[name]
    z = ft.asarray(_grid(dtype))
    _only_kernels(f, z)
    got, want = ft.jit(f)(z), f(z)
    bad = _mismatches(got, want, RTOL[dtype])
    zs = np.asarray(z)
    assert not len(bad), [(zs[i], np.asarray(want)[i], np.asarray(got)[i]) for i in bad[:5]]


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values_match_eager(name, dtype):
    f = BINARY[name]
    z = _grid(dtype, [0.0, -0.0, 1.5, -2.0, 1e30, np.inf, -np.inf, np.nan])
    a, b = ft.asarray(np.repeat(z, z.size)), ft.asarray(np.tile(z, z.size))
    _only_kernels(f, a, b)
    bad = _mismatches(ft.jit(f)(a, b), f(a, b), RTOL[dtype])
    pairs = [(np.asarray(a)[i], np.asarray(b)[i]) for i in bad[:5]]
    assert not len(bad), pairs


def _samples(rng, n, dtype):
    """Parts of magnitudes 1e-6..1e6 of either sign, a quarter on |z| = 1 +- 1e-6 (log's
    hard case), a quarter standard normal."""

    def part():
        return 10.0 ** rng.uniform(-6, 6, n) * rng.choice([-1.0, 1.0], n)

    z = part() + 1j * part()
    q = n // 4
    z[:q] = (1 + 1e-6 * rng.standard_normal(q)) * np.exp(1j * rng.uniform(-np.pi, np.pi, q))
    z[q : 2 * q] = 3 * (rng.standard_normal(q) + 1j * rng.standard_normal(q))
    return z.astype(dtype)


# Where e**x or sinh/cosh x overflow no matter the other part, and trig parts stay small.
_CLIPPED = {"exp", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan"}


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_accuracy_against_eager(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name)))
    z = _samples(rng, 20000, dtype)
    if name in _CLIPPED:
        re, im = np.clip(z.real, -80, 80), np.clip(z.imag, -1e4, 1e4)
        if name in ("sin", "cos", "tan"):
            re, im = im, re
        z = (re + 1j * im).astype(dtype)
    f = UNARY[name]
    x = ft.asarray(z)
    got, want = np.asarray(ft.jit(f)(x)), np.asarray(f(x))
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), ok)
    err = np.abs(got[ok] - want[ok]) / np.maximum(np.abs(want[ok]), np.finfo(dtype).tiny)
    # Relative to |result| (complex-norm): a few ulp of the dtype.
    assert err.max() <= {np.complex64: 1e-6, np.complex128: 2e-15}[dtype], z[ok][err.argmax()]


# The inverse functions' hard places besides SPECIAL's: the branch points +-1 (and +-i on
# the grid's other axis), just inside them, subnormal and huge parts (the float32 ones
# round to 0 or inf).
INVERSE = ["asin", "asinh", "acos", "acosh", "atan", "atanh"]
BRANCH = SPECIAL + [1.0, -1.0, 0.99999, 1e-10, 1e-300, 5e-324, 1e20, 1e300]


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", INVERSE)
def test_inverse_functions_at_branch_points_match_eager(name, dtype):
    f = UNARY[name]
    with np.errstate(over="ignore", under="ignore"):
        z = ft.asarray(_grid(dtype, BRANCH))
    _only_kernels(f, z)
    bad = _mismatches(ft.jit(f)(z), f(z), RTOL[dtype])
    zs = np.asarray(z)
    assert not len(bad), [(zs[i], np.asarray(f(z))[i]) for i in bad[:5]]


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", INVERSE)
def test_inverse_functions_are_accurate_part_by_part(name, dtype):
    """Each part to a few ulp of itself (not only of |result|), over the whole exponent
    range and near the branch points, where the formulas cancel."""
    rng = np.random.default_rng(sum(map(ord, name)))
    n, top = 20000, np.finfo(dtype).maxexp * 0.3
    parts = 2.0 ** rng.uniform(-top, top, (2, n)) * rng.choice([-1.0, 1.0], (2, n))
    near_1 = 1 + 1e-7 * rng.standard_normal(n) + 1e-5j * rng.standard_normal(n)
    z = np.concatenate([parts[0] + 1j * parts[1], near_1, 1j * near_1, _samples(rng, n, dtype)])
    z = z.astype(dtype)
    f = UNARY[name]
    got, want = np.asarray(ft.jit(f)(ft.asarray(z))), np.asarray(f(ft.asarray(z)))
    bad = _mismatches(got, want, {np.complex64: 1e-6, np.complex128: 2e-15}[dtype])
    assert not len(bad), [(z[i], want[i], got[i]) for i in bad[:5]]


# ------------------------------------------------------------------ chains, fusion
_CHAIN_UNARY = ["neg", "conj", "exp", "log", "sqrt", "square", "sign", "tanh", "sin", "cosh"]
_CHAIN_BINARY = ["add", "sub", "mul", "div"]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_random_chains_fuse_and_match_eager(data):
    """A random chain of complex ops on broadcast operands runs in kernels only and
    equals eager (tolerance: a chain compounds each op's few ulp)."""
    dtype = data.draw(st.sampled_from(COMPLEX), label="dtype")
    shapes = broadcastable_shapes(data, 3)
    xs = [array(data, s, dtype, lo=-2.0, hi=2.0) for s in shapes]
    steps = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(_CHAIN_UNARY + _CHAIN_BINARY),
                st.integers(0, 2),
            ),
            min_size=1,
            max_size=6,
        ),
        label="steps",
    )

    def f(a, b, c, seen=None):
        vals = [a, b, c]
        v = a
        for name, k in steps:
            v = UNARY[name](v) if name in UNARY else BINARY[name](v, vals[k])
            if seen is not None:
                seen.append(np.asarray(v))
        return v

    assume(not any(0 in s for s in shapes))  # empty arrays are library steps
    args = [ft.asarray(x) for x in xs]
    seen = []
    want = np.asarray(f(*args, seen=seen))
    # Parts past 2**50 make sin/cos NaN in kernels (the documented bound): out of scope.
    assume(all(np.all(~(np.abs(np.stack([v.real, v.imag])) >= 2.0**50)) for v in seen))
    _only_kernels(f, *args)  # one kernel per shape the chain's values take
    got = np.asarray(ft.jit(f)(*args))
    ok = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), ok)
    rtol = {np.complex64: 1e-4, np.complex128: 1e-11}[dtype]
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
def test_a_complex_chain_is_one_kernel_of_its_ops(dtype):
    z = ft.asarray((np.arange(12) * (1 - 0.5j)).reshape(3, 4).astype(dtype))

    def f(z):
        w = ft.exp(z) * ft.conj(z) + z / 2
        return ft.abs(w) + ft.real(ft.sqrt(w)), ft.complex(ft.imag(w), ft.real(w))

    plan = _only_kernels(f, z)
    (k,) = plan.kernels
    names = [e.primitive.name for e in k.eqns]
    for op in ("exp", "conj", "mul", "div", "add", "abs", "sqrt", "real", "imag", "complex"):
        assert op in names, plan.summary()
    assert "llvm.fma" in ft.jit(f).lower(z).as_text()
    for g, w in zip(ft.jit(f)(z), f(z)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=RTOL[dtype] * 10)


def test_inverse_functions_fuse_with_their_neighbours():
    z = ft.asarray((np.linspace(-3, 3, 24) * (1 + 0.5j)).reshape(4, 6).astype(np.complex64))

    def f(z):
        w = ft.asin(z * 0.5) + ft.acosh(z) - ft.atan(ft.exp(z))
        return ft.abs(ft.asinh(w) * ft.acos(z)) + ft.real(ft.atanh(z / 4))

    plan = _only_kernels(f, z)
    (k,) = plan.kernels
    names = {e.primitive.name for e in k.eqns}
    assert {"asin", "acos", "atan", "asinh", "acosh", "atanh"} <= names, plan.summary()
    np.testing.assert_allclose(np.asarray(ft.jit(f)(z)), np.asarray(f(z)), rtol=1e-5)


def test_casts_selects_and_literals_fuse():
    x = ft.asarray(np.linspace(-2, 2, 10).astype(np.float32))

    def f(x):
        z = x.astype(ft.complex64) * (1 + 2j) + 0.5j
        w = ft.where(ft.abs(z) > 1, z, ft.conj(z)).astype(ft.complex128)
        return w, z.astype(ft.float32), (z == ft.conj(z))

    _only_kernels(f, x)
    for g, w in zip(ft.jit(f)(x), f(x)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape, axis", [((7, 5), -1), ((7, 5), 0), ((3, 2000), -1), ((40000,), 0)])
def test_complex_sums_are_row_kernels(dtype, shape, axis):
    # 2000 and 40000 elements per row: the blocked cascade's partials fold both parts.
    rng = np.random.default_rng(0)
    z = ft.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))

    def f(z):
        return ft.sum(ft.exp(z) * z, axis=axis)

    plan = _only_kernels(f, z)
    assert len(plan.kernels) == 1 and plan.kernels[0].spec.reduce_rank == 1, plan.summary()
    got, want = np.asarray(ft.jit(f)(z)), np.asarray(f(z))
    assert got.dtype == want.dtype
    scale = np.sum(np.abs(np.asarray(ft.exp(z) * z)), axis=axis)
    assert np.all(np.abs(got - want) <= 8 * np.finfo(dtype).eps * scale)


def test_complex_column_sums_stay_numpy_sums():
    # Over leading axes a row kernel reads strided columns (10x slower than numpy's sum
    # here); BLAS's gemv, the float sums' route, would turn inf + 0j into inf + nanj.
    z = np.ones((64, 16), np.complex64)
    z[3, 2] = np.inf
    z = ft.asarray(z)
    plan = ft.jit(lambda z: ft.sum(z + 1, axis=0)).lower(z).plan
    assert plan.summary().splitlines()[-1] == "library reduce_sum", plan.summary()
    got = np.asarray(ft.jit(lambda z: ft.sum(z + 1, axis=0))(z))
    np.testing.assert_array_equal(got, np.asarray(ft.sum(z + 1, axis=0)))
    assert got[2] == np.inf + 0j and not np.isnan(got[2].imag)


def test_primitives_without_a_complex_rule_stay_library_steps():
    z = ft.asarray(np.array([0.5 + 0.5j, 1 - 1j, 2j], np.complex64))

    def f(z):
        a = ft.exp(z) * 2
        b = lax.pow(a, z)  # no complex rule: a library step
        return ft.prod(b * z)  # reduce_prod: none either

    plan = ft.jit(f).lower(z).plan
    lib = [s.eqn.primitive.name for s in plan.steps if isinstance(s, LibraryStep)]
    assert {"pow", "reduce_prod"} <= set(lib), plan.summary()
    kernels = [[e.primitive.name for e in s.eqns] for s in plan.steps if isinstance(s, KernelStep)]
    assert ["exp", "mul"] in kernels, plan.summary()
    for name in ("pow", "reduce_prod"):
        assert not fuses_complex(name), name
    np.testing.assert_allclose(np.asarray(ft.jit(f)(z)), np.asarray(f(z)), rtol=1e-5)


def test_complex_specs_have_no_gpu_form():
    # CUDA keeps its host route for complex values (cuda_impls); the kernels are CPU's.
    from fntorch.devices import cuda_codegen

    z = ft.asarray(np.ones(4, np.complex64))
    plan = ft.jit(lambda z: ft.exp(z) * z).lower(z).plan
    assert not cuda_codegen.supports(plan.kernels[0].spec)


def test_complex_rules_cover_what_fusion_fuses():
    assert {"exp", "log", "sqrt", "mul", "div", "abs", "complex", "real"} <= set(complex_rules)
    assert fuses_complex("reduce_sum") and not fuses_complex("argmax")
