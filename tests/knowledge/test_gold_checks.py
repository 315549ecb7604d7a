"""Checks of the gold items themselves: unanswered gold items (counted, flagged, never
silently dropped), gold labels that contradict the annotators (``gold.conflict``, both
tracks, calibrated on honest gold) and a ``--gold`` column without any gold label
(refused)."""

import contextlib
import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from gold_data import gold_data

from bayescal import Annotations, fit_channels, summarize
from bayescal.bayes.conflict import GOLD_CONFLICT_LEVEL, gold_conflict
from bayescal.channels.bootstrap import bootstrap_channels
from bayescal.cli import main
from bayescal.errors import ConfigError, FitError
from bayescal.report.audit import audit
from bayescal.report.knowledge_section import GOLD_CHECK_DRAWS, GOLD_CHECK_MAX_FAILED
from bayescal.simulate import simulate_multiclass

FAST = {"channels": "dawid-skene-em", "skip": ("recalibration", "items", "next")}


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def _codes(report):
    return [w["code"] for w in report.summary["warnings"]]


def _binary(n=1500, n_gold=200, seed=21):
    d, _ = gold_data(n, [0.1, 0.25, 0.2], [0.85, 0.7, 0.8], n_gold=n_gold, missing=0.0, seed=seed)
    return d


def _multiclass(n=1500, share=0.15, seed=22):
    d = simulate_multiclass(n, 3, random_state=seed)
    rng = np.random.default_rng(seed)
    gold = np.where(rng.random(n) < share, d.truth, np.nan)
    return Annotations.from_arrays(d.probs, d.labels, gold=gold, truth=d.truth)


def _with(d, *, labels=None, gold=None):
    """The same items with other answers or gold classes."""
    kw = {"score": d.score} if d.n_classes == 2 else {"probs": d.probs}
    return Annotations.from_arrays(
        **kw,
        labels=d.labels if labels is None else labels,
        gold=d.gold if gold is None else gold,
        truth=d.truth,
    )


# ----------------------------------------------------------------- unanswered gold items
def test_summary_counts_unanswered_gold_items_and_merges_them():
    d = _multiclass(900, 0.2, seed=3)
    labels = d.labels.copy()
    silent = np.flatnonzero(~np.isnan(d.gold))[:40]
    labels[silent] = np.nan
    d = _with(d, labels=labels)
    s = summarize(d)
    expected = np.bincount(d.gold[silent].astype(int), minlength=3)
    np.testing.assert_array_equal(s.n_gold_unanswered, expected)
    assert int(s.n_gold.sum()) + 40 == d.n_gold  # answered + unanswered = every gold item
    assert int(s.n_unannotated.sum()) == 40  # and they are unanswered items like any other
    # chunks add up and subtract exactly; without_gold has no gold tables at all
    half = np.arange(d.n_items) < 450
    a, b = summarize(d.subset(np.flatnonzero(half))), summarize(d.subset(np.flatnonzero(~half)))
    np.testing.assert_array_equal((a + b).n_gold_unanswered, expected)
    assert (a + b).equals(s) and (s - b).equals(a)
    np.testing.assert_array_equal(s.without_gold().n_gold_unanswered, [0, 0, 0])


@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_audit_reports_gold_items_nobody_answered(track):
    d = _binary(900, 120) if track == "binary" else _multiclass(900, 0.15)
    is_gold = ~np.isnan(d.gold)
    labels = d.labels.copy()
    labels[is_gold] = np.nan  # every gold item unanswered: the reproducer of F4
    r = audit(_with(d, labels=labels), groups=3, bins=5, **FAST)
    g = r.summary["knowledge"]["gold"]
    assert g["n_unanswered"] == int(is_gold.sum())
    assert sum(g["n_unanswered_per_class"].values()) == int(is_gold.sum())
    assert g["conflict"] == {"status": "no gold item has an answer"}
    section = next(s for s in r.sections if s.key == "knowledge")
    assert section.status == "ok" and "no gold items" not in (section.reason or "")
    flag = next(w for w in r.summary["warnings"] if w["code"] == "gold.unanswered")
    assert flag["message"].startswith(f"none of the {int(is_gold.sum())} gold items has an answer")
    # some of them unanswered: the gold part runs on the others and says how many were left out
    labels = d.labels.copy()
    labels[np.flatnonzero(is_gold)[:30]] = np.nan
    r = audit(_with(d, labels=labels), groups=3, bins=5, **FAST)
    g = r.summary["knowledge"]["gold"]
    assert g["n_unanswered"] == 30 and g["conflict"]["status"] == "ok"
    flag = next(w for w in r.summary["warnings"] if w["code"] == "gold.unanswered")
    assert flag["message"].startswith(f"30 of the {int(is_gold.sum())} gold items have no answer")
    # every gold item answered: no flag
    assert "gold.unanswered" not in _codes(audit(d, groups=3, bins=5, **FAST))


