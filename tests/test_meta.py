"""Meta-tests: public names are documented, docstring examples run, import stays light."""

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import bayescal

CORE_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(bayescal.__path__, "bayescal.")
    if not m.name.startswith(
        ("bayescal.bench", "bayescal.ambiguity", "bayescal.bayes", "bayescal.simulate")
    )
    and m.name not in ("bayescal.__main__",)
)


@pytest.mark.parametrize("module", CORE_MODULES)
def test_doctests_run(module):
    if module.startswith("bayescal.scale"):
        pytest.importorskip("dask")  # the optional extra: pip install "bayescal[dask]"
        pytest.importorskip("pyarrow")
    mod = importlib.import_module(module)
    result = doctest.testmod(
        mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0


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
