"""Regression tests for the jit runtime and its caches: programs, steps, the kernel
cache on disk, kernels split over threads."""

import ast
from pathlib import Path

import numpy as np
import pytest

import fntorch as ft
from fntorch.devices import cpu_threads
from fntorch.lowering import cache
from fntorch.lowering import kernels as K
from tests.lowering.test_cache import F32, _spec


def _run(kern, c):
    x = np.arange(5, dtype=F32)
    out = np.empty_like(x)
    kern([x], [out])
    np.testing.assert_array_equal(out, x * np.float32(c))


@pytest.fixture()
def fresh(monkeypatch):
    """No kernel in memory (this process compiles or loads each one again)."""
    monkeypatch.setattr(K, "_kernels", {})
    monkeypatch.setattr(cache, "_objects", {})


# ------------------------------------------------------------------ the disk cache


def _module_level_imports(path: Path):
    """Files of the fntorch modules ``path`` imports at module level (relative imports)."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            for mod in [node.module] if node.module else [a.name for a in node.names]:
                p = base.joinpath(*mod.split("."))
                yield p.with_suffix(".py") if p.with_suffix(".py").exists() else p / "__init__.py"


def test_the_cache_key_hashes_every_module_the_kernel_compiler_reads_constants_from():
    # mathlib builds erfinv from coefficients in devices/cpu_elementwise.py: edited
    # coefficients must not reuse kernels compiled with the old ones.
    package = Path(ft.__file__).parent
    hashed = {package / name for name in cache.SOURCES}
    for name in cache.SOURCES:
        if name.startswith("lowering/"):
            for dep in _module_level_imports(package / name):
                assert dep in hashed, f"{name} imports {dep.relative_to(package)}, not hashed"


def test_kernels_run_without_a_home_directory(fresh, monkeypatch):
    # Path.home() raises where there is neither $HOME nor a passwd entry (a container's
    # arbitrary uid): no disk cache then, but kernels still compile and run.
    for var in ("FNTORCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    _run(K.compile_kernel(_spec(11.0)), 11.0)


def test_kernels_run_when_the_cache_dir_cannot_be_made(fresh, monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("FNTORCH_CACHE_DIR", str(blocker))  # kernels/ cannot go under it
    writes = cache.stats["disk_writes"]
    _run(K.compile_kernel(_spec(13.0)), 13.0)
    assert cache.stats["disk_writes"] == writes


# ---------------------------------------------------------------- kernel threads


def test_num_threads_errors_name_the_setting(monkeypatch):
    before = cpu_threads.get_num_threads()
    monkeypatch.setenv("FNTORCH_NUM_THREADS", "four")
    with pytest.raises(ValueError, match=r"FNTORCH_NUM_THREADS.*integer.*'four'"):
        cpu_threads._default_threads()
    with pytest.raises(TypeError, match=r"set_num_threads: expected an int, got str"):
        cpu_threads.set_num_threads("2")
    with pytest.raises(TypeError, match=r"set_num_threads: expected an int, got float"):
        cpu_threads.set_num_threads(2.5)
    assert cpu_threads.get_num_threads() == before


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ft.exp(x[:, ::2]) * 0.5 + x[:, 1::2],  # strided inputs, rank 2
        lambda x: ft.softmax(x.T, axis=0),  # a row kernel over a transposed input
    ],
    ids=["strided", "row"],
)
def test_split_kernels_do_not_depend_on_the_thread_count(fn, monkeypatch):
    # Odd sizes just above the threshold: the last chunk of each split is short.
    x = ft.asarray(np.random.default_rng(0).standard_normal((K.PARALLEL_THRESHOLD // 50 + 3, 102)))
    got = {}
    for threads in (1, 2, 3):
        monkeypatch.setitem(cpu_threads._state, "threads", threads)
        got[threads] = np.asarray(ft.jit(fn)(x.astype(ft.float32)))
    np.testing.assert_array_equal(got[1], got[2])
    np.testing.assert_array_equal(got[1], got[3])
    np.testing.assert_allclose(got[1], np.asarray(fn(x.astype(ft.float32))), rtol=1e-5, atol=1e-6)


def test_a_python_int_past_int64_is_named_by_jit():
    # numpy's bare "Python int too large to convert to C long" named nothing.
    f = ft.jit(lambda x, n: x * n)
    with pytest.raises(OverflowError, match=r"jit\(<lambda>\): argument n = 2361183"):
        f(ft.ones(3), 2**71)
    static = ft.jit(lambda x, n: x * n, static_argnums=1)
    assert static(ft.ones(2), 2**71).tolist() == [2.0**71] * 2
