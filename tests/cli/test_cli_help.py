"""``--help`` says what every option does and its default, and shows usage examples (issue 16);
``bayescal --help`` imports only what the command line needs."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import subprocess
import sys

import pytest
from cli_helpers import child_env

from bayescal import __version__
from bayescal.cli import BENCHMARKS, COMMANDS, build_parser, main


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def _command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``bayescal NAME`` with its options attached, as ``main`` builds it."""
    parser = _subparsers(build_parser())[name]
    importlib.import_module(COMMANDS[name][0]).add_arguments(parser)
    return parser


def _help(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _examples(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith(prefix)]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_a_description_and_its_default(name):
    parser = _command_parser(name)
    options = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    assert len(options) >= 10
    for action in options:
        label = "/".join(action.option_strings) or action.dest
        assert action.help and len(action.help) > 15, f"{name} {label} has no description"
        text = action.help.lower()
        assert "default" in text or "required" in text, f"{name} {label} does not give a default"
        if action.default not in (None, False) and "%(default)s" not in action.help:
            assert str(action.default) in action.help, f"{name} {label}: default not shown"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_shows_at_least_two_examples(name):
    text = _help([name, "--help"])
    examples = _examples(text, f"bayescal {name} ")
    assert len(examples) >= 2, text
    assert re.search(r"\(default: [^)%]+\)", text)  # defaults are rendered
    # every example parses (only the files it names are missing)
    parser = _command_parser(name)
    for line in examples:
        words = line.split()[2:]
        if words[-1] == "\\":
            continue
        parser.parse_args(words)


def test_top_level_and_benchmark_help_show_examples():
    text = _help(["--help"])
    assert len(_examples(text, "bayescal ")) >= 2
    assert all(name in text for name in COMMANDS)
    text = _help(["bench", "--help"])
    assert len(_examples(text, "bayescal bench ")) >= 2
    for name in BENCHMARKS:
        parser = _subparsers(_subparsers(build_parser())["bench"])[name]
        assert len(_examples(parser.epilog, f"bayescal bench {name}")) == 2


def test_version_is_printed_on_request():
    assert _help(["--version"]).strip() == f"bayescal {__version__}"


HEAVY = ["numpy", "pandas", "xarray", "scipy", "pymc", "arviz", "matplotlib", "jinja2", "dask"]


@pytest.mark.parametrize(
    "argv, status",
    [
        (["--help"], 0),
        (["audit", "--help"], 0),
        (["audit", "--example", "snli-entailment"], 2),  # --out missing
        (["audit", "--draws", "2", "--out", "x"], 2),  # out of range
        (["audit", "--example", "snli-entailment", "--classes", "a,b", "--out", "x"], 2),
        (["audit", "--example", "snli-3class", "--channels", "gmm", "--out", "x"], 2),
        (["audit", "--priors-joint", "--example", "snli-entailment", "--out", "x"], 2),
    ],
)
def test_help_and_argument_errors_import_no_numerical_library(argv, status):
    """What made ``bayescal --help``, ``bayescal audit --help`` and a wrong option slow
    (3-4 s of CPU) is importing the numerical stack; none of them needs it."""
    code = (
        "import contextlib, io, sys\n"
        "from bayescal.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):"
        "\n"
        f"    assert main({argv!r}) == {status}\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_every_number_of_classes_runs_in_the_one_run_module():
    """Issue 21: ``bayescal audit`` has one command path; the data's number of classes picks
    the steps, not a second run module."""
    from bayescal.cli import _parse

    for example in ("snli-3class", "snli-entailment"):
        args = _parse(["audit", "--example", example, "--out", "x"])
        assert args._module == "bayescal.report.cli_run"
