"""Meta-tests: public names are documented, docstring examples run, import stays light,
test helpers import unambiguously, the test data match their README."""

import ast
import doctest
import hashlib
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import bayescal

TESTS = Path(__file__).parent
PACKAGE = Path(bayescal.__file__).parent
# Every module of every package; ``__main__`` runs the CLI on import.
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(bayescal.__path__, "bayescal.")
    if m.name != "bayescal.__main__"
)


@pytest.mark.parametrize("module", MODULES)
def test_doctests_run(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(
        mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0


def test_no_docstring_example_is_skipped():
    """A ``+SKIP`` example is never run, so it can rot: make it fast instead."""
    skipped = [
        f"{path.relative_to(PACKAGE.parent)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"doctest:.*\+SKIP", line)
    ]
    assert not skipped, skipped


def test_public_api_documented():
    for name in bayescal.__all__:
        obj = getattr(bayescal, name)
        if name.startswith("__"):
            continue
        assert inspect.getdoc(obj), f"bayescal.{name} has no docstring"


def test_import_is_light():
    code = (
        "import sys, bayescal; heavy = [m for m in ('pymc', 'pytensor', 'arviz', "
        "'matplotlib', 'jinja2', 'dask', 'scipy.optimize') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_help_and_module_entry():
    out = subprocess.run(
        [sys.executable, "-m", "bayescal", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "bench" in out.stdout


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_test_imports_a_conftest():
    """Test folders are not packages: pytest puts each on ``sys.path`` and ``conftest`` is
    whichever folder's conftest was imported last (``pytest tests/core tests/ambiguity`` then
    fails to collect). Helpers go in uniquely named modules (``core_helpers.py``) or fixtures."""
    offenders = [
        str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if "conftest" in _imported_modules(p)
    ]
    assert not offenders, offenders


def test_test_module_names_are_unique():
    """Same-named modules in two test folders shadow each other on ``sys.path``."""
    names = Counter(p.name for p in TESTS.rglob("*.py") if p.name != "conftest.py")
    assert not [n for n, c in names.items() if c > 1], names


def test_test_data_match_their_readme():
    """Every file under tests/data is listed in its README with its sha256, and matches it."""
    data = TESTS / "data"
    listed = dict(
        (path, digest)
        for digest, path in re.findall(
            r"^([0-9a-f]{64})  (\S+)$", (data / "README.md").read_text(), re.MULTILINE
        )
    )
    present = {
        str(p.relative_to(data)) for p in data.rglob("*") if p.is_file() and p.name != "README.md"
    }
    assert present == set(listed)
    for path, digest in listed.items():
        assert hashlib.sha256((data / path).read_bytes()).hexdigest() == digest, path
