"""What a CPU-only install sees of CUDA: nothing imported, and errors that say the fix.

These run everywhere (CI has no GPU); where CuPy is installed the absent-CuPy checks
skip.
"""

import importlib.util
import subprocess
import sys

import pytest

import fntorch as ft

NO_CUPY = importlib.util.find_spec("cupy") is None


def test_import_fntorch_never_imports_cupy():
    code = "import sys, fntorch; assert 'cupy' not in sys.modules, 'cupy imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.skipif(not NO_CUPY, reason="CuPy is installed here")
def test_a_cuda_device_without_cupy_names_the_extra():
    with pytest.raises(RuntimeError, match=r"CuPy.*pip install 'fntorch\[cuda\]'"):
        ft.device("cuda:0")
    with pytest.raises(RuntimeError, match=r"fntorch\[cuda\]"):
        ft.ones(2).cuda()
    with pytest.raises(RuntimeError, match=r"fntorch\[cuda\]"):
        ft.default_device("cuda")


@pytest.mark.skipif(not NO_CUPY, reason="CuPy is installed here")
def test_listing_devices_without_cupy_lists_the_cpu_only():
    assert [d.type for d in ft.devices()] == ["cpu"]
    assert not ft.cuda.is_available() and ft.cuda.device_count() == 0


def test_the_cuda_provider_is_registered_lazily():
    from fntorch.fx import device as registry

    assert "cuda" in registry._providers
    code = "import sys, fntorch as ft; ft.devices(); print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    # listing devices may import CuPy (to count GPUs) only where it is installed
    assert out.stdout.strip() == str(not NO_CUPY), out.stderr
