"""The kernel cache: memory and disk levels, a new process, bad entries rebuilt."""

import os
import subprocess
import sys

import numpy as np
import pytest

from fntorch.lowering import cache
from fntorch.lowering import kernels as K
from fntorch.lowering.spec import KernelSpec, KOp

F32 = np.dtype(np.float32)


def _spec(c: float) -> KernelSpec:
    return KernelSpec(
        1,
        0,
        (F32,),
        (KOp("mul", (("in", 0), ("lit", np.float32(c))), (), F32),),
        (("op", 0),),
        (False,),
    )


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("FNTORCH_CACHE_DIR", str(tmp_path))
    K._kernels.clear()
    cache.clear_memory()
    return tmp_path


def _run(kern, c):
    x = np.arange(5, dtype=F32)
    out = np.empty_like(x)
    kern([x], [out])
    np.testing.assert_array_equal(out, x * np.float32(c))


def _counts():
    return dict(cache.stats)


def _delta(before):
    return {k: cache.stats[k] - before[k] for k in before}


def test_hits_and_misses_are_counted(fresh):
    before = _counts()
    _run(K.compile_kernel(_spec(3.0)), 3.0)
    d = _delta(before)
    assert d["memory_misses"] == 1 and d["compiles"] == 1 and d["disk_writes"] == 1
    assert d["disk_misses"] == 1
    before = _counts()
    K.compile_kernel(_spec(3.0))
    assert _delta(before)["memory_hits"] == 1
    # A new Kernel in this process (memory level forgotten) loads from disk.
    K._kernels.clear()
    cache.clear_memory()
    before = _counts()
    _run(K.compile_kernel(_spec(3.0)), 3.0)
    d = _delta(before)
    assert d["disk_hits"] == 1 and d["compiles"] == 0
    assert len(list((fresh / "kernels").glob("*.o"))) == 1


def test_a_new_process_loads_from_disk(fresh):
    _run(K.compile_kernel(_spec(5.0)), 5.0)
    code = (
        "import numpy as np\n"
        "from fntorch.lowering import cache, kernels as K\n"
        "from tests.lowering.test_cache import _spec, _run\n"
        "_run(K.compile_kernel(_spec(5.0)), 5.0)\n"
        "print(cache.stats['disk_hits'], cache.stats['compiles'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        check=True,
    )
    assert out.stdout.split() == ["1", "0"]


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "garbage"])
def test_bad_entries_are_rejected_and_rebuilt(fresh, damage):
    _run(K.compile_kernel(_spec(7.0)), 7.0)
    (path,) = (fresh / "kernels").glob("*.o")
    blob = path.read_bytes()
    if damage == "flip":
        bad = bytearray(blob)
        bad[-100] ^= 0xFF
        path.write_bytes(bytes(bad))
    elif damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "foreign":  # another key's valid entry under this name
        other = cache.pack(b"\x01" * 32, blob[cache._HEADER.size :])
        path.write_bytes(other)
    else:
        path.write_bytes(b"not an object file at all")
    K._kernels.clear()
    cache.clear_memory()
    before = _counts()
    _run(K.compile_kernel(_spec(7.0)), 7.0)
    d = _delta(before)
    assert d["disk_rejected"] == 1 and d["compiles"] == 1 and d["disk_writes"] == 1
    assert cache.unpack(path.name and bytes.fromhex(path.stem), path.read_bytes()) is not None


def test_pack_unpack_roundtrip_and_checks():
    dig = b"\x07" * 32
    blob = cache.pack(dig, b"payload")
    assert cache.unpack(dig, blob) == b"payload"
    assert cache.unpack(b"\x08" * 32, blob) is None
    assert cache.unpack(dig, blob[:-1]) is None
    assert cache.unpack(dig, b"FNT") is None


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FNTORCH_CACHE_DIR", str(tmp_path / "x"))
    assert cache.cache_dir() == tmp_path / "x" / "kernels"
    monkeypatch.delenv("FNTORCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "y"))
    assert cache.cache_dir() == tmp_path / "y" / "fntorch" / "kernels"


def test_one_engine_holds_every_kernel_under_its_own_name(fresh):
    from fntorch.devices import cpu_llvm as cpu

    kerns = [K.compile_kernel(_spec(c)) for c in (11.0, 13.0)]
    for k, c in zip(kerns, (11.0, 13.0)):
        _run(k, c)
    names = list(cpu._engine()._loaded)
    assert len(set(names)) == len(names) >= 2
    assert all(n.startswith("fntorch_") for n in names)
    # The same object read again (another process's entry, a cleared memory level) is
    # not added twice: the address is the one already loaded.
    dig = cache.digest(kerns[0]._cache_key("c", True), kerns[0].target)
    addr = cpu._engine()._loaded[cache.symbol(dig)]
    cache.clear_memory()
    assert cache.load_or_build(kerns[0]._cache_key("c", True), None, kerns[0].target) == addr


def test_an_object_without_the_function_is_refused(fresh):
    from fntorch.devices import cpu_llvm as cpu

    obj = cpu.compile_object("define i32 @other() {\n  ret i32 1\n}\n")
    with pytest.raises(KeyError, match="no function 'fntorch_x'"):
        cpu.load(obj, "fntorch_x")


def test_programs_compile_the_variants_their_first_run_needs(fresh):
    import fntorch as ft

    def f(x, b, w):
        h = ft.tanh(x.T * b + 1.0)  # a transposed input and a broadcast one
        return ft.sum(h * w, axis=-1), h @ w

    rng = np.random.default_rng(0)
    x = ft.asarray(rng.standard_normal((6, 4)).astype(F32))
    b = ft.asarray(rng.standard_normal(6).astype(F32))
    w = ft.asarray(rng.standard_normal(6).astype(F32))
    g = ft.jit(f)
    g.lower(x, b, w)  # builds the program: kernels are compiled here, two at a time
    before = _counts()
    got = g(x, b, w)
    assert _delta(before)["compiles"] == 0  # the first run found every variant ready
    for a, want in zip(got, f(x, b, w)):
        np.testing.assert_allclose(a.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
