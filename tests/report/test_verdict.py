"""The verdict block (issue 24 item 1): every branch of the wording on constructed facts, the
bin selection on a constructed binned error, and the block end to end on the binary report.

The wording tests check that each sentence carries the numbers it was given (bin, direction,
size in points, map, p-value, interval), so a canned sentence that ignores the data fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
import xarray as xr

from bayescal.bayes.diagnostics import PPC_FAILED
from bayescal.flags import Flag
from bayescal.metrics.binned import BinnedECE
from bayescal.report.core import skipped_on_request
from bayescal.report.verdict import (
    WIDE_INTERVAL,
    BinGap,
    Check,
    Facts,
    Recalibration,
    Skipped,
    Verdict,
    decide,
    largest_gap,
    summary_entries,
)

GAP = BinGap(lo=0.8, hi=1.0, score=0.9, rate=0.78, n=200, share=0.3)  # over-predicts 12 points
PASSED = (
    Check("identification", "passed", "the design identifies the channels.", "identification"),
    Check("assumption", "assumed", "Class-conditional noise.", "identification"),
)


def facts(**kw) -> Facts:
    base = dict(
        track="binary",
        n_items=1500,
        metric="NC-ECE",
        estimate=0.05,
        lo=0.03,
        hi=0.07,
        prob=0.9,
        p_value=0.001,
        unreliable_because=(),
        gap=GAP,
        recalibration=Recalibration(
            "recommended", "corrected Platt map", "it lowered the NC-ECE by 0.0300"
        ),
        checks=PASSED,
        flags=(),
    )
    base.update(kw)
    return Facts(**base)


def test_miscalibrated_and_recalibrate_names_bin_direction_size_and_map():
    v = decide(facts())
    assert v.decision == "recalibrate"
    assert v.sentence == (
        "The model is miscalibrated: among items scored 0.8-1 it over-predicts by about 12 "
        "points (200 items); recalibrate with the corrected Platt map shown below."
    )
    assert "p = 0.001" in v.reconciliation and "[0.0300, 0.0700]" in v.reconciliation
    assert v.next_steps[0].startswith("Apply the corrected Platt map")


def test_the_sentence_follows_the_numbers():
    under = replace(GAP, lo=0.1, hi=0.2, score=0.14, rate=0.37, n=94)
    v = decide(facts(gap=under))
    assert "among items scored 0.1-0.2 it under-predicts by about 23 points (94 items)" in (
        v.sentence
    )
    mc = decide(facts(track="multiclass", metric="top-label NC-ECE", evidence="noise"))
    assert "where its top-class probability is 0.8-1 it is over-confident by about 12" in (
        mc.sentence
    )


def test_calibrated_and_keep():
    v = decide(facts(p_value=0.4, lo=0.0, hi=0.03, recalibration=Recalibration("keep")))
    assert v.decision == "keep" and v.status == "calibrated"
    assert v.sentence == "The data are consistent with a calibrated model; keep the score."
    assert "does not reject" in v.reconciliation and "p = 0.400" in v.reconciliation
    assert "starts at 0" in v.reconciliation


def test_test_rejects_but_keep_is_reconciled_in_words():
    keep = Recalibration(
        "keep",
        None,
        "on held-out items no map improved on the original score by more than the "
        "split-to-split noise",
    )
    v = decide(facts(p_value=0.007, estimate=0.0376, lo=0.0227, hi=0.061, recalibration=keep))
    assert v.decision == "keep" and v.status == "miscalibrated, keep"
    assert v.sentence.endswith(
        "but no recalibration map did better than the score on held-out items; keep the score."
    )
    assert "over-predicts by about 12 points" in v.sentence
    # p-value and interval named, and why the advice still is to keep
    for part in ("p = 0.007", "[0.0227, 0.0610]", "excludes 0", "no map improved", "0.038"):
        assert part in v.reconciliation


def test_failed_checks_qualify_the_sentence_and_add_a_step():
    failed = Check(
        "predictive check (answers independent given the class)",
        "failed",
        "smallest tail probability < 0.001.",
        "diagnostics",
    )
    flag = Flag("channels.sampler", PPC_FAILED + " in score group(s) ['g1']", "Bayesian fit")
    v = decide(facts(checks=(*PASSED, failed), flags=(flag,)))
    assert v.sentence.endswith(
        "Caution: predictive check (answers independent given the class) failed; see what the "
        "verdict rests on."
    )
    assert any("--dependence" in s for s in v.next_steps)
    # the warning says what it means for the headline
    assert v.caveats[0].startswith("channels.sampler: the channels, and so the corrected error")


def test_too_few_items_when_the_interval_is_wide():
    v = decide(facts(p_value=0.5, lo=0.0, hi=0.25, n_items=120))
    assert v.decision == "collect more items" and v.status == "undetermined"
    assert "Too few items to tell" in v.sentence and "25 points" in v.sentence
    assert "120 now" in v.next_steps[0]
    # just below the threshold it is the calibrated branch
    assert decide(facts(p_value=0.5, lo=0.0, hi=WIDE_INTERVAL - 1e-9)).status == "calibrated"


def test_miscalibrated_but_recalibration_skipped_asks_for_items_and_states_it():
    skipped = Recalibration("skipped", None, "only 200 annotated items; ... at least 300.")
    v = decide(facts(recalibration=skipped, n_items=200))
    assert v.decision == "collect more items" and "only 200 annotated items" in v.sentence
    out = summary_entries(v, {})
    assert out["recalibration"] == {"status": "skipped", "reason": skipped.reason}
    assert "recalibration" not in summary_entries(v, {"recalibration": {"status": "x"}})


def test_recalibration_skipped_on_request_asks_to_rerun_not_for_items():
    """With --skip recalibration the audit had the items; the verdict must not ask for more."""
    reason = skipped_on_request("recalibration")
    v = decide(facts(recalibration=Recalibration("skipped", None, reason), n_items=5000))
    assert v.decision == "recalibrate" and "left out of this audit on request" in v.sentence
    assert "held-out items this audit did not have" not in v.reconciliation
    assert v.next_steps[0].startswith("Rerun without --skip recalibration")
    assert not any("Collect more" in s for s in v.next_steps)


def test_unreliable_number_is_not_a_verdict_on_the_model():
    v = decide(facts(unreliable_because=("plausibility.near-chance",)))
    assert v.decision == "fix the data" and "plausibility.near-chance" in v.sentence
    assert "cannot measure" in v.sentence


def test_multiclass_evidence_of_ambiguity_points_to_the_ambiguity_view():
    v = decide(
        facts(
            track="multiclass", metric="top-label NC-ECE", evidence="ambiguity", uncalibrated=0.2236
        )
    )
    assert v.decision == "use the ambiguity view" and "ECE_true (0.2236)" in v.sentence
    assert "audit-ambiguity" in v.next_steps[0]


def _ambiguity(**kw) -> Facts:
    base = dict(
        track="ambiguity",
        metric="ECE_true",
        estimate=0.0373,
        lo=0.0249,
        hi=0.0395,
        p_value=None,
        gap=None,
        recalibration=Recalibration("recommended", "Dirichlet-Soft", "guideline"),
        calibrator="Dirichlet-Soft",
        uncalibrated=0.0578,
    )
    return facts(**{**base, **kw})


def test_ambiguity_track_recommends_the_calibrator_with_its_numbers():
    v = decide(_ambiguity(distinguishable=True, not_distinguishable=("TS",)))
    assert v.decision == "recalibrate"
    assert "recalibrate with Dirichlet-Soft, which brings it to 3.73% (bias-corrected 90% " in (
        v.sentence
    )
    assert "biased upward" not in v.sentence  # 3.73% lies inside [2.49%, 3.95%]
    below = decide(_ambiguity(estimate=0.0412, lo=0.021, hi=0.0339, distinguishable=True))
    assert "2.10-3.39%; the sampled ECE is biased upward, so the interval lies below it)" in (
        below.sentence
    )
    assert "5.78% uncalibrated" in v.sentence and "excludes 0" in v.reconciliation
    assert "TS" in v.reconciliation
    same = decide(_ambiguity(distinguishable=False))
    assert same.decision == "keep" and "within the bootstrap noise" in same.sentence
    keep = decide(_ambiguity(calibrator="Uncalibrated"))
    assert keep.decision == "keep" and "Keep the model's probabilities" in keep.sentence


def test_reference_numbers_carry_their_caveat():
    v = decide(facts(reference=0.0774, lo=0.0227, hi=0.061))
    assert any("crowd majority" in c and "(here it does)" in c for c in v.caveats)
    inside = decide(facts(reference=0.05))
    assert any("crowd majority" in c and "here it does" not in c for c in inside.caveats)


def test_every_warning_gets_a_meaning_unknown_ones_say_so():
    flags = (Flag("noise.overdispersed", "m", "s"), Flag("something.new", "m", "s"))
    v = decide(facts(flags=flags))
    assert v.caveats[0].startswith("noise.overdispersed: answers vary more")
    assert v.caveats[1] == (
        "something.new: not accounted for in this verdict: read it before acting on the numbers."
    )


def test_sampler_warnings_mean_what_their_kind_says_each_once():
    """The one flag code of the Bayesian fit covers convergence, the predictive check and
    empty channel groups; each is worded for what it is (not all as dependence), and two
    warnings of one kind give one caveat line."""
    messages = (
        "R-hat reaches 1.020 at confusion[r2,a,b] (above 1.01): the chains disagree.",
        "tail ESS is only 179 at confusion[r2,a,b] (below 200 = 100 per chain): ...",
        "channel group(s) ['neutral'] contain no annotated item: their prevalence ...",
        PPC_FAILED + "; annotator pair(s) r1-r2 agree more often than the model predicts",
        "3 divergent transition(s) of 2000: NUTS could not explore ...",
        "a message of a kind not seen before",
    )
    v = decide(facts(flags=tuple(Flag("channels.sampler", m, "Bayesian fit") for m in messages)))
    assert len(v.caveats) == 4  # R-hat, ESS and divergences share one line
    convergence, empty, ppc, other = v.caveats
    assert "--draws and --tune" in convergence and "dependen" not in convergence
    assert "nothing in the headline changes" in empty
    assert "--dependence" in ppc
    assert other.endswith("read it before acting on the numbers.")


def test_verdict_serialises_and_refuses_unknown_values():
    v = decide(facts(skipped=(Skipped("knowledge", "Prior knowledge", "no gold"),)))
    d = json.loads(json.dumps(v.to_dict()))
    assert d["sentence"] == v.sentence and d["skipped"][0]["reason"] == "no gold"
    assert d["numbers"]["largest_gap"]["points"] == 12
    with pytest.raises(ValueError, match="check status"):
        Check("x", "fine", "", "s")
    with pytest.raises(ValueError, match="decision"):
        Verdict("s", "maybe", "", "", (), (), ())


def _binned(score_sum, count, target_minus_score_sum, edges) -> BinnedECE:
    count = np.asarray(count, float)
    n = max(int(count.sum()), 1)
    moments = np.asarray(target_minus_score_sum, float)[None, :] / n
    return BinnedECE(
        kind="nc",
        ece=xr.DataArray([np.abs(moments).sum()], dims="draw"),
        bin_moments=xr.DataArray(moments, dims=("draw", "bin")),
        bin_count=xr.DataArray(count, dims="bin"),
        bin_score_sum=xr.DataArray(np.asarray(score_sum, float), dims="bin"),
        bin_edges=np.asarray(edges, float),
        n=n,
    )


def test_largest_gap_is_the_bin_that_drives_the_error():
    # bin 0: 10 items, mean score 0.25, rate 0.65 (gap 0.40, contribution 10/310 * 0.40 = 0.013)
    # bin 1: 300 items, mean score 0.75, rate 0.65 (gap 0.10, contribution 300/310 * 0.10 = 0.097)
    b = _binned([2.5, 225.0], [10, 300], [4.0, -30.0], [0.0, 0.5, 1.0])
    assert b.bin_mean_target.values[0] == pytest.approx([0.65, 0.65])
    g = largest_gap(b)
    assert (g.lo, g.hi, g.n) == (0.5, 1.0, 300)
    assert g.score == pytest.approx(0.75) and g.rate == pytest.approx(0.65)
    assert g.gap == pytest.approx(0.10) and g.points == 10
    empty = _binned([0.0, 0.0], [0, 0], [0.0, 0.0], [0, 0.5, 1])
    assert largest_gap(empty) is None


# --------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def example_report():
    from bayescal.examples import load_example
    from bayescal.report import audit

    return audit(load_example("snli-entailment"), channels="score-bin-em", random_state=0)


def test_binary_report_leads_with_the_verdict(example_report):
    s = example_report.summary
    assert next(iter(s)) == "verdict"
    v = s["verdict"]
    gap = v["numbers"]["largest_gap"]
    # the sentence is built from the summary's own numbers
    assert f"among items scored {gap['lo']:g}-{gap['hi']:g}" in v["sentence"]
    assert v["numbers"]["p_value"] == s["ece"]["nc"]["p_value"]
    assert v["decision"] == ("keep" if s["recalibration"]["keeps_original"] else "recalibrate")
    roles = {c["role"]: c["columns"] for c in v["columns"]}
    assert roles == {
        "item": "item",
        "score": "score",
        "annotators": "r1, r2, r3",
        "truth": "reference",
    }
    html = example_report.to_html()
    top = html.index('id="verdict"')
    assert top < html.index('class="estimate"') < html.index('id="warnings"')
    assert v["sentence"].replace("'", "&#39;") in html
    # every link of the block points to a section of the page
    block = html[top : html.index("</div>", top)]
    anchors = set(re.findall(r'id="([^"]+)"', html))
    links = re.findall(r'href="#([^"]+)"', block)
    assert links and set(links) <= anchors
    # the method text sits in its section, not in the headline
    assert html.index("bias-aware bootstrap") > html.index('id="ece"')


def test_the_reference_tile_carries_its_caveat(example_report):
    html = example_report.to_html()
    tile = html[html.index("reference-label ECE") :][:400]
    assert "crowd majority" in tile


def test_recalibration_skipped_under_300_items_is_in_the_summary():
    from bayescal.report import audit
    from bayescal.simulate import simulate_toy

    r = audit(simulate_toy(250, random_state=1), channels="score-bin-em")
    rec = r.summary["recalibration"]
    assert rec["status"] == "skipped" and "at least 300" in rec["reason"]
    assert any(s["section"] == "recalibration" for s in r.summary["verdict"]["skipped"])


def _links_resolve(html: str) -> None:
    top = html.index('id="verdict"')
    block = html[top : html.index("</div>", top)]
    anchors = set(re.findall(r'id="([^"]+)"', html))
    links = re.findall(r'href="#([^"]+)"', block)
    assert links and set(links) <= anchors


def test_multiclass_reports_lead_with_the_verdict():
    from bayescal.examples import load_example
    from bayescal.report.audit import audit_multiclass
    from bayescal.simulate import simulate_multiclass

    snli = audit_multiclass(load_example("snli-3class"), channels="dawid-skene-em")
    s = snli.summary
    assert next(iter(s)) == "verdict"
    v = s["verdict"]
    evidence = s["noise_or_ambiguity"]["view"]
    assert (v["decision"] == "use the ambiguity view") == (evidence == "ambiguity")
    line = next(c for c in v["rests_on"] if c["section"] == "evidence")
    overall = s["noise_or_ambiguity"]["overall"]
    assert line["text"].startswith(f"evidence: {evidence}; dispersion of answers to the same")
    assert f"confusion rows {overall['dispersion_observed']:.3f}, against" in line["text"]
    html = snli.to_html()
    assert html.index('id="verdict"') < html.index('class="kpi"')
    _links_resolve(html)
    # noise: the sentence reads the top-label bins and the corrected maps' held-out errors
    sim = audit_multiclass(simulate_multiclass(1200, 3, random_state=0), channels="dawid-skene-em")
    v = sim.summary["verdict"]
    # seeded: the noise view, over-confident where the gap is largest (as measured)
    assert sim.summary["noise_or_ambiguity"]["view"] == "noise"
    gap = v["numbers"]["largest_gap"]
    assert gap["gap"] > 0
    assert (
        f"where its top-class probability is {gap['lo']:g}-{gap['hi']:g} it is over-confident "
        f"by about {gap['points']} points" in v["sentence"]
    )
    # the one held-out recalibration choice (every C) decides: keep or the recommended map
    rec = sim.summary["recalibration"]
    improved = not rec["keeps_original"]
    assert v["numbers"]["recalibration"]["status"] == ("recommended" if improved else "keep")
    assert v["decision"] == ("recalibrate" if improved else "keep")
    if improved:
        assert f"recalibrate with the {v['numbers']['recalibration']['map']}" in v["sentence"]
    _links_resolve(sim.to_html())


def test_ambiguity_report_leads_with_the_verdict():
    from bayescal.ambiguity import AmbiguityData
    from bayescal.report import audit_ambiguity

    rng = np.random.default_rng(0)
    pi = rng.dirichlet([0.6, 0.6, 0.6], 400)
    data = AmbiguityData(
        logits=3 * np.log(pi + 1e-3),
        counts=rng.multinomial(30, pi),
        classes=("a", "b", "c"),
        item_ids=np.arange(400),
    )
    r = audit_ambiguity(
        data, methods=["Uncalibrated", "TS", "SLTS"], n_draws=10, cv_folds=2, n_boot=40
    )
    s = r.summary
    v = s["verdict"]
    method = s["recommendation"]["method"]
    est = s["intervals"]["methods"][method]["ece_true"]
    assert next(iter(s)) == "verdict" and method in v["sentence"]
    assert f"{est['estimate']:.2f}%" in v["sentence"]  # the estimate its interval comes with
    assert f"{est['lo']:.2f}-{est['hi']:.2f}%" in v["sentence"]
    html = r.to_html()
    assert html.index('id="verdict"') < html.index('class="rec"')
    _links_resolve(html)


def test_the_command_prints_the_verdict_and_what_the_warnings_mean(tmp_path, capsys):
    from bayescal.cli import main

    out = tmp_path / "report"
    assert (
        main(
            [
                "audit",
                "--example",
                "snli-entailment",
                "--channels",
                "score-bin-em",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    v = json.loads((out / "summary.json").read_text())["verdict"]
    assert f"bayescal: verdict: {v['sentence']}" in err
    assert [x for x in err if x.startswith("bayescal: for the verdict: ")] == [
        f"bayescal: for the verdict: {c}" for c in v["caveats"]
    ]
