"""Every notebook runs top to bottom in quick mode (BAYESCAL_QUICK=1)."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
# These have their own test with content checks (tests/ambiguity/test_notebook.py).
OWN_TEST = {"ambiguity_cifar10h_chaosnli.ipynb"}


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in OWN_TEST], ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("BAYESCAL_QUICK", "1")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def test_notebooks_exist():
    names = {p.stem for p in NOTEBOOKS}
    assert {"quickstart", "toy_study", "bayesian_channels", "recalibration", "ambiguity_cifar10h_chaosnli"} <= names
