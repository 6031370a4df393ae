"""Checkpoints: ``ft.save`` writes safetensors; ``ft.load`` reads it and PyTorch's zip files.

``ft.save(obj, f)`` stores a pytree of nested dicts, lists and tuples whose leaves are
tensors (cells such as ``nn.Parameter`` save as their values; numpy arrays save as
tensors) or plain Python values (``int``, ``float``, ``bool``, ``str``, ``None``): a
model's state dict, an optimizer's (``{"state": {0: {...}}, "param_groups": [...]}``), or
``{"model": ..., "epoch": 3}``. The file is safetensors: each tensor is stored under
its dotted path (``layer1.weight``, ``state.0.exp_avg``, ``0.1``; a tensor at the root is
``tensor``; a path met twice gets ``#1``, ``#2``), so a flat dict of tensors is stored
under its own keys and any safetensors reader can read it. The structure goes in the
header's ``__metadata__`` under the key ``"fntorch"``, a JSON string
``{"version": 1, "tree": NODE}`` where a NODE is

- a JSON string, number, ``true``/``false`` or ``null``: that Python value itself;
- ``{"tensor": NAME}``: the tensor stored under NAME (complex64 as safetensors' ``C64``);
- ``{"complex128": NAME}``: a complex128 tensor, stored under NAME as float64 (re, im)
  pairs along a last axis of 2 (safetensors has no complex128 dtype);
- ``{"dict": [[KEY, NODE], ...]}`` in insertion order (KEY a JSON string, number,
  boolean or null, so ``{0: ...}`` comes back with an ``int`` key);
- ``{"list": [NODE, ...]}``, ``{"tuple": [NODE, ...]}`` (a namedtuple saves as a tuple);
- ``{"float": "nan" | "inf" | "-inf"}``: a non-finite float (JSON has none);
- ``{"bytes": HEX}``: a ``bytes`` value.

A file without that key (written by another tool) loads as a flat dict of its tensors,
in the header's order. ``save`` writes a path through a temporary file in the same
folder and renames it, so a failed save leaves no half-written file.

``ft.load(f)`` also reads ``torch.save``'s default format (a zip holding
``<name>/data.pkl``, ``<name>/data/<key>`` storages, ``byteorder`` and ``version``)
without importing torch. The pickle goes through an unpickler whose ``find_class``
admits only PyTorch's tensor-rebuild functions, its storage types, ``OrderedDict`` and
plain builtin containers, each mapped to fntorch's own implementation; any other global
raises ``ValueError`` naming it, so nothing from the file runs. Storage sizes are checked
against the zip's declared sizes and the pickle's declared element counts before
anything is read. Tensors come back as fntorch tensors (a saved ``nn.Parameter`` as a
plain tensor), copied out of their storages (shared storages, offsets and strides are
honoured). A malformed, truncated or hostile file raises ``ValueError``; ``load`` returns
nothing on failure. The legacy non-zip ``torch.save`` format is refused by name.

>>> import io, fntorch as ft
>>> buf = io.BytesIO()
>>> ft.save({"w": ft.ones(2), "step": 3}, buf)
>>> _ = buf.seek(0); out = ft.load(buf)
>>> out["w"].tolist(), out["step"]
([1.0, 1.0], 3)
"""

from __future__ import annotations

import _compat_pickle
import builtins
import collections
import io
import json
import math
import os
import pickle
import tempfile
import zipfile

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy

from .fx.core import Tensor, Tracer
from .ops import api

__all__ = ["save", "load"]

FORMAT_KEY = "fntorch"
FORMAT_VERSION = 1
MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on the JSON header
MAX_PICKLE_BYTES = 1 << 30
DEFLATE_MAX_RATIO = 1100  # deflate cannot expand beyond ~1032:1; a larger claim is a lie

# safetensors' dtype names -> numpy dtypes (safetensors.numpy lacks BF16).
SAFETENSORS_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U64": np.uint64,
    "U32": np.uint32,
    "U16": np.uint16,
    "U8": np.uint8,
    "BOOL": np.bool_,
    "C64": np.complex64,
}


# ------------------------------------------------------------------------------- save


