"""Issue 21: each multiclass bench is a mode of its benchmark; the old names run that mode."""

from pathlib import Path

import pytest

import bayescal
from bayescal.cli import BENCH_ALIASES, BENCHMARKS, _parse, main

PACKAGE = Path(bayescal.__file__).parent

# an old spelling and its merged spelling, with options each mode needs to parse
PAIRS = [
    (["multiclass-channels", "--n", "50"], ["channels", "--multiclass", "--n", "50"]),
    (["multiclass-priors", "--reps", "1"], ["channels", "--priors", "--reps", "1"]),
    (["multiclass-bayes-speed", "--n", "50"], ["bayes-speed", "--multiclass", "--n", "50"]),
    (
        ["multiclass-real", "--cifar10h", "c.csv", "--chaosnli", "a", "b"],
        ["real-data", "--cifar10h", "c.csv", "--chaosnli", "a", "b"],
    ),
]


def _namespace(argv):
    args = _parse(["bench", *argv])
    return {k: v for k, v in vars(args).items() if k != "_argv"}, args._argv


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[p[0][0] for p in PAIRS])
def test_old_name_parses_as_the_merged_mode(old, new):
    old_ns, asked = _namespace(old)
    new_ns, _ = _namespace(new)
    assert old_ns == new_ns
    assert asked == ["bench", *old]  # reproducibility records keep what was typed


def test_every_alias_targets_a_registered_benchmark_and_no_twin_module_remains():
    assert {target[0] for target in BENCH_ALIASES.values()} <= set(BENCHMARKS)
    # issue 21: no module of the package is named after its track
    left = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("multiclass_*.py")}
    assert not left, left


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["channels", "--draws", "10"], "--draws applies to the priors mode only"),
        (["channels", "--priors", "--n", "100"], "--n applies to the binary / multiclass"),
        (["channels", "--multiclass", "--classes", "3", "4"], "--classes takes one number"),
        (["bayes-speed", "--multiclass", "--sizes", "100"], "--sizes applies to the binary"),
        (["bayes-speed", "--configs", "nutpie:largest:0.8"], "--configs applies to the multi"),
        (["gold", "--gold", "5,10"], "--gold must start with 0"),
    ],
)
def test_an_option_of_another_mode_is_refused_in_one_line(argv, message, capsys):
    assert main(["bench", *argv]) == 2
    assert message in capsys.readouterr().err


def test_alias_help_is_the_merged_benchmark_help(capsys):
    assert main(["bench", "multiclass-priors", "--help"]) == 0
    assert "--per-class" in capsys.readouterr().out
