"""The CUDA device's eager impl table, run with numpy standing in for CuPy.

CI has no GPU, but most of ``cuda_impls`` is array-module code (index juggling, the
CPU's conv and window algorithms over ``xp``, the FFT's axes and dtypes, the host
routes): built over numpy, every native impl must give the CPU impl's results on every
contract case. What this cannot see is CuPy's own behaviour (its kernels' rounding,
signed zeros), which ``tests/cuda`` checks on a GPU.
"""

import types

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fntorch.devices import cpu_impls
from fntorch.devices.cuda_impls import _native, build_impls
from fntorch.fx import dtypes as dt
from tests.cases import all_cases
from tests.contract import as_list, case_ids


class _NumpyAsCupy(types.ModuleType):
    """numpy under CuPy's extra names (``asnumpy``); everything else is numpy's."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asnumpy(a):
        return np.asarray(a)


CP = _NumpyAsCupy("cupy_on_numpy")
# cuda_indexing's gather and scatter_add are CuPy RawKernels: only a GPU runs them.
_KERNELS = {"gather", "scatter_add"}
NATIVE = {p.name for p in _native(CP)} - _KERNELS
TABLE = build_impls(CP, {})
CASES = [c for c in all_cases() if c.prim.name in NATIVE and c.prim in cpu_impls]


def _compare(got, want, case):
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (case.name, g.shape, w.shape, g.dtype)
    if case.exact or g.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w, err_msg=case.name)
    else:
        np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol, err_msg=case.name)


def test_the_new_library_routes_are_native():
    assert {"conv_general_dilated", "reduce_window_max", "reduce_window_sum", "fft"} <= NATIVE
    for case in CASES:
        if case.prim.name in ("conv_general_dilated", "fft") or "window" in case.prim.name:
            assert not getattr(TABLE[case.prim], "through_host", False), case.name


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_native_cuda_impl_on_numpy_equals_the_cpu(case, data):
    dtypes = [d for d in case.dtypes if d != dt.bfloat16]  # Bf16Array is CuPy storage
    if not dtypes:
        pytest.skip("bfloat16 only")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    args, params = case.draw(data, dtype)
    assume(params.get("new_dtype") != dt.bfloat16)
    want = as_list(cpu_impls[case.prim](*[np.asarray(a) for a in args], **params))
    got = as_list(TABLE[case.prim](*[np.asarray(a) for a in args], **params))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _compare(g, w, case)


def test_cholesky_of_a_batch_with_a_failing_matrix_gives_it_nans():
    from fntorch.ops import _prims_decomp as pd

    good = np.array([[4.0, 0.0], [2.0, 5.0]])  # lower triangle of an SPD matrix
    bad = np.array([[-1.0, 0.0], [0.0, 1.0]])
    out = TABLE[pd.cholesky_p](np.stack([good, bad]))
    np.testing.assert_allclose(out[0], cpu_impls[pd.cholesky_p](good))
    assert np.isnan(out[1]).all()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.uint8])
def test_sign_and_signbit_keep_numpys_nans_and_zeros(dtype):
    from fntorch.ops import _prims_elementwise as ew

    if np.dtype(dtype).kind == "f":
        x = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, -3], dtype)
    else:
        x = np.array([0, 1, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
    got, want = TABLE[ew.sign_p](x), cpu_impls[ew.sign_p](x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    got, want = TABLE[ew.signbit_p](x), cpu_impls[ew.signbit_p](x)
    assert got.dtype == want.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cumulative_extremes_by_doubling_keep_numpys_nans_and_zeros(dtype, name):
    from fntorch.ops import _prims_reduce as r

    prim = {"cummax": r.cummax_p, "cummin": r.cummin_p}[name]
    x = np.random.default_rng(0).standard_normal((37, 5)) * 4
    if np.dtype(dtype).kind == "f":
        x[::7] = 0.0
        x[::11] = -0.0
        x[20, 1], x[9, 2], x[30, 2] = np.nan, -np.nan, np.nan
    x = x.astype(dtype)
    for axis in (0, 1):
        for reverse in (False, True):
            got = TABLE[prim](x, axis=axis, reverse=reverse)
            want = cpu_impls[prim](x, axis=axis, reverse=reverse)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_and_min_sign_zero_results_without_a_host_read(dtype, name):
    from fntorch.ops import _prims_reduce as r

    prim = {"reduce_max": r.reduce_max_p, "reduce_min": r.reduce_min_p}[name]
    rows = [[0.0, -0.0, -1.0], [-0.0, -0.0, -2.0], [0.0, 0.0, -3.0], [np.nan, -0.0, 0.0]]
    x = np.array(rows, dtype)
    x = np.concatenate([x, -x])
    for axes in ((1,), (0,), (0, 1)):
        got, want = TABLE[prim](x, axes=axes), cpu_impls[prim](x, axes=axes)
        np.testing.assert_array_equal(got, want)
        signed = ~np.isnan(want)  # a NaN result's sign is numpy's loop's choice
        np.testing.assert_array_equal(np.signbit(got)[signed], np.signbit(want)[signed])
    for shape, axes in (((0, 3), (0,)), ((3, 0), (1,)), ((0,), (0,))):
        e = np.empty(shape, dtype)
        np.testing.assert_array_equal(TABLE[prim](e, axes=axes), cpu_impls[prim](e, axes=axes))


# What takes the host on a GPU, as docs/DESIGN.md and cuda_impls' docstring list it
# (integer ``pow`` only; gather and scatter_add are RawKernels there, the host here).
HOST_ON_A_GPU = [
    "digamma", "eig", "erf_inv", "lgamma", "lu", "nextafter", "pow", "scatter",
    "scatter_max", "scatter_min", "scatter_mul",
]  # fmt: skip


def test_the_host_route_is_the_documented_list():
    from fntorch.devices.cuda_impls import host_primitives

    assert [p for p in host_primitives(TABLE) if p not in _KERNELS] == HOST_ON_A_GPU


def test_float_to_int_saturates_without_the_host():
    from fntorch.ops import _prims_structural as ps

    values = [np.nan, -np.inf, np.inf, 1e10, -1e10, 127.9, -128.9, -0.5, 3.7]
    x = np.array(values, np.float32)
    for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64):
        info = np.iinfo(dtype)
        # XLA's rule, by hand: NaN -> 0, else toward zero, clamped to the dtype's range
        want = [0 if v != v else min(max(int(v), info.min), info.max) if abs(v) < 1e30
                else (info.max if v > 0 else info.min) for v in values]  # fmt: skip
        got = TABLE[ps.convert_element_type_p](x, new_dtype=np.dtype(dtype))
        assert got.dtype == dtype and got.tolist() == want, (dtype, got.tolist(), want)


class _LikeCupy(_NumpyAsCupy):
    """numpy with two behaviours CuPy is allowed, and numpy's impls must not rely on:
    ``maximum``/``minimum`` keep the first of two equal values (+0.0, -0.0), and
    ``argsort`` orders floats by their bits as a radix sort does (-0.0 before +0.0, a
    negative NaN before everything)."""

    @staticmethod
    def maximum(a, b, out=None):
        return np.where(np.isnan(a) | (a >= b), a, b)

    @staticmethod
    def minimum(a, b, out=None):
        return np.where(np.isnan(a) | (a <= b), a, b)

    @staticmethod
    def argsort(k, axis=-1, kind=None):
        k = np.asarray(k)
        if k.dtype.kind != "f":
            return np.argsort(k, axis=axis, kind="stable")
        bits = k.view(np.dtype(f"u{k.dtype.itemsize}"))
        top = np.array(1 << (8 * k.dtype.itemsize - 1), bits.dtype)
        order = np.where(bits & top, ~bits, bits | top)  # the radix sort's float key
        return np.argsort(order, axis=axis, kind="stable")


@pytest.mark.parametrize("name", ["reduce_window_max", "reduce_window_min"])
def test_window_extremes_keep_the_cpus_tie_rule_whatever_cupys_is(name):
    from fntorch.devices.cpu_linalg import reduce_window_impl
    from fntorch.ops import _prims_linalg as pl

    x = np.array([0.0, -0.0, -0.0, 0.0, 1.0, -0.0, 0.0, -1.0], np.float32)
    params = dict(window_dimensions=(2,), window_strides=(1,), padding=((0, 0),),
                  base_dilation=(1,), window_dilation=(1,))  # fmt: skip
    got = reduce_window_impl(_LikeCupy("like_cupy"), name.rsplit("_", 1)[1])(x, **params)
    want = cpu_impls[getattr(pl, name + "_p")](x, **params)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_sort_keys_keep_numpys_order_under_a_radix_sort():
    from fntorch.devices.cpu_reduce import sort_impl
    from fntorch.ops import _prims_reduce as r

    keys = np.array([0.0, -0.0, np.nan, -np.nan, -1.0, 0.0, np.inf, -np.inf, -0.0], np.float32)
    vals = np.arange(keys.size, dtype=np.int32)
    params = dict(dimension=0, is_stable=True, num_keys=1)
    got = sort_impl(_LikeCupy("like_cupy"))(keys, vals, **params)
    np.testing.assert_array_equal(got[1], cpu_impls[r.sort_p](keys, vals, **params)[1])


def test_contractions_over_leading_axes_reach_the_product_as_views():
    # A weight gradient: x (batch, seq, d_in) and dy (batch, seq, d_out) contracted over
    # batch and seq. Merging the axes before transposing hands cuBLAS a transposed view
    # of each (no copy kernel); the result is the CPU's.
    from fntorch.devices.cuda_impls import _dot_general

    seen = []

    def matmul(a, b):
        seen.append((a, b))
        return np.matmul(a, b)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 3, 5)).astype(np.float32)
    dims = (((0, 1), (0, 1)), ((), ()))
    got = _dot_general(CP, matmul)(x, dy, dimension_numbers=dims, preferred_element_type=None)
    np.testing.assert_allclose(got, np.einsum("bsi,bso->io", x, dy), rtol=1e-5)
    ((a, b),) = seen
    assert np.shares_memory(a, x) and np.shares_memory(b, dy)
    # contracting axes out of order: still right (a transposing copy)
    dims = (((1, 0), (1, 0)), ((), ()))
    got = _dot_general(CP, matmul)(x, dy, dimension_numbers=dims, preferred_element_type=None)
    np.testing.assert_allclose(got, np.einsum("bsi,bso->io", x, dy), rtol=1e-5)


def test_sums_over_leading_axes_are_one_product_with_ones(monkeypatch):
    # bias gradients: a float sum over leading axes of a contiguous array is ones @ x (one
    # cuBLAS call on a GPU); other sums, and other dtypes, are the array module's sum
    from fntorch.ops import _prims_reduce as r

    made = []
    monkeypatch.setattr(
        CP, "ones", lambda *a, **k: made.append(a) or np.ones(*a, **k), raising=False
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8, 16)).astype(np.float32)
    x[0, 0, 0], x[1, 0, 1] = np.inf, np.nan
    impl = TABLE[r.reduce_sum_p]
    for axes, product in [((0,), True), ((0, 1), True), ((1,), False), ((0, 2), False)]:
        made.clear()
        got, want = impl(x, axes=axes), cpu_impls[r.reduce_sum_p](x, axes=axes)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5)
        assert bool(made) == product, axes
    made.clear()
    ints = rng.integers(0, 9, (4, 16)).astype(np.int32)
    np.testing.assert_array_equal(impl(ints, axes=(0,)), ints.sum(0))
    assert not made


class _FillsZerosWithMemset(_NumpyAsCupy):
    """CuPy's habit: a 0-d array made from a host value is filled, and a zero fill is a
    memset, so -0.0 arrives as +0.0."""

    @staticmethod
    def asarray(a, dtype=None):
        if isinstance(a, np.ndarray):  # a device array here: returned as it is
            return a if dtype is None else a.astype(dtype, copy=False)
        a = np.asarray(a, dtype)
        return np.zeros((), a.dtype) if a.ndim == 0 and a == 0 else a

    def broadcast_to(self, a, shape):
        return np.broadcast_to(self.asarray(a), shape)


def test_host_literal_operands_keep_the_sign_of_zero():
    # a compiled program's library steps get literal operands as host values
    from fntorch.ops import _prims_elementwise as ew
    from fntorch.ops import _prims_structural as ps

    table = build_impls(_FillsZerosWithMemset("cupy_like"), {})
    minus0 = np.float32(-0.0)
    out = table[ps.broadcast_in_dim_p](minus0, shape=(3,), broadcast_dimensions=())
    assert np.signbit(out).all()
    out = table[ew.select_n_p](np.zeros(3, np.int32), minus0, np.float32(1.0))
    assert np.signbit(out).all()
    assert np.signbit(table[ew.select_n_p](np.zeros(3, np.bool_), minus0)).all()
    assert np.signbit(table[ps.convert_element_type_p](-0.0, new_dtype=np.float32))
