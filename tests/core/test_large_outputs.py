"""Per-item outputs at large n (issue 23 item 3, issue 21 item 1): the fast paths against the
obvious ones on small data, and sizes that follow the observed patterns, not 3**K.

The fast paths: ``items.csv`` / ``next.csv`` written with each distinct value formatted once
(:func:`bayescal.channels.items.write_csv`) against pandas' ``to_csv(float_format="%.17g")``,
byte for byte; the widths after the top ``n`` of a ranking in one running sum
(:meth:`AnnotationTargets.widths_after`) against :meth:`width_after` one ``n`` at a time;
numeric answer arrays read without a pass over Python objects
(:func:`bayescal.data.validation.class_indices`) against the object path.
"""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import bayescal as bc
from bayescal.channels.acquisition import rank_annotation_targets
from bayescal.channels.items import item_cells, item_posteriors, write_csv
from bayescal.data.container import Annotations
from bayescal.data.validation import class_indices
from bayescal.errors import DataError
from bayescal.simulate import simulate_toy


def _pandas(frame: pd.DataFrame, *, index: bool) -> str:
    out = io.StringIO()
    frame.to_csv(out, index=index, float_format="%.17g")
    return out.getvalue()


def _ours(frame: pd.DataFrame, *, index: bool) -> str:
    out = io.StringIO()
    write_csv(frame, out, index=index)
    return out.getvalue()


@pytest.mark.parametrize("index", [True, False])
def test_write_csv_is_pandas_byte_for_byte(index):
    rng = np.random.default_rng(0)
    n = 500
    shared = rng.random(7)[rng.integers(0, 7, n)]  # few distinct values, as per pattern
    shared[::9] = np.nan
    names = np.array(["plain", "a,comma", 'a "quote"', None, "two\nlines", ""], dtype=object)
    frame = pd.DataFrame(
        {
            "shared": shared,
            "distinct": np.cumsum(rng.random(n)) * 1e-3,  # every value distinct
            "tiny": rng.random(n) * 1e-300,
            "flag": shared < 0.5,
            "rank": np.arange(1, n + 1),
            "label": names[rng.integers(0, names.size, n)],
        },
        index=pd.Index([f"item {i}" for i in range(n)], name="item"),
    )
    assert _ours(frame, index=index) == _pandas(frame, index=index)
    floats = frame.set_index(pd.Index(rng.random(n), name="item"))
    assert _ours(floats, index=index) == _pandas(floats, index=index)


def test_item_and_next_files_are_what_pandas_writes(tmp_path):
    data = simulate_toy(600, random_state=3)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    post = item_posteriors(data, fit, s)
    post.to_csv(tmp_path / "items.csv")
    expected = io.StringIO()
    post.to_frame().to_csv(expected, float_format="%.17g")
    assert (tmp_path / "items.csv").read_text() == expected.getvalue()
    ranking = rank_annotation_targets(data, fit, s)
    ranking.to_csv(tmp_path / "next.csv")
    back = pd.read_csv(tmp_path / "next.csv")
    np.testing.assert_array_equal(back["variance_reduction"].to_numpy(), ranking.reduction)
    assert back["item"].tolist() == ranking.items.tolist()


def test_widths_after_equal_width_after_one_at_a_time():
    data = simulate_toy(800, random_state=5)
    s = bc.summarize(data)
    r = rank_annotation_targets(data, bc.fit_channels(s), s, action="reread")
    slow = np.array([r.width_after(k) for k in range(1, r.n_candidates + 1)])
    fast = r.widths_after()
    # the running sum and sum() add the same non-negative terms in different orders, so
    # the remaining variances differ by at most n * eps * (sum of the terms); the squared
    # widths are 4 z**2 times them (plus a few eps of rounding in the squares themselves)
    four_z2 = r.width**2 / r.variance
    err = r.n_candidates * np.finfo(float).eps * max(r.variance, float(r.reduction.sum()))
    tol = four_z2 * err + 4 * np.finfo(float).eps * slow**2
    assert np.all(np.abs(fast**2 - slow**2) <= tol)
    assert np.all(np.diff(fast) <= 0)
    assert r.to_frame()["width_after_top"].tolist() == fast.tolist()


