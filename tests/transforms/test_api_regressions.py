"""Regression tests for the transform API surface (argnums, kwargs, has_aux, vmap axes,
jvp tangents), each checked against what JAX does."""

import numpy as np
import pytest

import fntorch as ft


def f64(x):
    return ft.asarray(np.asarray(x, dtype=np.float64))


@pytest.mark.parametrize("transform", [ft.grad, ft.jacfwd, ft.jacrev, ft.hessian])
def test_argnums_naming_one_argument_twice_is_an_error(transform):
    # It used to give the first slot a zero derivative: grad(x*y, (0, 0)) was (0, y).
    f = lambda x, y: (x * y).sum()  # noqa: E731
    with pytest.raises(ValueError, match="argnums .* more than once"):
        transform(f, argnums=(0, -2))(f64([1.0]), f64([2.0]))


@pytest.mark.parametrize("transform", [ft.jacfwd, ft.jacrev])
def test_jacobians_pass_keyword_arguments_through(transform):
    # As JAX: keyword arguments reach the function and are not differentiated.
    jac = transform(lambda x, scale=1.0: x * scale)(f64([1.0, 2.0]), scale=3.0)
    assert jac.tolist() == [[3.0, 0.0], [0.0, 3.0]]


def test_hessian_passes_keyword_arguments_through():
    h = ft.hessian(lambda x, scale=1.0: (x**3).sum() * scale)(f64([1.0, 2.0]), scale=2.0)
    assert h.tolist() == [[12.0, 0.0], [0.0, 24.0]]


def test_jacfwd_has_aux_requires_an_output_aux_pair():
    # A length-2 output used to be read as (output, aux): a wrong Jacobian, no error.
    with pytest.raises(TypeError, match="jacfwd with has_aux=True.*pair"):
        ft.jacfwd(lambda x: x * x, has_aux=True)(f64([1.0, 2.0]))


@pytest.mark.parametrize(
    "transform, name", [(ft.grad, "grad"), (ft.value_and_grad, "grad"), (ft.jacrev, "jacrev")]
)
def test_has_aux_error_names_the_transform_called(transform, name):
    with pytest.raises(TypeError, match=f"^{name} with has_aux=True.*got a Tensor"):
        transform(lambda x: x.sum(), has_aux=True)(f64([1.0, 2.0]))


@pytest.mark.parametrize("in_axes", [True, (False,)])
def test_vmap_rejects_bool_in_axes(in_axes):
    # Python's bool is an int; in_axes=True used to map axis 1 silently.
    with pytest.raises(ValueError, match="in_axes entries must be int or None, got (True|False)"):
        ft.vmap(lambda x: x, in_axes=in_axes)(ft.ones((2, 3)))


def test_vmap_out_axes_prefix_error_speaks_of_the_outputs():
    with pytest.raises(ValueError, match="out_axes must be a tree prefix of the outputs") as e:
        ft.vmap(lambda x: (x, x), out_axes=[0, 1])(ft.ones((2, 3)))
    assert "arguments" not in str(e.value)


def test_jvp_checks_the_shape_of_an_integer_primals_tangent():
    # JAX: an integer primal's tangent is float0 of the primal's shape.
    i = ft.asarray([1, 2])
    with pytest.raises(ValueError, match="jvp: a tangent has shape \\(3,\\).*\\(2,\\)"):
        ft.jvp(lambda i: i * 2, (i,), (np.zeros(3, ft.float0),))
    _, f_jvp = ft.linearize(lambda x, i: x * i, f64([1.0, 2.0]), i)
    with pytest.raises(ValueError, match="linearize: a tangent has shape"):
        f_jvp(f64([1.0, 0.0]), np.zeros((), ft.float0))
    y, t = ft.jvp(lambda i: i * 2, (i,), (np.zeros(2, ft.float0),))
    assert y.tolist() == [2, 4] and t.dtype == ft.float0 and t.shape == (2,)


def test_tree_prefix_broadcast_gives_one_entry_per_leaf_when_the_tree_holds_none():
    # None in the tree is an empty subtree: its entry used to shift every later one.
    tree = ([1, None, 2], None, 3)
    axes = ft.tree.tree_prefix_broadcast(([0, 1, 2], 0, None), tree, "in_axes")
    assert len(axes) == len(ft.tree.leaves(tree)) and axes == [0, 2, None]
    with pytest.raises(ValueError, match="in_axes must be a tree prefix of the arguments"):
        ft.tree.tree_prefix_broadcast((0, 1), tree, "in_axes")


def test_make_graph_still_takes_a_repeated_static_argnum():
    graph = ft.make_graph(lambda x, n: x * n, static_argnums=(1, -1))(ft.ones(2), 3)
    assert len(graph.eqns) == 1


def test_vmap_size_errors_name_the_leaf_by_its_path():
    # Leaves used to be numbered across args and kwargs ("argument leaf 1" for y=...).
    with pytest.raises(ValueError, match=r"args\[0\]\['a'\] has size 2, kwargs\['y'\] has size 3"):
        ft.vmap(lambda d, y: d["a"] + y)({"a": ft.ones((2, 3))}, y=ft.ones((3, 3)))
    with pytest.raises(ValueError, match=r"in_axes=2 is out of range for args\[1\]\[0\] of rank 2"):
        ft.vmap(lambda x, y: x, in_axes=(0, 2))(ft.ones((2, 3)), [ft.ones((2, 3))])


@pytest.mark.parametrize("transform", [ft.grad, ft.jacfwd, ft.jacrev])
def test_argnums_takes_numpy_integers_as_jax_does(transform):
    f = lambda x, y: (x * y).sum()  # noqa: E731
    x, y = f64([1.0, 2.0]), f64([3.0, 4.0])
    single = transform(f, argnums=np.int64(1))(x, y)
    assert isinstance(single, ft.Tensor) and single.tolist() == [1.0, 2.0]
    (gy,) = transform(f, argnums=[np.int32(-1)])(x, y)
    assert gy.tolist() == [1.0, 2.0]
