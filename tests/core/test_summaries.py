"""The one Summary, for every number of classes: equal to per-item loops, mergeable, gold apart.

Each behaviour is tested once, parametrised over C = 2 (the binary track: score groups, the
dense binary view) and C = 4 where both apply. The references are obvious per-item loops,
independent of the bincount / unique kernels.
"""

import numpy as np
import pytest

import bayescal as bc
import bayescal.summaries.patterns as patterns_module
import bayescal.summaries.summary as summary_module
from bayescal import Annotations
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, DataError
from bayescal.simulate import simulate_multiclass, simulate_toy
from bayescal.summaries import Summary, summarize, summarize_multiclass
from bayescal.summaries.partition import assign, bin_index
from bayescal.summaries.patterns import pattern_labels, unique_patterns
from bayescal.summaries.summary import summarize_arrays

CLASSES = [2, 4]


def _data(c, n=1500, seed=0, *, gold_share=0.0, missing=0.25):
    """A container of ``c`` classes with truth (and a share of gold items)."""
    if c == 2:
        d = simulate_toy(n, "nonlinear", random_state=seed, missing=[0.1, missing, 0.5])
        p, labels, truth = np.column_stack([1 - d.score, d.score]), d.labels, d.truth
    else:
        d = simulate_multiclass(n, c, random_state=seed, missing=missing, n_profiles=60)
        p, labels, truth = d.probs, d.labels, d.truth
    labels = labels.copy()
    labels[:3] = np.nan  # unannotated items: counted apart
    gold = None
    if gold_share:
        rng = np.random.default_rng(seed + 1)
        gold = np.where(rng.random(n) < gold_share, truth, np.nan)
    if c == 2:
        return Annotations.from_arrays(p[:, 1], labels, truth=truth, gold=gold)
    return MulticlassAnnotations.from_arrays(p, labels, truth=truth, gold=gold)


def _probs(d):
    return d.probs  # the one container: two columns 1 - score, score for binary data


def _cell(x, edges):
    m = len(edges) - 1
    return min(max(i for i in range(m) if edges[i] <= x), m - 1)


def slow_tables(d, group_of, bin_edges):
    """Per-item loops: every table of the summary as dictionaries keyed by states."""
    p, c = _probs(d), _probs(d).shape[1]
    gold = np.full(d.n_items, np.nan) if d.gold is None else d.gold
    out = {k: {} for k in ("groups", "gold", "top", "cw", "gtop", "gcw", "unann")}
    out.update(top_truth={}, cw_truth={}, gtop_truth={}, gcw_truth={})

    def add(table, key, n=1, z=0.0):
        n0, z0 = table.get(key, (0, 0.0))
        table[key] = (n0 + n, z0 + z)

    for i in range(d.n_items):
        g = group_of(i)
        s = tuple(c if np.isnan(v) else int(v) for v in d.labels[i])
        if all(v == c for v in s):
            add(out["unann"], g)
            continue
        is_gold = not np.isnan(gold[i])
        pref = "g" if is_gold else ""
        if is_gold:
            add(out["gold"], (int(gold[i]), g, s))
        else:
            add(out["groups"], (g, s))
        pred = int(np.argmax(p[i]))
        b = _cell(p[i, pred], bin_edges)
        add(out[pref + "top"], (b, pred, s), 1, p[i, pred])
        if d.truth is not None and d.truth[i] == pred:
            add(out[pref + "top_truth"], b)
        for k in range(c):
            bk = _cell(p[i, k], bin_edges)
            add(out[pref + "cw"], (k, bk, s), 1, p[i, k])
            if d.truth is not None and d.truth[i] == k:
                add(out[pref + "cw_truth"], (k, bk))
    return out