def save(obj, f) -> None:
    """Saves a pytree of tensors and plain Python values to ``f`` (a path or a binary file)
    in the safetensors format (see the module docstring for the layout).

    >>> import io, fntorch as ft
    >>> buf = io.BytesIO()
    >>> ft.save({"layer1": {"weight": ft.zeros((2, 2))}, "lr": 0.1}, buf)
    >>> sorted(__import__("safetensors.numpy").numpy.load(buf.getvalue()))
    ['layer1.weight']
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, (), arrays)
    meta = {FORMAT_KEY: json.dumps({"version": FORMAT_VERSION, "tree": tree}, allow_nan=False)}
    data = safetensors.numpy.save(arrays, metadata=meta)
    if isinstance(f, (str, os.PathLike)):
        _write_atomically(os.fspath(f), data)
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"save: f must be a path or a binary file, got {type(f).__name__}")


def _write_atomically(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fntorch-save-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _encode(obj, path: tuple, arrays: dict):
    """The JSON node for ``obj``; tensors go into ``arrays`` under their dotted path."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, bytes):
        return {"bytes": obj.hex()}
    if isinstance(obj, Tracer):
        raise TypeError(f"save: the value at {_where(path)} is a traced value; save concrete ones")
    if isinstance(obj, (Tensor, np.ndarray, np.generic)):
        value = obj.numpy() if isinstance(obj, Tensor) else np.asarray(obj)
        tag = "tensor"
        if value.dtype == np.complex128:
            tag, value = "complex128", np.stack([value.real, value.imag], axis=-1)
        if value.dtype.name not in _SAVABLE:
            raise TypeError(
                f"save: the tensor at {_where(path)} has unsupported dtype {value.dtype}"
            )
        name = ".".join(path) or "tensor"
        base, n = name, 0
        while name in arrays:
            n += 1
            name = f"{base}#{n}"
        arrays[name] = np.array(value, order="C")  # ascontiguousarray makes 0-d 1-d
        return {tag: name}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (str, int, float, bool))):
                raise TypeError(
                    f"save: dict keys must be str, int, float, bool or None; the dict at "
                    f"{_where(path)} has a key of type {type(k).__name__}"
                )
            items.append([k, _encode(v, (*path, str(k)), arrays)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, (*path, str(i)), arrays) for i, v in enumerate(obj)]}
    raise TypeError(
        f"save: cannot save a {type(obj).__name__} (at {_where(path)}); save tensors, dicts, "
        "lists, tuples and plain numbers, strings, bools or None (a Module: its state_dict())"
    )


_SAVABLE = {np.dtype(d).name for d in SAFETENSORS_DTYPES.values()}


def _where(path: tuple) -> str:
    return repr(".".join(path)) if path else "the root"


# ------------------------------------------------------------------------------- load


def load(f, map_location=None, device=None, weights_only=None):
    """Loads what ``ft.save`` or ``torch.save`` wrote to ``f`` (a path or a binary file);
    tensors come back as fntorch tensors on ``device`` (or ``map_location``: a device, a
    device string, or a dict from the file's locations to devices; default: the default
    device). ``weights_only`` is accepted for PyTorch's spelling: loading never runs code.

    >>> import io, fntorch as ft
    >>> buf = io.BytesIO(); ft.save([ft.arange(3), (1.5, "adam")], buf)
    >>> _ = buf.seek(0); t, rest = ft.load(buf)
    >>> t.tolist(), rest
    ([0, 1, 2], (1.5, 'adam'))
    """
    del weights_only
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    elif hasattr(f, "read"):
        data = f.read()
    else:
        raise TypeError(f"load: f must be a path or a binary file, got {type(f).__name__}")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load: the file must be opened in binary mode (read gave {type(data)})")
    data = bytes(data)
    place = _placement(map_location, device)
    try:
        if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            return _load_torch_zip(data, place)
        if data[:1] == b"\x80" and data[8:9] != b"{":  # not a safetensors header
            raise ValueError(
                "load: this is a bare pickle (PyTorch's legacy non-zip torch.save format, or "
                "a plain pickle), which fntorch does not read; re-save it with torch.save in "
                "PyTorch >= 1.6 (the zip format) or as safetensors"
            )
        return _load_safetensors(data, place)
    except ValueError:
        raise
    except Exception as e:  # any failure of a malformed file is the file's fault
        raise ValueError(
            f"load: malformed or truncated checkpoint ({type(e).__name__}: {e})"
        ) from e


