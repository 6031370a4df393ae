"""Truncated and bit-flipped checkpoints (both formats) load or raise ValueError, nothing else."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fntorch as ft

torch = pytest.importorskip("torch")


def _safetensors_file() -> bytes:
    buf = io.BytesIO()
    ft.save({"layer": {"w": ft.ones((2, 3)), "b": ft.arange(3)}, "epoch": 3, "lr": 0.5}, buf)
    return buf.getvalue()


def _torch_file() -> bytes:
    buf = io.BytesIO()
    sd = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.arange(3), "epoch": 3}
    sd["v"] = sd["w"].t()
    torch.save(sd, buf)
    return buf.getvalue()


FILES = {"safetensors": _safetensors_file(), "torch": _torch_file()}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _load(data: bytes):
    try:
        ft.load(io.BytesIO(data))
    except ValueError:
        pass


@pytest.mark.parametrize("kind", sorted(FILES))
@SETTINGS
@given(data=st.data())
def test_truncated_files_raise_only_value_error(kind, data):
    raw = FILES[kind]
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(ValueError):
        ft.load(io.BytesIO(raw[:cut]))


@pytest.mark.parametrize("kind", sorted(FILES))
@SETTINGS
@given(data=st.data())
def test_bit_flips_raise_only_value_error(kind, data):
    raw = bytearray(FILES[kind])
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] ^= 1 << data.draw(st.integers(0, 7))
    _load(bytes(raw))
