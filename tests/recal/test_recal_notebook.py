"""The recalibration notebook runs top to bottom in quick mode."""

import pytest


@pytest.mark.slow
def test_recalibration_notebook_runs_in_quick_mode(execute_notebook):
    _, text = execute_notebook("recalibration.ipynb")
    assert "recalibration notebook finished" in text