# ----------------------------------------------------------------- gold labels vs annotators
@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_gold_conflict_flags_flipped_gold_and_not_honest_gold(track):
    # 120 gold items among 1500 (binary): flipped, they pull the channels but the audit's EM
    # still finds a start (200 leave none: the next test)
    d = _binary(1500, 120) if track == "binary" else _multiclass()
    c = d.n_classes
    honest = audit(d, groups=3, bins=5, **FAST)
    check = honest.summary["knowledge"]["gold"]["conflict"]
    assert check["status"] == "ok" and not check["conflict"]
    assert check["statistics"] == d.n_annotators * c  # every annotator answered every class
    assert "gold.conflict" not in _codes(honest)
    flipped = audit(_with(d, gold=(d.gold + 1) % c), groups=3, bins=5, **FAST)
    check = flipped.summary["knowledge"]["gold"]["conflict"]
    assert check["conflict"] and all(v["conflict"] for v in check["annotators"].values())
    flag = next(w for w in flipped.summary["warnings"] if w["code"] == "gold.conflict")
    assert flag["message"].startswith("the gold labels contradict every annotator")
    assert "Bonferroni over" in flag["message"]


def test_em_refusal_under_contradicting_gold_names_the_gold_column():
    d = _binary(1500, 200)
    with pytest.raises(FitError, match="gold labels that contradict the annotators"):
        audit(_with(d, gold=1 - d.gold), groups=3, bins=5, **FAST)


def test_gold_conflict_names_the_one_annotator_that_contradicts_gold():
    d = _binary()
    labels = d.labels.copy()
    on_gold = ~np.isnan(d.gold)
    labels[on_gold, 1] = 1 - labels[on_gold, 1]  # r2 answers the other class on gold items
    r = audit(_with(d, labels=labels), groups=3, bins=5, **FAST)
    per = r.summary["knowledge"]["gold"]["conflict"]["annotators"]
    assert [name for name, v in per.items() if v["conflict"]] == ["a2"]
    flag = next(w for w in r.summary["warnings"] if w["code"] == "gold.conflict")
    assert flag["message"].startswith("annotator(s) ['a2'] disagree with the gold labels")


def test_gold_conflict_is_one_sided_easy_gold_is_no_conflict():
    # honest gold classes, but the annotators answer the gold items far better than the rest
    # (easy control items, or annotators who try harder on them): agreement above the
    # channels' prediction contradicts nothing and must not raise the flag (a two-sided test
    # would)
    d = _binary(1500, 200, seed=23)
    rng = np.random.default_rng(23)
    on_gold = np.flatnonzero(~np.isnan(d.gold))
    y = d.gold[on_gold][:, None]
    p_one = np.where(y == 1, 0.98, 0.02)  # error rate 2% instead of 10-30%
    labels = d.labels.copy()
    labels[on_gold] = (rng.random((on_gold.size, 3)) < p_one).astype(float)
    r = audit(_with(d, labels=labels), groups=3, bins=5, **FAST)
    check = r.summary["knowledge"]["gold"]["conflict"]
    assert check["status"] == "ok" and not check["conflict"] and check["p"] == 1.0
    shares = [
        e["agree"] / e["answered"] - e["expected_share"]
        for v in check["annotators"].values()
        for e in v["counts"].values()
    ]
    # every gold share above the prediction: 0.98 against at most 0.9 (a1's class 0), a gap
    # of 0.08 against a standard error of about 0.02 (140 answers and the fit's own error)
    assert min(shares) > 0


def test_gold_conflict_refuses_a_point_fit():
    s = summarize(_binary(600, 100), groups=3)
    fit = fit_channels(s.without_gold(), "score_bin_em", empty_groups="drop")
    with pytest.raises(ConfigError, match="needs channel draws"):
        gold_conflict(s, fit)


def _check_honest(summary, method, options, seed):
    """The audit's check of point channels: EM without gold, its bootstrap, the tails."""
    plain = summary.without_gold()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_channels(plain, method, random_state=seed, **options)
        draws = bootstrap_channels(
            plain,
            fit,
            n_draws=GOLD_CHECK_DRAWS,
            max_failed=GOLD_CHECK_MAX_FAILED,
            random_state=seed,
        )
    return gold_conflict(summary, draws)


