"""The ambiguity notebook runs top to bottom in quick mode."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "ambiguity_cifar10h_chaosnli.ipynb"


@pytest.mark.slow
def test_notebook_runs_in_quick_mode(data_dir, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("BAYESCAL_QUICK", "1")
    monkeypatch.setenv("BAYESCAL_SHARED_DATA", str(data_dir))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Oracle TS (oracle)" in text
