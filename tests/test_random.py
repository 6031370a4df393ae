"""ft.random: threefry known answers, JAX's bits, eager == jit == vmap, distributions, errors."""

import doctest
import math

import numpy as np
import pytest

import fntorch as ft
from fntorch import random as R

F = ft.nn.functional


def arr(t):
    return np.asarray(t)


def same(mine, theirs) -> bool:
    """Equal values; bit for bit when the dtypes agree (integer widths may differ: JAX's
    default int is int32, fntorch's int64)."""
    a, b = arr(mine), np.asarray(theirs)
    if a.dtype == b.dtype:
        return a.shape == b.shape and a.tobytes() == b.tobytes()
    return np.array_equal(a, b)


# ------------------------------------------------------------------ known answers

# Random123's threefry2x32_20 test vectors (DEShawResearch/Random123, kat_vectors;
# the same three as JAX's testThreefry2x32): (key, counter) -> output.
THREEFRY_KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key,count,expected", THREEFRY_KAT)
def test_threefry_known_answers(key, count, expected):
    out = R.threefry_2x32(np.array(key, np.uint32), np.array(count, np.uint32))
    assert tuple(arr(out).tolist()) == expected
    jitted = ft.jit(R.threefry_2x32)(
        ft.asarray(np.array(key, np.uint32)), ft.asarray(np.array(count, np.uint32))
    )
    assert tuple(arr(jitted).tolist()) == expected


def test_threefry_odd_count_is_padded():
    k = np.array([1, 2], np.uint32)
    odd = arr(R.threefry_2x32(k, np.arange(3, dtype=np.uint32)))
    assert odd.shape == (3,)
    # [0, 1, 2] is hashed as the blocks (0, 2) and (1, 0); the pad's output is dropped.
    first = arr(R.threefry_2x32(k, np.array([0, 2], np.uint32)))
    second = arr(R.threefry_2x32(k, np.array([1, 0], np.uint32)))
    assert odd.tolist() == [first[0], second[0], first[1]]


def test_known_answers_of_keys_and_draws():
    # JAX's outputs (jax.random with its default threefry implementation).
    k0 = R.key(0)
    assert arr(k0).tolist() == [0, 0] and k0.dtype == ft.uint32 and k0.shape == (2,)
    assert arr(R.split(k0)).tolist() == [[0x6B200159, 0x99BA4EFE], [928981903, 3453687069]]
    k42 = [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]]
    assert arr(R.split(R.key(42), 3)).tolist() == k42
    assert arr(R.fold_in(R.key(42), 2**32 - 1)).tolist() == [2398536845, 3890976714]
    assert arr(R.bits(k0, (3,))).tolist() == [4070199207, 4202968722, 1427181096]
    u = arr(R.uniform(k0, (3,)))
    assert u.view(np.uint32).tolist() == [1064475214, 1064993846, 1051337244]
    ints = arr(R.randint(R.key(1), (8,), 0, 100, ft.int32))
    assert ints.tolist() == [96, 27, 40, 53, 68, 84, 38, 81]
    assert arr(R.permutation(R.key(1), 8)).tolist() == [7, 6, 3, 2, 0, 1, 5, 4]


def test_key_seeds():
    assert arr(R.key(2**32 + 7)).tolist() == [1, 7]
    assert arr(R.key(-1)).tolist() == [2**32 - 1, 2**32 - 1]  # 64-bit two's complement
    assert arr(R.key(2**64 - 1)).tolist() == [2**32 - 1, 2**32 - 1]
    assert arr(R.key(np.int64(5))).tolist() == [0, 5]
    assert arr(R.key(ft.asarray(2**40 + 3))).tolist() == [256, 3]
    assert arr(R.key(ft.asarray(np.int32(-1)))).tolist() == [0, 2**32 - 1]  # zero-extended
    seeds = ft.asarray([0, 1, 2**33])
    assert arr(ft.vmap(R.key)(seeds)).tolist() == [[0, 0], [0, 1], [2, 0]]
    assert arr(ft.jit(R.key)(ft.asarray(2**33 + 1))).tolist() == [2, 1]


# ------------------------------------------------------------------ against JAX


def _seeds():
    rng = np.random.RandomState(0)
    return [0, 1, 42, 2**31 - 1] + rng.randint(0, 2**31 - 1, size=6).tolist()


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


