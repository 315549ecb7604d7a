"""The ambiguity notebook runs top to bottom in quick mode."""

import pytest


@pytest.mark.slow
def test_notebook_runs_in_quick_mode(test_data, execute_notebook):
    # tests/data mirrors the shared data layout with small subsets of the same files
    _, text = execute_notebook(
        "ambiguity_cifar10h_chaosnli.ipynb", BAYESCAL_SHARED_DATA=str(test_data)
    )
    assert "Oracle TS (oracle)" in text
