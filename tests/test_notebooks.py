"""Every notebook runs top to bottom in quick mode (BAYESCAL_QUICK=1)."""

from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).parents[1] / "notebooks"

NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# These have their own test with content checks (tests/ambiguity, tests/recal).
OWN_TEST = {"ambiguity_cifar10h_chaosnli.ipynb", "recalibration.ipynb"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if p.name not in OWN_TEST], ids=lambda p: p.stem
)
def test_notebook_executes(path, execute_notebook):
    execute_notebook(path.name)


def test_notebooks_exist():
    names = {p.stem for p in NOTEBOOKS}
    assert {
        "quickstart",
        "toy_study",
        "bayesian_channels",
        "recalibration",
        "ambiguity_cifar10h_chaosnli",
        "multiclass_noise",
        "planning",
    } <= names
