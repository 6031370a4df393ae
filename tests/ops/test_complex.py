"""complex64 and complex128 through the stack: promotion pair by pair, the Array API
functions, Tensor methods, interchange, save/load, jit and vmap, and gradients against
JAX's conventions (skipped without JAX)."""

import io

import numpy as np
import pytest

import fntorch as ft
from fntorch.fx import dtypes as dt

C64, C128 = ft.complex64, ft.complex128
Z = np.array([[1 + 2j, 3 - 1j], [0.5j, -2 + 0.25j]])

# The standard's table for the pairs that involve a complex dtype, and fntorch's
# cross-kind rule (an integer or bool meets a complex: the complex).
PAIRS = [
    (C64, C64, C64), (C64, C128, C128), (C128, C128, C128),
    (ft.float32, C64, C64), (ft.float32, C128, C128),
    (ft.float64, C64, C128), (ft.float64, C128, C128),
    (ft.float16, C64, C64), (ft.bfloat16, C64, C64), (ft.float16, C128, C128),
    (ft.int8, C64, C64), (ft.int64, C64, C64), (ft.uint8, C128, C128), (ft.bool, C64, C64),
]  # fmt: skip


@pytest.mark.parametrize("a, b, want", PAIRS, ids=lambda d: str(d))
def test_promotion_pairs(a, b, want):
    assert ft.result_type(a, b) == want and ft.result_type(b, a) == want
    x, y = ft.ones(2, dtype=a), ft.ones(2, dtype=b)
    assert (x + y).dtype == want and (y * x).dtype == want


@pytest.mark.parametrize(
    "dtype, want",
    [(ft.float32, C64), (ft.float64, C128), (ft.int32, C64), (ft.bool, C64), (C64, C64),
     (C128, C128), (ft.float16, C64)],
)  # fmt: skip
def test_weak_python_complex(dtype, want):
    assert ft.result_type(dtype, 1j) == want
    assert (ft.ones(2, dtype=dtype) * 1j).dtype == want
    assert (ft.ones(2, dtype=C64) + 2.5).dtype == C64  # a weak float keeps complex64


def test_asarray_and_creation():
    assert ft.asarray(0j).dtype == C64
    assert ft.asarray(1 + 2j).item() == 1 + 2j
    assert ft.asarray([1, 2j]).dtype == C64
    assert ft.asarray(Z).dtype == C128
    assert ft.asarray(Z.astype(np.complex64)).dtype == C64
    assert ft.zeros(3, dtype=complex).dtype == C64
    assert ft.full((2,), 1j).dtype == C64
    np.testing.assert_allclose(ft.linspace(0, 1j, 3).numpy(), [0, 0.5j, 1j])
    assert ft.eye(2, dtype=C128).dtype == C128
    assert ft.isdtype(C64, "complex floating") and ft.isdtype(C128, "numeric")
    assert not ft.isdtype(C64, "real floating")
    assert ft.can_cast(ft.float32, C64) and not ft.can_cast(C64, ft.float32)
    assert not ft.can_cast(ft.float64, C64)
    assert ft.finfo(C64).eps == np.finfo(np.float32).eps
    info = ft.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == C64
    assert set(info.dtypes(kind="complex floating").values()) == {C64, C128}


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos",
         "atan", "asinh", "acosh", "atanh", "expm1", "log1p", "square", "negative", "sign",
         "log2", "log10", "reciprocal", "conj", "positive"]  # fmt: skip
NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
         "acosh": "arccosh", "atanh": "arctanh", "conj": "conjugate"}  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_functions_match_numpy(name, dtype):
    z = Z.astype(dtype)
    got = getattr(ft, name)(ft.asarray(z))
    want = getattr(np, NUMPY.get(name, name))(z)
    assert got.dtype == z.dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def test_parts_abs_angle_and_classification():
    z = ft.asarray(Z)
    np.testing.assert_array_equal(ft.real(z).numpy(), Z.real)
    np.testing.assert_array_equal(ft.imag(z).numpy(), Z.imag)
    assert ft.real(z).dtype == ft.float64 and ft.abs(ft.asarray(Z, dtype=C64)).dtype == ft.float32
    np.testing.assert_allclose(ft.abs(z).numpy(), np.abs(Z))
    np.testing.assert_allclose(ft.angle(z).numpy(), np.angle(Z))
    w = ft.asarray([complex(np.nan, 1), complex(1, np.inf), 1 + 1j])
    assert ft.isnan(w).tolist() == [True, False, False]
    assert ft.isinf(w).tolist() == [False, True, False]
    assert ft.isfinite(w).tolist() == [False, False, True]
    assert ft.equal(w, w).tolist() == [False, True, True]
    with pytest.raises(TypeError, match="floor: expected a real dtype"):
        ft.floor(z)
    with pytest.raises(TypeError, match="max"):
        ft.maximum(z, z)
    with pytest.raises(TypeError, match="less"):
        ft.less(z, z)


