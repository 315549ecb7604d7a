"""The report reads on any screen and says what its numbers are (issue 16).

The browser-level check (no page overflow at 400 px, no console errors, no
requests) is scripts/check_reports.py; these tests pin the HTML and figure
properties it relies on.
"""

from __future__ import annotations

import base64
import io
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import bayescal as bc
from bayescal.ambiguity import AmbiguityData
from bayescal.plotting import (
    channel_trace,
    noise_corrected_reliability,
    pattern_predictive_check,
)
from bayescal.report import audit, audit_ambiguity
from bayescal.report.figures import NARROW_DPI, NARROW_WIDTH
from bayescal.simulate import simulate_toy


@pytest.fixture(scope="module")
def point_report():
    data = simulate_toy(3000, "shifted", random_state=3)
    return audit(data, channels="score-bin-em", random_state=0)


@pytest.fixture(scope="module")
def ambiguity_report():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet([0.6, 0.6, 0.6], 400)
    data = AmbiguityData(
        logits=3 * np.log(pi + 1e-3),
        counts=rng.multinomial(30, pi),
        classes=("a", "b", "c"),
        item_ids=np.arange(400),
    )
    return audit_ambiguity(
        data, methods=["Uncalibrated", "TS", "SLTS"], n_draws=10, cv_folds=2, n_boot=40
    )


def _png_width(b64: str) -> int:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(b64))).size[0]


def test_tables_scroll_inside_their_cards(point_report, ambiguity_report):
    for report in (point_report, ambiguity_report):
        html = report.to_html()
        n_tables = html.count("<table>")
        assert n_tables > 3
        assert len(re.findall(r'<div class="scroll" role="region"', html)) == n_tables
        assert re.search(r"\.scroll \{ overflow-x: auto;", html)
        assert "min-width: 520px" not in html


def test_every_report_figure_has_a_phone_layout(point_report, ambiguity_report):
    for report in (point_report, ambiguity_report):
        figures = [f for s in report.sections for f in s.figures]
        assert figures
        for f in figures:
            assert f.narrow_png_base64 and f.narrow_dpi == NARROW_DPI
            # Drawn NARROW_WIDTH inches wide at NARROW_DPI; tight bounding boxes trim or
            # add a little (labels), never the 2x of a desktop layout.
            width = _png_width(f.narrow_png_base64)
            assert 0.7 * NARROW_WIDTH * NARROW_DPI < width < 1.2 * NARROW_WIDTH * NARROW_DPI
        html = report.to_html()
        assert html.count('<source media="(max-width: 640px)"') == len(figures)


def test_headline_names_the_estimate_and_where_it_sits(point_report):
    nc = point_report.summary["ece"]["nc"]
    # the label of the number, not a number: "estimate" is no key of its own (one meaning per field)
    assert nc["estimate_label"] == "bias-aware NC-ECE estimate" and "estimate" not in nc
    assert nc["plugin"] >= nc["point"] and 0 < nc["p_value"] <= 1
    # Where the estimate sits, measured on the interval it came with (not on raw replicates).
    assert 0 <= nc["position"] <= 1
    assert nc["position"] == pytest.approx((nc["point"] - nc["lo"]) / (nc["hi"] - nc["lo"]))
    html = point_report.to_html()
    assert nc["estimate_label"] in html and "raw plug-in" in html and "<svg" in html
    assert "of the way from its lower to its upper end" in html


def test_table_numbers_use_the_precision_of_the_warnings(point_report):
    # Library warnings print rates with 4 decimals (e.g. prevalence differences);
    # the prevalence and channel tables use the same.
    section = next(s for s in point_report.sections if s.key == "channels")
    prevalence = section.tables[1]
    for row in prevalence.rows:
        assert re.fullmatch(r"\d\.\d{4}", row[2]), row


