"""Collectives over a vmap's named axis, against JAX's vmap with the same axis name,
and their derivatives (jvp, vjp, transposes) there; errors for unbound names; a tuple
of names over nested vmaps (JAX's where JAX takes it, else numpy)."""

import numpy as np
import pytest

import fntorch as ft

jax = pytest.importorskip("jax")
jnp = jax.numpy

# float32 throughout: JAX's x64 flag is global, and other tests compare with JAX's default
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 4)).astype(np.float32)  # 4 lanes, each a (3, 4) value


def _both(f_ft, f_jax, x=X, **kw):
    got = ft.vmap(f_ft, axis_name="i", **kw)(ft.asarray(x))
    want = jax.vmap(f_jax, axis_name="i", **kw)(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name, f_ft, f_jax",
    [
        ("psum", lambda x: ft.psum(x, "i"), lambda x: jax.lax.psum(x, "i")),
        ("pmean", lambda x: ft.pmean(x, "i"), lambda x: jax.lax.pmean(x, "i")),
        ("pmax", lambda x: ft.pmax(x, "i"), lambda x: jax.lax.pmax(x, "i")),
        ("pmin", lambda x: ft.pmin(x, "i"), lambda x: jax.lax.pmin(x, "i")),
        ("all_gather", lambda x: ft.all_gather(x, "i"), lambda x: jax.lax.all_gather(x, "i")),
        (
            "all_gather axis=1",
            lambda x: ft.all_gather(x, "i", axis=1),
            lambda x: jax.lax.all_gather(x, "i", axis=1),
        ),
        (
            "all_gather tiled",
            lambda x: ft.all_gather(x, "i", axis=1, tiled=True),
            lambda x: jax.lax.all_gather(x, "i", axis=1, tiled=True),
        ),
        (
            "psum_scatter tiled",
            lambda x: ft.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
            lambda x: jax.lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
        ),
        (
            "all_to_all",
            lambda x: ft.all_to_all(x, "i", 1, 0, tiled=True),
            lambda x: jax.lax.all_to_all(x, "i", 1, 0, tiled=True),
        ),
        (
            "ppermute",
            lambda x: ft.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
            lambda x: jax.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
        ),
        (
            "axis_index",
            lambda x: x * ft.axis_index("i"),
            lambda x: x * jax.lax.axis_index("i"),
        ),
    ],
)
def test_collective_matches_jax_vmap(name, f_ft, f_jax):
    _both(f_ft, f_jax)
    _both(f_ft, f_jax, in_axes=1, x=np.moveaxis(X, 0, 1))  # the batch axis elsewhere


def test_untiled_psum_scatter_and_all_to_all_match_jax():
    x = RNG.standard_normal((4, 4, 3)).astype(np.float32)
    _both(lambda v: ft.psum_scatter(v, "i"), lambda v: jax.lax.psum_scatter(v, "i"), x)
    _both(
        lambda v: ft.all_to_all(v, "i", 0, 1),
        lambda v: jax.lax.all_to_all(v, "i", 0, 1),
        x,
    )


def test_partial_ppermute_fills_zeros_and_transposes():
    x = RNG.standard_normal((4, 2))
    f = ft.vmap(lambda v: ft.ppermute(v, "i", [(0, 3), (3, 1)]), axis_name="i")
    want = np.zeros_like(x)
    want[3], want[1] = x[0], x[3]
    np.testing.assert_allclose(np.asarray(f(ft.asarray(x))), want)
    ct = RNG.standard_normal((4, 2))
    _, vjp = ft.vjp(f, ft.asarray(x))
    (g,) = vjp(ft.asarray(ct))
    back = np.zeros_like(ct)
    back[0], back[3] = ct[3], ct[1]
    np.testing.assert_allclose(np.asarray(g), back)


def test_collective_of_unbatched_value():
    got = ft.vmap(lambda x: x + ft.psum(1.0, "i"), axis_name="i")(ft.zeros(3))
    assert got.tolist() == [3.0, 3.0, 3.0]


def test_collective_over_outer_axis_inside_inner_vmap():
    def f(x):
        return ft.vmap(lambda r: ft.psum(r, "outer"))(x)

    x = RNG.standard_normal((2, 3, 4))
    got = ft.vmap(f, axis_name="outer")(ft.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.broadcast_to(x.sum(0), x.shape), rtol=1e-12)


