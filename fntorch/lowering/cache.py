"""The compiled-kernel cache: object code in memory and on disk.

In memory, ``kernels`` (``memoized``) is the one cache of kernel objects, fused
(``kernels.compile_kernel``) and template (``templates.compile_template``) alike, keyed by
kind, spec key and target; ``_objects`` records which compiled functions this process's
engine has loaded, by digest, so none is loaded twice. On disk, under ``$FNTORCH_CACHE_DIR``
or ``$XDG_CACHE_HOME/fntorch`` (default ``~/.cache/fntorch``), in ``kernels/``, one file
per key, named by its digest. The digest hashes the key (spec, variant, ndarray ABI),
the target's ``cache_id()`` (the CPU's: host triple, CPU name and features, and its
compiler's sources) and the versions of fntorch, xDSL and
llvmlite plus a hash of the sources the generated code depends on (``SOURCES``), so an
edited compiler never reuses a stale kernel. Where no cache directory can be found or
written, kernels are compiled in every process instead.

An entry is ``MAGIC | format version | digest | payload length | sha256(payload) |
payload``. Anything that does not check out (truncated, corrupt, another key's entry
renamed, an older format) is ignored, counted in ``stats["disk_rejected"]`` and
rebuilt; nothing from disk is trusted before its checksum matches. Writes go to a
temporary file in the same directory, then ``os.replace`` (atomic on POSIX), so a
reader never sees half an entry and concurrent writers are harmless.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import threading
from pathlib import Path

MAGIC = b"FNTKOBJ\x00"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sI32sQ32s")

stats = {
    "memory_hits": 0,
    "memory_misses": 0,
    "disk_hits": 0,
    "disk_misses": 0,
    "disk_rejected": 0,
    "disk_writes": 0,
    "compiles": 0,
}
"""Counters (``memory_*`` are kept by ``kernels.compile_kernel``)."""

_objects: dict = {}
_stats_lock = threading.Lock()
# The one in-memory cache of kernel objects, in front of the disk cache: (kind, spec key,
# target) -> the compiled kernel (fused kernels and template kernels alike).
kernels: dict = {}
_kernels_lock = threading.Lock()


def memoized(key, make):
    """The kernel object cached under ``key``, made by ``make()`` on the first call (once,
    however many threads ask at the same time).

    >>> memoized(("doc", "k"), lambda: "a kernel"), memoized(("doc", "k"), lambda: "other")
    ('a kernel', 'a kernel')
    >>> del kernels[("doc", "k")]
    """
    k = kernels.get(key)
    if k is not None:
        with _stats_lock:
            stats["memory_hits"] += 1
        return k
    with _kernels_lock:
        k = kernels.get(key)
        if k is None:
            with _stats_lock:
                stats["memory_misses"] += 1
            k = kernels[key] = make()
    return k


def cache_dir() -> Path:
    """Where kernels are stored on disk.

    >>> cache_dir().name
    'kernels'
    """
    root = os.environ.get("FNTORCH_CACHE_DIR")
    if root:
        return Path(root) / "kernels"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "fntorch" / "kernels"


def _dist_version(name: str) -> str:
    """An installed distribution's version without importing it: the name of the
    ``*.dist-info`` folder beside the package (importlib.metadata scans all of sys.path,
    ~50 ms, which a warm-cache first call should not pay)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin:
        for info in Path(spec.origin).parent.parent.glob(f"{name}-*.dist-info"):
            return info.name[len(name) + 1 : -len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


# The sources the generated code depends on, relative to the fntorch package: the
# kernel compiler and the modules it imports constants from (mathlib reads erfinv's
# coefficients from ops, as the eager impl does), so that editing any of them rebuilds
# the kernels.
SOURCES = (
    "lowering/builder.py",
    "lowering/emit.py",
    "lowering/mathlib.py",
    "lowering/mathlib_trig.py",
    "lowering/mathcore.py",
    "lowering/mathlib_complex.py",
    "lowering/mathlib_catrig.py",
    "lowering/rules.py",
    "lowering/rules_complex.py",
    "lowering/kernels.py",
    "lowering/codegen.py",
    "lowering/codegen_values.py",
    "lowering/spec.py",
    "lowering/cache.py",
    "lowering/templates.py",
    "lowering/templates_linalg.py",
    "lowering/spec_special.py",
    "lowering/target.py",
    "ops/_erf_inv_coeffs.py",
)


@functools.cache
def _versions() -> str:
    import llvmlite

    from .._version import __version__

    xdsl_version = _dist_version("xdsl")
    src = hashlib.sha256()
    package = Path(__file__).parent.parent
    for name in SOURCES:
        src.update((package / name).read_bytes())
    return (
        f"fntorch={__version__};xdsl={xdsl_version};"
        f"llvmlite={llvmlite.__version__};src={src.hexdigest()[:16]}"
    )


def digest(key: str, target) -> bytes:
    """The 32-byte digest naming ``key`` on ``target`` with these versions."""
    text = f"{key}\n{target.cache_id()}\n{_versions()}\nformat={FORMAT_VERSION}"
    return hashlib.sha256(text.encode()).digest()


def pack(dig: bytes, payload: bytes) -> bytes:
    """An entry: header (magic, format, digest, length, checksum) then the payload."""
    return (
        _HEADER.pack(MAGIC, FORMAT_VERSION, dig, len(payload), hashlib.sha256(payload).digest())
        + payload
    )


def unpack(dig: bytes, blob: bytes) -> bytes | None:
    """The payload of ``blob`` if it is a sound entry for ``dig``, else None."""
    if len(blob) < _HEADER.size:
        return None
    magic, version, d, n, check = _HEADER.unpack_from(blob)
    payload = blob[_HEADER.size :]
    if magic != MAGIC or version != FORMAT_VERSION or d != dig or n != len(payload):
        return None
    if hashlib.sha256(payload).digest() != check:
        return None
    return payload


def _path(dig: bytes) -> Path:
    return cache_dir() / f"{dig.hex()}.o"


# Path.home() raises RuntimeError where there is no home directory (no $HOME and no
# passwd entry: a container's arbitrary user); kernels then compile in every process.
_NO_CACHE = (OSError, RuntimeError)


def _read(dig: bytes) -> bytes | None:
    try:
        blob = _path(dig).read_bytes()
    except _NO_CACHE:
        with _stats_lock:
            stats["disk_misses"] += 1
        return None
    payload = unpack(dig, blob)
    with _stats_lock:
        stats["disk_rejected" if payload is None else "disk_hits"] += 1
    return payload


def _write(dig: bytes, payload: bytes) -> None:
    try:
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        import tempfile  # only writers need it: 7 ms of a warm start's imports

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(pack(dig, payload))
            os.replace(tmp, _path(dig))
        except BaseException:
            os.unlink(tmp)
            raise
        with _stats_lock:
            stats["disk_writes"] += 1
    except _NO_CACHE:
        pass  # a read-only or full disk only costs the next process a compile


def symbol(dig: bytes) -> str:
    """The name of the function compiled under digest ``dig`` (unique in the process's
    one engine).

    >>> symbol(bytes(32))
    'fntorch_00000000000000000000000000000000'
    """
    return f"fntorch_{dig.hex()[:32]}"


def load_or_build(key: str, build, target) -> int:
    """The address of ``key``'s compiled function on ``target``: already loaded, from
    disk, or ``build(name) -> bytes`` (code defining function ``name``, compiled by the
    target)."""
    dig = digest(key, target)
    addr = _objects.get(dig)
    if addr is not None:
        return addr
    name = symbol(dig)
    payload = _read(dig)
    if payload is not None:
        try:
            addr = target.load(payload, name)
        except Exception:  # checksummed but unloadable (another LLVM): rebuild
            with _stats_lock:
                stats["disk_rejected"] += 1
            addr = None
    if addr is None:
        payload = build(name)
        with _stats_lock:  # jit'ed functions may compile on several threads
            stats["compiles"] += 1
        addr = target.load(payload, name)
        _write(dig, payload)
    _objects[dig] = addr
    return addr


def clear_memory() -> None:
    """Forgets which keys this process has loaded (the next lookup goes to disk)."""
    _objects.clear()