def test_corrected_curve_and_band_are_clipped_for_display_only():
    from bayescal import ChannelFit, majority_vote_ece, nc_ece, soft_vote_ece
    from bayescal.simulate import TOY_FN, TOY_FP

    d = simulate_toy(2000, random_state=0)
    ch = ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN))
    corrected = nc_ece(d, ch)
    n_bins = corrected.bin_mean_score.size
    band = {"lo": np.full(n_bins, -0.3), "hi": np.full(n_bins, 1.4)}
    first = int(np.flatnonzero(np.isfinite(corrected.bin_mean_score.values))[0])
    target = corrected.bin_mean_target.copy()
    target.values[:, first] = -0.2  # a bin whose estimate lies below 0
    shifted = type(
        "Binned", (), {"bin_mean_score": corrected.bin_mean_score, "bin_mean_target": target}
    )
    axes = noise_corrected_reliability(
        soft_vote_ece(d), majority_vote_ece(d), shifted, band=_Band(band)
    )
    poly = axes[1].collections[0].get_paths()[0].vertices
    assert poly[:, 1].min() >= 0 and poly[:, 1].max() <= 1
    labels = [line.get_label() for line in axes[1].get_lines()]
    assert "noise-corrected, beyond [0, 1]" in labels
    hollow = next(ln for ln in axes[1].get_lines() if ln.get_label().endswith("beyond [0, 1]"))
    assert list(hollow.get_ydata()) == [0.0]
    assert any("shown within [0, 1]" in t.get_text() for t in axes[1].get_legend().get_texts())


class _Band(dict):
    """A stand-in for NCECEPosterior.curve_band(): ``band["lo"].values``."""

    def __getitem__(self, key):
        return type("A", (), {"values": dict.__getitem__(self, key)})()


def _fake_idata():
    import arviz as az

    rng = np.random.default_rng(0)
    names = ["ann 1", "$x$", "r3"]
    patterns = ["000", "100", "1.1", "111"]
    groups = ["[0, 0.5)", "[0.5, 1]"]
    return az.from_dict(
        posterior={
            "a": rng.uniform(0.05, 0.2, (2, 30, 3)),
            "b": rng.uniform(0.7, 0.95, (2, 30, 3)),
        },
        posterior_predictive={"counts": rng.poisson(20, (2, 30, 2, 4))},
        observed_data={"counts": rng.poisson(20, (2, 4))},
        coords={"annotator": names, "pattern": patterns, "group": groups},
        dims={"a": ["annotator"], "b": ["annotator"], "counts": ["group", "pattern"]},
    )


def test_trace_legend_says_which_colour_is_which_annotator():
    axes = channel_trace(_fake_idata())
    fig = axes[0, 0].figure
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["ann 1", "$x$", "r3", "chain 0", "chain 1"]
    colours = [h.get_color() for h in fig.legends[0].legend_handles[:3]]
    drawn = list(dict.fromkeys(ln.get_color() for ln in axes[0, 1].get_lines()))
    assert colours == drawn


def test_pattern_labels_are_explained_under_the_predictive_check():
    axes = pattern_predictive_check(_fake_idata())
    label = axes[-1].get_xlabel().replace("\n", " ")
    assert "one character per annotator (ann 1 $x$ r3)" in label
    assert "1 = positive, 0 = negative, . = no answer" in label


def test_ambiguity_report_gives_intervals_and_distinguishability(ambiguity_report):
    iv = ambiguity_report.summary["intervals"]
    assert iv["n_boot"] == 40 and iv["prob"] == 0.9
    rows = ambiguity_report.summary["methods"]
    for name, metrics in iv["methods"].items():
        # Same units as the method rows (ECE in percent), same label draws.
        assert metrics["ece_true"]["estimate"] == pytest.approx(rows[name]["ece_true"])
        assert metrics["brier_sampled"]["estimate"] == pytest.approx(rows[name]["brier_sampled"])
    versus = iv["versus_recommended"]
    assert versus["reference"] == ambiguity_report.recommendation.method
    html = ambiguity_report.to_html()
    assert "Brier, Eq. 5 (vs π)" in html and "Brier, sampled label" in html
    assert "distinguishable" in html and "bias-corrected 90% interval" in html


def test_brier_units_are_named_in_the_summary(ambiguity_report):
    units = ambiguity_report.summary["protocol"]["units"]
    assert "brier_sampled" in units and "Eq. 5" in units
    assert bc.__version__
