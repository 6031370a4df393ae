"""Every notebook in notebooks/ runs top to bottom against this checkout's fntorch, and
shows its figures: the kernel's own matplotlib backend (inline under Jupyter) puts each
one into the outputs as ``image/png``, which a reader sees on opening the notebook."""

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def images(nb) -> int:
    """How many ``image/png`` outputs the executed notebook ``nb`` holds."""
    return sum(
        "image/png" in out.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def test_the_notebooks_are_found():
    names = {p.name for p in NOTEBOOKS}
    assert {"autodiff.ipynb", "debugging.ipynb", "tiny_gpt.ipynb", "train_digits.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_shows_its_figures(path, monkeypatch):
    # A backend forced from outside (MPLBACKEND=Agg on a headless machine) would hide
    # the figures; the kernel picks its own, as it does for a reader.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    # The kernel imports the fntorch that pytest tests (this checkout), installed or not.
    path_now = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), path_now])))
    nb = nbformat.read(path, as_version=4)
    if "cuda" in nb.metadata.get("fntorch", {}).get("requires", []):
        import fntorch as ft

        if not ft.cuda.is_available():
            pytest.skip(f"{path.name} needs a GPU (it runs on the device machine)")
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "matplotlib.use(" not in source, f"{path.name} sets matplotlib's backend"
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    assert images(nb) >= 1, f"{path.name}: no figure (image/png) among its outputs"
