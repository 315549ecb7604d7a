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


#: The crowd-kit comparison section runs four third-party aggregators (Dawid-Skene, GLAD,
#: MMSR, KOS) on the audit's answers: about 2 s of CPU per audit (pandas in every iteration,
#: even on a few dozen items; GLAD 2.4 ms per item on top), measured as a third of the CPU
#: of the audit-heavy test files. ``tests/report/test_crowdkit_section.py`` checks the
#: section end to end against crowd-kit itself (every aggregator recomputed, a failing one
#: shown, GLAD's item limit, the audit carrying the section and its summary.json numbers),
#: and the benches compare with crowd-kit in ``tests/bench``. Everywhere else the audits take
#: the section's own "skipped, with the reason" path: nothing they test reads those rows.
CROWDKIT_TEST_MODULES = {"test_crowdkit_section.py"}
CROWDKIT_SKIPPED = {
    "status": "skipped",
    "reason": "not run in this test (tests/conftest.py: crowd-kit's aggregators are tested in "
    "tests/report/test_crowdkit_section.py)",
}


def crowdkit_skipped(*args, **kwargs) -> dict:
    """Stands in for ``crowdkit_section._run`` outside the crowd-kit tests."""
    return dict(CROWDKIT_SKIPPED)


@pytest.fixture(scope="module", autouse=True)
def _crowdkit_only_where_tested(request):
    """Module scope: active before the module's own fixtures (module-scoped fixtures that
    audit run before any function-scoped patch)."""
    if request.path.name in CROWDKIT_TEST_MODULES:
        yield
        return
    from bayescal.report import crowdkit_section

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(crowdkit_section, "_run", crowdkit_skipped)
        yield


@pytest.fixture(autouse=True)
def _close_pyplot_figures():
    """Every test starts with no pyplot figure open: figures a test leaves open would count
    towards matplotlib's 20-figure RuntimeWarning (an error in this suite) in whatever test
    the same worker runs next (the package doctests failed that way)."""
    yield
    import sys

    pyplot = sys.modules.get("matplotlib.pyplot")  # never imported here: figures need it
    if pyplot is not None:
        pyplot.close("all")


#: Report figures are drawn and encoded on their usual path everywhere, but rasterised at
#: this resolution outside the modules that look at their pixels: rasterising the desktop
#: (100 dpi) and phone (200 dpi) PNGs was about a third of every CLI audit's CPU in the suite,
#: and no other test reads a pixel.
TEST_FIGURE_DPI = 20
FIGURE_PIXEL_MODULES = {"test_report_ux.py"}


@pytest.fixture(scope="module", autouse=True)
def _figures_at_low_resolution(request):
    """Module scope, as the crowd-kit fixture (module fixtures that audit included)."""
    if request.path.name in FIGURE_PIXEL_MODULES:
        yield
        return
    from bayescal.report import figures

    encode = figures._png
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figures, "_png", lambda fig, dpi: encode(fig, TEST_FIGURE_DPI))
        yield


#: Run in the shared kernel before each notebook: the namespace, figures, warning filters and
#: working folder as a fresh kernel has them, the environment of this test (``BAYESCAL_*``
#: variables set or removed by it), and the crowd-kit rows skipped as in
#: ``_crowdkit_only_where_tested``.
_NOTEBOOK_PREAMBLE = """\
%reset -f
import os, sys, warnings
import matplotlib.pyplot
if not hasattr(sys, "_bayescal_test_filters"):
    sys._bayescal_test_filters = list(warnings.filters)
warnings.filters[:] = sys._bayescal_test_filters
matplotlib.pyplot.close("all")
os.chdir({folder!r})
for _k in [k for k in os.environ if k.startswith("BAYESCAL_") and k not in {env!r}]:
    del os.environ[_k]
os.environ.update({env!r})
from bayescal.report import crowdkit_section
crowdkit_section._run = lambda *args, **kwargs: dict({skipped!r})
%reset -f
"""


@pytest.fixture(scope="session")
def notebook_kernel():
    """One Jupyter kernel per test process, shared by every notebook test.

    A fresh kernel per notebook cost about 5 s of CPU before the first cell did any work
    (starting ipykernel, importing bayescal, PyMC, ArviZ and matplotlib, loading the numba
    cache); seven notebooks paid it seven times. Each notebook still starts from an empty
    namespace (``_NOTEBOOK_PREAMBLE``); only imported modules carry over, as they would in
    a kernel a user restarts between notebooks without restarting Python.
    """
    jupyter_client = pytest.importorskip("jupyter_client.manager")
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(NOTEBOOK_DIR))
    yield km
    km.shutdown_kernel(now=True)


