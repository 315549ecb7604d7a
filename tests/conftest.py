"""Fixtures shared by every test folder, and the zero-skip rule of CI."""

import os
from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).parents[1] / "notebooks"
TEST_DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def test_data() -> Path:
    """tests/data: small real-data subsets with provenance and licences (its README.md)."""
    assert (TEST_DATA / "README.md").is_file(), f"test data folder missing: {TEST_DATA}"
    return TEST_DATA


#: crowd-kit's GLAD costs about 2.4 ms per annotated item (``GLAD_MAX_ITEMS``' comment), so
#: every in-process binary audit of 1,000-5,000 items spent 2.4-12 s in it: about a third of
#: the suite's audit time. Outside ``tests/report/test_crowdkit_section.py`` (which checks
#: GLAD's row against crowd-kit itself on 400 items, and its skip path) audits run GLAD only
#: up to this many items, so small audits still take the whole section end to end and larger
#: ones take its documented skip path; the other three aggregators always run.
TEST_GLAD_MAX_ITEMS = 500


@pytest.fixture(autouse=True)
def _glad_on_small_audits_only(request, monkeypatch):
    if request.node.path.name != "test_crowdkit_section.py":
        from bayescal.report import crowdkit_section

        monkeypatch.setattr(crowdkit_section, "GLAD_MAX_ITEMS", TEST_GLAD_MAX_ITEMS)


@pytest.fixture
def execute_notebook(monkeypatch):
    """Run a notebook top to bottom in quick mode; returns (notebook, text of its outputs)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")

    def run(name, **env):
        monkeypatch.setenv("BAYESCAL_QUICK", "1")
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        path = NOTEBOOK_DIR / name
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        errors = [o for o in outputs if o.get("output_type") == "error"]
        assert not errors, errors
        return nb, "".join(o.get("text", "") for o in outputs)

    return run


def pytest_configure(config):
    """``BAYESCAL_CPUTIME=DIR``: record CPU seconds per test phase (``tests/cputime_plugin.py``)."""
    if os.environ.get("BAYESCAL_CPUTIME"):
        from cputime_plugin import CPUTime

        config.pluginmanager.register(CPUTime(os.environ["BAYESCAL_CPUTIME"]), "bayescal-cputime")


def pytest_sessionfinish(session, exitstatus):
    """With ``BAYESCAL_NO_SKIPS=1`` (set by .ci/run) a skipped test fails the run: every test
    has its data in the repository and its packages in the ``test`` extra, so a skip means
    something is missing, not that the test does not apply."""
    if os.environ.get("BAYESCAL_NO_SKIPS") != "1" or exitstatus != pytest.ExitCode.OK:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write("\n")  # the progress line is still open here
        reporter.write_sep(
            "=",
            f"BAYESCAL_NO_SKIPS=1: {len(skipped)} skipped, so the run fails (reasons: pytest -rs)",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(config, items):
    """Modules holding ``slow`` tests run first (stable: each module stays in one piece, in
    its order). With ``--dist loadfile`` pytest-xdist hands out whole modules in collection
    order, so a long module collected last (``tests/test_notebooks.py``) kept one worker busy
    while the other sat idle; starting the long ones first lets the short ones fill in."""
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)
