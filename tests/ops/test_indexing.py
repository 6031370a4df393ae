"""Indexing (``t[idx]``) and functional updates (``t.at[idx].op(v)``) against numpy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fntorch as ft
from fntorch.ops import _indexing, _tensor  # noqa: F401  (attach the Tensor surface)

# Index expressions are varied: more examples than the suite's default (FNTORCH_MAX_EXAMPLES
# raises both).
SETTINGS = settings(max_examples=max(100, settings().max_examples))


# ------------------------------------------------------------------- index strategies


@st.composite
def indexed(draw, max_dims=4, max_side=5, allow_arrays=True):
    """(numpy array, fntorch index, numpy index) with a random numpy-style index."""
    side = st.sampled_from([0] + list(range(1, max_side + 1)) * 2)
    shape = tuple(draw(st.lists(side, min_size=0, max_size=max_dims)))
    a = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3)
    items, np_items = [], []
    dim = 0
    ellipsis = False
    adv = draw(st.sampled_from([None, "array", "array", "mask"])) if allow_arrays else None
    kinds = ["int", "slice", "slice", "none", "ellipsis"] + ([adv] * 3 if adv else [])
    b_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    used_mask = False
    n_items = draw(st.integers(min(len(shape), 1), len(shape) + 2))
    for _ in range(n_items):
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            items.append(None)
            np_items.append(None)
            continue
        if kind == "ellipsis":
            if ellipsis:
                continue
            ellipsis = True
            # The dims an ellipsis takes: whatever is left after the remaining items; we
            # emulate by letting it take zero or more dims here and tracking the rest.
            rest = draw(st.integers(0, len(shape) - dim))
            items.append(Ellipsis)
            np_items.append(Ellipsis)
            dim += rest
            continue
        if dim >= len(shape):
            break
        n = shape[dim]
        if kind == "int":
            if n == 0:
                kind = "slice"
            else:
                i = draw(st.integers(-n, n - 1))
                items.append(i)
                np_items.append(i)
                dim += 1
                continue
        if kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
            s = slice(draw(bound), draw(bound), step)
            items.append(s)
            np_items.append(s)
            dim += 1
            continue
        if kind == "array" and adv == "array" and n > 0:
            k = draw(st.integers(0, len(b_shape)))
            sub = tuple(1 if draw(st.booleans()) else d for d in b_shape[len(b_shape) - k :])
            seed = draw(st.integers(0, 2**31 - 1))
            idx = np.random.default_rng(seed).integers(-n, n, size=sub)
            form = draw(st.sampled_from(["numpy", "tensor", "list"]))
            items.append({"numpy": idx, "tensor": ft.asarray(idx), "list": idx.tolist()}[form])
            np_items.append(idx)
            dim += 1
            continue
        # (numpy skips the mask's shape check on empty arrays; our check stays: avoid
        # masks whose dims depend on how many dims the ellipsis guessed above.)
        empty_after_ellipsis = ellipsis and 0 in shape
        if kind == "mask" and adv == "mask" and not used_mask and not empty_after_ellipsis:
            used_mask = True
            k = draw(st.integers(1, min(2, len(shape) - dim)))
            seed = draw(st.integers(0, 2**31 - 1))
            m = np.random.default_rng(seed).random(shape[dim : dim + k]) < 0.5
            items.append(ft.asarray(m) if draw(st.booleans()) else m)
            np_items.append(m)
            dim += k
            continue
    if ellipsis and dim > len(shape):
        # The ellipsis took too much: give it none.
        pass
    idx_np = tuple(np_items)
    try:
        expected_shape = a[idx_np].shape
    except IndexError:
        expected_shape = None  # e.g. the ellipsis bookkeeping overshot
    return a, tuple(items), idx_np, expected_shape


# ---------------------------------------------------------------------------- reading


# Each test runs one of three paths: the eager numpy fast path (`t[idx]` of a concrete CPU
# tensor), the general path through the primitives, and that path staged into a graph.
PATHS = st.sampled_from(["eager", "general", "traced"])


def read(path, a, idx):
    x = ft.asarray(a)
    if path == "eager":
        return x[idx]
    if path == "general":
        return _indexing.getitem(x, idx)
    graph = ft.make_graph(lambda x: x[idx])(x)
    return ft.fx.eval_graph(graph, x)[0]


def write(path, a, idx, mode, v):
    x = ft.asarray(a)
    if path == "eager":
        return getattr(x.at[idx], mode)(v)
    if path == "general":
        return _indexing.update_general(x, idx, v, mode)
    graph = ft.make_graph(lambda x: getattr(x.at[idx], mode)(v))(x)
    return ft.fx.eval_graph(graph, x)[0]


@SETTINGS
@given(indexed(), PATHS)
def test_getitem_matches_numpy(case, path):
    a, idx, idx_np, expected_shape = case
    if expected_shape is None:
        with pytest.raises(IndexError):
            read(path, a, idx)
        return
    out = read(path, a, idx)
    ref = a[idx_np]
    assert out.shape == ref.shape, (idx_np, out.shape, ref.shape)
    assert out.dtype == ref.dtype
    np.testing.assert_array_equal(np.asarray(out), ref)


@pytest.mark.parametrize(
    "idx",
    [
        0,
        -1,
        (1, 2),
        slice(None, None, -1),
        (Ellipsis, 0),
        (None, 0),
        (0, None, slice(1, 3)),
        ([0, 2],),
        (slice(None), [0, 1]),
        ([0, 1], None, [1, 2]),
        (slice(None), [1, 0], 0),
        (0, slice(None), [0, 3]),
        ([[0], [1]], [0, 2]),
        (True,),
        (False,),
        (Ellipsis, None),
        (np.array([True, False, True]),),
        (np.array(1),),
        ([],),
        (slice(5, 1, -2), -2),
    ],
)
@pytest.mark.parametrize("path", ["eager", "general", "traced"])
def test_getitem_examples(idx, path):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    out = read(path, a, idx)
    np.testing.assert_array_equal(np.asarray(out), a[idx])
    assert out.shape == a[idx].shape


def test_getitem_dtypes_kept():
    for dtype in (ft.int32, ft.bool, ft.float64, ft.bfloat16, ft.uint8):
        x = ft.ones((3, 2), dtype=dtype)
        assert x[1:].dtype == dtype and x[[0, 0]].dtype == dtype


def test_getitem_index_dtypes():
    a = np.arange(10, dtype=np.float32)
    x = ft.asarray(a)
    for d in (np.int8, np.int32, np.uint8, np.int64):
        i = np.array([1, 3, 9], dtype=d)
        np.testing.assert_array_equal(np.asarray(x[i]), a[i])
        np.testing.assert_array_equal(np.asarray(x[ft.asarray(i)]), a[i])
    assert x[np.int64(-1)].item() == 9.0
    assert x[ft.asarray(2)].item() == 2.0


# ---------------------------------------------------------------------------- updates

_UFUNC_AT = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


@SETTINGS
@given(indexed(), st.sampled_from(["set", "add", "multiply", "min", "max"]), PATHS, st.data())
def test_at_matches_numpy(case, mode, path, data):
    a, idx, idx_np, shape = case
    if shape is None:
        return
    seed = data.draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    # A value of the full indexed shape or of a broadcastable suffix.
    k = data.draw(st.integers(0, len(shape)))
    vshape = tuple(1 if data.draw(st.booleans()) else s for s in shape[len(shape) - k :])
    if mode == "set":
        # With repeated indices, which update wins is unspecified: use one value.
        v = np.float32(rng.integers(-5, 5))
        ref = a.copy()
        ref[idx_np] = v
    else:
        v = rng.integers(-3, 4, size=vshape).astype(np.float32)
        ref = a.copy()
        _UFUNC_AT[mode].at(ref, idx_np, v)
        v = ft.asarray(v) if data.draw(st.booleans()) else v
    out = write(path, a, idx, mode, v)
    assert out.shape == a.shape and out.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(out), ref)


@SETTINGS
@given(indexed(allow_arrays=False), PATHS, st.data())
def test_at_set_array_values(case, path, data):
    a, idx, idx_np, shape = case
    if shape is None:
        return
    v = np.random.default_rng(data.draw(st.integers(0, 99))).random(shape).astype(np.float32)
    ref = a.copy()
    ref[idx_np] = v
    np.testing.assert_array_equal(np.asarray(write(path, a, idx, "set", v)), ref)


def test_at_examples():
    x = ft.zeros(5)
    assert x.at[ft.asarray([0, 0, 3])].add(1.0).tolist() == [2.0, 0.0, 0.0, 1.0, 0.0]
    assert x.at[-1].set(7).tolist() == [0.0, 0.0, 0.0, 0.0, 7.0]
    assert x.at[1:4].set(ft.asarray([1.0, 2.0, 3.0])).tolist() == [0, 1, 2, 3, 0]
    assert x.at[::2].add(2.0).tolist() == [2, 0, 2, 0, 2]
    assert x.at[:].set(1.0).tolist() == [1.0] * 5
    assert x.at[...].add(1.0).tolist() == [1.0] * 5
    assert ft.ones(3).at[1].multiply(4.0).tolist() == [1.0, 4.0, 1.0]
    assert ft.ones(3).at[[0, 2]].min(ft.asarray([0.5, 3.0])).tolist() == [0.5, 1.0, 1.0]
    assert ft.ones(3).at[[0, 2]].max(ft.asarray([0.5, 3.0])).tolist() == [1.0, 1.0, 3.0]
    assert x.at[2].get().item() == 0.0
    m = ft.asarray([True, False, True, False, False])
    assert x.at[m].set(1.0).tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]


def test_at_casts_value_to_dtype():
    x = ft.zeros(3, dtype=ft.int32)
    y = x.at[0].set(2.7)
    assert y.dtype == ft.int32 and y.tolist() == [2, 0, 0]
    z = ft.zeros(2).at[1].add(ft.asarray(3, dtype=ft.int64))
    assert z.dtype == ft.float32 and z.tolist() == [0.0, 3.0]


@pytest.mark.parametrize("path", ["eager", "general"])
def test_at_value_overflow_is_an_error(path):
    with pytest.raises(TypeError, match="int8"):
        write(path, np.zeros(2, np.int8), 0, "set", 300)


def test_at_does_not_mutate():
    x = ft.zeros(3)
    x.at[0].set(1.0)
    x.at[[0, 1]].add(1.0)
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_at_bad_value_shape():
    with pytest.raises(ValueError, match="broadcast"):
        ft.zeros((3, 4)).at[0].set(ft.ones(3))


# ---------------------------------------------------------------------------- errors


def test_setitem_names_functional_update():
    t = ft.zeros(3)
    with pytest.raises(TypeError, match=r"\.at\[i\]\.set\(v\)"):
        t[0] = 1.0


@pytest.mark.parametrize("idx", [5, -6, (0, 9), [0, 7], (slice(None), ft.asarray([3, -9]))])
@pytest.mark.parametrize("path", ["eager", "general", "traced"])
def test_out_of_range_names_index_and_size(idx, path):
    a = np.zeros((5, 4), np.float32)
    with pytest.raises(IndexError, match=r"index -?\d+ is out of bounds for axis \d with size \d"):
        read(path, a, idx)
    with pytest.raises(IndexError, match="out of bounds"):
        write(path, a, idx, "set", 1.0)


def test_too_many_indices_and_bad_types():
    t = ft.zeros((2, 2))
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="only integers"):
        t[1.5]
    with pytest.raises(IndexError, match="only integers"):
        t[ft.asarray([0.0])]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="boolean index"):
        t[np.array([True, False, True])]
    with pytest.raises(IndexError, match="broadcast"):
        t[[0, 1], [0, 1, 0]]


# ----------------------------------------------------------------------- under transforms


def test_traced_mask_raises_concretization_error():
    def f(x):
        return x[x > 0]

    with pytest.raises(ft.ConcretizationError, match="ft.where"):
        ft.vmap(f)(ft.ones((2, 3)))


def test_traced_scalar_index_uses_dynamic_slice():
    x = ft.arange(12).reshape(3, 4)
    g = ft.make_graph(lambda x, i: x[i])(x, ft.asarray(1))
    names = [e.primitive.name for e in g.eqns]
    assert "dynamic_slice" in names
    out = ft.vmap(lambda i: x[i])(ft.asarray([2, -1, 0]))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x)[[2, -1, 0]])


def test_traced_index_arrays_wrap_negative():
    x = ft.arange(10) * 10
    out = ft.vmap(lambda i: x[i])(ft.asarray([[1, -1], [-2, 3]]))
    assert out.tolist() == [[10, 90], [80, 30]]


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_narrow_negative_indices_on_a_longer_axis(dtype):
    # i + n would overflow the index dtype: wrapping widens it first.
    n = int(np.iinfo(dtype).max) + 73
    x = ft.arange(n)
    i = ft.asarray(np.array(-1, dtype))
    ii = ft.asarray(np.array([-1, -100, 5], dtype))
    assert int(ft.jit(lambda x, i: x[i])(x, i)) == n - 1
    assert ft.jit(lambda x, i: x[i])(x, ii).tolist() == [n - 1, n - 100, 5]
    assert x[ii].tolist() == [n - 1, n - 100, 5]
    assert ft.vmap(lambda i: x[i])(ii).tolist() == [n - 1, n - 100, 5]
    assert int(ft.jit(lambda x, i: x.at[i].set(-7))(x, i)[-1]) == -7
    assert ft.take(x, ii).tolist() == [n - 1, n - 100, 5]
    assert ft.jit(lambda x, i: ft.take(x, i))(x, ii).tolist() == [n - 1, n - 100, 5]
    assert ft.take_along_axis(x, ii, axis=0).tolist() == [n - 1, n - 100, 5]


def test_grad_through_indexing_and_updates():
    def f(x):
        y = x.at[1].set(0.0)
        return (y[[0, 0, 2]] * 2.0).sum() + x[::-1][0]

    g = ft.grad(f)(ft.asarray([1.0, 2.0, 3.0]))
    assert g.tolist() == [4.0, 0.0, 3.0]
    h = ft.grad(lambda x: x.at[[0, 0]].add(x[1]).sum())(ft.asarray([1.0, 2.0]))
    assert h.tolist() == [1.0, 3.0]


def test_at_under_vmap_with_traced_indices_and_values():
    x = ft.zeros((3, 4))
    out = ft.vmap(lambda i, v: x.at[i].set(v))(ft.asarray([0, -1]), ft.asarray([1.0, 2.0]))
    ref = np.zeros((2, 3, 4), np.float32)
    ref[0, 0] = 1.0
    ref[1, -1] = 2.0
    np.testing.assert_array_equal(np.asarray(out), ref)
    out = ft.vmap(lambda i: x.at[:, i].add(1.0))(ft.asarray([[0, 0], [1, 3]]))
    ref = np.zeros((2, 3, 4), np.float32)
    np.add.at(ref[0], (slice(None), [0, 0]), 1.0)
    np.add.at(ref[1], (slice(None), [1, 3]), 1.0)
    np.testing.assert_array_equal(np.asarray(out), ref)


def test_traced_operand_with_static_indices():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    f = lambda x: x[:, [2, 0], ::-2].at[0, 1].add(100.0)  # noqa: E731
    ref = a[:, [2, 0], ::-2].copy()
    ref[0, 1] += 100.0
    out = ft.vmap(f)(ft.asarray(a[None].repeat(2, 0)))
    np.testing.assert_array_equal(np.asarray(out), np.stack([ref, ref]))
    g = ft.make_graph(f)(ft.asarray(a))
    np.testing.assert_array_equal(np.asarray(ft.fx.eval_graph(g, ft.asarray(a))[0]), ref)