def _placement(map_location, device):
    """A function (file location -> fntorch device or None) for the loaded tensors."""
    if device is not None:
        dev = api.device(device) if isinstance(device, str) else device
        return lambda loc: dev
    if map_location is None:
        return lambda loc: None
    if isinstance(map_location, dict):
        table = dict(map_location)

        def by_location(loc):
            where = table.get(loc, None)
            return None if where is None else api.device(str(where))

        return by_location
    if callable(map_location):
        raise TypeError(
            "load: map_location as a function is PyTorch's storage protocol, which fntorch "
            "has no storages for; pass a device, a device string or a dict"
        )
    dev = api.device(map_location) if isinstance(map_location, str) else map_location
    return lambda loc: dev


def _to_tensor(array: np.ndarray, dev) -> Tensor:
    return api.asarray(np.array(array), device=dev)


# ------------------------------------------------------------------------ safetensors


def _load_safetensors(data: bytes, place):
    if len(data) < 8:
        raise ValueError(f"load: not a safetensors file ({len(data)} bytes, no header)")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8 or n > MAX_HEADER_BYTES:
        raise ValueError(f"load: bad safetensors header (declares {n} bytes in a {len(data)} file)")
    header = json.loads(data[8 : 8 + n])
    if not isinstance(header, dict):
        raise ValueError("load: bad safetensors header (not a JSON object)")
    dev = place("cpu")
    arrays = {}
    for name, info in safetensors.deserialize(data):
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"load: tensor {name!r} has unsupported dtype {info['dtype']}")
        arrays[name] = np.frombuffer(info["data"], dtype=dtype).reshape(info["shape"])
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or FORMAT_KEY not in meta:
        names = [k for k in header if k != "__metadata__"]
        return {k: _to_tensor(arrays[k], dev) for k in names}
    doc = json.loads(meta[FORMAT_KEY])
    if not isinstance(doc, dict) or doc.get("version") != FORMAT_VERSION or "tree" not in doc:
        raise ValueError(f"load: unknown fntorch metadata (version {_get(doc, 'version')!r})")
    return _decode(doc["tree"], arrays, dev)


def _get(doc, key):
    return doc.get(key) if isinstance(doc, dict) else None


def _decode(node, arrays: dict, dev):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not (isinstance(node, dict) and len(node) == 1):
        raise ValueError(f"load: malformed fntorch metadata node {str(node)[:80]!r}")
    ((tag, body),) = node.items()
    if tag == "tensor":
        if not isinstance(body, str) or body not in arrays:
            raise ValueError(f"load: the metadata names a tensor {body!r} the file lacks")
        return _to_tensor(arrays[body], dev)
    if tag == "complex128":
        pairs = arrays.get(body) if isinstance(body, str) else None
        if pairs is None or pairs.dtype != np.float64 or pairs.shape[-1:] != (2,):
            raise ValueError(f"load: the metadata names complex128 pairs {body!r} the file lacks")
        return _to_tensor(pairs[..., 0] + 1j * pairs[..., 1], dev)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag in ("list", "tuple") and isinstance(body, list):
        items = [_decode(v, arrays, dev) for v in body]
        return items if tag == "list" else tuple(items)
    if tag == "dict" and isinstance(body, list):
        out = {}
        for item in body:
            if not (isinstance(item, list) and len(item) == 2) or isinstance(item[0], (list, dict)):
                raise ValueError(f"load: malformed dict entry {str(item)[:80]!r} in the metadata")
            out[item[0]] = _decode(item[1], arrays, dev)
        return out
    raise ValueError(f"load: malformed fntorch metadata node {str(node)[:80]!r}")


# ------------------------------------------------------------ PyTorch's zip checkpoints