@pytest.fixture
def execute_notebook(monkeypatch, notebook_kernel):
    """Run a notebook top to bottom in quick mode; returns (notebook, text of its outputs).

    The notebook runs in the shared kernel of this test process (``notebook_kernel``);
    an error in any cell fails the test (nbclient raises ``CellExecutionError``, and the
    outputs are checked for error entries as well)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")

    def execute(nb, path):
        if not notebook_kernel.is_alive():  # a notebook before this one killed it
            notebook_kernel.restart_kernel(now=True)
        nbclient.NotebookClient(
            nb, km=notebook_kernel, timeout=600, kernel_name="python3"
        ).execute()

    def run(name, **env):
        monkeypatch.setenv("BAYESCAL_QUICK", "1")
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        path = NOTEBOOK_DIR / name
        bayescal_env = {k: v for k, v in os.environ.items() if k.startswith("BAYESCAL_")}
        preamble = _NOTEBOOK_PREAMBLE.format(
            folder=str(path.parent), env=bayescal_env, skipped=CROWDKIT_SKIPPED
        )
        execute(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(preamble)]), path)
        nb = nbformat.read(path, as_version=4)
        execute(nb, path)
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


#: The number an interval-shaped object of ``summary.json`` estimates, by key, in order:
#: ``point`` is the headline NC-ECE (its ``lo``, ``hi``), ``mean`` the posterior mean of a
#: channel entry (whose ``point`` is the point estimator's value, a different number that
#: need not lie in the posterior interval), ``estimate`` the verdict's headline, ``score``
#: the mean score of the verdict's largest-gap bin (``lo``, ``hi`` its edges).
_INTERVAL_CENTRES = {"channel": ("mean",), "other": ("point", "estimate", "mean", "score")}


def _walk_intervals(node, path, found):
    if isinstance(node, dict):
        if "lo" in node and "hi" in node and node["lo"] is not None:
            keys = _INTERVAL_CENTRES["channel" if ".channels." in path else "other"]
            centre = next((k for k in keys if k in node), None)
            found.append((path, node, centre))
        for k, v in node.items():
            _walk_intervals(v, f"{path}.{k}", found)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _walk_intervals(v, f"{path}[{i}]", found)


def check_summary_intervals(summary: dict) -> list[str]:
    """Walk a summary.json: every object with ``lo`` and ``hi`` has its estimate inside
    (element-wise for matrices), no ``estimate`` field holds text, and the headline and
    the verdict quote the same numbers. Returns the paths checked."""
    import json

    import numpy as np

    s = json.loads(json.dumps(summary, default=str))
    found: list = []
    _walk_intervals(s, "", found)
    assert found, "no interval-shaped object in the summary"
    for path, node, centre in found:
        lo, hi = np.asarray(node["lo"], dtype=float), np.asarray(node["hi"], dtype=float)
        assert np.all(lo <= hi), f"{path}: lo > hi"
        if centre is None:  # an interval without its own estimate (a decomposition row)
            assert set(node) - {"lo", "hi"} <= {"sd", "width"}, f"{path}: unnamed centre"
            continue
        value = np.asarray(node[centre], dtype=float)
        assert np.all((lo <= value) & (value <= hi)), f"{path}.{centre} outside [lo, hi]"
        assert not isinstance(node.get("estimate", 0.0), str), f"{path}.estimate is text"
    nc, headline = s["ece"]["nc"], s["verdict"]["numbers"]
    assert "mean" not in nc  # the headline has one estimate: "point"
    assert nc["point"] <= nc["plugin"]  # the bias correction only lowers the plug-in
    assert (headline["estimate"], headline["lo"], headline["hi"]) == (
        nc["point"],
        nc["lo"],
        nc["hi"],
    )
    if "source" in nc and nc["source"] in nc.get("decomposition", {}):
        row = nc["decomposition"][nc["source"]]  # the reported source is the headline
        assert (row["lo"], row["hi"]) == (nc["lo"], nc["hi"])
    return [p for p, _, _ in found]


@pytest.fixture(scope="session")
def summary_intervals_check():
    """:func:`check_summary_intervals` for any test folder (the folders are not packages)."""
    return check_summary_intervals
