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


def _output_texts(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if "text" in out:
                yield out.get("name", "stdout"), out["text"]
            for key, value in out.get("data", {}).items():
                if key.startswith("text/") and isinstance(value, str):
                    yield key, value


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_outputs_are_clean(path):
    """Committed outputs name no machine folder, no file outside the repository, and the
    version they were run with is the package's (issue 24: notebooks re-executed)."""
    import re

    import bayescal

    machine = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users|private)/")
    texts = list(_output_texts(path))
    assert texts, f"{path.name} is committed without outputs: run scripts/build_notebooks.py"
    for kind, text in texts:
        assert not machine.search(text), (
            f"{path.name}: an output names a machine path ({kind}): "
            f"{machine.search(text).group(0)!r}; re-run scripts/build_notebooks.py"
        )
    source = path.read_text(encoding="utf-8")
    assert "shared/papers" not in source, f"{path.name} cites a file outside the repository"
    watermark = [t for _, t in texts if re.search(r"^bayescal\s+\d", t, re.M)]
    assert watermark, f"{path.name} has no watermark naming the bayescal version"
    version = re.search(r"^bayescal\s+(\S+)", watermark[-1], re.M).group(1)
    assert version == bayescal.__version__, (
        f"{path.name} was last run with bayescal {version}, the package is "
        f"{bayescal.__version__}: re-run scripts/build_notebooks.py"
    )