def test_matches_jax_bits(jax):
    jr = jax.random
    for seed in _seeds():
        k, jk = R.key(seed), jr.PRNGKey(seed)
        assert same(k, jk)
        for num in (2, 5, (2, 3)):
            assert same(R.split(k, num), jr.split(jk, num))
        for data in (0, 7, 2**31, 2**32 - 1):
            assert same(R.fold_in(k, data), jr.fold_in(jk, data))
        for dtype in ("uint8", "uint16", "uint32"):
            assert same(R.bits(k, (3, 5), getattr(ft, dtype)), jr.bits(jk, (3, 5), dtype))
        for dtype in ("float32", "float16", "bfloat16"):  # bit for bit
            assert same(R.uniform(k, (4, 3), getattr(ft, dtype)), jr.uniform(jk, (4, 3), dtype))
        assert same(R.randint(k, (50,), -3, 17, ft.int32), jr.randint(jk, (50,), -3, 17))
        for lo, hi, dtype in ((0, 256, "uint8"), (-100, 100, "int8"), (5, 9000, "int16")):
            mine = arr(R.randint(k, (40,), lo, hi, getattr(ft, dtype)))
            assert same(mine, jr.randint(jk, (40,), lo, hi, dtype))
        assert same(R.bernoulli(k, 0.3, (50,)), jr.bernoulli(jk, 0.3, (50,)))
        assert same(R.permutation(k, 20), jr.permutation(jk, 20))
        x = np.arange(12).reshape(4, 3)
        assert same(R.permutation(k, ft.asarray(x)), jr.permutation(jk, x))
        mine = R.choice(k, 10, (5,), replace=False)
        assert same(mine, jr.choice(jk, 10, (5,), replace=False))


def test_matches_jax_floats(jax):
    jr = jax.random
    for seed in _seeds()[:8]:
        k, jk = R.key(seed), jr.PRNGKey(seed)
        close = np.testing.assert_allclose
        # XLA contracts the scale-and-shift into an FMA: equal to about an ulp of the range.
        mine = R.uniform(k, (100,), minval=-2.0, maxval=3.5)
        close(arr(mine), jr.uniform(jk, (100,), minval=-2.0, maxval=3.5), atol=5e-7)
        # erf_inv, erf and log are different expansions from XLA's.
        close(arr(R.normal(k, (500,))), jr.normal(jk, (500,)), rtol=1e-4, atol=1e-5)
        mine = R.truncated_normal(k, -1.0, 2.0, (200,))
        close(arr(mine), jr.truncated_normal(jk, -1.0, 2.0, (200,)), rtol=1e-5, atol=1e-5)
        close(arr(R.gumbel(k, (200,))), jr.gumbel(jk, (200,)), rtol=1e-5, atol=1e-5)
        logits = np.random.RandomState(seed % 997).randn(6, 5).astype(np.float32)
        assert same(R.categorical(k, ft.asarray(logits)), jr.categorical(jk, logits))


def test_matches_jax_64_bit(jax):
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        jr = jax.random
        for seed in (0, 3, 2**40 + 5, -1, -(2**63)):
            k, jk = R.key(seed), jr.PRNGKey(seed)
            assert same(k, jk)
            assert same(R.bits(k, (5,), ft.uint64), jr.bits(jk, (5,), "uint64"))
            assert same(R.uniform(k, (5,), ft.float64), jr.uniform(jk, (5,), "float64"))
            for lo, hi in ((0, 10), (-5, 2**40), (-(2**63), 2**63 - 1)):
                assert same(R.randint(k, (6,), lo, hi), jr.randint(jk, (6,), lo, hi, "int64"))
    finally:
        jax.config.update("jax_enable_x64", previous)


# ------------------------------------------------------------------ purity and transforms


def _draws(k):
    k1, k2, k3 = R.split(k, 3)
    return {
        "split": R.split(k1),
        "fold_in": R.fold_in(k2, 7),
        "bits": R.bits(k, (2,), ft.uint64),
        "uniform": R.uniform(k1, (3,), minval=-1.0, maxval=2.0),
        "randint": R.randint(k3, (4,), 0, 10),
        "bernoulli": R.bernoulli(R.fold_in(k, 3), 0.3, (5,)),
        "permutation": R.permutation(k2, 6),
        "normal": R.normal(k2, (2, 2)),
    }


EXACT = ("split", "fold_in", "bits", "uniform", "randint", "bernoulli", "permutation", "normal")


def _assert_same(a, b):
    for name in EXACT:
        assert np.array_equal(arr(a[name]), arr(b[name])), name


def test_determinism_and_distinct_keys():
    k = R.key(7)
    _assert_same(_draws(k), _draws(R.key(7)))
    assert not same(R.uniform(k, (8,)), arr(R.uniform(R.key(8), (8,))))
    assert not same(R.uniform(k, (8,)), arr(R.uniform(R.fold_in(k, 0), (8,))))


