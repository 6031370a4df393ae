"""mathlib's expansions, compiled, against numpy in float64: the bounds of its docstring.

All functions of one dtype are compiled as one module (one LLVM compile per dtype).
"""

import ctypes

import numpy as np
import pytest

from fntorch.devices import cpu_llvm as cpu
from fntorch.devices.cpu_elementwise import erf64, erf_inv64
from fntorch.lowering import mathlib
from fntorch.lowering.builder import PTR, KernelBuilder, f32, f64, i64
from fntorch.lowering.emit import emit_module
from tests.lowering.engine import Loaded


def _expit(x):
    # The stable logistic in float64 (scipy's expit, without the dependency).
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


REF = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "atan": np.arctan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "logistic": _expit,
    "cbrt": np.cbrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "erf": erf64,
    "erf_inv": erf_inv64,
    "pow": np.power,
    "atan2": np.arctan2,
}
BINARY = {"pow", "atan2"}

# name: (f32 domain, f64 domain, kind, f32 bound, f64 bound) -- kind "rel" or "abs".
BOUNDS = {
    "exp": ((-87, 88), (-708, 709), "rel", 1.5e-7, 4e-16),
    "exp2": ((-126, 127), (-1022, 1023), "rel", 1.5e-7, 4e-16),
    "expm1": ((-20, 88), (-40, 709), "rel", 2.5e-7, 5e-16),
    "log": ((1e-38, 3e38), (1e-307, 1e307), "rel", 1.5e-7, 4e-16),
    "log1p": ((-0.999, 1e6), (-0.999, 1e6), "rel", 3e-7, 5e-16),
    "sin": ((-1e4, 1e4), (-1e6, 1e6), "abs", 1.2e-7, 2.5e-16),
    "cos": ((-1e4, 1e4), (-1e6, 1e6), "abs", 1.2e-7, 2.5e-16),
    "tan": ((-1.5, 1.5), (-1.5, 1.5), "rel", 4e-7, 8e-16),
    "atan": ((-1e3, 1e3), (-1e3, 1e3), "rel", 2.5e-7, 4e-16),
    "asin": ((-1, 1), (-1, 1), "rel", 4e-7, 8e-16),
    "acos": ((-1, 1), (-1, 1), "rel", 4e-7, 8e-16),
    "sinh": ((-88, 88), (-709, 709), "rel", 4e-7, 8e-16),
    "cosh": ((-88, 88), (-709, 709), "rel", 4e-7, 8e-16),
    "tanh": ((-10, 10), (-20, 20), "rel", 5e-7, 8e-16),
    "asinh": ((-1e5, 1e5), (-1e5, 1e5), "rel", 3e-7, 8e-16),
    "acosh": ((1, 1e5), (1, 1e5), "rel", 3e-7, 8e-16),
    "atanh": ((-0.9999, 0.9999), (-0.9999, 0.9999), "rel", 4e-7, 8e-16),
    "logistic": ((-100, 100), (-700, 700), "rel", 3e-7, 6e-16),
    "cbrt": ((-1e5, 1e5), (-1e5, 1e5), "rel", 1.5e-7, 8e-16),
    "rsqrt": ((1e-3, 1e5), (1e-3, 1e5), "rel", 1.2e-7, 2.5e-16),
    "erf": ((-6, 6), (-7, 7), "rel", 6e-7, 2e-15),
    "erf_inv": ((-0.99999, 0.99999), (-0.999, 0.999), "rel", 5e-7, 1e-13),
    "pow": ((0.01, 10), (0.01, 10), "rel", 1.2e-7, None),  # f64: see test_pow_float64
    "atan2": ((-10, 10), (-10, 10), "rel", 3e-7, 6e-16),
}


@pytest.fixture(scope="module", params=["float32", "float64"])
def lib(request):
    """Every expansion as ``name(x*, [y*,] out*, n)`` in one compiled module."""
    t = f32 if request.param == "float32" else f64
    b = KernelBuilder()
    for name in REF:
        fn = getattr(mathlib, name)
        nargs = 2 if name in BINARY else 1
        args = b.function(name, [PTR] * (nargs + 1) + [i64])

        def body(i, carried, args=args, fn=fn, nargs=nargs):
            vals = [b.load(b.gep(a, i, t), t) for a in args[:nargs]]
            b.store(fn(b, *vals), b.gep(args[nargs], i, t))
            return []

        b.loop(b.const(0, i64), args[-1], [], body)
        b.ret()
    b.module.verify()
    loaded = Loaded(cpu.compile_object(str(emit_module(b.module))))
    dtype = np.dtype(request.param)

    def call(name, *xs):
        xs = [np.ascontiguousarray(x, dtype) for x in xs]
        out = np.empty_like(xs[0])
        sig = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (len(xs) + 1)), ctypes.c_int64)
        sig(loaded.address(name))(*[x.ctypes.data for x in xs], out.ctypes.data, out.size)
        return out

    return dtype, call


def _errors(got, want, kind, dtype):
    g, w = got.astype(np.float64), want
    fin = np.isfinite(w) & np.isfinite(g)
    tiny = np.finfo(dtype).tiny
    err = np.abs(g[fin] - w[fin])
    if kind == "rel":
        err = err / np.maximum(np.abs(w[fin]), tiny)
    return err