def test_arithmetic_pow_reductions_and_products():
    z = ft.asarray(Z)
    for f, g in ((ft.add, np.add), (ft.multiply, np.multiply), (ft.divide, np.divide),
                 (ft.subtract, np.subtract), (ft.pow, np.power)):  # fmt: skip
        np.testing.assert_allclose(f(z, z).numpy(), g(Z, Z), rtol=1e-12)
    np.testing.assert_allclose((z**2).numpy(), Z**2, rtol=1e-12)
    np.testing.assert_allclose((z ** (-1)).numpy(), Z**-1, rtol=1e-12)
    np.testing.assert_allclose((2 * z + 1j).numpy(), 2 * Z + 1j)
    for f in ("sum", "prod", "mean"):
        np.testing.assert_allclose(getattr(ft, f)(z, axis=0).numpy(), getattr(np, f)(Z, axis=0))
    assert ft.mean(ft.asarray(Z, dtype=C64)).dtype == C64
    np.testing.assert_allclose((z @ z).numpy(), Z @ Z)
    np.testing.assert_allclose(ft.vecdot(z, z).numpy(), np.vecdot(Z, Z))  # conj(x1)
    np.testing.assert_allclose(ft.vecdot(z, z).numpy(), np.sum(np.conj(Z) * Z, axis=-1))


def test_tensor_methods_and_interchange():
    z = ft.asarray(Z)
    np.testing.assert_array_equal(z.real.numpy(), Z.real)
    np.testing.assert_array_equal(z.imag.numpy(), Z.imag)
    np.testing.assert_array_equal(z.conj().numpy(), Z.conj())
    np.testing.assert_array_equal(z.mH.numpy(), Z.conj().T)
    np.testing.assert_array_equal(z.T.numpy(), Z.T)
    np.testing.assert_allclose(z.abs().numpy(), np.abs(Z))
    assert z.is_complex() and not ft.ones(2).is_complex()
    assert complex(z[0, 0]) == 1 + 2j
    assert z.tolist() == Z.tolist()
    assert np.asarray(z).dtype == np.complex128
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(z)
    assert t.dtype == torch.complex128 and np.array_equal(t.numpy(), Z)
    back = ft.from_dlpack(torch.tensor(Z.astype(np.complex64)))
    assert back.dtype == C64
    assert ft.asarray(torch.ones(2, dtype=torch.complex64)).dtype == C64


def test_save_and_load_complex():
    buf = io.BytesIO()
    tree = {"a": ft.asarray(Z, dtype=C64), "b": ft.asarray(Z), "c": ft.asarray(1j)}
    ft.save(tree, buf)
    out = ft.load(io.BytesIO(buf.getvalue()))
    for k in tree:
        assert out[k].dtype == tree[k].dtype and np.array_equal(out[k].numpy(), tree[k].numpy())


def test_jit_and_vmap_on_complex():
    def f(z, x):
        return ft.exp(z) * x + ft.conj(z) / (1 + 1j) - ft.real(z * z)

    z, x = ft.asarray(Z), ft.asarray([1.0, 2.0], dtype=ft.float64)
    want = f(z, x).numpy()
    np.testing.assert_allclose(ft.jit(f)(z, x).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(f, in_axes=(0, None))(z, x).numpy(), want, rtol=1e-12)
    assert ft.jit(lambda a: ft.abs(a).sum())(z).dtype == ft.float64


def test_grad_of_complex_input():
    # JAX's convention: grad of a real f of z = x + iy is df/dx - i df/dy.
    g = ft.grad(lambda z: ft.abs(z) ** 2)(ft.asarray(3 + 4j))
    assert complex(g) == pytest.approx(6 - 8j)
    with pytest.raises(TypeError, match="real float output"):
        ft.grad(lambda z: z * z)(ft.asarray(1j))


