"""``debug_nans`` / ``debug_infs``: the planted primitive and this file's line are named,
eagerly and under jit (and inside scan); ``graph.pretty(source=True)`` shows lines."""

from __future__ import annotations

import os

import numpy as np
import pytest

import fntorch as ft

HERE = os.path.basename(__file__)


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for k, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return k
    raise AssertionError(marker)


@pytest.fixture
def nans():
    ft.config.update("debug_nans", True)
    yield
    ft.config.update("debug_nans", False)


@pytest.fixture
def infs():
    ft.config.update("debug_infs", True)
    yield
    ft.config.update("debug_infs", False)


def planted(x):
    y = ft.sin(x) * 2.0
    return ft.log(y) + 1.0  # plant-log


def planted_inf(x):
    y = ft.cos(x) - 1.0
    return ft.log(y * y)  # plant-inf


def expect(what, prim, marker):
    return pytest.raises(
        FloatingPointError, match=rf"{what} .*'{prim}' at .*{HERE}:{line_of(marker)}"
    )


X = ft.asarray([1.0, -1.0, 2.0])


def test_off_by_default_nans_pass_through():
    assert np.isnan(planted(X).numpy()[1])
    assert np.isnan(ft.jit(planted)(X).numpy()[1])


def test_eager_names_primitive_and_line(nans):
    with expect("NaN", "log", "plant-log"):
        planted(X)
    assert planted(ft.asarray([1.0])).numpy()[0] > 0  # no NaN: no error


def test_jit_names_primitive_and_line(nans):
    f = ft.jit(planted)
    with expect("NaN", "log", "plant-log"):
        f(X)
    assert f(ft.asarray([1.0, 2.0])).shape == (2,)


def test_nested_jit_under_grad(nans):
    f = ft.jit(planted)
    with expect("NaN", "log", "plant-log"):
        ft.grad(lambda x: f(x).sum())(X)


def test_scan_body_eager_and_compiled(nans):
    def run(xs):
        return ft.scan(lambda c, x: (c + planted(x), c), ft.asarray(0.0), xs)

    with expect("NaN", "log", "plant-log"):
        run(X)
    with expect("NaN", "log", "plant-log"):
        ft.jit(run)(X)


def test_infs_eager_and_jit(infs):
    x = ft.asarray([0.0, 1.0])
    with expect("inf", "log", "plant-inf"):
        planted_inf(x)
    with expect("inf", "log", "plant-inf"):
        ft.jit(planted_inf)(x)
    assert np.isnan(planted(X).numpy()[1])  # NaNs are not checked by debug_infs


def test_env_flag_in_a_fresh_process(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "user.py"
    script.write_text("import fntorch as ft\nft.log(ft.asarray([-1.0]))\n")
    env = dict(os.environ, FNTORCH_DEBUG_NANS="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "FloatingPointError" in r.stderr and "'log'" in r.stderr and "user.py:2" in r.stderr


def test_pretty_shows_source_lines():
    g = ft.make_graph(planted)(X)
    text = g.pretty(source=True)
    assert f"{HERE}:{line_of('plant-log')}" in text
    assert [ln for ln in text.splitlines() if " log " in ln][0].endswith(
        f"{HERE}:{line_of('plant-log')}"
    )
    assert g.pretty() == str(g) and HERE not in g.pretty()


def operators(x):
    return x / 0.0 * 0  # plant-operators


INF, ZERO = ft.asarray([np.inf]), ft.asarray([0.0])


def test_eager_operators_take_the_check(nans):
    # The CPU's fast paths for `* + - /` (devices/cpu_dispatch.py) step aside while a
    # check is on: 0 / 0 makes the NaN in `/`, 1 / 0 * 0 in `*`.
    with expect("NaN", "div", "plant-operators"):
        operators(ft.asarray([0.0, 1.0]))
    with expect("NaN", "mul", "plant-operators"):
        operators(ft.asarray([1.0, 2.0]))
    cases = {
        "add": lambda: INF + (-INF),
        "sub": lambda: INF - INF,
        "mul": lambda: INF * ZERO,
        "div": lambda: ZERO / ZERO,
        "rmul": lambda: 0.0 * INF,  # the reflected operators, with a Python scalar
        "rtruediv": lambda: 0.0 / ZERO,
        "rsub": lambda: np.inf - INF,
    }
    for name, case in cases.items():
        with pytest.raises(FloatingPointError, match="NaN"):
            case()
            pytest.fail(f"{name}: no FloatingPointError")


def test_eager_operators_are_unchecked_when_off():
    assert np.isnan(operators(ft.asarray([0.0, 1.0])).numpy()).all()
    assert np.isnan((INF - INF).numpy()).all()
