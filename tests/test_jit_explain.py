"""``explain_cache_misses``, the ``max_retraces`` warning and ``disable_jit``."""

import logging
import threading
import warnings

import pytest

import fntorch as ft
from fntorch.fx import dtypes as dt
from fntorch.transforms.jit_explain import changes


@pytest.fixture
def explain(caplog):
    old = ft.config.explain_cache_misses
    ft.config.update("explain_cache_misses", True)
    caplog.set_level(logging.WARNING, logger="fntorch.jit")
    try:
        yield caplog
    finally:
        ft.config.update("explain_cache_misses", old)


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "fntorch.jit"]


def test_first_call_logs_nothing_and_hits_log_nothing(explain):
    f = ft.jit(lambda x: x + 1.0)
    f(ft.ones(3))
    f(ft.ones(3))
    assert _messages(explain) == []


@pytest.mark.parametrize(
    "first, second, words",
    [
        ((ft.ones(3),), (ft.ones(4),), ["x: f32[3] -> f32[4] (shape)"]),
        ((ft.ones(3),), (ft.ones(3, dtype=ft.float64),), ["x: f32[3] -> f64[3] (dtype)"]),
        (
            (2.0,),
            (ft.asarray(2.0),),
            ["x: f32[]{weak} -> f32[] (weak type: a Python scalar -> a tensor)"],
        ),
        (({"a": ft.ones(2)},), ({"a": ft.ones(2), "b": ft.ones(2)},), ["x: new pytree structure"]),
        (((ft.ones(2),),), ((ft.ones(2), ft.ones(2)),), ["x: new pytree structure"]),
    ],
    ids=["shape", "dtype", "weak", "dict-keys", "tuple-length"],
)
def test_retrace_log_names_the_argument_and_the_change(explain, first, second, words):
    f = ft.jit(lambda x, other: ft.tree.leaves(x)[0] + other)
    f(*first, ft.ones(()))
    f(*second, ft.ones(()))
    (msg,) = _messages(explain)
    assert "retrace 1" in msg
    for w in words:
        assert w in msg
    assert "other" not in msg


def test_static_value_and_type_changes(explain):
    f = ft.jit(lambda x, n: x * n, static_argnums=1)
    f(ft.ones(2), 2)
    f(ft.ones(2), 3)
    f(ft.ones(2), 3.0)
    first, second = _messages(explain)
    assert "static argument n: 2 -> 3 (value)" in first
    assert "static argument n: 3 -> 3.0 (type int -> float)" in second


def test_keyword_static_argument_is_named(explain):
    f = ft.jit(lambda x, *, mode: x * 2.0 if mode == "a" else x, static_argnames="mode")
    f(ft.ones(2), mode="a")
    f(ft.ones(2), mode="b")
    (msg,) = _messages(explain)
    assert "static argument mode: 'a' -> 'b' (value)" in msg


def test_compares_with_the_closest_earlier_signature(explain):
    f = ft.jit(lambda x, y: x.sum() + y.sum())
    f(ft.ones(3), ft.ones(5))
    f(ft.ones(4), ft.ones(6))
    f(ft.ones(3), ft.ones(6))  # one change from either: the latest among equals
    f(ft.ones(4), ft.ones(5))  # one change from the first and the third
    msgs = _messages(explain)
    assert "x: f32[3] -> f32[4] (shape)" in msgs[0] and "y: f32[5] -> f32[6] (shape)" in msgs[0]
    assert msgs[1].count("shape") == 1 and "x: f32[4] -> f32[3] (shape)" in msgs[1]
    assert msgs[2].count("shape") == 1


def test_leaf_change_in_a_pytree_is_named_by_its_path(explain):
    f = ft.jit(lambda d: d["w"] * 2.0)
    f({"w": ft.ones(2)})
    f({"w": ft.ones(3)})
    (msg,) = _messages(explain)
    assert "d['w']: f32[2] -> f32[3] (shape)" in msg


def test_device_change_is_reported():
    sig_a = (1, (((3,), dt.float32, "dev:a"),), ())
    sig_b = (1, (((3,), dt.float32, "dev:b"),), ())
    (c,) = changes((sig_a, ["x"], {}), (sig_b, ["x"], {}), str)
    assert c.kind == "device" and c.arg == "x" and "(device dev:a -> dev:b)" in c.text


def test_log_compiles_still_logs_every_trace(caplog):
    caplog.set_level(logging.WARNING, logger="fntorch.jit")
    ft.config.update("log_compiles", True)
    try:
        f = ft.jit(lambda x: x + 1.0)
        f(ft.ones(1))
        f(ft.ones(2))
    finally:
        ft.config.update("log_compiles", False)
    first, second = _messages(caplog)
    assert "first time" in first and "x: f32[1] -> f32[2] (shape)" in second


