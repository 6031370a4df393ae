"""Fixtures shared by the ops tests."""

import pytest


@pytest.fixture
def jax64():
    """JAX with float64 on for one test (a global switch: other tests compare against
    JAX's default float32 bits)."""
    jax = pytest.importorskip("jax")
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", was)
