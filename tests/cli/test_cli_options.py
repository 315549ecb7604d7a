"""Every option of the audit commands is checked before anything is read or written (issue 11).

In-process ``bayescal.cli.main`` runs. A refused value ends the command with exit status 2
and exactly one line naming the option and the value. To show that the check comes first,
DATA names a file that does not exist and ``--out`` a folder that must stay uncreated: an
accepted value gets as far as the missing file, whose one-line error names the file.
"""

from __future__ import annotations

import math

import pytest
from cli_helpers import one_line, run
from hypothesis import given, settings
from hypothesis import strategies as st

from bayescal.report.cli_options import (
    MAX_BOOT,
    MAX_CELLS,
    MAX_CHAINS,
    MAX_DRAWS,
    MAX_LABEL_DRAWS,
    MAX_SEED,
    MIN_DRAWS,
)

AUDIT = ["audit", "missing.csv"]
AMBIGUITY = ["audit-ambiguity", "--npz", "missing.npz"]

#: option -> (command, rule): the documented range of every numeric option.
RULES = {
    "--draws": (AUDIT, lambda v: MIN_DRAWS <= v <= MAX_DRAWS),
    "--tune": (AUDIT, lambda v: 0 <= v <= MAX_DRAWS),
    "--chains": (AUDIT, lambda v: 1 <= v <= MAX_CHAINS),
    "--bins": (AUDIT, lambda v: 1 <= v <= MAX_CELLS),
    "--groups": (AUDIT, lambda v: 1 <= v <= MAX_CELLS),
    "--seed": (AUDIT, lambda v: 0 <= v <= MAX_SEED),
    "--n-bins": (AMBIGUITY, lambda v: 1 <= v <= MAX_CELLS),
    "--n-draws": (AMBIGUITY, lambda v: 1 <= v <= MAX_LABEL_DRAWS),
    "--cv-folds": (AMBIGUITY, lambda v: v >= 2),
    "--max-items": (AMBIGUITY, lambda v: v >= 20),
    "--n-boot": (AMBIGUITY, lambda v: v == 0 or 2 <= v <= MAX_BOOT),
}
FRACTIONS = {"--prob": [AUDIT, AMBIGUITY], "--cal-fraction": [AMBIGUITY]}


def _outcome(command, option, text, tmp_path):
    """(accepted, the one stderr line); asserts nothing was created."""
    out = tmp_path / "out"
    line = one_line([*command, option, text, "--out", out])
    assert not out.exists()
    if line.startswith(f"bayescal: error: argument {option}: "):
        # argparse reads a value such as -1e+16 as an option name: the line says how to pass it
        assert repr(text) in line or "given as OPTION=VALUE" in line, line
        assert "--help" in line, line
        return False, line
    assert "does not exist" in line and "missing." in line, line
    return True, line


REFUSED = [
    ("--draws", ["0", "1", "3", "-5", "x", "2.5", "1e3", "", str(MAX_DRAWS + 1)]),
    ("--tune", ["-1", "x"]),
    ("--chains", ["0", str(MAX_CHAINS + 1)]),
    ("--bins", ["0", "100000", str(MAX_CELLS + 1)]),
    ("--groups", ["0", "100000"]),
    ("--prob", ["0", "1", "1.5", "nan", "inf", "-0.1", "x"]),
    ("--seed", ["-1", str(2**32)]),
]
REFUSED_AMBIGUITY = [
    ("--n-bins", ["0", str(MAX_CELLS + 1)]),
    ("--n-draws", ["0", str(MAX_LABEL_DRAWS + 1)]),
    ("--cal-fraction", ["0", "1", "nan"]),
    ("--cv-folds", ["1", "0"]),
    ("--max-items", ["0", "19"]),
    ("--n-boot", ["1", "-1"]),
    ("--prob", ["1"]),
    ("--seed", ["-1"]),
]


@pytest.mark.parametrize(
    "command, option, text",
    [(AUDIT, o, t) for o, ts in REFUSED for t in ts]
    + [(AMBIGUITY, o, t) for o, ts in REFUSED_AMBIGUITY for t in ts],
)
def test_a_bad_value_is_one_line_before_any_work(command, option, text, tmp_path):
    accepted, line = _outcome(command, option, text, tmp_path)
    assert not accepted, line


@pytest.mark.parametrize(
    "command, option, text",
    [
        (AUDIT, "--draws", str(MIN_DRAWS)),
        (AUDIT, "--tune", "0"),
        (AUDIT, "--chains", "1"),
        (AUDIT, "--bins", str(MAX_CELLS)),
        (AUDIT, "--groups", "1"),
        (AUDIT, "--prob", "0.5"),
        (AUDIT, "--seed", str(MAX_SEED)),
        (AMBIGUITY, "--n-boot", "0"),
        (AMBIGUITY, "--n-boot", "2"),
        (AMBIGUITY, "--max-items", "20"),
        (AMBIGUITY, "--cv-folds", "2"),
        (AMBIGUITY, "--cal-fraction", "0.01"),
    ],
)
def test_the_edges_of_each_range_are_accepted(command, option, text, tmp_path):
    accepted, line = _outcome(command, option, text, tmp_path)
    assert accepted, line