def test_max_retraces_warns_once_naming_the_argument():
    old = ft.config.max_retraces
    ft.config.update("max_retraces", 3)
    try:
        f = ft.jit(lambda x, y: x + y)
        y = ft.ones(())
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            for n in range(1, 5):
                f(ft.ones(n), y)
            assert got == []  # 3 retraces: not past the limit
            for n in range(5, 9):
                f(ft.ones(n), y)
        (w,) = got
    finally:
        ft.config.update("max_retraces", old)
    assert w.category is UserWarning
    msg = str(w.message)
    assert "argument x keeps changing" in msg and "shape" in msg and "pad x" in msg
    assert "max_retraces = 3" in msg
    assert w.filename == __file__  # points at the call


def test_max_retraces_suggests_the_fix_for_static_values():
    old = ft.config.max_retraces
    ft.config.update("max_retraces", 2)
    try:
        f = ft.jit(lambda x, n: x * n, static_argnums=1)
        with pytest.warns(UserWarning, match="static argument n traces again") as got:
            for n in range(5):
                f(ft.ones(2), n)
    finally:
        ft.config.update("max_retraces", old)
    assert len(got) == 1 and "argument n keeps changing" in str(got[0].message)


# ------------------------------------------------------------------- disable_jit


def test_disable_jit_runs_the_python_function_each_call():
    calls = []

    @ft.jit
    def f(x):
        calls.append(type(x).__name__)
        return x * 2.0

    with ft.disable_jit():
        assert f(ft.ones(2)).tolist() == [2.0, 2.0]
        f(ft.ones(2))
    assert calls == ["Tensor", "Tensor"] and f.stats["traces"] == 0
    f(ft.ones(2))
    f(ft.ones(2))
    assert len(calls) == 3 and f.stats["traces"] == 1  # restored: traced once, then cached


def test_disable_jit_nests_and_restores():
    calls = []
    f = ft.jit(lambda x: calls.append(1) or x + 1.0)
    f(ft.ones(1))  # traced: one call
    with ft.disable_jit():
        with ft.disable_jit(False):
            f(ft.ones(1))  # jit back on: a cache hit, no Python call
            assert len(calls) == 1
        with ft.disable_jit():
            f(ft.ones(1))
        assert len(calls) == 2
        f(ft.ones(1))
        assert len(calls) == 3
    f(ft.ones(1))
    assert len(calls) == 3


def test_disable_jit_restores_after_an_exception():
    f = ft.jit(lambda x: x + 1.0)
    with pytest.raises(ZeroDivisionError), ft.disable_jit():
        1 / 0  # noqa: B018
    calls = []
    g = ft.jit(lambda x: calls.append(1) or x)
    g(ft.ones(1))
    g(ft.ones(1))
    assert len(calls) == 1 and f(ft.ones(1)).tolist() == [2.0]


def test_disable_jit_as_a_decorator_and_under_grad():
    f = ft.jit(lambda x: (x * x).sum())
    seen = []

    @ft.disable_jit()
    def run(x):
        seen.append(1)
        return ft.grad(f)(x)

    assert run(ft.asarray([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert run(ft.asarray([3.0])).tolist() == [6.0]
    assert f.stats["traces"] == 0 and len(seen) == 2


def test_disable_jit_is_local_to_its_thread():
    calls = []
    f = ft.jit(lambda x: calls.append(threading.current_thread().name) or x)
    f(ft.ones(1))  # traced once, in the main thread
    entered, release = threading.Event(), threading.Event()

    def other():
        with ft.disable_jit():
            entered.set()
            release.wait(5)
            f(ft.ones(1))

    t = threading.Thread(target=other, name="other")
    t.start()
    entered.wait(5)
    f(ft.ones(1))  # jit still on here: a cache hit
    release.set()
    t.join()
    assert calls == ["MainThread", "other"]


def test_the_environment_variables_switch_them_on():
    import os
    import subprocess
    import sys

    code = (
        "import fntorch as ft\n"
        "calls = []\n"
        "f = ft.jit(lambda x: calls.append(1) or x)\n"
        "f(ft.ones(1)); f(ft.ones(1))\n"
        "print(len(calls), f.stats['traces'], ft.config.explain_cache_misses)\n"
    )
    env = {**os.environ, "FNTORCH_DISABLE_JIT": "1", "FNTORCH_EXPLAIN_CACHE_MISSES": "1"}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["2", "0", "True"], out.stderr