def test_eager_equals_jit_equals_vmap():
    k = R.key(3)
    eager = _draws(k)
    _assert_same(eager, ft.jit(_draws)(k))
    keys = R.split(k, 4)
    batched = ft.vmap(_draws)(keys)
    for i in range(4):
        one = _draws(keys[i])
        _assert_same(one, {n: v[i] for n, v in batched.items()})


@pytest.mark.parametrize("dtype", [ft.float32, ft.bfloat16, ft.float64], ids=str)
def test_normal_draws_are_the_same_eagerly_and_under_jit(dtype):
    # The compiled float32 erf_inv was Giles' float32 expansion: 61% of the draws of
    # 2**20 differed from eager's (float64, rounded once) by an ulp. float64 draws agree
    # to erf_inv's float64 bound (two Newton steps compiled, five eagerly).
    k = R.key(11)
    for draw in (
        lambda k: R.normal(k, (1 << 14,), dtype=dtype),
        lambda k: R.truncated_normal(k, -1.5, 2.0, (1 << 14,), dtype=dtype),
    ):
        eager, jitted = arr(draw(k)), arr(ft.jit(draw)(k))
        if dtype == ft.float64:
            np.testing.assert_allclose(eager, jitted, rtol=1e-10, atol=1e-15)
        else:
            assert np.array_equal(eager, jitted)


def test_vmap_over_keys_equals_loop_under_jit():
    keys = R.split(R.key(0), 4)
    f = lambda k: R.uniform(k, (3,))
    loop = np.stack([arr(f(k)) for k in keys])
    assert np.array_equal(arr(ft.vmap(f)(keys)), loop)
    assert np.array_equal(arr(ft.jit(ft.vmap(f))(keys)), loop)
    # key arrays are tensors: len, indexing and unpacking
    a, b, c, d = keys
    assert len(keys) == 4 and np.array_equal(arr(c), arr(keys[2]))


def test_grad_through_draws():
    k = R.key(0)
    u = arr(R.uniform(k, (4,)))
    g = ft.grad(lambda m: R.uniform(k, (4,), maxval=m).sum())(ft.asarray(2.0))
    assert float(g) == pytest.approx(u.sum(), rel=1e-6)
    assert float(ft.grad(lambda mu: (mu + R.normal(k, (5,))).sum())(ft.asarray(1.0))) == 5.0
    # d/dlower of a truncated normal sample is finite and the same under jit
    f = ft.grad(lambda lo: R.truncated_normal(k, lo, 2.0, (4,)).sum())
    np.testing.assert_allclose(
        float(f(ft.asarray(-1.0))), float(ft.jit(f)(ft.asarray(-1.0))), rtol=1e-5
    )


# ------------------------------------------------------------------ independence


def test_split_keys_are_independent():
    k1, k2 = R.split(R.key(123))
    a, b = arr(R.uniform(k1, (20000,))), arr(R.uniform(k2, (20000,)))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03
    ba, bb = arr(R.bits(k1, (64,))), arr(R.bits(k2, (64,)))
    assert (ba != bb).mean() > 0.95
    # neighbouring counters of one key are uncorrelated too (lag-1)
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.03
    # each bit position is set about half the time
    frac = np.unpackbits(arr(R.bits(k1, (4000,))).view(np.uint8)).reshape(-1, 32).mean(0)
    assert np.all(np.abs(frac - 0.5) < 0.05)


# ------------------------------------------------------------------ distributions


def test_uniform_moments_and_range():
    for dtype in (ft.float32, ft.float64, ft.float16):
        u = arr(R.uniform(R.key(1), (20000,), dtype)).astype(np.float64)
        assert u.min() >= 0.0 and u.max() < 1.0
        assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    u = arr(R.uniform(R.key(2), (10000,), minval=-3.0, maxval=-1.0))
    assert u.min() >= -3.0 and u.max() < -1.0 and abs(u.mean() + 2.0) < 0.03
    lo = ft.asarray([0.0, 10.0])
    u = arr(R.uniform(R.key(3), (5000, 2), minval=lo, maxval=lo + 1))
    assert np.all(u[:, 0] < 1) and np.all(u[:, 1] >= 10)


def test_normal_moments():
    z = arr(R.normal(R.key(4), (40000,))).astype(np.float64)
    assert np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert abs(np.mean(z**3)) < 0.05 and abs(np.mean(z**4) - 3) < 0.15
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01