FUNCS = {
    "abs2": lambda m, z: m.sum(m.abs(z) ** 2),
    "real_exp_conj": lambda m, z: m.sum(m.real(m.exp(z) * m.conj(z))),
    "angle": lambda m, z: m.sum(m.angle(z)),
    "imag_log_sqrt": lambda m, z: m.sum(m.imag(m.log(z) + m.sqrt(z) * z)),
    "abs_sin_div": lambda m, z: m.sum(m.abs(m.sin(z) / (z + 2))),
    "matmul_vecdot": lambda m, z: m.real(m.sum(m.vecdot(z, z @ z))),
    "mean_tanh": lambda m, z: m.imag(m.mean(m.tanh(z) ** 3)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_grad_matches_jax(name, jax64):
    jax, jnp = jax64, jax64.numpy
    f = FUNCS[name]
    got = ft.grad(lambda z: f(ft, z))(ft.asarray(Z))
    want = jax.grad(lambda z: f(jnp, z))(jnp.asarray(Z))
    assert got.dtype == C128
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-10, atol=1e-12)


def test_float_to_complex_cast_gradients():
    # astype complex then real part: the cotangent's real part flows back.
    f = lambda x: ft.sum(ft.real(ft.astype(x, C128) * (1 + 2j)))  # noqa: E731
    g = ft.grad(f)(ft.asarray([1.0, 2.0], dtype=ft.float64))
    assert g.tolist() == [1.0, 1.0] and dt.is_float(g.dtype)


def test_torch_constructors_and_views():
    re, im = ft.asarray([1.0, -2.0], dtype=ft.float64), ft.asarray([0.5, 3.0], dtype=ft.float64)
    z = ft.complex(re, im)
    assert z.dtype == C128 and z.tolist() == [1 + 0.5j, -2 + 3j]
    assert ft.complex(ft.ones(2), 1.0).dtype == C64
    np.testing.assert_allclose(ft.polar(re, im).numpy(), np.abs(re.numpy()) * 0 + re.numpy()
                               * np.exp(1j * im.numpy()))  # fmt: skip
    pairs = ft.view_as_real(ft.asarray(Z))
    assert pairs.shape == (2, 2, 2) and pairs.dtype == ft.float64
    np.testing.assert_array_equal(ft.view_as_complex(pairs).numpy(), Z)
    with pytest.raises(TypeError, match="complex: expected real float"):
        ft.complex(ft.asarray([1j]), 1.0)
    with pytest.raises(ValueError, match="view_as_complex: expected a last axis of size 2"):
        ft.view_as_complex(ft.ones((2, 3)))
    g = ft.grad(lambda r: ft.real(ft.sum(ft.complex(r, r * r) * (1 - 1j))))(re)
    np.testing.assert_allclose(g.numpy(), 1 + 2 * re.numpy())


def test_tape_gives_pytorchs_complex_gradients():
    torch = pytest.importorskip("torch")
    zs, ws = [1 + 2j, 3 - 1j], [0.5 - 1j, 2j]
    z, w = ft.tensor(zs, requires_grad=True), ft.tensor(ws, requires_grad=True)
    (ft.abs(z * w + ft.exp(z)) ** 2).sum().backward()
    t, u = torch.tensor(zs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    ((t * u + torch.exp(t)).abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), t.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), u.grad.numpy(), rtol=1e-5)
    (g,) = ft.autograd.grad((z * w).real.sum(), z)
    (h,) = torch.autograd.grad((t * u).real.sum(), t)
    np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-6)
    # SGD on a complex parameter descends, as PyTorch's does.
    p = ft.nn.Parameter(ft.asarray([2 + 2j]))
    opt = ft.optim.SGD([p], lr=0.1)
    for _ in range(50):
        opt.zero_grad()
        (ft.abs(p - (1 - 1j)) ** 2).sum().backward()
        opt.step()
    assert abs(complex(p[0]) - (1 - 1j)) < 1e-3


def test_complex_expm1_special_values_are_the_standards():
    inf, nan = np.inf, np.nan
    cases = {
        complex(inf, nan): (inf, nan), complex(nan, 0.0): (nan, 0.0), complex(inf, 0.0): (inf, 0.0),
        complex(-inf, inf): (-1.0, 0.0), complex(inf, inf): (inf, nan),
        complex(-inf, nan): (-1.0, 0.0), complex(0.0, 0.0): (0.0, 0.0),
    }  # fmt: skip
    z = ft.asarray(list(cases), dtype=C128)
    got = ft.expm1(z).numpy()
    want = np.array([complex(*v) for v in cases.values()])
    np.testing.assert_array_equal(np.abs(got.real), np.abs(want.real))
    np.testing.assert_array_equal(np.abs(got.imag), np.abs(want.imag))
    small = np.array([1e-9 + 1e-9j, 1 + 2j])
    np.testing.assert_allclose(ft.expm1(ft.asarray(small)).numpy(), np.expm1(small), rtol=1e-14)
    np.testing.assert_allclose(ft.jit(ft.expm1)(ft.asarray(small)).numpy(), np.expm1(small))


def test_var_and_std_of_complex_are_real():
    z = ft.asarray(Z)
    np.testing.assert_allclose(ft.var(z, axis=0).numpy(), np.var(Z, axis=0))
    np.testing.assert_allclose(ft.std(z, correction=1).numpy(), np.std(Z, ddof=1))
    assert ft.std(ft.asarray(Z, dtype=C64)).dtype == ft.float32
