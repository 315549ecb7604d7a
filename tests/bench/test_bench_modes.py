"""Issue 21: each multiclass bench is a mode of its benchmark; the old names run that mode."""

from pathlib import Path

import pytest

import bayescal
from bayescal.cli import BENCH_ALIASES, BENCHMARKS, _parse, main
from bayescal.errors import ConfigError

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


def test_prior_check_takes_an_off_diagonal_concentration(tmp_path):
    """Issue 22 item 3: the prior check can be run with another off-diagonal concentration
    (the C = 20 diagnosis, models/multiclass.md) and records it and the sampler's tree depth."""
    import json

    out = tmp_path / "p.json"
    argv = ["channels", "--priors", "--classes", "3", "--per-class", "40", "--reps", "1"]
    argv += ["--draws", "40", "--tune", "40", "--chains", "1", "--off-diagonal", "0.3"]
    assert main(["bench", *argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["settings"]["off_diagonal"] == 0.3
    (cell,) = result["cells"]
    assert cell["coverage"]["n"] == 9  # K x C diagonal entries of the one repetition
    assert 0 < cell["mean_tree_depth"] <= 10
    # nutpie counts its leapfrog steps: at least one per kept draw and per tuning step
    assert cell["gradient_evaluations"] >= 40 and cell["tuning_gradient_evaluations"] >= 40


def test_prior_check_error_designs_and_split(tmp_path):
    """--errors spreads the true rows' errors three ways (rows still sum to 1 with the stated
    diagonal); --split reaches the priors; off-diagonal coverage counts only true wrong
    answers that occur (a true 0 lies outside every central interval)."""
    import json

    import numpy as np

    from bayescal.bench.channels import true_confusions

    acc = np.array([0.9, 0.6])
    for errors in ("dirichlet", "neighbours", "equal"):
        t = true_confusions(5, acc, np.random.default_rng(0), errors)
        np.testing.assert_allclose(t.sum(-1), 1.0)
        np.testing.assert_allclose(np.diagonal(t, axis1=-2, axis2=-1), acc[:, None] * np.ones(5))
    t = true_confusions(5, acc, np.random.default_rng(0), "neighbours")
    assert t[1, 2].tolist() == pytest.approx([0, 0.2, 0.6, 0.2, 0])
    with pytest.raises(ConfigError, match="errors must be one of"):
        true_confusions(5, acc, np.random.default_rng(0), "banded")
    out = tmp_path / "p.json"
    argv = ["channels", "--priors", "--classes", "4", "--per-class", "40", "--reps", "1"]
    argv += ["--draws", "40", "--tune", "40", "--chains", "1", "--errors", "neighbours"]
    argv += ["--split", "0.3"]
    assert main(["bench", *argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert (result["settings"]["split"], result["settings"]["errors"]) == (0.3, "neighbours")
    (cell,) = result["cells"]
    assert cell["coverage_off_diagonal"]["n"] == 3 * 4 * 2  # K x C rows x 2 neighbours