# torch's storage type names -> numpy dtypes. UntypedStorage holds bytes.
TORCH_STORAGES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "BFloat16Storage": ml_dtypes.bfloat16,
    "ByteStorage": np.uint8,
    "CharStorage": np.int8,
    "ShortStorage": np.int16,
    "IntStorage": np.int32,
    "LongStorage": np.int64,
    "BoolStorage": np.bool_,
    "ComplexFloatStorage": np.complex64,
    "ComplexDoubleStorage": np.complex128,
    "UntypedStorage": np.uint8,
}


class _StorageType:
    """What a ``torch.FloatStorage``-style global unpickles to: its element dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype):
        self.name, self.dtype = name, np.dtype(dtype)


class _Storage:
    """A storage read from the zip: a flat numpy array of its elements, and the location
    (``"cpu"``, ``"cuda:0"``) it was saved from."""

    __slots__ = ("array", "location")

    def __init__(self, array: np.ndarray, location):
        self.array, self.location = array, location if isinstance(location, str) else "cpu"


def _rebuild_tensor(storage, storage_offset, size, stride, *_ignored):
    """fntorch's ``torch._utils._rebuild_tensor(_v2)``: the strided view, copied."""
    if not isinstance(storage, _Storage):
        raise ValueError(f"load: a tensor's storage is a {type(storage).__name__}, not a storage")
    size, stride = tuple(size), tuple(stride)
    ints = (storage_offset, *size, *stride)
    if not all(type(v) is int and v >= 0 for v in ints) or len(size) != len(stride):
        raise ValueError(
            f"load: bad tensor layout (offset {storage_offset!r}, size {size!r}, stride {stride!r})"
        )
    flat = storage.array
    numel = math.prod(size)
    last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
    if numel and last >= flat.size:
        raise ValueError(
            f"load: a tensor of size {size}, stride {stride} and offset "
            f"{storage_offset} reaches past its storage of {flat.size} elements"
        )
    if numel == 0:
        array = np.zeros(size, flat.dtype)
    else:
        item = flat.dtype.itemsize
        array = np.lib.stride_tricks.as_strided(
            flat[storage_offset:], size, [s * item for s in stride], writeable=False
        )
    return _Rebuilt(array, storage.location)


class _Rebuilt:
    """A tensor rebuilt from the pickle, turned into an fntorch tensor after unpickling
    (so the device is chosen once and the pickle never sees fntorch objects)."""

    __slots__ = ("array", "location")

    def __init__(self, array, location: str):
        self.array, self.location = np.array(array), location


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None, state=None):
    """fntorch's ``torch._utils._rebuild_parameter``: the parameter's value, as a tensor."""
    if not isinstance(data, _Rebuilt):
        raise ValueError(f"load: a parameter's data is a {type(data).__name__}, not a tensor")
    return data


def _codecs_encode(text, encoding="latin1"):
    """Protocol 2 pickles ``bytes`` as ``_codecs.encode(str, "latin1")``."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise ValueError("load: _codecs.encode is admitted only for latin1 text")
    return text.encode("latin1")


ALLOWED_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _codecs_encode,
    **{
        ("builtins", n): getattr(builtins, n) for n in ("dict", "list", "tuple", "set", "frozenset")
    },
    **{("torch", n): _StorageType(n, d) for n, d in TORCH_STORAGES.items()},
    ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", np.uint8),
}


class _TorchUnpickler(pickle._Unpickler):
    """The pure-Python unpickler with an allowlist in ``find_class``, storages from the zip
    in ``persistent_load``, and ``BUILD`` admitted only for a state dict's ``_metadata``
    (the C unpickler's BUILD would set attributes on any object)."""

    def __init__(self, data: bytes, read_storage):
        super().__init__(io.BytesIO(data))
        self._read_storage = read_storage
        self._storages: dict = {}

    def find_class(self, module, name):
        if self.proto < 3:  # Python 2 names, as the standard find_class maps them
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        fn = ALLOWED_GLOBALS.get((module, name))
        if fn is None:
            raise ValueError(
                f"load: the checkpoint asks for the global {module}.{name}, which is not one "
                "of PyTorch's tensor-rebuild functions or a plain container; fntorch runs "
                "nothing from a file"
            )
        return fn

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise ValueError(f"load: unknown persistent id {str(pid)[:80]!r}")
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType) or not isinstance(key, str):
            raise ValueError(f"load: bad storage reference {str(pid)[:80]!r}")
        if type(numel) is not int or numel < 0:
            raise ValueError(f"load: storage {key!r} declares {numel!r} elements")
        if key not in self._storages:
            array = self._read_storage(key, kind.dtype, numel)
            self._storages[key] = (kind, _Storage(array, location))
        seen_kind, storage = self._storages[key]
        if seen_kind.dtype != kind.dtype or storage.array.size < numel:
            raise ValueError(f"load: storage {key!r} is referenced with two layouts")
        return storage

    def _load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if isinstance(inst, collections.OrderedDict) and isinstance(state, dict):
            if set(state) <= {"_metadata"}:
                return  # torch's state-dict versions: not needed here
        raise ValueError(f"load: the pickle sets the state of a {type(inst).__name__} (BUILD)")

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = _load_build


