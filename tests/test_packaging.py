"""Release hygiene: one version, an sdist and a wheel that work outside the source tree.

``python -m build`` makes the sdist and then the wheel *from the sdist*, so a file the sdist
lacks breaks the wheel too. The wheel is installed into a new virtual environment (it sees
the test environment's packages for its dependencies, so nothing is downloaded; the
environment's own bayescal, an editable install, is shadowed by the wheel's), and the audit
of an embedded example runs there from an empty folder: package data (examples, templates,
ambiguity data) must come from the wheel. The build runs without isolation on the
setuptools the test extra installs, so it needs no network either.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

import bayescal

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bayescal"
VERSION = bayescal.__version__


def copy_checkout(target: Path) -> None:
    """The files git tracks or would track (``.gitignore`` honoured), symlinks as links:
    the build sees what a fresh clone with this change holds, not caches or reports."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        cwd=ROOT,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        path = ROOT / name
        if path.is_symlink() or path.is_file():  # a file deleted but not yet staged is skipped
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / name, follow_symlinks=False)


def package_files() -> set[str]:
    """Every file of the package in the source tree (caches excluded), relative to ROOT."""
    return {
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".nbi", ".nbc"}
    }


def clean_env() -> dict:
    """The environment without what would let the source tree leak into an import."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def test_version_is_defined_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert dynamic["dynamic"]["version"] == {"attr": "bayescal.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    # the changelog has a section for the version the package says it is
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[(Unreleased\] - )?{re.escape(VERSION)}", changelog, re.M)
    # the licence is an SPDX expression with its file, not the deprecated table
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]


@pytest.mark.slow
def test_wheel_and_sdist_install_and_audit_outside_the_source_tree(tmp_path):
    setuptools = version("setuptools")
    assert int(setuptools.split(".")[0]) >= 77, (
        f"setuptools {setuptools} cannot build this project (the SPDX licence needs 77 or "
        'later): pip install -e ".[test]" installs it'
    )
    source = tmp_path / "source"
    copy_checkout(source)
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    log = build.stdout + build.stderr
    assert build.returncode == 0, log[-6000:]
    # no deprecation from setuptools (the project.license table, license classifiers, ...)
    assert "Deprecat" not in log and "project.license" not in log, log[-6000:]

    sdist = dist / f"bayescal-{VERSION}.tar.gz"
    wheel = dist / f"bayescal-{VERSION}-py3-none-any.whl"
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = set(zf.namelist())
    expected = package_files()
    assert expected <= in_sdist, sorted(expected - in_sdist)
    assert {"README.md", "LICENSE", "CHANGELOG.md", "pyproject.toml"} <= in_sdist
    assert not any(name.startswith("tests/") for name in in_sdist)
    assert expected <= in_wheel, sorted(expected - in_wheel)
    assert f"bayescal-{VERSION}.dist-info/licenses/LICENSE" in in_wheel

    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
        check=True,
        env=clean_env(),
    )
    python, command = venv / "bin" / "python", venv / "bin" / "bayescal"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert install.returncode == 0, install.stdout + install.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run(*args):
        return subprocess.run(
            args, capture_output=True, text=True, cwd=elsewhere, env=clean_env(), timeout=900
        )

    where = run(str(python), "-c", "import bayescal; print(bayescal.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    assert run(str(command), "--version").stdout.strip() == f"bayescal {VERSION}"

    out = elsewhere / "report"
    audit = run(str(command), "audit", "--example", "snli-entailment", "--out", str(out))
    assert audit.returncode == 0, audit.stderr[-6000:]
    assert (out / "report.html").is_file() and (out / "posterior.nc").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["reproducibility"]["versions"]["bayescal"] == VERSION
    assert 0 <= summary["ece"]["nc"]["point"] <= 1
