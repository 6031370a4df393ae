"""matmul, tensordot, vecdot, outer and einsum against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fntorch as ft
from tests.ops.api_testing import arrays, assert_close

TOL = dict(rtol=1e-5, atol=1e-5)


def _arr(data, dtype, shape):
    return data.draw(arrays(dtype, shape, finite=True, min_value=-3, max_value=3))


@given(data=st.data())
def test_matmul(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32]))
    m, k, n = (data.draw(st.integers(1, 4)) for _ in range(3))
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    b1 = tuple(s if data.draw(st.booleans()) else 1 for s in batch)
    b2 = tuple(s if data.draw(st.booleans()) else 1 for s in batch)
    b1 = b1[data.draw(st.integers(0, len(b1))) :]
    form = data.draw(st.sampled_from(["mm", "vm", "mv", "vv"]))
    s1 = (k,) if form[0] == "v" else b1 + (m, k)
    s2 = (k,) if form[1] == "v" else b2 + (k, n)
    x1, x2 = _arr(data, dtype, s1), _arr(data, dtype, s2)
    assert_close(ft.matmul(ft.asarray(x1), ft.asarray(x2)), np.matmul(x1, x2), **TOL)


def test_matmul_promotion_and_errors():
    got = ft.matmul(ft.ones((2, 3), dtype=ft.int32), ft.ones((3,), dtype=ft.float64))
    assert got.dtype == ft.float64
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        ft.matmul(ft.zeros((2, 3)), ft.zeros((4, 5)))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(2,\)"):
        ft.matmul(ft.zeros((2, 3)), ft.zeros((2,)))
    with pytest.raises(ValueError, match="matmul"):
        ft.matmul(ft.zeros(()), ft.zeros((2,)))
    with pytest.raises(ValueError, match=r"matmul.*batch"):
        ft.matmul(ft.zeros((2, 2, 3)), ft.zeros((3, 3, 4)))


@given(data=st.data())
def test_tensordot(data):
    sizes = [data.draw(st.integers(1, 3)) for _ in range(5)]
    x1 = _arr(data, np.float64, tuple(sizes[:3]))
    x2 = _arr(data, np.float64, tuple(sizes[1:]))
    for axes in (0, 1, 2):
        a1, a2 = x1, x2
        if axes == 1:
            a2 = _arr(data, np.float64, (sizes[2],) + tuple(sizes[3:]))
        if axes == 0:
            a2 = x2
        if axes == 2:
            a2 = _arr(data, np.float64, tuple(sizes[1:3]) + (sizes[4],))
        assert_close(
            ft.tensordot(ft.asarray(a1), ft.asarray(a2), axes=axes), np.tensordot(a1, a2, axes)
        )
    a2 = _arr(data, np.float64, (sizes[2], sizes[0]))
    got = ft.tensordot(ft.asarray(x1), ft.asarray(a2), axes=([0, -1], [1, 0]))
    assert_close(got, np.tensordot(x1, a2, axes=([0, 2], [1, 0])), rtol=1e-12)


def test_tensordot_errors():
    with pytest.raises(ValueError, match=r"tensordot.*\(2, 3\).*\(2, 3\)"):
        ft.tensordot(ft.zeros((2, 3)), ft.zeros((2, 3)), axes=1)


@given(data=st.data())
def test_vecdot_outer(data):
    k = data.draw(st.integers(1, 4))
    x1 = _arr(data, np.float32, (data.draw(st.integers(1, 3)), 1, k))
    x2 = _arr(data, np.float32, (data.draw(st.integers(1, 3)), k))
    assert_close(ft.vecdot(ft.asarray(x1), ft.asarray(x2)), np.sum(x1 * x2, axis=-1), **TOL)
    y1 = _arr(data, np.float32, (k, 2))
    assert_close(ft.vecdot(ft.asarray(y1), ft.asarray(y1), axis=0), np.sum(y1 * y1, axis=0), **TOL)
    a, b = _arr(data, np.int32, (k,)), _arr(data, np.int32, (3,))
    assert_close(ft.outer(ft.asarray(a), ft.asarray(b)), np.outer(a, b))
    with pytest.raises(ValueError, match="vecdot"):
        ft.vecdot(ft.zeros((2, 3)), ft.zeros((2, 4)))


EINSUM_SPECS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(5, 1, 3, 4), (2, 4, 5)]),
    ("i...->...", [(3, 2, 4)]),
    ("...i,...i->...", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("abc,cd,bd->ad", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,kl->ijkl", [(2, 1), (1, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ab,ab,ab->", [(2, 3), (2, 3), (2, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("spec, shapes", EINSUM_SPECS, ids=[s for s, _ in EINSUM_SPECS])
def test_einsum(spec, shapes):
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=s).astype(np.float64) for s in shapes]
    got = ft.einsum(spec, *[ft.asarray(x) for x in xs])
    assert_close(got, np.einsum(spec.replace(" ", ""), *xs), rtol=1e-12, atol=1e-12)


def test_einsum_ints_and_promotion():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_close(ft.einsum("ij,j->i", ft.asarray(a), ft.asarray(np.ones(3, np.int32))),
                 np.einsum("ij,j->i", a, np.ones(3, np.int32)))  # fmt: skip
    got = ft.einsum("ij,j->i", ft.asarray(a), ft.asarray(np.ones(3, np.float32)))
    assert got.dtype == ft.float32


def test_einsum_errors():
    with pytest.raises(ValueError, match="einsum"):
        ft.einsum("ij,jk->ik", ft.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"einsum.*'j'.*3.*4"):
        ft.einsum("ij,jk->ik", ft.zeros((2, 3)), ft.zeros((4, 5)))
    with pytest.raises(ValueError, match="einsum"):
        ft.einsum("ij->k", ft.zeros((2, 3)))
    with pytest.raises(ValueError, match="einsum"):
        ft.einsum("ijk->i", ft.zeros((2, 3)))


def test_matmul_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = (
        rng.normal(size=(3, 1, 2, 4)).astype(np.float32),
        rng.normal(size=(5, 4, 3)).astype(np.float32),
    )
    expected = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert_close(ft.matmul(ft.asarray(a), ft.asarray(b)), expected, **TOL)