def _check_ratio(info: zipfile.ZipInfo) -> None:
    if info.compress_type != zipfile.ZIP_STORED and (
        info.file_size > info.compress_size * DEFLATE_MAX_RATIO + 4096
    ):
        raise ValueError(
            f"load: zip entry {info.filename!r} declares {info.file_size} bytes from "
            f"{info.compress_size} compressed (a zip bomb?)"
        )


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, size: int) -> bytes:
    _check_ratio(info)
    with zf.open(info) as fh:
        raw = fh.read(size)
        extra = fh.read(1)
    if len(raw) != size or extra:
        raise ValueError(f"load: zip entry {info.filename!r} is not its declared {size} bytes")
    return raw


def _load_torch_zip(data: bytes, place):
    zf = zipfile.ZipFile(io.BytesIO(data))
    infos = {i.filename: i for i in zf.infolist()}
    pickles = [n for n in infos if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise ValueError(
            f"load: a zip that is not a torch.save checkpoint (expected one <name>/data.pkl, "
            f"found {len(pickles)})"
        )
    prefix = pickles[0][: -len("data.pkl")]
    big = False
    order_info = infos.get(prefix + "byteorder")
    if order_info is not None:
        order = _read_entry(zf, order_info, min(order_info.file_size, 16))
        if order not in (b"little", b"big"):
            raise ValueError(f"load: unknown byteorder {order[:16]!r}")
        big = order == b"big"

    def read_storage(key: str, dtype: np.dtype, numel: int) -> np.ndarray:
        info = infos.get(f"{prefix}data/{key}")
        if info is None:
            raise ValueError(f"load: the checkpoint refers to storage {key!r}, which it lacks")
        nbytes = numel * dtype.itemsize
        if info.file_size != nbytes:
            raise ValueError(
                f"load: storage {key!r} declares {numel} elements ({nbytes} bytes) but its zip "
                f"entry declares {info.file_size} bytes"
            )
        raw = _read_entry(zf, info, nbytes)
        array = np.frombuffer(raw, dtype.newbyteorder(">") if big else dtype)
        return array.astype(dtype) if big else array

    info = infos[pickles[0]]
    if info.file_size > MAX_PICKLE_BYTES:
        raise ValueError(f"load: data.pkl declares {info.file_size} bytes (too large)")
    unpickler = _TorchUnpickler(_read_entry(zf, info, info.file_size), read_storage)
    return _finish(unpickler.load(), place)


def _finish(obj, place):
    """Turns rebuilt tensors into fntorch tensors, recursing through plain containers."""
    memo: dict = {}

    def walk(x):
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, _Rebuilt):
            out = _to_tensor(x.array, place(x.location))
        elif isinstance(x, dict):
            out = type(x)() if isinstance(x, collections.OrderedDict) else {}
            memo[id(x)] = out
            for k, v in x.items():
                out[walk(k)] = walk(v)
            return out
        elif isinstance(x, list):
            out = []
            memo[id(x)] = out
            out.extend(walk(v) for v in x)
            return out
        elif isinstance(x, tuple):
            out = tuple(walk(v) for v in x)
        elif isinstance(x, (set, frozenset)):
            out = type(x)(walk(v) for v in x)
        elif x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
            return x
        else:
            raise ValueError(f"load: the checkpoint holds a {type(x).__name__} object")
        memo[id(x)] = out
        return out

    return walk(obj)