def summary_tables(s):
    """The same dictionaries read from a Summary."""
    st = [tuple(int(v) for v in row) for row in s.states]
    ds = s.dataset
    out = {
        "groups": {
            (g, st[p]): (int(n), 0.0)
            for (g, p), n in np.ndenumerate(ds["pattern_counts"].values)
            if n
        },
        "unann": {g: (int(n), 0.0) for g, n in enumerate(ds["n_unannotated"].values) if n},
        "gold": {},
    }
    if s.has_gold:
        out["gold"] = {
            (y, g, st[p]): (int(n), 0.0)
            for (y, g, p), n in np.ndenumerate(ds["gold_pattern_counts"].values)
            if n
        }
    for pref, name in (("", ""), ("g", "gold_")):
        for key, kind, names, value in (
            ("top", "top_cell", ("bin", "class"), "conf_sum"),
            ("cw", "classwise_cell", ("class", "bin"), "prob_sum"),
        ):
            var = f"{name}{kind}"
            if f"{var}_count" not in ds:
                out[pref + key] = {}
                continue
            idx = [ds[f"{var}_{v}"].values for v in names]
            pat, cnt, val = (ds[f"{var}_{v}"].values for v in ("pattern", "count", value))
            out[pref + key] = {
                (int(i0), int(i1), st[q]): (int(n), float(z))
                for i0, i1, q, n, z in zip(*idx, pat, cnt, val)
            }
    return out


def assert_tables_equal(got, ref):
    for key in ("groups", "gold", "unann", "top", "cw", "gtop", "gcw"):
        assert got[key].keys() == ref[key].keys(), key
        for cell, (n, z) in ref[key].items():
            assert got[key][cell][0] == n
            assert got[key][cell][1] == pytest.approx(z, rel=1e-12, abs=1e-12)


def _group_of(d, s):
    p = _probs(d)
    if s.grouping == "score":
        return lambda i: _cell(p[i, 1], s.group_edges)
    if s.grouping == "confidence":
        return lambda i: _cell(p[i].max(), s.group_edges)
    if s.grouping == "predicted":
        return lambda i: int(np.argmax(p[i]))
    if s.grouping == "all":
        return lambda i: 0
    levels = np.unique(d.group)
    return lambda i: int(np.searchsorted(levels, d.group[i]))


# ----------------------------------------------------------------- equal to per-item loops
@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("gold_share", [0.0, 0.2])
def test_summary_equals_per_item_loops(c, gold_share):
    d = _data(c, gold_share=gold_share)
    edges = np.array([0, 0.05, 0.3, 0.5, 0.77, 1.0])
    s = summarize(d, bins=edges)
    assert s.grouping == ("score" if c == 2 else "predicted") and s.n_classes == c
    ref = slow_tables(d, _group_of(d, s), edges)
    assert_tables_equal(summary_tables(s), ref)
    if d.truth is not None:
        np.testing.assert_array_equal(
            s.top_bin_truth_sum.values, [ref["top_truth"].get(b, (0,))[0] for b in range(5)]
        )
        np.testing.assert_array_equal(
            s.classwise_bin_truth_sum.values,
            [[ref["cw_truth"].get((k, b), (0,))[0] for b in range(5)] for k in range(c)],
        )
    n_gold = 0 if d.gold is None else int((~np.isnan(d.gold) & d.annotated).sum())
    assert s.n_items + n_gold + int(s.n_unannotated.sum()) == d.n_items
    assert s.n_cell_items == s.n_items
    # observed patterns only, in the canonical order of the code sum_j s_j (C+1)**j
    code = s.states.astype(np.int64) @ (c + 1) ** np.arange(d.n_annotators)
    assert np.all(np.diff(code) > 0)
    unknown = np.ones(d.n_items, bool) if d.gold is None else np.isnan(d.gold)
    answered = d.answered & unknown[:, None]
    per_class = [
        np.bincount(d.labels[answered[:, j], j].astype(int), minlength=c) for j in range(3)
    ]
    np.testing.assert_array_equal(s.answer_counts.values, per_class)


