"""``ft.zeros``/``ones``/``empty`` take the Array API's ``shape`` (its parameter name:
the conformance suite checks it) and PyTorch's ``f(2, 3)`` and ``f(size=(2, 3))``."""

import inspect

import pytest

import fntorch as ft


@pytest.mark.parametrize("f", [ft.zeros, ft.ones, ft.empty], ids=lambda f: f.__name__)
def test_creation_shapes_every_spelling(f):
    assert next(iter(inspect.signature(f).parameters)) == "shape"
    for got in (f((2, 3)), f(2, 3), f(size=(2, 3)), f(shape=(2, 3)), f([2, 3])):
        assert got.shape == (2, 3)
    assert f(()).shape == () and f(4).shape == (4,)
    with pytest.raises(TypeError, match="give the shape once"):
        f(2, size=(3,))
    with pytest.raises(TypeError, match="missing the shape"):
        f()