@pytest.mark.parametrize(
    "f_ft, f_jax",
    [
        (lambda x: ft.psum(x * x, "i"), lambda x: jax.lax.psum(x * x, "i")),
        (
            lambda x: ft.all_gather(ft.sin(x), "i", tiled=True),
            lambda x: jax.lax.all_gather(jnp.sin(x), "i", tiled=True),
        ),
        (
            lambda x: ft.psum_scatter(x * x, "i", tiled=True),
            lambda x: jax.lax.psum_scatter(x * x, "i", tiled=True),
        ),
        (
            lambda x: ft.all_to_all(x.reshape(4, 2), "i", 0, 1, tiled=True) ** 2,
            lambda x: jax.lax.all_to_all(x.reshape(4, 2), "i", 0, 1, tiled=True) ** 2,
        ),
        (
            lambda x: ft.ppermute(x, "i", [(0, 3), (3, 1), (1, 2), (2, 0)]) * x,
            lambda x: jax.lax.ppermute(x, "i", [(0, 3), (3, 1), (1, 2), (2, 0)]) * x,
        ),
    ],
)
def test_grad_through_vmap_matches_jax(f_ft, f_jax):
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    ct = RNG.standard_normal((4, 8)).astype(np.float32)

    def loss_ft(v):
        return (ft.vmap(f_ft, axis_name="i")(v).reshape(4, -1) * ft.asarray(ct[:, :1])).sum()

    def loss_jax(v):
        return (jax.vmap(f_jax, axis_name="i")(v).reshape(4, -1) * ct[:, :1]).sum()

    got = ft.grad(loss_ft)(ft.asarray(x))
    want = jax.grad(loss_jax)(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_pmax_grad_goes_to_the_lane_holding_the_max():
    x = RNG.standard_normal((4, 3))
    ct = RNG.standard_normal((4, 3))
    g = ft.grad(lambda v: (ft.vmap(lambda r: ft.pmax(r, "i"), axis_name="i")(v) * ct).sum())
    want = np.zeros_like(x)
    want[x.argmax(0), np.arange(3)] = ct.sum(0)
    np.testing.assert_allclose(np.asarray(g(ft.asarray(x))), want, rtol=1e-12)


def test_grad_inside_vmap_of_psum_is_per_lane():
    # psum's transpose is a broadcast (its result is the same in every lane), so each
    # lane gets its own term's gradient. jax.vmap's legacy psum transposes into psum
    # instead (N times this); shard_map's psum in JAX agrees with this one.
    x = RNG.standard_normal(5)
    got = ft.vmap(ft.grad(lambda v: ft.psum(v * v, "i")), axis_name="i")(ft.asarray(x))
    np.testing.assert_allclose(np.asarray(got), 2 * x, rtol=1e-12)


def test_jit_of_vmap_with_collectives():
    f = ft.jit(ft.vmap(lambda v: v - ft.pmean(v, "i"), axis_name="i"))
    got = f(ft.asarray(X))
    np.testing.assert_allclose(np.asarray(got), X - X.mean(0), rtol=1e-6, atol=1e-6)


def test_batchnorm_style_synced_statistics():
    # Per-lane batches whose statistics are pooled over the named axis, as SyncBatchNorm.
    x = RNG.standard_normal((2, 5, 3))

    def norm(b):
        mean = ft.pmean(b.mean(axis=0), "i")
        var = ft.pmean(((b - mean) ** 2).mean(axis=0), "i")
        return (b - mean) / ft.sqrt(var + 1e-5)

    got = ft.vmap(norm, axis_name="i")(ft.asarray(x))
    flat = x.reshape(10, 3)
    want = (flat - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(got).reshape(10, 3), want, rtol=1e-10)


def test_unbound_axis_name_says_how_to_bind_it():
    with pytest.raises(NameError, match="unbound axis name 'j'.*vmap.*axis_name='j'"):
        ft.psum(ft.ones(2), "j")
    with pytest.raises(NameError, match="unbound axis name 'j'"):
        ft.vmap(lambda x: ft.psum(x, "j"), axis_name="i")(ft.ones(2))


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="vmap: axis_name must be a str"):
        ft.vmap(lambda x: x, axis_name=3)
    with pytest.raises(ValueError, match="psum_scatter: dim 0 must have the axis size 2"):
        ft.vmap(lambda x: ft.psum_scatter(x, "i"), axis_name="i")(ft.ones((2, 3)))
    with pytest.raises(ValueError, match="ppermute: perm uses a source or a destination twice"):
        ft.vmap(lambda x: ft.ppermute(x, "i", [(0, 1), (0, 0)]), axis_name="i")(ft.ones(2))


def test_collectives_inside_jit_scan_and_cond_under_a_named_vmap():
    # Sub-graphs batched by a rule (jit_call, scan, cond) keep the vmap's axis name.
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    centred = ft.vmap(ft.jit(lambda v: v - ft.pmean(v, "i")), axis_name="i")(ft.asarray(x))
    np.testing.assert_allclose(np.asarray(centred), x - x.mean(0))

    def body(c, r):
        return c + ft.psum(r, "i"), c

    total = ft.vmap(lambda v: ft.scan(body, ft.zeros(()), v)[0], axis_name="i")
    assert total(ft.asarray(x)).tolist() == [15.0, 15.0, 15.0]
    assert ft.jit(total)(ft.asarray(x)).tolist() == [15.0, 15.0, 15.0]

    def branch(v):
        return ft.cond(v.sum() > 3, lambda a: ft.psum(a, "i"), lambda a: a * 0, v)

    got = ft.vmap(branch, axis_name="i")(ft.asarray(x))
    assert got.tolist() == [[0.0, 0.0], [6.0, 9.0], [6.0, 9.0]]
    g = ft.grad(
        lambda v: ft.vmap(ft.jit(lambda r: (r * ft.pmean(r, "i")).sum()), axis_name="i")(v).sum()
    )
    np.testing.assert_allclose(
        np.asarray(g(ft.asarray(x))), np.broadcast_to(2 * x.mean(0), x.shape)
    )