@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("groups", ["all", "predicted", [0, 0.5, 0.8, 1], 3, "confidence"])
def test_every_grouping_equals_per_item_loops(c, groups):
    d = _data(c, n=600, seed=1)
    s = summarize(d, groups=groups, bins=[0, 0.3, 0.55, 0.9, 1])
    numeric = not isinstance(groups, str)
    expected = {"all": "all", "predicted": "predicted", "confidence": "confidence"}
    want = ("score" if c == 2 else "confidence") if numeric else expected[groups]
    assert s.grouping == want
    assert_tables_equal(summary_tables(s), slow_tables(d, _group_of(d, s), s.bin_edges))


@pytest.mark.parametrize("c", CLASSES)
def test_data_groups_use_the_container_variable(c):
    d0 = _data(c, n=600, seed=2)
    g = np.repeat(["siteA", "siteB", "siteC"], 200)
    if c == 2:
        d = Annotations.from_arrays(d0.score, d0.labels, group=g)
    else:
        d = MulticlassAnnotations.from_arrays(d0.probs, d0.labels, group=g)
    s = summarize(d)  # groups=None: the container's groups
    assert s.grouping == "data" and s.groups == ["siteA", "siteB", "siteC"]
    assert s.group_edges is None
    np.testing.assert_array_equal(s.group_counts.values + s.n_unannotated.values, [200] * 3)
    assert summarize(d, groups="data").equals(s)
    plain = _data(c, n=50)
    with pytest.raises(ConfigError, match="groups='data' needs a container"):
        summarize(plain, groups="data")


