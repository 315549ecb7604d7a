"""The binary audit's naive comparison with crowd-kit aggregators (issue 16 interop).

With crowd-kit (it is in the test extra) the section's numbers are recomputed here
from crowd-kit's own labels; with crowd-kit hidden the section says so in one line;
``import bayescal`` and the audit module never import crowd-kit.
"""

import subprocess
import sys

import numpy as np
import pytest

from bayescal import Annotations, audit, summarize
from bayescal.metrics.binned import majority_vote_ece, soft_vote_ece
from bayescal.report import crowdkit_section as cks
from bayescal.report.sections import Context
from bayescal.simulate import simulate_toy

# crowd-kit 1.4 calls pandas APIs that pandas 3 deprecates (inplace=, copy=): hundreds of
# third-party lines per run. The audit's own section records warnings, so users never see them.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning:crowdkit", "ignore::FutureWarning:crowdkit"
)


def _context(data, bins=10, seed=0):
    s = summarize(data, groups=1, bins=bins)
    ctx = Context(
        data=data,
        channels_choice="dawid-skene-em",
        groups=1,
        bins=bins,
        weights="equal",
        draws=1,
        tune=1,
        chains=1,
        prob=0.9,
        seed=seed,
        progress=False,
    )
    ctx.summary = s  # the data step's result (a field the steps fill, not an argument)
    ctx.errors["soft_vote"] = soft_vote_ece(s)
    ctx.errors["majority_vote"] = majority_vote_ece(s)
    return ctx


@pytest.fixture(scope="module")
def toy():
    return simulate_toy(400, random_state=3)


@pytest.fixture(scope="module")
def ran(toy):
    with pytest.MonkeyPatch.context() as mp:  # every row, whatever its cost
        mp.setattr(cks, "SECTION_BUDGET_SECONDS", float("inf"))
        ctx = _context(toy)
        return ctx, cks.crowdkit_section(ctx)


def test_hard_label_ece_equals_the_summary_based_majority_vote_ece(toy):
    # The audit's majority vote (ties -> 0) per item, through the per-item kernel, must
    # give the pattern-count ECE of metrics.binned (only the summation order differs).
    s = summarize(toy, groups=1, bins=7)
    lab = toy.labels[toy.annotated]
    majority = 2 * np.nansum(lab, axis=1) > (~np.isnan(lab)).sum(axis=1)
    got = cks.hard_label_ece(toy.score[toy.annotated], majority, s.bin_edges)
    assert got == pytest.approx(majority_vote_ece(s).value, rel=1e-12, abs=1e-15)


def test_crowdkit_majority_vote_without_ties_gives_the_audit_majority_vote():
    # Five annotators answering every item: no ties, so crowd-kit's MajorityVote and the
    # audit's majority vote are the same labels and the same naive ECE.
    from crowdkit.aggregation import MajorityVote

    rng = np.random.default_rng(1)
    z = rng.random(300)
    labels = (rng.random((300, 5)) < z[:, None]).astype(float)
    data = Annotations.from_arrays(z, labels)
    s = summarize(data, groups=1, bins=10)
    mv = MajorityVote().fit_predict(data.to_crowdkit()).reindex(data.items).to_numpy()
    got = cks.hard_label_ece(z, mv, s.bin_edges)
    assert got == pytest.approx(majority_vote_ece(s).value, rel=1e-12, abs=1e-15)


def test_section_reports_each_aggregator_recomputed_from_crowdkit(toy, ran):
    from crowdkit import aggregation

    ctx, section = ran
    res = ctx.diagnostics["naive_crowdkit"]
    assert section.status == "ok" and res["status"] == "ok"
    assert list(res["aggregators"]) == list(cks.AGGREGATORS)
    keep = toy.annotated
    edges = ctx.summary.bin_edges
    frame = toy.to_crowdkit()
    for name, r in res["aggregators"].items():
        assert r["status"] == "ok", r
        kwargs = {"random_state": 0} if name in ("MMSR", "KOS") else {}
        labels = getattr(aggregation, name)(**kwargs).fit_predict(frame)
        labels = labels.reindex(toy.items[keep]).to_numpy(dtype=float)
        assert r["ece"] == cks.hard_label_ece(toy.score[keep], labels, edges)
        assert r["positive_fraction"] == labels.mean()
    text = " ".join(section.notes)
    assert "Naive" in text and "NC-ECE" in text
    names = [row[0] for row in section.tables[0].rows]
    assert names[:2] == ["soft vote (this audit)", "majority vote (this audit; ties count as 0)"]
    assert [n.removeprefix("crowd-kit ") for n in names[2:]] == list(cks.AGGREGATORS)


def test_a_failing_aggregator_is_shown_not_hidden(toy, monkeypatch):
    def broken(name, seed):
        if name == "GLAD":
            raise RuntimeError("did not converge")
        return original(name, seed)

    original = cks._aggregator
    monkeypatch.setattr(cks, "_aggregator", broken)
    ctx = _context(toy)
    section = cks.crowdkit_section(ctx)
    glad = ctx.diagnostics["naive_crowdkit"]["aggregators"]["GLAD"]
    assert glad == {"status": "failed", "reason": "RuntimeError: did not converge"}
    assert ("crowd-kit GLAD", "failed", "", "") in section.tables[0].rows
    assert any("GLAD failed: RuntimeError: did not converge" in n for n in section.notes)