# ----------------------------------------------------- a tuple of names over nested vmaps

Y = RNG.standard_normal((2, 3, 6)).astype(np.float32)  # lanes (i, j) = (2, 3), each (6,)


def _nested(f, x=Y):
    return np.asarray(ft.vmap(ft.vmap(f, axis_name="j"), axis_name="i")(ft.asarray(x)))


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_reductions_and_axis_index_over_nested_vmap_axes_are_jaxs(names):
    for f_ft, f_jax in (
        (lambda v: ft.psum(v, names), lambda v: jax.lax.psum(v, names)),
        (lambda v: ft.pmean(v, names), lambda v: jax.lax.pmean(v, names)),
        (lambda v: ft.pmax(v, names), lambda v: jax.lax.pmax(v, names)),
        (lambda v: v * 0 + ft.axis_index(names), lambda v: v * 0 + jax.lax.axis_index(names)),
    ):
        want = jax.vmap(jax.vmap(f_jax, axis_name="j"), axis_name="i")(jnp.asarray(Y))
        np.testing.assert_allclose(_nested(f_ft), np.asarray(want), rtol=1e-5, err_msg=names)


def test_gather_and_scatter_over_nested_vmap_axes_rank_row_major_in_the_given_order():
    lanes = Y.reshape(6, 6)  # lane k = i * 3 + j
    by_ji = Y.transpose(1, 0, 2).reshape(6, 6)  # lane k = j * 2 + i
    for names, order in ((("i", "j"), lanes), (("j", "i"), by_ji)):
        got = _nested(lambda v, n=names: ft.all_gather(v, n))
        np.testing.assert_array_equal(got, np.broadcast_to(order, (2, 3, 6, 6)))
        tiled = _nested(lambda v, n=names: ft.all_gather(v, n, tiled=True))
        np.testing.assert_array_equal(tiled, np.broadcast_to(order.reshape(36), (2, 3, 36)))
        # member k keeps block k of the sum: psum_scatter is all_gather's transpose
        got = _nested(lambda v, n=names: ft.psum_scatter(v, n))
        rank = np.arange(6).reshape(2, 3) if names == ("i", "j") else np.arange(6).reshape(3, 2).T
        np.testing.assert_allclose(got, Y.sum((0, 1))[rank], rtol=1e-5)
        x2 = np.tile(Y, 2)  # (2, 3, 12): blocks of 2
        got = _nested(lambda v, n=names: ft.psum_scatter(v, n, tiled=True), x2)
        blocks = x2.sum((0, 1)).reshape(6, 2)
        np.testing.assert_allclose(got, blocks[rank], rtol=1e-5)


def test_grad_through_a_gather_over_nested_vmap_axes():
    c = RNG.standard_normal((6, 6)).astype(np.float32)

    def total(x):
        each = ft.vmap(ft.vmap(lambda v: (ft.all_gather(v, ("i", "j")) * c).sum(),
                               axis_name="j"), axis_name="i")  # fmt: skip
        return each(x).sum()

    got = ft.grad(total)(ft.asarray(Y))
    # every lane gathers every lane, so lane k's grad is 6 times row k of c
    np.testing.assert_allclose(np.asarray(got), 6 * c.reshape(2, 3, 6), rtol=1e-5)


def test_tuple_axis_names_errors():
    both = ft.asarray(Y)
    with pytest.raises(NotImplementedError, match="ppermute: axis_name .* holding a vmap axis"):
        _nested(lambda v: ft.ppermute(v, ("i", "j"), [(0, 1)]))
    with pytest.raises(NotImplementedError, match="all_to_all: axis_name"):
        _nested(lambda v: ft.all_to_all(v, ("i", "j"), 0, 0))
    with pytest.raises(ValueError, match="psum: axis_name names an axis twice"):
        _nested(lambda v: ft.psum(v, ("i", "i")))
    with pytest.raises(TypeError, match="pmean: axis_name must be a str or a tuple of strs"):
        _nested(lambda v: ft.pmean(v, ("i", 3)))
    with pytest.raises(ValueError, match="psum_scatter: dim 0 of shape"):
        ft.vmap(ft.vmap(lambda v: ft.psum_scatter(v, ("i", "j")), axis_name="j"),
                axis_name="i")(both[:, :, :4])  # fmt: skip
