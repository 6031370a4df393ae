"""Regression tests for bugs found in the kernel templates (``lowering/templates.py``,
``lowering/spec_special.py``): each compares ``ft.jit(f)`` against eager ``f``."""

import numpy as np
import pytest

import fntorch as ft
from fntorch.ops import lax


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_reduce_window_of_a_0d_operand_under_jit(kind, dtype):
    # A 0-d operand has one window of one tap; the template indexed the last out dim.
    f = getattr(lax, f"reduce_window_{kind}")
    x = ft.asarray(np.asarray(-3, dtype))

    def g(t):
        return f(t, (), (), ())

    out = ft.jit(g)(x)
    assert out.shape == () and out.dtype == x.dtype
    assert np.asarray(out) == np.asarray(g(x)) == -3