def test_binary_view_equals_per_item_computation():
    """The dense binary arrays against obvious per-item loops, gold items apart."""
    d = _data(2, n=2000, seed=3, gold_share=0.15)
    ge, be = np.linspace(0, 1, 6), np.array([0, 0.05, 0.3, 0.5, 0.77, 1.0])
    s = summarize(d, groups=ge, bins=be)
    v = s.binary
    index = {tuple(int(x) for x in row): j for j, row in enumerate(v.states)}
    k, m, p = d.n_annotators, be.size - 1, v.states.shape[0]
    pc, bpc, bps = np.zeros((5, p), int), np.zeros((m, p), int), np.zeros((m, p))
    gpc, gbpc = np.zeros((2, 5, p), int), np.zeros((m, p), int)
    lab_sum, answered, truth = np.zeros((m, k)), np.zeros((m, k)), np.zeros(m)
    for i, (z, row) in enumerate(zip(d.score, d.labels)):
        if np.isnan(row).all():
            continue
        j = index[tuple(2 if np.isnan(x) else int(x) for x in row)]
        g, b = _cell(z, ge), _cell(z, be)
        if not np.isnan(d.gold[i]):
            gpc[int(d.gold[i]), g, j] += 1
            gbpc[b, j] += 1
            continue
        pc[g, j] += 1
        bpc[b, j] += 1
        bps[b, j] += z
        truth[b] += d.truth[i]
        lab_sum[b] += np.nan_to_num(row)
        answered[b] += ~np.isnan(row)
    np.testing.assert_array_equal(v.pattern_counts, pc)
    np.testing.assert_array_equal(v.bin_pattern_counts, bpc)
    np.testing.assert_allclose(v.bin_pattern_score_sum, bps, rtol=1e-12)
    np.testing.assert_array_equal(v.bin_truth_sum, truth)
    np.testing.assert_array_equal(v.bin_label_sum, lab_sum)
    np.testing.assert_array_equal(v.bin_answered, answered)
    np.testing.assert_array_equal(v.answered_counts, answered.sum(axis=0))
    np.testing.assert_array_equal(v.bin_count, bpc.sum(axis=1))
    np.testing.assert_allclose(v.bin_score_sum, bps.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(v.gold_pattern_counts, gpc)
    np.testing.assert_array_equal(v.gold_counts(), gpc.sum(axis=1))
    np.testing.assert_array_equal(v.gold_bin_pattern_counts, gbpc)
    assert v.n_gold == (int(gpc[0].sum()), int(gpc[1].sum()))
    # p_1 is the score bit for bit: the class-1 bins are the binary bins
    assert np.array_equal(v.bin_pattern_score_sum.sum(), bps.sum())


def test_binary_view_is_built_once_read_only_and_for_two_classes_only():
    s = summarize(_data(2, n=300))
    assert s.binary is s.binary
    for name in ("states", "pattern_counts", "bin_pattern_counts", "bin_count", "bin_label_sum"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(s.binary, name)[0] = 1
    with pytest.raises(DataError, match="4 classes; the binary statistics"):
        _ = summarize(_data(4, n=300)).binary


@pytest.mark.parametrize("k", [5, 12, 16])
def test_many_annotators_stay_sparse(k):
    """K = 16 binary annotators: 3**16 = 43 million cells, but only the observed patterns
    are stored (at most one per item), equal to the per-item definition."""
    rng = np.random.default_rng(k)
    n = 400
    score = rng.random(n)
    labels = (rng.random((n, k)) < score[:, None]).astype(float)
    labels[rng.random((n, k)) < 0.3] = np.nan
    labels[0] = np.nan
    d = Annotations.from_arrays(score, labels)
    first, second = (summarize(d, groups=2, bins=3) for _ in range(2))
    assert first.equals(second) and first.data_hash() == second.data_hash()
    assert first.n_cells == 3**k and first.n_patterns <= n - 1
    counts = {}
    for z, row in zip(score, labels):
        if np.isnan(row).all():
            continue
        key = (
            _cell(z, [0, 1 / 3, 2 / 3, 1]),
            "".join("." if np.isnan(x) else str(int(x)) for x in row),
        )
        counts[key] = counts.get(key, 0) + 1
    v = first.binary
    got = {
        (b, str(label)): int(v.bin_pattern_counts[b, j])
        for b in range(3)
        for j, label in enumerate(first.pattern_labels)
        if v.bin_pattern_counts[b, j]
    }
    assert got == counts
    assert int(first.n_unannotated.sum()) == 1


def test_many_classes_and_annotators_stay_sparse():
    data = simulate_multiclass(2000, 12, n_annotators=20, random_state=1, n_profiles=50)
    s = summarize(data)
    assert s.n_cells == 13**20 and s.n_patterns <= 2000
    assert s.pattern_labels[0].count(",") == 19  # C > 10: comma-separated states
    half = np.arange(2000) < 1000
    assert (summarize(data.subset(half)) + summarize(data.subset(~half))).equals(s)


def test_pattern_labels():
    assert pattern_labels(np.array([[0, 1, 2], [1, 1, 1], [2, 0, 0]]), 2).tolist() == [
        "01.",
        "111",
        ".00",
    ]
    assert pattern_labels(np.array([[0, 2, 3]]), 3).tolist() == ["02."]
    assert pattern_labels(np.array([[0, 11, 12]]), 12).tolist() == ["0,11,."]


def test_counting_paths_agree_and_keep_the_code_order(monkeypatch):
    """Dense table, numpy.unique on codes, numpy.unique on rows: the same patterns, in the
    order of the code."""
    rng = np.random.default_rng(3)
    states = rng.integers(0, 6, size=(500, 4))
    dense = unique_patterns(states, 5)
    d = _data(4, n=600, seed=4)
    s_dense = summarize(d)
    for module in (patterns_module, summary_module):
        monkeypatch.setattr(module, "MAX_DENSE_CELLS", 1)
    sparse = unique_patterns(states, 5)
    s_sparse = summarize(d)
    monkeypatch.setattr(patterns_module, "_INT64_LIMIT", 1)
    rows = unique_patterns(states, 5)
    s_rows = summarize(d)
    code = dense[0].astype(int) @ 6 ** np.arange(4)
    assert np.all(np.diff(code) > 0)
    for u, inv in (sparse, rows):
        np.testing.assert_array_equal(u, dense[0])
        np.testing.assert_array_equal(inv, dense[1])
    np.testing.assert_array_equal(dense[0][dense[1]], states)
    for s in (s_sparse, s_rows):
        assert s.equals(s_dense)
        assert list(s.pattern_labels) == list(s_dense.pattern_labels)


@pytest.mark.parametrize("m", [1, 2, 3, 7, 10, 15, 100])
def test_fast_equal_width_bins_match_assign_on_edges_and_between(m):
    edges = np.linspace(0, 1, m + 1)
    rng = np.random.default_rng(m)
    x = np.concatenate(
        [rng.random(10_000), edges, np.nextafter(edges, 0), np.nextafter(edges, 1), [0.3, 0.7]]
    )
    x = x[(x >= 0) & (x <= 1)]
    np.testing.assert_array_equal(bin_index(x, edges), assign(x, edges))


# ----------------------------------------------------------------- mergeable
def _split(d, parts, seed=0):
    idx = np.array_split(np.random.default_rng(seed).permutation(d.n_items), parts)
    return [d.subset(i) for i in idx]


@pytest.mark.parametrize("c", CLASSES)
@pytest.mark.parametrize("gold_share", [0.0, 0.2])
@pytest.mark.parametrize("n_chunks", [2, 7])
def test_chunks_add_up_and_subtract(c, gold_share, n_chunks):
    d = _data(c, n=1200, seed=5, gold_share=gold_share)
    groups = [0, 0.6, 1]
    whole = summarize(d, groups=groups)
    parts = [summarize(x, groups=groups) for x in _split(d, n_chunks)]
    total = sum(parts)
    assert isinstance(total, Summary) and total.equals(whole)
    np.testing.assert_array_equal(total.n_unannotated.values, whole.n_unannotated.values)
    # subtraction gives back the complement (used by cross-fitting)
    assert (whole - parts[0]).equals(sum(parts[1:]))
    rest = whole - sum(parts)
    assert rest.n_items == 0 and rest.n_patterns == 0 and rest.dataset.sizes["top_cell"] == 0


@pytest.mark.parametrize("c", CLASSES)
def test_merge_refuses_incompatible_summaries(c):
    d = _data(c, n=500, seed=6)
    s1 = summarize(d, groups=[0, 0.5, 1], bins=10)
    kind = "score groups" if c == 2 else "channel groups"
    with pytest.raises(DataError, match="bin edges"):
        s1 + summarize(d, groups=[0, 0.5, 1], bins=5)
    with pytest.raises(DataError, match=kind):
        s1 + summarize(d, groups=[0, 0.4, 1], bins=10)
    with pytest.raises(DataError, match=kind):
        s1 + summarize(d, groups="all", bins=10)
    with pytest.raises(DataError, match="not part of the first"):
        summarize(d.subset(np.arange(10)), groups=[0, 0.5, 1]) - s1
    with pytest.raises(DataError, match="classes"):
        summarize(_data(2, n=50), groups="all") + summarize(_data(4, n=50), groups="all")
    with pytest.raises(TypeError):
        s1 + 1


def test_an_unannotated_chunk_merges():
    d = _data(4, n=600, seed=7)
    s = summarize(d)
    empty = summarize_arrays(
        d.probs[:4],
        np.full((4, 3), np.nan),
        annotators=d.annotators,
        classes=d.classes,
        bin_edges=s.bin_edges,
        truth=d.truth[:4],
    )
    assert empty.n_items == 0 and empty.n_unannotated.values.sum() == 4
    merged = s + empty
    assert merged.n_items == s.n_items
    assert merged.n_unannotated.values.sum() == s.n_unannotated.values.sum() + 4


# ----------------------------------------------------------------- gold items
def _plain(d, rows=None):
    """The same items without a gold variable (optionally a subset)."""
    rows = np.arange(d.n_items) if rows is None else rows
    return Annotations.from_arrays(d.probs[rows], d.labels[rows], truth=d.truth[rows])


_METRIC_VARS = ("top_cell", "classwise_cell")


def _metric_part(s):
    """The metric cells and truth sums of a summary (what every calibration error reads)."""
    st = [tuple(int(v) for v in row) for row in s.states]
    ds = s.dataset
    out = {}
    for var, names, value in (
        ("top_cell", ("bin", "class"), "conf_sum"),
        ("classwise_cell", ("class", "bin"), "prob_sum"),
    ):
        idx = [ds[f"{var}_{v}"].values for v in names]
        pat, cnt, val = (ds[f"{var}_{v}"].values for v in ("pattern", "count", value))
        out[var] = {
            (int(a), int(b), st[q]): (int(n), round(float(z), 9))
            for a, b, q, n, z in zip(*idx, pat, cnt, val)
        }
    out["truth"] = (
        ds["top_bin_truth_sum"].values.tolist(),
        ds["classwise_bin_truth_sum"].values.tolist(),
    )
    return out


@pytest.mark.parametrize("c", CLASSES)
def test_gold_tables_hold_exactly_the_gold_items(c):
    d = _data(c, n=1500, seed=8, gold_share=0.2)
    s = summarize(d, groups="all", bins=5)
    is_gold = ~np.isnan(d.gold) & d.annotated
    assert s.has_gold and not s.gold_in_cells
    np.testing.assert_array_equal(s.n_gold, np.bincount(d.gold[is_gold].astype(int), minlength=c))
    assert s.n_items == int((d.annotated & ~is_gold).sum()) == s.n_cell_items
    # the gold tables equal the summary of the gold items alone, class by class
    for y in range(c):
        alone = summarize(_plain(d, np.flatnonzero(d.gold == y)), groups="all", bins=5)
        got = dict(zip(map(tuple, s.states.tolist()), s.gold_pattern_counts.values[y, 0]))
        want = dict(zip(map(tuple, alone.states.tolist()), alone.pattern_counts.values[0]))
        assert {key: n for key, n in got.items() if n} == want
    # with_gold_in_cells: the metric cells of every item, the channel tables unchanged
    w = s.with_gold_in_cells()
    assert w.gold_in_cells and w.with_gold_in_cells() is w
    assert w.n_cell_items == s.n_items + int(s.n_gold.sum())
    assert _metric_part(w) == _metric_part(summarize(_plain(d), groups="all", bins=5))
    np.testing.assert_array_equal(w.pattern_counts.values, s.pattern_counts.values)
    np.testing.assert_array_equal(w.gold_counts(), s.gold_counts())
    assert s.describe() == w.describe() and s.describe()["n_items"] == d.n_items
    assert s.with_gold_in_bins().equals(w)  # the binary v0.2 name
    # without_gold undoes both: the summary of the unknown items alone (gold items nobody
    # answered stay among the unannotated ones)
    rows = np.flatnonzero(np.isnan(d.gold) | ~d.annotated)
    plain = summarize(_plain(d, rows), groups="all", bins=5)
    assert w.without_gold().equals(plain) and s.without_gold().equals(plain)
    assert not w.without_gold().has_gold
    answered = np.stack(
        [(~np.isnan(d.labels[is_gold & (d.gold == y)])).sum(axis=0) for y in range(c)]
    )
    np.testing.assert_array_equal(s.gold_answered(), answered)


def test_binary_gold_in_cells_moves_the_binary_bins():
    d = _data(2, n=1500, seed=9, gold_share=0.2)
    s = summarize(d, groups=4, bins=5)
    w = s.with_gold_in_cells()
    assert int(s.binary.bin_count.sum()) == s.n_items
    assert int(w.binary.bin_count.sum()) == int(d.annotated.sum())
    np.testing.assert_allclose(w.binary.bin_truth_sum.sum(), d.truth[d.annotated].sum())
    np.testing.assert_array_equal(
        w.binary.bin_pattern_counts, s.binary.bin_pattern_counts + s.binary.gold_bin_pattern_counts
    )
    np.testing.assert_array_equal(w.binary.pattern_counts, s.binary.pattern_counts)


@pytest.mark.parametrize("c", CLASSES)
def test_gold_summaries_merge_and_subtract(c):
    d = _data(c, n=1200, seed=10, gold_share=0.25)
    whole = summarize(d, groups=[0, 0.5, 1])
    half = np.arange(d.n_items) < 700
    s1, s2 = (
        summarize(d.subset(half), groups=[0, 0.5, 1]),
        summarize(d.subset(~half), groups=[0, 0.5, 1]),
    )
    assert (s1 + s2).equals(whole) and (whole - s2).equals(s1)
    # a chunk without a gold variable holds no gold item: its gold tables count as zero
    merged = s1 + summarize(_plain(d, np.flatnonzero(~half)), groups=[0, 0.5, 1])
    np.testing.assert_array_equal(merged.n_gold, s1.n_gold)
    assert merged.n_items == s1.n_items + int((d.annotated & ~half).sum())
    with pytest.raises(DataError, match="with_gold_in_cells"):
        s1.with_gold_in_cells() + s2


# ----------------------------------------------------------------- truth, bins, io, refusals
def test_truth_sums_and_equal_mass_bins():
    d = simulate_toy(2000, random_state=3)
    s = summarize(d, bins=4, bin_strategy="quantile")
    assert s.has_truth
    assert float(s.binary.bin_truth_sum.sum()) == d.truth.sum()
    counts = s.binary.bin_count
    assert counts.max() - counts.min() <= 2
    with pytest.raises(ConfigError, match="equal-mass bins are placed on p_1"):
        summarize(_data(4, n=100), bins=4, bin_strategy="quantile")


@pytest.mark.parametrize("c", CLASSES)
def test_netcdf_round_trip(c, tmp_path):
    s = summarize(_data(c, n=400, seed=11, gold_share=0.2))
    s.to_netcdf(tmp_path / "s.nc")
    back = Summary.from_netcdf(tmp_path / "s.nc")
    assert back.equals(s) and back.grouping == s.grouping and back.data_hash() == s.data_hash()
    np.testing.assert_array_equal(back.n_gold, s.n_gold)


@pytest.mark.parametrize("c", CLASSES)
def test_describe_reads_the_counts(c):
    d = _data(c, n=800, seed=12)
    facts = summarize(d).describe()
    assert facts["n_items"] == d.n_items and facts["n_unannotated"] == d.n_unannotated
    assert facts["n_classes"] == c
    answered = d.answered.sum(axis=0)
    assert facts["answers_per_annotator"] == dict(zip(d.annotators, answered.tolist()))
    assert facts["answered_fraction"] == pytest.approx(d.answered.mean())
    multi = d.answered.sum(axis=1) >= 2
    lo, hi = np.nanmin(d.labels[multi], axis=1), np.nanmax(d.labels[multi], axis=1)
    assert facts["unanimous_fraction"] == pytest.approx((lo == hi).mean())
    if c == 2:
        rates = [np.nanmean(d.labels[:, j]) for j in range(3)]
        assert list(facts["positive_rate_per_annotator"].values()) == pytest.approx(rates)


def test_the_multiclass_names_are_the_same_functions():
    assert summarize_multiclass is summarize and bc.MulticlassSummary is Summary
    d = _data(2, n=300)
    assert summarize_multiclass(d, groups="all").equals(summarize(d, groups="all"))


@pytest.mark.parametrize(
    "edges,match",
    [
        ([0.1, 0.5, 1.0], "cover"),
        ([0, 0.5, 0.4, 1], "increasing"),
        ([0, np.nan, 1], "finite"),
        ([0.5], "at least two"),
    ],
)
def test_bad_edges(edges, match):
    d = simulate_toy(50, random_state=6)
    with pytest.raises(ConfigError, match=match):
        summarize(d, bins=edges)
    with pytest.raises(ConfigError, match=match):
        summarize(d, groups=edges)


def test_bad_arguments_are_refused():
    d = simulate_toy(50, random_state=6)
    with pytest.raises(ConfigError, match="at least 1"):
        summarize(d, bins=0)
    with pytest.raises(DataError, match="Annotations"):
        summarize(np.zeros((3, 3)))
    with pytest.raises(ConfigError, match="groups must be None, an int"):
        summarize(d, groups="bogus")
    with pytest.raises(ConfigError, match="score groups .* need two classes"):
        summarize(_data(4, n=50), groups="score")
    with pytest.raises(ConfigError, match="fixed when the summary is built"):
        bc.summaries.summary.as_summary(summarize(d), bins=5)