def test_glad_is_skipped_above_its_item_limit_with_the_reason(toy, monkeypatch):
    monkeypatch.setitem(cks.MAX_ITEMS, "GLAD", 10)
    monkeypatch.setattr(cks, "SECTION_BUDGET_SECONDS", float("inf"))
    ctx = _context(toy)
    section = cks.crowdkit_section(ctx)
    runs = ctx.diagnostics["naive_crowdkit"]["aggregators"]
    assert (
        runs["GLAD"]["status"] == "skipped" and "MAX_ITEMS['GLAD'] = 10" in runs["GLAD"]["reason"]
    )
    assert all(runs[n]["status"] == "ok" for n in ("DawidSkene", "MMSR", "KOS"))
    assert ("crowd-kit GLAD", "skipped", "", "") in section.tables[0].rows


def test_rows_past_the_section_budget_are_skipped_cheapest_first_with_the_reason(toy, monkeypatch):
    n = int(toy.annotated.sum())
    cost = {name: cks.predicted_seconds(name, n) for name in cks.AGGREGATORS}
    cheap, dear = sorted(cost, key=cost.get)[:2], sorted(cost, key=cost.get)[2:]
    # a budget that holds exactly the two cheapest rows
    monkeypatch.setattr(cks, "SECTION_BUDGET_SECONDS", cost[cheap[0]] + cost[cheap[1]])
    ran_ = []
    original = cks._aggregator
    monkeypatch.setattr(
        cks, "_aggregator", lambda name, seed: ran_.append(name) or original(name, seed)
    )
    ctx = _context(toy)
    section = cks.crowdkit_section(ctx)
    runs = ctx.diagnostics["naive_crowdkit"]["aggregators"]
    assert ran_ == cheap and list(runs) == list(cks.AGGREGATORS)
    assert all(runs[name]["status"] == "ok" for name in cheap)
    for name in dear:
        assert runs[name]["status"] == "skipped"
        assert (
            f"{name} costs about {cost[name]:.1f} s on {n} annotated items" in runs[name]["reason"]
        )
        assert (f"crowd-kit {name}", "skipped", "", "") in section.tables[0].rows
        assert any(note.startswith(f"crowd-kit {name} skipped: ") for note in section.notes)


def test_without_crowdkit_the_section_says_so_in_one_line(toy, monkeypatch):
    # None in sys.modules makes ``import crowdkit...`` raise ImportError, as when absent.
    monkeypatch.setitem(sys.modules, "crowdkit", None)
    monkeypatch.setitem(sys.modules, "crowdkit.aggregation", None)
    ctx = _context(toy)
    section = cks.crowdkit_section(ctx)
    assert section.status == "skipped" and "\n" not in section.reason
    assert "crowd-kit is not installed" in section.reason
    assert not section.tables
    assert cks.crowdkit_summary(ctx)["naive_crowdkit"]["status"] == "skipped"


def test_a_summary_input_is_skipped_with_the_reason(toy):
    ctx = _context(toy)
    ctx.data = ctx.summary
    section = cks.crowdkit_section(ctx)
    assert section.status == "skipped" and "summary" in section.reason


def test_the_audit_carries_the_section_and_summary_json_numbers(toy):
    report = audit(toy, channels="dawid-skene-em", groups=1, random_state=0)
    res = report.summary["naive_crowdkit"]
    assert res["status"] == "ok"
    keys = [s.key for s in report.sections]
    assert keys.index("crowdkit") == keys.index("ece") + 1
    ctx = _context(toy, bins=report.summary["ece"]["bins"])
    ctx.seed = report.provenance.seed
    cks.crowdkit_section(ctx)
    assert res == ctx.diagnostics["naive_crowdkit"] | {
        "aggregators": {
            name: {**r, "seconds": res["aggregators"][name]["seconds"]} if "seconds" in r else r
            for name, r in ctx.diagnostics["naive_crowdkit"]["aggregators"].items()
        }
    }
    assert "crowd-kit aggregated labels taken as truth" in report.to_html()


def test_crowdkit_is_never_imported_by_bayescal_or_its_audit_module():
    code = (
        "import sys, bayescal, bayescal.report.audit, bayescal.report.crowdkit_section; "
        "assert 'crowdkit' not in sys.modules, 'crowdkit imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_above_every_cap_the_section_is_skipped_before_crowdkit_is_touched(toy, monkeypatch):
    """At 10**6 items every row is over its cap: building crowd-kit's frame of every answer
    and importing it took 19 s of a 10**6-item audit for nothing."""
    for name in cks.MAX_ITEMS:
        monkeypatch.setitem(cks.MAX_ITEMS, name, 10)
    monkeypatch.setitem(sys.modules, "crowdkit", None)  # importing it would now fail
    monkeypatch.setattr(type(toy), "to_crowdkit", lambda self: pytest.fail("frame built"))
    ctx = _context(toy)
    section = cks.crowdkit_section(ctx)
    assert section.status == "skipped"
    assert section.reason.startswith("400 annotated items, above every aggregator's MAX_ITEMS")
    assert ctx.diagnostics["naive_crowdkit"]["status"] == "skipped"