@pytest.mark.parametrize("name", sorted(REF))
def test_bound_over_a_dense_sweep(lib, name):
    dtype, call = lib
    lo_f32, lo_f64, kind, b32, b64 = BOUNDS[name]
    lo, hi = lo_f32 if dtype == np.float32 else lo_f64
    bound = b32 if dtype == np.float32 else b64
    if bound is None:
        pytest.skip("float64 pow has its own test")
    n = 100_000
    x = np.linspace(lo, hi, n)
    if name == "log":
        x = np.geomspace(lo, hi, n)
    rng = np.random.default_rng(0)
    x = np.concatenate([x, rng.uniform(lo, hi, 20_000), rng.standard_normal(2000) * 0.01])
    x = x[(x >= lo) & (x <= hi)].astype(dtype)
    args = [x]
    if name in BINARY:
        y = rng.uniform(-10, 10, x.size).astype(dtype)
        if name == "pow":
            y[:500] = np.round(y[:500])
        args.append(y)
    with np.errstate(all="ignore"):
        want = REF[name](*[a.astype(np.float64) for a in args])
    got = call(name, *args)
    # Where the float64 value rounds beyond the dtype's range, only the rounding matters.
    rep = np.abs(want) <= np.finfo(dtype).max
    err = _errors(got[rep], want[rep], kind, dtype)
    assert err.max() <= bound, f"{name} {dtype}: max {kind} err {err.max():.3g} > {bound:g}"
    # Results out of range overflow the same way.
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.isinf(got[~rep]), np.isinf(want[~rep].astype(dtype)))


SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    1e-30,
    -1e-30,
    1e-40,
    1e30,
    -1e30,
    3.0,
    -3.0,
    0.9999999,
    1.0000001,
]


@pytest.mark.parametrize("name", sorted(REF))
def test_special_values_follow_numpy(lib, name):
    dtype, call = lib
    x = np.array(SPECIALS, dtype)
    if name in BINARY:
        xs, ys = np.meshgrid(x, x)
        args = [xs.ravel(), ys.ravel()]
    else:
        args = [x]
    with np.errstate(all="ignore"):
        want = REF[name](*[a.astype(np.float64) for a in args]).astype(dtype)
    got = call(name, *args)
    if name in ("sin", "cos", "tan"):  # |x| >= 2**50: NaN (documented), not reduced
        keep = ~(np.abs(args[0]) >= 2.0**50)
        got, want = got[keep], want[keep]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=name)
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-6, atol=1e-38, err_msg=name)
    zero = want == 0
    np.testing.assert_array_equal(
        np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{name}: sign of zero"
    )


def test_pow_float64(lib):
    dtype, call = lib
    if dtype != np.float64:
        pytest.skip("float64 only")
    rng = np.random.default_rng(1)
    # A wide sweep, and bases near sqrt(2) and sqrt(1/2) (where log's series tail is
    # largest) with exponents up to the overflow threshold.
    x = np.concatenate([np.exp(rng.uniform(-20, 20, 50_000)), rng.uniform(0.69, 1.45, 50_000)])
    y = np.concatenate([rng.uniform(-30, 30, 50_000), rng.uniform(-1900, 1900, 50_000)])
    with np.errstate(over="ignore"):
        want = np.power(x, y)
    got = call("pow", x, y)
    fin = np.isfinite(want) & (want > 1e-300)
    np.testing.assert_array_equal(got[~fin & (want > 1)], want[~fin & (want > 1)])
    err = np.abs(got[fin] - want[fin]) / want[fin]
    bound = 2.5e-16 + 8e-18 * np.abs(y[fin] * np.log(x[fin]))  # the module's table
    assert (err <= bound).all(), (err / bound).max()
    # y ln x carried as a double-double: exact powers of two at the ends of the range
    # (plain exp(y log x) gave the largest finite double for 2.0 ** 1024).
    x = np.array([2.0, 2.0, 2.0, 0.5, 4.0, 10.0])
    y = np.array([1024.0, 1023.0, -1074.0, -1024.0, 511.5, 308.0])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(call("pow", x, y)[:5], np.power(x, y)[:5])
    assert abs(call("pow", x, y)[5] / 1e308 - 1) < 3e-16


def test_erf_inv_float64_tail(lib):
    dtype, call = lib
    if dtype != np.float64:
        pytest.skip("float64 only")
    x = np.linspace(0.999, 0.999999999, 10_000)
    err = np.abs(call("erf_inv", x) / erf_inv64(x) - 1)  # erf_inv64: 6.5e-13
    assert err.max() < 2e-9


def test_float32_tanh_saturates_to_one(lib):
    # The clamped rational stopped at 1 - 2.4e-7: tanh(inf) was 0.99999976 under jit.
    dtype, call = lib
    x = np.array([np.inf, -np.inf, 20.0, -30.0, 1e30], dtype)
    np.testing.assert_array_equal(call("tanh", x), [1.0, -1.0, 1.0, -1.0, 1.0])
