"""The ambiguity notebook runs top to bottom in quick mode."""

import pytest


@pytest.mark.slow
def test_notebook_runs_in_quick_mode(data_dir, execute_notebook):
    _, text = execute_notebook(
        "ambiguity_cifar10h_chaosnli.ipynb", BAYESCAL_SHARED_DATA=str(data_dir)
    )
    assert "Oracle TS (oracle)" in text