@pytest.mark.parametrize("classes", [None, ["0", "1"], ["no", "yes"]])
def test_numeric_answers_take_the_fast_path_with_the_same_result(classes):
    rng = np.random.default_rng(1)
    labels = (rng.random((50, 3)) < 0.5).astype(float)
    labels[rng.random((50, 3)) < 0.2] = np.nan
    fast = class_indices(labels, classes, "labels")
    slow = class_indices(labels.astype(object), classes, "labels")
    np.testing.assert_array_equal(fast, slow)
    assert fast.dtype == np.float64


def test_numeric_answers_with_numeric_names_are_still_ambiguous():
    labels = np.array([[0.0, 1.0], [1.0, np.nan]])
    for values in (labels, labels.astype(object)):
        with pytest.raises(DataError, match="could be a class index or a class"):
            class_indices(values, ["1", "2"], "labels")
    # nothing answered: nothing ambiguous, on either path
    empty = np.full((2, 2), np.nan)
    np.testing.assert_array_equal(
        class_indices(empty, ["1", "2"], "labels"),
        class_indices(empty.astype(object), ["1", "2"], "labels"),
    )


def test_sixteen_annotators_item_outputs_follow_observed_patterns():
    """K = 16: 3**16 = 43 million answer patterns could exist; the item posteriors and the
    ranking work on the observed (group, pattern) cells only, at most one per item."""
    k, n = 16, 600
    rng = np.random.default_rng(16)
    score = rng.random(n)
    truth = rng.random(n) < score
    flip = rng.uniform(0.05, 0.3, k)
    labels = np.where(truth[:, None], rng.random((n, k)) > flip, rng.random((n, k)) < flip)
    labels = labels.astype(float)
    labels[rng.random((n, k)) < 0.3] = np.nan
    data = Annotations.from_arrays(score, labels)
    s = bc.summarize(data, groups=2, bins=3)
    assert s.n_patterns <= n
    fit = bc.fit_channels(s)
    _, patterns, cell_pattern, _, cell_of_item = item_cells(data, s, 2)
    assert patterns.shape == (s.n_patterns, k) and cell_pattern.size <= n
    assert cell_of_item.max() < cell_pattern.size
    tracemalloc.start()
    try:
        post = item_posteriors(data, fit, s)
        r = rank_annotation_targets(data, fit, s)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert post.probability.shape == (n, 2)
    assert r.n_candidates == n and np.all(np.diff(r.reduction) <= 0)
    # one dense float64 table over the 3**16 patterns would be 344 MB; what is held is
    # per item / per observed cell plus the surprise check's 2**16 x 16 enumeration (8 MB)
    dense = 3**k * 8
    assert peak < dense / 10, f"peak {peak / 1e6:.1f} MB"


def test_a_binary_selection_beyond_its_item_cap_uses_a_seeded_subsample(monkeypatch):
    """The binary recalibration choice is capped like the C-class one (its cost grows with
    the items): beyond the cap the partitions hold exactly that many items, recorded
    beside the annotated count; under it nothing is drawn."""
    from bayescal.recal import selection
    from bayescal.recal.selection import choose_recalibration

    data = simulate_toy(800, random_state=8)
    opts = {"families": ("platt",), "pilot_splits": 2, "random_state": 8}
    whole = choose_recalibration(data, **opts)
    assert whole.sizes["used"] == whole.sizes["annotated"] == 800
    monkeypatch.setattr(selection, "MAX_BINARY_SELECTION_ITEMS", 400)
    capped = choose_recalibration(data, **opts)
    s = capped.sizes
    assert (s["annotated"], s["used"]) == (800, 400)
    assert s["pilot"] + s["evaluation_channel"] + s["test"] == 400
    assert capped.to_dict() == choose_recalibration(data, max_items=400, **opts).to_dict()


def test_the_binary_report_says_when_the_selection_was_capped(monkeypatch):
    from bayescal.recal import selection

    monkeypatch.setattr(selection, "MAX_BINARY_SELECTION_ITEMS", 600)
    report = bc.audit(simulate_toy(900, random_state=2), channels="score-bin-em")
    section = next(s for s in report.sections if s.key == "recalibration")
    said = [n for n in section.notes if "subsample of 600 of the 900 annotated items" in n]
    assert len(said) == 1 and "MAX_BINARY_SELECTION_ITEMS" in said[0]
    sizes = report.summary["recalibration"]["sizes"]  # what summary.json holds
    assert (sizes["annotated"], sizes["used"]) == (900, 600)