@pytest.mark.slow
@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_honest_gold_tail_probabilities_are_calibrated(track):
    """Honest gold (the same channels on gold and other items), 40 seeds, gold items a fifth
    of the items: the hardest case for the estimate's own error, which a plug-in binomial
    ignores (it flagged 9 of 40 such audits). Each statistic's tail probability must be
    uniform, so the share below 0.1 is 0.1 or less (less: the tail of a discrete count is
    conservative); its standard error is taken over seeds (statistics of one audit share one
    fit), and 3 of them bound the Monte Carlo error. The family-wise flag has level 0.01:
    over 40 audits 3 or more false alarms would have probability 0.008 at that rate."""
    shares, alarms = [], 0
    for seed in range(40):
        if track == "binary":
            d = _binary(1500, 300, seed=100 + seed)
            s, method, options = summarize(d, groups=3), "score_bin_em", {"empty_groups": "drop"}
        else:
            d = _multiclass(1500, 0.2, seed=100 + seed)
            s, method = summarize(d), "dawid_skene_em"
            options = {"prevalence": "grouped", "empty_groups": "drop"}
        r = _check_honest(s, method, options, seed)
        tails = [p for v in r["annotators"].values() for p in v["statistics"].values()]
        shares.append(np.mean(np.asarray(tails) < 0.1))
        alarms += r["conflict"]
    mean, se = np.mean(shares), np.std(shares, ddof=1) / np.sqrt(len(shares))
    assert mean < 0.1 + 3 * se, (mean, se)
    assert mean > 0.1 - 3 * se - 0.03, (mean, se)  # not so conservative that it never fires
    assert alarms <= 2 and GOLD_CONFLICT_LEVEL == 0.01


# ----------------------------------------------------------------- a --gold column without gold
@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_cli_refuses_a_gold_column_without_gold_labels(tmp_path, track):
    d = _binary(300, 0) if track == "binary" else _multiclass(300, 0.0)
    frame = pd.DataFrame(d.labels, columns=d.annotators)
    if track == "binary":
        frame.insert(0, "score", d.score)
        columns = []
    else:
        for k in range(3):
            frame.insert(k, f"p{k}", d.probs[:, k])
        columns = ["--probs", "p0,p1,p2"]
    frame["known"] = np.nan
    path = tmp_path / "blank.csv"
    frame.to_csv(path, index=False)
    argv = ["audit", path, *columns, "--annotators", ",".join(d.annotators), "--gold", "known"]
    code, err = _cli([*argv, "--channels", "dawid-skene-em", "--out", tmp_path / "r", "--quiet"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--gold 'known': the column holds no gold label" in err
    assert not (tmp_path / "r").exists()
    # out of core (a folder) the same refusal, from the summary's gold tables
    (tmp_path / "parts").mkdir()
    frame.to_csv(tmp_path / "parts" / "part-0.csv", index=False)
    if track == "binary":
        argv[1] = tmp_path / "parts"
        code, err = _cli([*argv, "--channels", "dawid-skene-em", "--out", tmp_path / "q"])
        assert code == 2 and "holds no gold label" in err


def test_cli_gold_unanswered_and_conflict_reach_summary_and_stderr(tmp_path):
    d = _binary(900, 120)
    gold = (d.gold + 1) % 2  # flipped ...
    labels = d.labels.copy()
    labels[np.flatnonzero(~np.isnan(gold))[:20]] = np.nan  # ... and 20 of them unanswered
    frame = pd.DataFrame(labels, columns=d.annotators)
    frame.insert(0, "score", d.score)
    frame["known"] = gold
    path = tmp_path / "g.csv"
    frame.to_csv(path, index=False)
    argv = ["audit", path, "--annotators", "a1,a2,a3", "--gold", "known", "--groups", "3"]
    code, err = _cli([*argv, "--channels", "score-bin-em", "--out", tmp_path / "r"])
    assert code == 0, err
    assert "warning [gold.unanswered]: 20 of the 120 gold items have no answer" in err
    assert "warning [gold.conflict]: the gold labels contradict every annotator" in err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert {"gold.unanswered", "gold.conflict"} <= {w["code"] for w in summary["warnings"]}
    assert summary["knowledge"]["gold"]["conflict"]["conflict"] is True