# Each example parses one command line and stops at the missing file: milliseconds, so
# 300 examples cost a few seconds.
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    option=st.sampled_from(sorted(RULES)),
    value=st.one_of(
        st.integers(-3, 25),
        st.integers(-(2**40), 2**40),
        st.sampled_from([MAX_DRAWS, MAX_DRAWS + 1, MAX_CELLS, MAX_CELLS + 1, MAX_SEED + 1]),
    ),
)
def test_integer_options_follow_their_documented_range(option, value, tmp_path_factory):
    command, rule = RULES[option]
    accepted, line = _outcome(command, option, str(value), tmp_path_factory.mktemp("o"))
    assert accepted == rule(value), line


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    option=st.sampled_from(sorted(FRACTIONS)),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(-0.5, 1.5),
        st.sampled_from([0.0, 1.0, 5e-324, 1 - 2**-53]),
    ),
)
def test_fraction_options_are_strictly_between_0_and_1(option, value, tmp_path_factory):
    for command in FRACTIONS[option]:
        accepted, line = _outcome(command, option, repr(value), tmp_path_factory.mktemp("o"))
        assert accepted == (0 < value < 1 and math.isfinite(value)), line


def test_usage_errors_are_one_line_naming_the_commands_help(tmp_path):
    out = tmp_path / "out"
    line = one_line(["audit", "--example", "snli-entailment"])
    assert "required: --out" in line and "'bayescal audit --help'" in line
    line = one_line(["audit", "--example", "snli-entailment", "--bogus", "--out", out])
    assert "unrecognized arguments: --bogus" in line and "'bayescal audit --help'" in line
    line = one_line(["audit", "--channels", "nuts", "--out", out])
    assert "argument --channels: invalid choice: 'nuts'" in line
    line = one_line(["audit-ambiguity", "--npz", "a.npz", "--cifar10h", "b.csv", "--out", out])
    assert "not allowed with argument" in line
    line = one_line(["nonsense"])
    assert "invalid choice: 'nonsense'" in line and "'bayescal --help'" in line
    assert not out.exists()


def test_groups_1_is_the_marginal_design_and_two_annotators_need_more(tmp_path):
    """--groups 1 passes the option check; the design check after loading decides."""
    import numpy as np

    rng = np.random.default_rng(0)
    z = rng.random(300)
    labels = (rng.random((300, 2)) < z[:, None]).astype(int)
    rows = [f"{s:.3f},{a},{b}" for s, (a, b) in zip(z, labels)]
    path = tmp_path / "two.csv"
    path.write_text("score,r1,r2\n" + "\n".join(rows) + "\n")
    point = ["--groups", "1", "--channels", "score-bin-em", "--quiet"]
    line = one_line(["audit", path, *point, "--out", tmp_path / "o"])
    assert "two annotators need at least two non-empty score groups" in line
    code, err = run(["audit", "--example", "snli-entailment", *point, "--out", tmp_path / "k3"])
    assert code == 0, err


@pytest.mark.parametrize(
    "args, says",
    [
        (["--channels", "dawid-skene-em", "--draws", "7"], "--draws set the sampler"),
        (["--channels", "score-bin-em", "--tune", "3", "--chains", "9"], "--tune, --chains set"),
        (["--channels", "dawid-skene-em", "--draws", "1000"], "--draws set"),  # the default
        (["--priors-inflate", "5"], "--priors-inflate needs --priors FILE"),
        (["--priors-inflate", "2"], "--priors-inflate needs --priors FILE"),  # the default
        (["--priors-inflate", "1000001"], "must be at most 1,000,000"),
        (["--priors-inflate", "1e308"], "must be at most 1,000,000"),
        # binary Dawid-Skene EM has one prevalence for all items: the groups changed nothing
        (["--channels", "dawid-skene-em", "--groups", "3"], "--groups 3 changes nothing"),
        (["--channels", "dawid-skene-em", "--groups", "5"], "--groups 5 changes nothing"),
    ],
)
def test_options_that_would_change_nothing_are_refused_before_any_work(args, says, tmp_path):
    """The sampler's settings with a point estimator and the drift discount without a priors
    file did nothing and were recorded as used (issue 23, inputs silently not used): they
    are one-line errors now, before the data are read, even when they repeat the default."""
    out = tmp_path / "out"
    line = one_line([*AUDIT, *args, "--out", out])
    assert says in line and "does not exist" not in line, line
    assert not out.exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--annotators", "r1"], "--annotators names columns of DATA"),
        (["--score", "p", "--item", "id"], "--score, --item name columns of DATA"),
        (["--truth", "y"], "--truth names"),
        (["--probs", "p0,p1,p2"], "--probs names"),
        (["--long", "item,rater,label"], "--long names"),
    ],
)
def test_column_options_with_an_example_are_refused(args, says, tmp_path):
    """``--example snli-entailment --annotators r1`` audited all three annotators without a
    word: an example has its own columns, so options that name columns of DATA are refused."""
    out = tmp_path / "out"
    line = one_line(["audit", "--example", "snli-entailment", *args, "--out", out])
    assert says in line and "has its own columns" in line, line
    assert not out.exists()


def test_the_sampler_settings_still_reach_the_bayesian_channels(tmp_path):
    line = one_line([*AUDIT, "--draws", "7", "--tune", "3", "--chains", "3", "--out", tmp_path])
    assert "does not exist" in line  # accepted: the data file is what is missing
