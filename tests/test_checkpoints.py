"""ft.save / ft.load: safetensors round-trips, torch.save'd files, hostile pickles."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy

import fntorch as ft

torch = pytest.importorskip("torch")


def same(a, b):
    if isinstance(b, (torch.Tensor, np.ndarray, ft.Tensor)):
        want = b.float().numpy() if isinstance(b, torch.Tensor) and b.dtype == torch.bfloat16 else b
        want = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
        assert isinstance(a, ft.Tensor), type(a)
        got = a.numpy().astype(np.float32) if a.dtype == ft.bfloat16 else a.numpy()
        assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
    elif isinstance(b, dict):
        assert list(a) == list(b)
        for k in b:
            same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), (a, b)


def roundtrip(obj):
    buf = io.BytesIO()
    ft.save(obj, buf)
    buf.seek(0)
    return ft.load(buf)


def test_nested_trees_with_python_leaves_round_trip():
    tree = {
        "layer1": {"weight": ft.ones((2, 3)), "bias": ft.zeros(2)},
        "blocks": [ft.arange(4), (ft.asarray([True, False]), None)],
        "epoch": 3,
        "lr": 0.1,
        "name": "adam",
        "flag": False,
        "inf": float("inf"),
        "nan": float("nan"),
        "empty": {},
    }
    same(roundtrip(tree), tree)
    same(roundtrip(ft.arange(3.0)), ft.arange(3.0))
    same(roundtrip([1, "a", None]), [1, "a", None])


def test_optimizer_state_dict_with_int_keys_round_trips():
    sd = {
        "state": {
            0: {"step": ft.asarray(3.0), "exp_avg": ft.ones(3)},
            1: {"step": ft.asarray(3.0)},
        },
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None}],
    }
    same(roundtrip(sd), sd)


@pytest.mark.parametrize(
    "dtype", [ft.bfloat16, ft.float16, ft.float64, ft.int8, ft.uint8, ft.int64, ft.bool]
)
def test_dtypes_round_trip(dtype):
    t = ft.asarray(np.arange(6).reshape(2, 3).astype(dtype))
    out = roundtrip({"t": t})["t"]
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_cells_save_as_their_values_and_non_contiguous_views():
    p = ft.nn.Parameter(ft.arange(4.0))
    out = roundtrip({"p": p, "v": ft.arange(6.0).reshape(2, 3).T})
    assert type(out["p"]) is not ft.nn.Parameter and out["p"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert out["v"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_paths_and_flat_dicts_readable_by_safetensors(tmp_path):
    path = tmp_path / "model.safetensors"
    flat = {"layer1.weight": ft.ones((2, 2)), "bias": ft.arange(2.0)}
    ft.save(flat, path)
    raw = safetensors.numpy.load_file(str(path))
    assert set(raw) == {"layer1.weight", "bias"} and raw["bias"].tolist() == [0.0, 1.0]
    same(ft.load(path), flat)
    same(ft.load(str(path)), flat)
    with open(path, "rb") as fh:
        same(ft.load(fh), flat)
    nested = {"layer1": {"weight": ft.ones(2)}, "0": [ft.zeros(1), ft.zeros(1)]}
    ft.save(nested, path)
    assert set(safetensors.numpy.load_file(str(path))) == {"layer1.weight", "0.0", "0.1"}
    # A file another tool wrote: a flat dict of its tensors.
    safetensors.numpy.save_file({"a": np.ones(2, np.float32)}, str(tmp_path / "x.st"))
    assert ft.load(tmp_path / "x.st")["a"].tolist() == [1.0, 1.0]
    bf = {"h": np.ones(2, ml_dtypes.bfloat16)}
    assert ft.load(io.BytesIO(safetensors.numpy.save(bf)))["h"].dtype == ft.bfloat16


def test_a_failed_save_leaves_no_file(tmp_path):
    path = tmp_path / "ck.safetensors"
    with pytest.raises(TypeError, match="cannot save a object"):
        ft.save({"a": ft.ones(1), "b": object()}, path)
    ft.save({"a": ft.ones(1)}, path)
    with pytest.raises(TypeError):
        ft.save({"a": ft.ones(1), "b": {(1, 2): 3}}, path)
    assert ft.load(path)["a"].tolist() == [1.0]
    assert os.listdir(tmp_path) == ["ck.safetensors"]


def test_load_places_on_a_device():
    buf = io.BytesIO()
    ft.save({"a": ft.ones(1)}, buf)
    buf.seek(0)
    assert ft.load(buf, device="cpu")["a"].device == ft.device("cpu")
    buf.seek(0)
    assert ft.load(buf, map_location={"cpu": "cpu"})["a"].device == ft.device("cpu")


# ----------------------------------------------------------------- torch.save's files


def torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_loads_a_torch_model_state_dict_with_shared_and_strided_storages():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    sd = model.state_dict()
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    sd["view.t"] = base.t()  # shares base's storage, transposed
    sd["view.slice"] = base[1:, ::2]  # offset and step
    sd["base"] = base
    sd["expanded"] = torch.ones(3).expand(2, 3)  # stride 0
    sd["empty"] = torch.zeros(0, 3)
    sd["scalar"] = torch.tensor(2.5, dtype=torch.float64)
    for dt in [
        torch.float16,
        torch.bfloat16,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.bool,
    ]:
        sd[f"dt.{dt}"] = (torch.arange(-3, 3) % 5).to(dt).reshape(2, 3)[:, 1:]
    out = ft.load(io.BytesIO(torch_bytes(sd)))
    assert list(out) == list(sd)
    same(dict(out), dict(sd))


def test_loads_torch_optimizer_state_and_a_training_checkpoint(tmp_path):
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    ck = {
        "model": model.state_dict(),
        "optim": opt.state_dict(),
        "epoch": 3,
        "note": "x",
        "best": 0.5,
        "p": torch.nn.Parameter(torch.ones(2)),
        "raw": b"\x00\xff",
    }
    path = tmp_path / "ck.pt"
    torch.save(ck, path)
    out = ft.load(path)
    assert (
        out["epoch"] == 3
        and out["note"] == "x"
        and out["best"] == 0.5
        and out["raw"] == b"\x00\xff"
    )
    same(dict(out["model"]), dict(ck["model"]))
    assert out["optim"]["param_groups"][0]["lr"] == 0.01
    same(out["optim"]["state"][0]["exp_avg"], ck["optim"]["state"][0]["exp_avg"])
    same(out["p"], ck["p"].detach())
    # and it saves back as safetensors
    ft.save(out, tmp_path / "ck.safetensors")
    assert ft.load(tmp_path / "ck.safetensors")["optim"]["state"][0]["step"].item() == 1.0


def zip_with_pickle(payload: bytes, storages=None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        for k, v in (storages or {}).items():
            z.writestr(f"archive/data/{k}", v)
    return buf.getvalue()


class Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


@pytest.mark.parametrize(
    "obj,name",
    [
        (Reduce(os.system, ("echo pwned",)), "system"),
        (Reduce(eval, ("1+1",)), "builtins.eval"),
        (Reduce(getattr, ("x", "upper")), "builtins.getattr"),
        ({"x": Reduce(np.ones, (3,))}, "numpy"),
    ],
)
def test_hostile_pickles_raise_naming_the_global(obj, name, tmp_path):
    data = zip_with_pickle(pickle.dumps(obj, protocol=2))
    with pytest.raises(ValueError, match=name):
        ft.load(io.BytesIO(data))
    with pytest.raises(ValueError, match="bare pickle"):
        ft.load(io.BytesIO(pickle.dumps(obj, protocol=2)))


def test_malformed_torch_zips_raise_value_error():
    sd = torch_bytes({"w": torch.arange(4.0)})
    z = zipfile.ZipFile(io.BytesIO(sd))
    pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    with pytest.raises(ValueError, match="lacks"):
        ft.load(io.BytesIO(zip_with_pickle(pkl)))  # the storage is missing
    with pytest.raises(ValueError, match="declares 4 elements"):
        ft.load(io.BytesIO(zip_with_pickle(pkl, {"0": b"\x00" * 8})))
    # A zip bomb: a declared size far beyond what the entry's compressed bytes can hold.
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zb:
        zb.writestr("archive/data.pkl", pkl)
        zb.writestr("archive/data/0", b"\x00" * 16)
    raw = bytearray(bomb.getvalue())
    # patch the declared uncompressed size of data/0 in the central directory
    zi = zipfile.ZipFile(io.BytesIO(bytes(raw))).getinfo("archive/data/0")
    assert zi.file_size == 16
    with pytest.raises(ValueError):
        ft.load(io.BytesIO(bytes(raw).replace(b"archive/data/0", b"archive/data/9")))
    with pytest.raises(ValueError, match="data.pkl"):
        ft.load(io.BytesIO(zip_with_pickle(b"")[:0] + _zip({"x.txt": b"hi"})))
    with pytest.raises(ValueError):
        ft.load(io.BytesIO(sd[: len(sd) // 2]))


def _zip(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in entries.items():
            z.writestr(k, v)
    return buf.getvalue()


def test_bad_safetensors_headers_raise_value_error():
    good = safetensors.numpy.save({"a": np.ones(2, np.float32)})
    for bad in [
        b"",
        b"\x01",
        (10**9).to_bytes(8, "little") + b"{}",
        good[:8] + b"[" + good[9:],
        good[:-3],
    ]:
        with pytest.raises(ValueError):
            ft.load(io.BytesIO(bad))
    meta = safetensors.numpy.save(
        {"a": np.ones(2, np.float32)},
        metadata={"fntorch": '{"version": 1, "tree": {"tensor": "zz"}}'},
    )
    with pytest.raises(ValueError, match="zz"):
        ft.load(io.BytesIO(meta))


def test_a_zip_bomb_is_refused_before_it_is_inflated():
    # The pickle declares 2**28 floats (1 GiB); the zip entry claims that size from a few
    # hundred compressed bytes: refused by the ratio check, nothing is inflated.
    n = 1 << 28
    rebuild = (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(((X\x07\x00\x00\x00storage"
        b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ"
        + n.to_bytes(4, "little")
        + b"tQK\x00J"
        + n.to_bytes(4, "little")
        + b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR."
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", rebuild)
        z.writestr("archive/data/0", b"\x00" * 4096, zipfile.ZIP_DEFLATED)
    raw = buf.getvalue()
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo("archive/data/0")
    old = info.file_size.to_bytes(4, "little")
    patched = raw.replace(
        info.CRC.to_bytes(4, "little") + info.compress_size.to_bytes(4, "little") + old,
        info.CRC.to_bytes(4, "little")
        + info.compress_size.to_bytes(4, "little")
        + (4 * n).to_bytes(4, "little"),
    )
    assert zipfile.ZipFile(io.BytesIO(patched)).getinfo("archive/data/0").file_size == 4 * n
    with pytest.raises(ValueError, match="zip bomb"):
        ft.load(io.BytesIO(patched))
