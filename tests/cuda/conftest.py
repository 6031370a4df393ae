"""The GPU the CUDA tests run on (skipped without one)."""

import pytest


@pytest.fixture(scope="module")
def gpu():
    """``ft.device("cuda:0")``; skips the test where there is none (or no CuPy)."""
    import fntorch as ft

    try:
        return ft.device("cuda:0")
    except RuntimeError as e:
        pytest.skip(f"no CUDA device: {e}")
