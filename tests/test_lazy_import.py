"""``import bayescal`` is lazy (PEP 562): public names resolve on first use, nothing else loads."""

import importlib
import subprocess
import sys

import bayescal


def test_every_public_name_is_lazy_and_resolves_to_its_module():
    assert set(bayescal._LAZY) == set(bayescal.__all__) - {"__version__"}
    for name, module in bayescal._LAZY.items():
        assert name in dir(bayescal)
        assert getattr(bayescal, name) is getattr(importlib.import_module(module), name)


def test_unknown_name_is_an_attribute_error():
    try:
        bayescal.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_loads_no_numerical_library():
    code = (
        "import sys, bayescal; print([m for m in ('numpy', 'scipy', 'pandas', 'xarray') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    star = "from bayescal import *; print(Annotations.__name__, audit.__name__)"
    out = subprocess.run([sys.executable, "-c", star], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Annotations", "audit"]


def test_report_package_is_lazy_and_audit_stays_the_function():
    """``bayescal.report`` is imported by the command line's parser (``bayescal.report.cli``),
    so it must load nothing numerical; its ``audit`` is the function even after the module of
    the same name was imported (which binds the module to the package's attribute)."""
    code = (
        "import sys, bayescal.report as r\n"
        "print([m for m in ('numpy', 'scipy', 'pandas', 'xarray') if m in sys.modules])\n"
        "import bayescal.report.audit, bayescal.report.core\n"
        "from bayescal.report import audit, Report, CHANNEL_CHOICES\n"
        "print(callable(audit), audit.__module__, Report.__module__, CHANNEL_CHOICES[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == [
        "[]",
        "True bayescal.report.audit bayescal.report.core bayes",
    ]


def test_binary_audit_command_imports_neither_pymc_nor_pytensor(tmp_path):
    """``bayescal audit`` with Bayesian channels samples the hand-written density with nutpie
    (bayes/logdensity.py): PyMC and PyTensor (4 s of imports) stay out of the process, whatever
    section runs. A short run of the README command (fewer draws, every default section) in a
    fresh process; the sampler's diagnostics are not the point here."""
    code = (
        "import sys\n"
        "from bayescal.cli import main\n"
        "code = main(['audit', '--example', 'snli-entailment', '--draws', '60', '--tune', '60',\n"
        f"             '--out', {str(tmp_path / 'report')!r}, '--quiet'])\n"
        "print(code, sorted(m for m in ('pymc', 'pytensor', 'nutpie') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "0 ['nutpie']", out.stdout
    assert (tmp_path / "report" / "posterior.nc").is_file()


def test_a_refused_input_answers_before_the_model_and_the_stages_are_imported(tmp_path):
    """``bayescal audit`` reads its inputs before it imports the model, the sampler and the
    report stages: a data file that does not exist or an unusable ``--out`` is a one-line
    error (exit 2) without SciPy, numba, nutpie or the audit module (about 1 s of CPU)."""
    heavy = ("scipy", "numba", "nutpie", "arviz", "bayescal.report.audit", "bayescal.bayes.fit")
    for argv in (
        ["audit", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "r")],
        ["audit", "--example", "snli-entailment", "--out", "/dev/null/r"],
    ):
        code = (
            "import sys\n"
            "from bayescal.cli import main\n"
            f"code = main({argv!r})\n"
            f"print(code, [m for m in {heavy!r} if m in sys.modules])\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.stdout.split("\n")[-2] == "2 []", (argv, out.stdout, out.stderr[-1000:])
        assert out.stderr.count("bayescal: error:") == 1, out.stderr
