"""The ambiguity notebook runs top to bottom in quick mode on the data shipped with the package."""

import pytest


@pytest.mark.slow
def test_notebook_runs_in_quick_mode(execute_notebook, monkeypatch):
    # The notebook must not need the public data beside the repository.
    monkeypatch.delenv("BAYESCAL_SHARED_DATA", raising=False)
    nb, text = execute_notebook("ambiguity_cifar10h_chaosnli.ipynb")
    assert "not distinguishable from Dirichlet-Soft on ECE_true" in text
    assert "sampled label:" in text
    html = "".join(
        o.get("data", {}).get("text/html", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert "Oracle TS (oracle)" in html
    source = "".join(c.source for c in nb.cells)
    assert "shared/data" not in source.replace("shared/papers", "")
