"""Template kernels (gather, scatter*, scans, reduce_window) against the eager numpy impls.

Hypothesis draws shapes, dtypes and params; values come from a drawn seed (numpy is
faster to draw from than hypothesis). Each new spec costs one LLVM compile, so the
ranks and dtypes are drawn from small sets and the examples are few; the disk cache
makes reruns cheap. Bit-moving templates (gather, scatter) and the sequential ones
(scans, window reductions of at most 64 taps) are compared bit for bit.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.devices import cpu_impls
from fntorch.fx.core import primitives
from fntorch.lowering import cache
from fntorch.lowering import templates as T
from fntorch.lowering.fusion import LibraryStep, TemplateStep
from fntorch.lowering.spec import KernelSpec
from fntorch.lowering.spec_special import (
    GatherSpec,
    ScanSpec,
    ScatterSpec,
    WindowSpec,
    spec_for,
)
from fntorch.lowering.table import lowering_table
from fntorch.ops import lax

PRIMS = primitives
F16, BF16 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I8, I32, I64, U8, U64 = (np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint64))
BOOL = np.dtype(np.bool_)


def _rng(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**31 - 1), label="seed"))


def _values(rng, shape, dtype, nan=False):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dtype)
    x = rng.standard_normal(shape) * 3
    if nan and x.size:
        x.flat[rng.integers(0, x.size, 1)] = np.nan
    return x.astype(dtype)


def _strided(rng, x):
    """``x`` or a reversed view of it (kernels read any strides)."""
    if x.ndim and rng.random() < 0.5:
        return x[(slice(None, None, -1),) * x.ndim]
    return x


def _eager(prim, inputs, params):
    return np.asarray(cpu_impls[PRIMS[prim]](*inputs, **params))


def _run(prim, inputs, params):
    k = T.template_kernel(prim, inputs, params)
    assert k is not None, (prim, [a.dtype for a in inputs])
    ref = _eager(prim, inputs, params)
    out = np.empty(ref.shape, ref.dtype)
    k(inputs, [out])
    return out, ref


def _same(out, ref):
    """Bit for bit, except that any NaN matches any NaN."""
    assert out.shape == ref.shape and out.dtype == ref.dtype
    if out.dtype.kind == "f" or out.dtype == BF16:
        o, r = out.astype(np.float64), ref.astype(np.float64)
        nan = np.isnan(o)
        assert (nan == np.isnan(r)).all()
        np.testing.assert_array_equal(np.signbit(o[~nan]), np.signbit(r[~nan]))
        np.testing.assert_array_equal(o[~nan], r[~nan])
    else:
        np.testing.assert_array_equal(out, ref)


def _operand_and_axes(data, rng, dtype):
    rank = data.draw(st.integers(1, 3), label="rank")
    shape = tuple(data.draw(st.integers(1, 4), label="side") for _ in range(rank))
    k = data.draw(st.integers(1, min(rank, 2)), label="k")
    axes = tuple(data.draw(st.permutations(range(rank)), label="axes")[:k])
    return _strided(rng, _values(rng, shape, dtype)), axes


def _indices(data, rng, x, axes, lo=-3, hi=3):
    """Index tensors of broadcasting shapes, values past both ends of their axis."""
    idt = data.draw(st.sampled_from([I32, I64, U8, I8, U64]), label="index dtype")
    brank = data.draw(st.integers(0, 2), label="batch rank")
    bshape = tuple(data.draw(st.integers(1, 4), label="batch side") for _ in range(brank))
    out = []
    for a in axes:
        shape = tuple(s if rng.random() < 0.7 else 1 for s in bshape)
        lo_ = 0 if idt.kind == "u" else lo
        out.append(rng.integers(lo_, x.shape[a] + hi, shape).astype(idt))
    return out


# ----------------------------------------------------------------------- gather
@settings(max_examples=12)
@given(data=st.data())
def test_gather_matches_eager(data):
    rng = _rng(data)
    dtype = data.draw(st.sampled_from([F32, F64, F16, BF16, I8, I64, BOOL]), label="dtype")
    x, axes = _operand_and_axes(data, rng, dtype)
    idx = _indices(data, rng, x, axes)
    out, ref = _run("gather", [x, *idx], {"axes": axes})
    _same(out, ref)


def test_gather_clamps_huge_unsigned_and_negative_indices():
    x = np.arange(5, dtype=np.float32)
    for idx in (np.array([2**64 - 1, 0, 7, 4], np.uint64), np.array([-128, 127, 3], np.int8)):
        out, ref = _run("gather", [x, idx], {"axes": (0,)})
        _same(out, ref)
    assert out.tolist() == [0.0, 4.0, 3.0]


# ---------------------------------------------------------------------- scatter
_SCATTERS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


@settings(max_examples=15)
@given(data=st.data())
def test_scatter_matches_eager(data):
    rng = _rng(data)
    kind = data.draw(st.sampled_from(_SCATTERS), label="kind")
    dtypes = [F32, F64, I32, F16] + ([BOOL] if kind == "scatter" else [])
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    x, axes = _operand_and_axes(data, rng, dtype)
    idx = _indices(data, rng, x, axes, lo=-1, hi=1)  # few values: many duplicates
    bshape = np.broadcast_shapes(*(i.shape for i in idx))
    gshape = bshape + tuple(s for d, s in enumerate(x.shape) if d not in axes)
    nd = data.draw(st.integers(0, len(gshape)), label="updates rank")
    ushape = tuple(s if rng.random() < 0.7 else 1 for s in gshape[len(gshape) - nd :])
    upd = _strided(rng, _values(rng, ushape, dtype))
    out, ref = _run(kind, [x, *idx, upd], {"axes": axes})
    _same(out, ref)


@pytest.mark.parametrize("dtype", [F32, I32, F16])
def test_scatter_add_accumulates_duplicates_and_drops_out_of_range(dtype):
    x = np.zeros((3, 2), dtype)
    idx = np.array([1, 1, 1, -1, 3, 1, 0], np.int64)
    upd = np.ones((7, 2), dtype)
    out, ref = _run("scatter_add", [x, idx, upd], {"axes": (0,)})
    _same(out, ref)
    assert out[:, 0].tolist() == [1, 4, 0]


def test_a_bound_scatter_called_with_new_shapes_uses_them():
    # A bound template remembers what it derived from the operands' shapes; a call with
    # other shapes (the same spec: same ranks and dtypes) must not reuse it.
    x = np.zeros((4, 3), np.float32)
    idx, upd = np.array([[1], [3]]), np.ones((2, 1, 3), np.float32)
    k = T.template_kernel("scatter_add", [x, idx, upd], {"axes": (0,)})
    for idx in (np.array([[1], [3]]), np.array([[0], [0], [2]]), np.array([[2]])):
        upd = np.arange(idx.size * 3, dtype=np.float32).reshape(*idx.shape, 3)
        out = np.empty_like(x)
        k([x, idx, upd], [out])
        _same(out, _eager("scatter_add", [x, idx, upd], {"axes": (0,)}))


def test_scatter_min_max_mul_accumulate_duplicates():
    x = np.full(3, 2.0, np.float32)
    idx = np.array([0, 0, 2, 0, 2], np.int32)
    upd = np.array([5.0, -1.0, 3.0, 0.5, np.nan], np.float32)
    for kind, want in (
        ("scatter_max", [5.0, 2.0, np.nan]),
        ("scatter_min", [-1.0, 2.0, np.nan]),
        ("scatter_mul", [-5.0, 2.0, np.nan]),
    ):
        out, ref = _run(kind, [x, idx, upd], {"axes": (0,)})
        _same(out, ref)
        np.testing.assert_array_equal(out, np.asarray(want, np.float32))


# ------------------------------------------------------------------------ scans
_SCANS = ["cumsum", "cumprod", "cummax", "cummin"]


@settings(max_examples=15)
@given(data=st.data())
def test_scan_matches_eager(data):
    rng = _rng(data)
    kind = data.draw(st.sampled_from(_SCANS), label="kind")
    dtype = data.draw(st.sampled_from([F32, F64, I32, U8, F16, BF16]), label="dtype")
    rank = data.draw(st.integers(1, 3), label="rank")
    shape = tuple(data.draw(st.integers(1, 5), label="side") for _ in range(rank))
    axis = data.draw(st.integers(0, rank - 1), label="axis")
    reverse = data.draw(st.booleans(), label="reverse")
    x = _values(rng, shape, dtype, nan=kind in ("cummax", "cummin"))
    if kind == "cumprod" and dtype.kind == "f":
        x = (x / 3).astype(dtype)  # stay in range
    out, ref = _run(kind, [_strided(rng, x)], {"axis": axis, "reverse": reverse})
    _same(out, ref)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_and_threads(axis, reverse):
    # large enough for the parallel split (>= kernels.PARALLEL_THRESHOLD elements)
    x = np.random.default_rng(0).integers(-9, 9, (800, 700)).astype(np.int32)
    out, ref = _run("cumsum", [x], {"axis": axis, "reverse": reverse})
    _same(out, ref)
    y = np.asarray([[1.0, -0.0, np.nan, 2.0]], np.float32)
    out, ref = _run("cummax", [y], {"axis": 1, "reverse": reverse})
    _same(out, ref)


# ----------------------------------------------------------------- reduce_window
_WINDOWS = ["reduce_window_sum", "reduce_window_max", "reduce_window_min"]


@settings(max_examples=15)
@given(data=st.data())
def test_reduce_window_matches_eager(data):
    rng = _rng(data)
    kind = data.draw(st.sampled_from(_WINDOWS), label="kind")
    dtype = data.draw(st.sampled_from([F32, F64, I32, F16, BF16]), label="dtype")
    rank = data.draw(st.integers(1, 3), label="rank")
    shape = tuple(data.draw(st.integers(1, 6), label="side") for _ in range(rank))

    def ints(lo, hi, label):
        return tuple(data.draw(st.integers(lo, hi), label=label) for _ in range(rank))

    base = tuple(data.draw(st.sampled_from([1, 1, 2]), label="base") for _ in range(rank))
    padding = []
    for s, b in zip(shape, base):
        lo, hi = (data.draw(st.integers(-1, 2), label="pad") for _ in range(2))
        dil = (s - 1) * b + 1
        padding.append((lo, hi) if dil + lo + hi >= 0 else (0, 0))
    params = dict(
        window_dimensions=ints(1, 3, "window"),
        window_strides=ints(1, 2, "stride"),
        padding=tuple(padding),
        base_dilation=base,
        window_dilation=tuple(
            data.draw(st.sampled_from([1, 1, 2]), label="wdil") for _ in range(rank)
        ),
    )
    x = _strided(rng, _values(rng, shape, dtype, nan=kind != "reduce_window_sum"))
    out, ref = _run(kind, [x], params)
    _same(out, ref)


def test_max_pool_and_padded_sum_on_a_batch():
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 8)).astype(np.float32)
    pool = dict(
        window_dimensions=(1, 1, 2, 2),
        window_strides=(1, 1, 2, 2),
        padding=((0, 0),) * 4,
        base_dilation=(1,) * 4,
        window_dilation=(1,) * 4,
    )
    out, ref = _run("reduce_window_max", [x], pool)
    _same(out, ref)
    avg = dict(
        window_dimensions=(1, 1, 3, 3),
        window_strides=(1, 1, 2, 1),
        padding=((0, 0), (0, 0), (1, 1), (2, 0)),
        base_dilation=(1, 1, 1, 2),
        window_dilation=(1, 1, 2, 1),
    )
    out, ref = _run("reduce_window_sum", [x], avg)
    _same(out, ref)


# ---------------------------------------------------------------- specs, caches
def test_specs_keys_and_fallback_dtypes():
    A = type("A", (), {})

    def aval(shape, dtype):
        a = A()
        a.shape, a.dtype = shape, np.dtype(dtype)
        return a

    assert spec_for("cumsum", [aval((3,), BOOL)], {"axis": 0, "reverse": False}) is None
    assert (
        spec_for(
            "scatter_add", [aval((3,), BOOL), aval((2,), I32), aval((2,), BOOL)], {"axes": (0,)}
        )
        is None
    )
    assert (
        spec_for(
            "reduce_window_max",
            [aval((3,), BOOL)],
            dict(
                window_dimensions=(1,),
                window_strides=(1,),
                padding=((0, 0),),
                base_dilation=(1,),
                window_dilation=(1,),
            ),
        )
        is None
    )
    specs = [
        GatherSpec(F32, (I32,), 1, 0),
        ScatterSpec("scatter_add", F32, (I32,), 1, 0),
        ScatterSpec("scatter_max", F32, (I32,), 1, 0),
        ScanSpec("cumsum", F32, 1, 0, False),
        ScanSpec("cumsum", F32, 1, 0, True),
        WindowSpec("reduce_window_sum", F32, (2,), (1,), ((0, 0),), (1,), (1,)),
    ]
    keys = [s.key() for s in specs]
    fused = KernelSpec(1, 0, (F32,), (), (("in", 0),), (False,)).key()
    assert len(set(keys + [fused])) == len(keys) + 1
    for p in ("gather", "scatter_add", "cumsum", "cummin", "reduce_window_max"):
        assert lowering_table[PRIMS[p]].kind == "template"


def test_compiled_once_then_memory_hits():
    spec = ScanSpec("cummin", I64, 2, 0, True)
    k = T.compile_template(spec)
    hits = cache.stats["memory_hits"]
    assert T.compile_template(spec) is k
    assert cache.stats["memory_hits"] == hits + 1


# ----------------------------------------------------------------------- ft.jit
def _plan_kinds(f, *args):
    plan = ft.jit(f).lower(*args).plan
    return [
        (type(s).__name__, s.eqn.primitive.name) for s in plan.steps if isinstance(s, LibraryStep)
    ]


def test_jit_of_template_ops_equals_eager():
    rng = np.random.default_rng(2)
    x = ft.asarray(rng.standard_normal((6, 8)).astype(np.float32))
    idx = ft.asarray(rng.integers(-8, 8, (6, 8)).astype(np.int64))
    img = ft.asarray(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))

    def f(x, idx, img):
        g = ft.take_along_axis(x, idx, axis=1)
        c = ft.cumsum(g * 2.0, axis=0)
        m = lax.cummax(x, 1, reverse=True)
        pool = lax.reduce_window_max(img, (1, 1, 2, 2), (1, 1, 2, 2), ((0, 0),) * 4)
        s = lax.scatter_add(x, [ft.asarray(np.array([0, 0, 5, 9]))], ft.ones((4, 8)), (0,))
        return c + m + s, pool

    got, want = ft.jit(f)(x, idx, img), f(x, idx, img)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
    kinds = _plan_kinds(f, x, idx, img)
    assert {n for k, n in kinds if k == "TemplateStep"} == {
        "gather",
        "cumsum",
        "cummax",
        "reduce_window_max",
        "scatter_add",
    }
    assert all(k == "TemplateStep" for k, _ in kinds)


def test_jit_falls_back_to_the_library_for_unsupported_dtypes():
    b = ft.asarray(np.array([True, False, True]))

    def f(b):
        return lax.cummax(b, 0)

    np.testing.assert_array_equal(np.asarray(ft.jit(f)(b)), np.asarray(f(b)))
    assert _plan_kinds(f, b) == [("LibraryStep", "cummax")]
    assert isinstance(TemplateStep(None, None), LibraryStep)
