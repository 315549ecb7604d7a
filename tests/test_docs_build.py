"""The documentation site builds with warnings as errors, and holds what it should.

``python -m sphinx -W`` turns every warning into an error: a docstring numpydoc cannot parse,
a cross-reference to a name that does not exist, a page left out of the navigation, a broken
include. The build reads the committed notebooks without executing them, so it needs nothing
outside the repository (no network: no inventories of other projects are fetched).
"""

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

import bayescal

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import bayescal_api  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    html = out / "html"
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q"]
        + [str(DOCS), str(html), "-d", str(out / "doctrees")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert run.returncode == 0, f"sphinx -W failed:\n{run.stderr[-6000:]}"
    assert run.stderr.strip() == "", run.stderr
    return html


@pytest.mark.slow
def test_guide_model_cards_and_gallery_pages(site):
    guide = ["index", "user-guide", "guide", "model-cards", "gallery", "changelog", "spec"]
    guide += [p.stem for p in DOCS.glob("*.md")]
    cards = [f"models/{p.stem}" for p in (ROOT / "models").glob("*.md")]
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    gallery = [f"gallery/{p.stem}" for p in notebooks]
    missing = [p for p in guide + cards + gallery if not (site / f"{p}.html").is_file()]
    assert not missing, missing
    assert len(cards) >= 7 and len(gallery) >= 7
    # The README's image resolves from the include page.
    assert 'src="_images/report.png"' in (site / "guide.html").read_text()
    for path in notebooks:
        page = (site / "gallery" / f"{path.stem}.html").read_text()
        with_outputs = sum(1 for c in nbformat.read(path, 4).cells if c.get("outputs"))
        # the committed outputs are shown (nothing is executed): one block per cell with any
        assert with_outputs > 0 and page.count('class="cell_output') == with_outputs, path.stem
        # an embedded audit report is a framed document, not markup spliced into the page
        assert page.lower().count("<!doctype html") == 1, path.stem


@pytest.mark.slow
def test_api_reference_documents_every_public_name(site):
    pages = bayescal_api.index_objects()
    assert {p.name for p in pages} >= {
        "bayescal",
        "bayescal.ambiguity",
        "bayescal.metrics",
        "bayescal.plotting",
        "bayescal.recal",
        "bayescal.simulate",
        "bayescal.errors",
    }
    api = site / "api" / "generated"
    for page in pages:
        text = (api / f"{page.name}.html").read_text()
        for entry in page.entries:
            if entry in bayescal_api.own_entries(page):
                assert (api / f"{page.name}.{entry.name}.html").is_file(), entry.name
            elif entry.kind == "Constants":
                assert f'id="{page.name}.{entry.name}"' in text, entry.name
            else:  # documented under another name, linked from here
                target = entry.alias_of
                assert target and f"{target}.html" in text, (page.name, entry.name)
    # Every name users get from ``import bayescal`` is on the first page.
    root = next(p for p in pages if p.name == "bayescal")
    assert {e.name for e in root.entries} == set(bayescal.__all__) - {"__version__"}


def test_cross_references_resolve_by_what_they_name():
    """What ``missing-reference`` does with a name Sphinx could not resolve."""
    bayescal_api.index_objects()
    locate, documented = bayescal_api.locate, bayescal_api.documented_name
    # A name that does not exist stays unresolved: the -W build fails on it.
    assert locate("bayescal.no_such_function", None, None) is None
    assert locate("no_such_helper", "bayescal.channels", None) is None
    # Re-exports and private module paths link to the page of the public name.
    assert documented(locate("bayescal.summarize", None, None)) == "bayescal.summaries.summarize"
    assert documented(locate("bayescal.data.container.Annotations", None, None)) == (
        "bayescal.data.Annotations"
    )
    assert documented(locate("Report.save", "bayescal.report", None)) == (
        "bayescal.report.Report.save"
    )
    assert documented(locate("bayescal.ambiguity", None, None)) == "bayescal.ambiguity"
    # A helper or private module that exists but is not public is shown as code, unlinked.
    for name in ("bayescal.channels.identification.check_design", "bayescal.bayes.priors"):
        path = locate(name, None, None)
        assert path == name and documented(path) is None


def test_each_object_documented_once_aliases_and_re_exports_linked():
    """The layout under renames: what matters is __all__ and where an object is defined."""

    class Thing:
        """A thing."""

    def make():
        """Make one."""

    Thing.__module__ = make.__module__ = "bayescal.fake._impl"  # a private module
    fake = ModuleType("bayescal.fake")
    fake.Thing, fake.Alias, fake.make, fake.LIMIT = Thing, Thing, make, 3
    fake.__all__ = ["Thing", "Alias", "make", "LIMIT"]
    root = ModuleType("bayescal")
    root.Thing, root.__all__ = Thing, ["__version__", "Thing"]
    root_page, page = bayescal_api.collect([root, fake])
    entries = {e.name: e for e in page.entries}
    assert [e.name for e in bayescal_api.own_entries(page)] == ["Thing", "make"]
    assert entries["Alias"].alias_of == "bayescal.fake.Thing"
    assert entries["LIMIT"].kind == "Constants"
    (linked,) = root_page.entries
    assert (linked.name, linked.home, linked.alias_of) == (
        "Thing",
        "bayescal.fake",
        "bayescal.fake.Thing",
    )
    text = bayescal_api.module_page(page)
    assert "alias of :class:`bayescal.fake.Thing`" in text
    assert "   ~fake.Thing" in bayescal_api.module_page(root_page)