def test_truncated_normal_bounds_and_mean():
    lo, hi = -0.5, 1.5
    x = arr(R.truncated_normal(R.key(5), lo, hi, (20000,))).astype(np.float64)
    assert x.min() > lo and x.max() < hi
    pdf = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    cdf = lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2)))
    mean = (pdf(lo) - pdf(hi)) / (cdf(hi) - cdf(lo))
    assert abs(x.mean() - mean) < 0.02
    # per-element bounds broadcast to the shape
    lows = ft.asarray([[-2.0], [0.0], [3.0]])
    y = arr(R.truncated_normal(R.key(6), lows, lows + 0.5, (3, 1000)))
    assert y.shape == (3, 1000) and np.all(y > arr(lows)) and np.all(y < arr(lows) + 0.5)
    assert R.truncated_normal(R.key(6), lows, 4.0).shape == (3, 1)


def test_bernoulli_rate():
    b = arr(R.bernoulli(R.key(7), 0.3, (20000,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.015
    p = ft.asarray([0.0, 0.5, 1.0])
    rows = arr(R.bernoulli(R.key(8), p, (4000, 3)))
    assert rows[:, 0].sum() == 0 and rows[:, 2].all() and abs(rows[:, 1].mean() - 0.5) < 0.03
    assert R.bernoulli(R.key(8), p).shape == (3,)
    assert R.bernoulli(R.key(8)).shape == ()


def test_randint_bounds_and_uniformity():
    r = arr(R.randint(R.key(9), (30000,), -3, 7))
    assert r.dtype == np.int64 and r.min() == -3 and r.max() == 6
    counts = np.bincount(r + 3, minlength=10)
    expected = len(r) / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 40  # 9 degrees of freedom: p ~ 1e-5
    r8 = arr(R.randint(R.key(10), (5000,), 0, 256, ft.uint8))
    assert r8.dtype == np.uint8 and r8.max() > 250 and r8.min() < 5
    # per-element bounds
    lo = ft.asarray([0, 100])
    r2 = arr(R.randint(R.key(11), (1000, 2), lo, lo + 3))
    assert set(r2[:, 0].tolist()) == {0, 1, 2} and set(r2[:, 1].tolist()) == {100, 101, 102}
    full = arr(R.randint(R.key(12), (1000,), -(2**63), 2**63))  # the whole int64 range
    assert (full < 0).mean() > 0.4 and (full > 0).mean() > 0.4


def test_categorical_frequencies_match_softmax():
    logits = ft.asarray([1.0, 0.0, -1.0, 2.0])
    n = 20000
    draws = arr(R.categorical(R.key(13), logits, shape=(n,)))
    p = arr(ft.softmax(logits))
    counts = np.bincount(draws, minlength=4)
    chi2 = ((counts - n * p) ** 2 / (n * p)).sum()
    assert chi2 < 25  # 3 degrees of freedom
    # batched logits along axis 0, and a shape with leading independent draws
    batch = ft.asarray([[0.0, 50.0], [50.0, 0.0], [0.0, 0.0]])  # (classes=3, batch=2)
    out = arr(R.categorical(R.key(14), batch, axis=0, shape=(5, 2)))
    assert out.shape == (5, 2) and np.all(out[:, 0] == 1) and np.all(out[:, 1] == 0)


def test_permutation_is_a_permutation():
    k = R.key(15)
    for n in (0, 1, 2, 50, 3000):  # 3000 takes two sorting rounds
        perm = arr(R.permutation(k, n))
        assert sorted(perm.tolist()) == list(range(n))
    assert not same(R.permutation(k, 50), np.arange(50))
    x = ft.arange(12).reshape(4, 3)
    rows = arr(R.permutation(k, x))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, arr(x).tolist()))
    cols = arr(R.permutation(k, x, axis=1))
    assert sorted(cols[0].tolist()) == [0, 1, 2] and np.all(np.diff(cols, axis=0) == 3)
    ind = arr(R.permutation(k, ft.arange(60).reshape(3, 20), axis=1, independent=True))
    assert all(sorted(r.tolist()) == list(range(20 * i, 20 * i + 20)) for i, r in enumerate(ind))


def test_choice():
    k = R.key(16)
    c = arr(R.choice(k, 5, (1000,)))
    assert set(c.tolist()) == set(range(5))
    d = arr(R.choice(k, ft.asarray([10, 20, 30]), (3,), replace=False, p=None))
    assert sorted(d.tolist()) == [10, 20, 30]
    p = ft.asarray([0.1, 0.0, 0.9])
    w = arr(R.choice(k, 3, (4000,), p=p))
    assert (w == 1).sum() == 0 and abs((w == 2).mean() - 0.9) < 0.02
    nr = arr(R.choice(k, 3, (2,), replace=False, p=p))
    assert len(set(nr.tolist())) == 2 and 1 not in nr.tolist()
    rows = arr(R.choice(k, ft.arange(6).reshape(3, 2), (2, 2)))
    assert rows.shape == (2, 2, 2)


# ------------------------------------------------------------------ dropout


def test_dropout_scales_and_masks():
    x = ft.ones((100, 100))
    y = arr(F.dropout(x, 0.25, R.key(17)))
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((y == 0).mean() - 0.25) < 0.02 and abs(y.mean() - 1) < 0.03
    assert F.dropout(x, 0.25, R.key(17), training=False) is x
    assert F.dropout(x, 0.0, R.key(17)) is x
    assert not arr(F.dropout(x, 1.0, R.key(17))).any()
    # the same mask eagerly and under jit; the gradient is mask / (1 - p)
    z = ft.arange(8.0)
    eager = arr(F.dropout(z, 0.5, R.key(1)))
    assert np.array_equal(eager, arr(ft.jit(lambda z, k: F.dropout(z, 0.5, k))(z, R.key(1))))
    g = arr(ft.grad(lambda z: F.dropout(z, 0.5, R.key(1)).sum())(z))
    mask = arr(R.bernoulli(R.key(1), 0.5, (8,)))
    assert np.array_equal(g, np.where(mask, 2.0, 0.0))


def test_dropout_errors():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(ft.ones(3), 1.5, R.key(0))
    # Without a key, PyTorch's F.dropout(x, p, training) draws from the global key.
    ft.manual_seed(3)
    a = F.dropout(ft.ones(64), 0.5, True)
    ft.manual_seed(3)
    assert np.array_equal(arr(a), arr(F.dropout(ft.ones(64), 0.5)))


# ------------------------------------------------------------------ errors


def test_non_key_arguments_raise_type_error():
    for bad in (0, ft.asarray([0.0, 1.0]), ft.asarray([0, 1]), np.zeros(3, np.uint32), "key"):
        with pytest.raises(TypeError, match="expected a key"):
            R.uniform(bad, (2,))
    with pytest.raises(TypeError, match="vmap"):
        R.normal(R.split(R.key(0), 4), (2,))
    with pytest.raises(TypeError, match="integer"):
        R.key(1.5)
    with pytest.raises(ValueError, match="scalar"):
        R.key(ft.asarray([1, 2]))
    with pytest.raises(ValueError, match="64 bits"):
        R.key(2**64)
    with pytest.raises(ValueError, match="scalar"):
        R.fold_in(R.key(0), ft.asarray([1, 2]))


def test_bad_shapes_and_dtypes():
    k = R.key(0)
    with pytest.raises(ValueError, match="negative"):
        R.uniform(k, (2, -1))
    with pytest.raises(TypeError, match="tuple of ints"):
        R.normal(k, (2.5,))
    with pytest.raises(ValueError, match="broadcast"):
        R.uniform(k, (3,), minval=ft.zeros(4))
    with pytest.raises(ValueError, match="broadcast"):
        R.bernoulli(k, ft.full((2, 3), 0.5), (3,))
    with pytest.raises(ValueError, match="broadcast"):
        R.categorical(k, ft.zeros((2, 3)), shape=(4,))
    with pytest.raises(TypeError, match="floating"):
        R.uniform(k, (2,), ft.int32)
    with pytest.raises(TypeError, match="integer"):
        R.randint(k, (2,), 0, 3, ft.float32)
    with pytest.raises(TypeError, match="unsigned"):
        R.bits(k, (2,), ft.int32)
    with pytest.raises(ValueError, match="replace=False"):
        R.choice(k, 3, (4,), replace=False)


def test_randint_empty_range_names_both_bounds():
    k = R.key(0)
    with pytest.raises(ValueError, match=r"minval \(5\).*maxval \(3\)"):
        R.randint(k, (2,), 5, 3)
    with pytest.raises(ValueError, match=r"minval \(4\).*maxval \(4\)"):
        R.randint(k, (2,), 4, 4)
    with pytest.raises(ValueError, match=r"minval \(2\).*maxval \(1\).*index \(1,\)"):
        R.randint(k, (2,), ft.asarray([0, 2]), ft.asarray([5, 1]))
    # traced bounds cannot be checked: JAX's rule, minval is returned
    f = ft.jit(lambda lo, hi: R.randint(k, (3,), lo, hi))
    assert arr(f(ft.asarray(5), ft.asarray(3))).tolist() == [5, 5, 5]


# ------------------------------------------------------------------ docstrings


@pytest.mark.parametrize("module", [R, F], ids=["random", "nn.functional"])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
