"""Host constants that general code paths make land on the device of the tensors they meet.

Index arrays (``x[[0, 2]]``, masks), ``.at`` update values, cotangents and tangents
broadcast from a scalar (``grad``, ``vmap``, ``jacrev``), iotas (``argsort``, random
counters) and scalar carries of control flow: on a second device each case gives the
CPU's result, on that device. The fake device is the one of ``test_second_device.py``.
"""

import numpy as np
import pytest

import fntorch as ft
from tests.devices.fake import fake_device


@pytest.fixture(scope="module")
def fake():
    yield from fake_device()


X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
V = np.array([1.0, -2.0, 3.0], np.float32)


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _check(fake, f, *arrays):
    """``f`` on the fake device equals ``f`` on the CPU, and its results are on the fake."""
    want = _leaves(f(*[ft.asarray(a) for a in arrays]))
    got = _leaves(f(*[ft.asarray(a, device=fake) for a in arrays]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device is fake
        assert w.device is ft.device("cpu")
        np.testing.assert_allclose(np.asarray(g.to("cpu")), np.asarray(w), rtol=1e-6)


def _fake_ints(fake, values):
    return ft.asarray(np.array(values), device=fake)


ADVANCED_READS = {
    "list": lambda x: x[[0, 2]],
    "numpy array": lambda x: x[np.array([2, 0, 2])],
    "negative": lambda x: x[[-1, 0]],
    "bool mask": lambda x: x[x > 0],
    "numpy bool mask": lambda x: x[np.array([True, False, True])],
    "slice then list": lambda x: x[1:, [0, 3]],
    "list then int": lambda x: x[[0, 2], 1],
    "two lists": lambda x: x[[0, 2], [1, 3]],
    "list, None, ellipsis": lambda x: x[[0, 1], None, ...],
    "bool scalar": lambda x: x[True],
    "at get": lambda x: x.at[[2, 0]].get(),
}


@pytest.mark.parametrize("name", list(ADVANCED_READS))
def test_advanced_indexing_on_the_second_device(fake, name):
    _check(fake, ADVANCED_READS[name], X)


def test_index_tensor_on_the_second_device(fake):
    idx = _fake_ints(fake, [2, 0])
    x = ft.asarray(X, device=fake)
    got = x[idx]
    assert got.device is fake
    np.testing.assert_array_equal(np.asarray(got.to("cpu")), X[[2, 0]])


UPDATES = {
    "int set": lambda x: x.at[1].set(5.0),
    "slice add": lambda x: x.at[0, 1:].add(1),
    "step slice set": lambda x: x.at[0, ::2].set(7.0),
    "whole column add": lambda x: x.at[:, 1].add(np.float32(2.0)),
    "whole tensor multiply": lambda x: x.at[:].multiply(2.0),
    "whole tensor set": lambda x: x.at[...].set(np.zeros((3, 4))),
    "list add numpy": lambda x: x.at[[0, 2]].add(np.array([1.0, 2.0, 3.0, 4.0])),
    "list set": lambda x: x.at[[0, 2], 1].set(9.0),
    "mask set": lambda x: x.at[x > 0].set(0.0),
    "numpy mask multiply": lambda x: x.at[np.array([True, False, True])].multiply(3.0),
    "min": lambda x: x.at[1].min(0.0),
    "max": lambda x: x.at[[1, 2], 0].max(10.0),
    "int multiply": lambda x: x.at[2, 3].multiply(-1.0),
}


@pytest.mark.parametrize("name", list(UPDATES))
def test_at_updates_on_the_second_device(fake, name):
    _check(fake, UPDATES[name], X)


def _g(f):
    return lambda a: ft.grad(lambda b: ft.sum(f(b)))(a)


TRANSFORMS = {
    "grad of sum times 2": lambda v: ft.grad(lambda a: a.sum() * 2.0)(v),
    "vmap of grad": lambda v: ft.vmap(ft.grad(lambda a: a * a))(v),
    "vmap of grad of a linear function": lambda v: ft.vmap(ft.grad(lambda a: a * 2.0))(v),
    "vmap of grad of a constant": lambda v: ft.vmap(ft.grad(lambda a: 0.0 * a + 3.0))(v),
    "value_and_grad": lambda v: ft.value_and_grad(lambda a: (a * a).sum())(v),
    "grad of an unused argument": lambda v: ft.grad(lambda a, b: (b * 2.0).sum())(v, v),
    "jacrev": lambda v: ft.jacrev(lambda a: ft.sin(a) * a)(v),
    "jacfwd": lambda v: ft.jacfwd(lambda a: ft.sin(a) * a)(v),
    "hessian": lambda v: ft.hessian(lambda a: (a**3).sum())(v),
    "jvp of an output of zero tangent": lambda v: ft.jvp(
        lambda a: (a, ft.stop_gradient(a)), (v,), (v,)
    ),
    "vjp": lambda v: ft.vjp(lambda a: a * 2.0, v)[1](v),
    "vmap in_axes None python scalar": lambda v: ft.vmap(lambda a, s: a * s, in_axes=(0, None))(
        v, 2.0
    ),
    "vmap in_axes None numpy scalar": lambda v: ft.vmap(lambda s, a: s * a, in_axes=(None, 0))(
        np.float32(2.0), v
    ),
    "vmap of a scalar output": lambda v: ft.vmap(lambda a, s: s, in_axes=(0, None))(v, 2.0),
    "grad of indexing": _g(lambda a: a[[0, 2]]),
    "grad of a mask read": _g(lambda a: a[a > 0]),
    "grad of at set": _g(lambda a: a.at[1].set(5.0)),
    "grad of at add": _g(lambda a: a.at[[0, 0]].add(a[1])),
    "grad of max": lambda v: ft.grad(lambda a: a.max())(v),
    "grad of prod": lambda v: ft.grad(ft.prod)(v),
    "vmap of indexing": lambda x: ft.vmap(lambda r: r[np.array([0, 2])])(x),
    "vmap of at set": lambda x: ft.vmap(lambda r: r.at[1].set(0.0))(x),
    "vmap of at add": lambda x: ft.vmap(lambda r: r.at[[0, 2]].add(np.array([1.0, 2.0])))(x),
    "grad of vmap of at multiply": lambda x: ft.grad(
        lambda a: ft.vmap(lambda r: r.at[[0, 2]].multiply(2.0))(a).sum()
    )(x),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_make_their_constants_on_the_second_device(fake, name):
    vector_cases = ("vmap of indexing", "vmap of at", "grad of vmap")
    _check(fake, TRANSFORMS[name], X if name.startswith(vector_cases) else V)


OTHERS = {
    "where with a scalar": lambda v: ft.where(v > 0, v, 0.0),
    "clip": lambda v: ft.clip(v, 0.0, 1.0),
    "argsort": lambda v: ft.argsort(v),
    "sort descending": lambda v: ft.sort(v, descending=True),
    "top_k": lambda v: ft.top_k(v, 2),
    "searchsorted": lambda v: ft.searchsorted(ft.sort(v), v),
    "nonzero": lambda v: ft.nonzero(v > 0),
    "isnan of ints": lambda v: ft.isnan(ft.astype(v, ft.int32)),
    "compare with an int out of range": lambda v: ft.astype(v, ft.int8) < 1000,
    "scan from a scalar carry": lambda v: ft.scan(lambda c, a: (c + a, c * 2.0), 0.0, v),
    "grad of scan": _g(lambda v: ft.scan(lambda c, a: (c + a, c * a), 0.0, v)[1]),
    "cond on a python bool": lambda v: ft.cond(True, lambda a: a * 2.0, lambda a: a, v),
    "fori_loop": lambda v: ft.fori_loop(0, 3, lambda i, a: a * 2.0 + i, v),
}


@pytest.mark.parametrize("name", list(OTHERS))
def test_other_constants_on_the_second_device(fake, name):
    _check(fake, OTHERS[name], V)


def test_random_with_a_key_on_the_second_device(fake):
    with ft.default_device(fake):
        key = ft.random.key(3)
    assert key.device is fake
    for draw in (
        lambda k: ft.random.normal(k, (4,)),
        lambda k: ft.random.uniform(k, (2, 3)),
        lambda k: ft.random.randint(k, (3,), 0, 9),
        lambda k: ft.random.split(k)[1],
    ):
        got, want = draw(key), draw(ft.random.key(3))
        assert got.device is fake
        np.testing.assert_array_equal(np.asarray(got.to("cpu")), np.asarray(want))


def test_tensors_on_two_devices_still_raise(fake):
    x = ft.asarray(V, device=fake)
    # Concrete indices are read on the host (bounds-checked there), wherever they live,
    # as PyTorch takes CPU indices for a tensor on any device; values are data: they raise.
    np.testing.assert_array_equal(np.asarray(x[ft.asarray([2, 0])].to("cpu")), V[[2, 0]])
    with pytest.raises(ValueError, match=r"different devices \(fake:0 and cpu\)"):
        x.at[[0, 1]].set(ft.ones(2))
    with pytest.raises(ValueError, match="different devices"):
        x + ft.ones(3)


def test_batching_rule_iotas_and_permutation_follow_the_device(fake):
    x = ft.asarray(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32), device=fake)
    j = _fake_ints(fake, [2, 0])
    got = ft.vmap(lambda r, i: r[i])(x, j)
    assert got.device is fake
    np.testing.assert_array_equal(np.asarray(got.to("cpu")), [3.0, 4.0])
    with ft.default_device(fake):
        key = ft.random.key(0)
    perm = ft.random.permutation(key, 5)
    assert perm.device is fake
    assert sorted(np.asarray(perm.to("cpu")).tolist()) == [0, 1, 2, 3, 4]


def test_a_generator_whose_key_cell_moved_to_the_second_device(fake):
    # A compiled step on a GPU writes the generator's key back as a device buffer; the
    # next eager draw (dropout's key) must make its counters beside that key. The cell
    # is a Tensor subclass, which constant_device once skipped.
    g, ref = ft.Generator().manual_seed(5), ft.Generator().manual_seed(5)
    g._cell.set_(g._cell.data.to(fake))
    assert g._cell.device is fake
    from fntorch.random._torch_style import draw_key

    for _ in range(2):
        got, want = draw_key(g, device=fake), draw_key(ref)
        assert got.device is fake
        np.testing.assert_array_equal(np.asarray(got.to("cpu")), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(g.get_state()), np.asarray(ref.get_state()))
