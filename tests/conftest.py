"""Fixtures shared by every test folder, and the zero-skip rule of CI."""

import copy
import hashlib
import os
from pathlib import Path

import numpy as np
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


@pytest.fixture(scope="module", autouse=True)
def _glad_on_small_audits_only(request):
    """Module scope: active before the module's own fixtures (a module-scoped fixture that
    audits ran before a function-scoped patch and took GLAD at the library's ceiling)."""
    if request.path.name == "test_crowdkit_section.py":
        yield
        return
    from bayescal.report import crowdkit_section

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(crowdkit_section, "GLAD_MAX_ITEMS", TEST_GLAD_MAX_ITEMS)
        yield


#: One crowd-kit run per distinct input in this test process (outside
#: ``test_crowdkit_section.py``, which runs crowd-kit itself every time). The four
#: aggregators cost about 2 s of CPU per audit (pandas in every iteration, even on a few
#: dozen items) and many tests audit the same data more than once (the same file with and
#: without ``--quiet``, into two folders, ...): about 30 s of the suite's CPU went to
#: recomputing results already computed. An aggregator's result is a function of its inputs
#: (the answers, the items, scores, bins, majority vote, seed and GLAD ceiling), so a repeat
#: returns a copy of the first result (``seconds`` included).
_CROWDKIT_RUNS: dict = {}


def _digest(frame, *arrays) -> str:
    import pandas as pd

    h = hashlib.sha256(repr(list(frame.columns)).encode())
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    for a in arrays:
        a = np.asarray(a)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update("\x1f".join(map(str, a.ravel())).encode() if a.dtype == object else a.tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module", autouse=True)
def _crowdkit_once_per_input(request):
    """Module scope, as ``_glad_on_small_audits_only``: the module's fixtures included."""
    if request.path.name == "test_crowdkit_section.py":
        yield
        return
    from bayescal.report import crowdkit_section

    run = crowdkit_section._run

    def once(name, frame, items, score, edges, majority, seed):
        digest = _digest(frame, items, score, edges, majority)
        key = (name, seed, crowdkit_section.GLAD_MAX_ITEMS, digest)
        if key not in _CROWDKIT_RUNS:
            _CROWDKIT_RUNS[key] = run(name, frame, items, score, edges, majority, seed)
        return copy.deepcopy(_CROWDKIT_RUNS[key])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(crowdkit_section, "_run", once)
        yield


#: Run in the shared kernel before each notebook: the namespace, figures, warning filters and
#: working folder as a fresh kernel has them, the environment of this test (``BAYESCAL_*``
#: variables set or removed by it), and the audits' GLAD ceiling of ``_glad_on_small_audits_only``.
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
crowdkit_section.GLAD_MAX_ITEMS = {glad}
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
            folder=str(path.parent), env=bayescal_env, glad=TEST_GLAD_MAX_ITEMS
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
