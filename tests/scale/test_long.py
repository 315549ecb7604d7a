"""Long (one row per answer) out-of-core summaries: shuffle on item, pivot, refuse repeats."""

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import pandas as pd  # noqa: E402
from scale_helpers import audit_gold_counts, make_case, reordered, write_parts  # noqa: E402

from bayescal import Annotations, summarize  # noqa: E402
from bayescal.errors import ConfigError, DataError  # noqa: E402
from bayescal.scale import summarize_long_dask  # noqa: E402


@pytest.fixture(scope="module")
def long_table(toy_frame):
    """Answers in random order (items scattered over every file), plus the score table."""
    rows = toy_frame.melt(
        id_vars=["item"], value_vars=["a1", "a2", "a3"], var_name="annotator", value_name="label"
    ).dropna()
    rows = rows.sample(frac=1.0, random_state=5).reset_index(drop=True)
    rows["label"] = rows["label"].astype(int)
    scores = toy_frame[["item", "score", "truth"]]
    return rows, scores


def reference(rows, scores, annotators, **kw):
    data = Annotations.from_long(
        rows, score=scores.set_index("item")["score"], truth=scores.set_index("item")["truth"]
    )
    order = [data.annotators.index(a) for a in annotators]
    data = Annotations.from_arrays(
        data.score,
        data.labels[:, order],
        truth=data.truth,
        annotators=annotators,
        item=data.dataset["item"].values,
    )
    return summarize(data, **kw)


def long_rows(case):
    """One row per answer (items scattered over every file) and the per-item table of the
    probabilities, truth and gold class."""
    per_item = [c for c in case.frame.columns if c not in ("a1", "a2", "a3")]
    rows = case.frame.melt(
        id_vars=["item"], value_vars=["a1", "a2", "a3"], var_name="annotator", value_name="label"
    ).dropna()
    rows = rows.sample(frac=1.0, random_state=5).reset_index(drop=True)
    rows["label"] = rows["label"].astype(int)
    return rows, case.frame[per_item]


@pytest.mark.parametrize("separate", [True, False], ids=["score-table", "answer-rows"])
def test_long_files_equal_in_memory_for_every_c(case, tmp_path, separate):
    """Probabilities, truth and gold class once per item in a score table (items without
    answers then count as unannotated), or repeated on every answer row."""
    rows, table = long_rows(case)
    ann = ["a2", "a3", "a1"]
    kw = {"truth": "truth", "gold": "known", "annotators": ann, **case.kw}
    if separate:
        write_parts(rows, tmp_path / "answers", "csv", 6)
        write_parts(table, tmp_path / "scores", "parquet", 3)
        s = summarize_long_dask(
            str(tmp_path / "answers"), scores=str(tmp_path / "scores"), blocksize=6000, **kw
        )
        ref = summarize(reordered(case.data, ann))
    else:
        write_parts(rows.merge(table, on="item"), tmp_path / "answers", "csv", 6)
        s = summarize_long_dask(str(tmp_path / "answers"), npartitions=5, **kw)
        ref = summarize(reordered(case.data, ann, np.flatnonzero(case.data.annotated)))
    assert s.equals(ref) and s.has_gold
    np.testing.assert_array_equal(s.gold_counts(), ref.gold_counts())
    np.testing.assert_array_equal(s.n_unannotated.values, ref.n_unannotated.values)


def test_long_gold_conflict_names_the_item(case, tmp_path):
    rows, table = long_rows(case)
    frame = rows.merge(table, on="item")
    answers = frame["item"].value_counts()
    gold_items = frame.loc[frame["known"].notna(), "item"]
    item = gold_items[gold_items.map(answers) >= 2].iloc[0]  # a gold item with two answers
    mine = np.flatnonzero(frame["item"] == item)
    frame.loc[mine[-1], "known"] = np.nan  # blank on one of the item's rows, a class on another
    write_parts(frame, tmp_path / "long", "csv", 3)
    kw = {"gold": "known", **case.kw}
    with pytest.raises(DataError, match=rf"item '{item}' has different gold class.*part-\d+\.csv"):
        summarize_long_dask(str(tmp_path / "long" / "*.csv"), **kw)
    with pytest.raises(ConfigError, match="gold='label' is also the item, annotator, label"):
        summarize_long_dask(str(tmp_path / "long" / "*.csv"), gold="label")


def test_long_probabilities_must_agree_within_an_item(tmp_path):
    case = make_case(4)
    rows, table = long_rows(case)
    frame = rows.merge(table, on="item")
    counts = frame["item"].value_counts()
    distinct = frame["p0"] != frame["p1"]
    victim = frame.loc[distinct & (frame["item"].map(counts) >= 2), "item"].iloc[0]
    first = np.flatnonzero(frame["item"] == victim)[0]
    p0, p1 = frame.at[first, "p0"], frame.at[first, "p1"]
    frame.at[first, "p0"], frame.at[first, "p1"] = p1, p0  # still sums to one
    with pytest.raises(DataError, match=f"item '{victim}' has different probability 'p"):
        summarize_long_dask(dd.from_pandas(frame, npartitions=3), **case.kw)


def test_long_files_with_score_table_equal_in_memory(long_table, tmp_path):
    rows, scores = long_table
    write_parts(rows, tmp_path / "answers", "csv", 6)
    write_parts(scores, tmp_path / "scores", "parquet", 3)
    ann = ["a2", "a3", "a1"]
    s = summarize_long_dask(
        str(tmp_path / "answers"),
        scores=str(tmp_path / "scores"),
        truth="truth",
        annotators=ann,
        blocksize=6000,
        npartitions=7,
    )
    ref = reference(rows, scores, ann, groups=5, bins=10)
    assert s.equals(ref)
    np.testing.assert_array_equal(s.n_unannotated.values, ref.n_unannotated.values)
    assert ref.n_unannotated.values.sum() > 0  # unannotated items come from the score table only
    # default annotator order: sorted names, found by one extra pass
    assert summarize_long_dask(
        str(tmp_path / "answers"), scores=str(tmp_path / "scores")
    ).annotators == ["a1", "a2", "a3"]


def test_score_column_in_answer_rows_and_dask_input(long_table, local_cluster):
    rows, scores = long_table
    with_score = rows.merge(scores, on="item")
    ddf = dd.from_pandas(with_score, npartitions=5)
    ann = ["a1", "a2", "a3"]
    ref_data = Annotations.from_long(with_score, score="score", truth="truth")
    ref = summarize(
        Annotations.from_arrays(
            ref_data.score,
            ref_data.labels[:, [ref_data.annotators.index(a) for a in ann]],
            truth=ref_data.truth,
            annotators=ann,
        ),
        groups=[0, 0.3, 0.6, 1],
        bins=4,
    )
    s = summarize_long_dask(ddf, truth="truth", annotators=ann, groups=[0, 0.3, 0.6, 1], bins=4)
    assert s.equals(ref)
    # the same shuffle on a dask.distributed cluster
    s2 = summarize_long_dask(
        ddf, truth="truth", annotators=ann, groups=[0, 0.3, 0.6, 1], bins=4, client=local_cluster
    )
    assert s2.equals(ref)


def test_integer_item_ids_from_parquet(long_table, tmp_path):
    rows, scores = long_table
    rows = rows.assign(item=rows["item"].str[2:].astype(np.int64))
    scores = scores.assign(item=scores["item"].str[2:].astype(np.int64))
    write_parts(rows, tmp_path / "a", "parquet", 4)
    write_parts(scores, tmp_path / "s", "parquet", 2)
    s = summarize_long_dask(
        str(tmp_path / "a"), scores=str(tmp_path / "s"), annotators=["a1", "a2", "a3"]
    )
    data = Annotations.from_long(rows, score=scores.set_index("item")["score"])
    ref = summarize(
        Annotations.from_arrays(
            data.score,
            data.labels[:, [data.annotators.index(a) for a in ["a1", "a2", "a3"]]],
            annotators=["a1", "a2", "a3"],
        )
    )
    assert s.equals(ref)


def test_contradictory_rows_refused_with_item_annotator_and_files(long_table, tmp_path):
    rows, scores = long_table
    write_parts(rows, tmp_path / "answers", "csv", 3)
    victim = rows.iloc[[10]].assign(label=lambda f: 1 - f["label"])
    victim.to_csv(tmp_path / "answers" / "late-export.csv", index=False)
    scores.to_csv(tmp_path / "scores.csv", index=False)
    with pytest.raises(DataError) as err:
        summarize_long_dask(
            str(tmp_path / "answers"),
            scores=str(tmp_path / "scores.csv"),
            annotators=["a1", "a2", "a3"],
        )
    msg = str(err.value)
    item, ann = victim["item"].iloc[0], victim["annotator"].iloc[0]
    assert f"item {item!r}" in msg and f"annotator {ann!r}" in msg and "different labels" in msg
    assert "late-export.csv', line 2" in msg and "part-000.csv', line 12" in msg


def test_other_long_refusals(long_table, tmp_path):
    rows, scores = long_table
    counts = rows["item"].value_counts()
    victim = counts.index[counts >= 2][0]  # an item with at least two answers
    rows.to_csv(tmp_path / "answers.csv", index=False)
    scores[scores["item"] != victim].to_csv(tmp_path / "scores.csv", index=False)
    with pytest.raises(
        DataError, match=f"item '{victim}' has answers .* but no row in the score table"
    ):
        summarize_long_dask(str(tmp_path / "answers.csv"), scores=str(tmp_path / "scores.csv"))
    pd.concat([scores, scores.iloc[[5]]]).to_csv(tmp_path / "scores.csv", index=False)
    with pytest.raises(
        DataError, match=f"item '{scores['item'].iloc[5]}' has two rows in the score table"
    ):
        summarize_long_dask(str(tmp_path / "answers.csv"), scores=str(tmp_path / "scores.csv"))
    bad = rows.copy()
    bad.loc[7, "label"] = 2
    bad.to_csv(tmp_path / "answers.csv", index=False)
    with pytest.raises(
        DataError, match=r"answers\.csv', line 9: label column 'label' has the value 2"
    ):
        summarize_long_dask(str(tmp_path / "answers.csv"), scores=str(tmp_path / "scores.csv"))
    rows.to_csv(tmp_path / "answers.csv", index=False)
    with pytest.raises(DataError, match="'a1' is not among the annotators"):
        summarize_long_dask(
            str(tmp_path / "answers.csv"),
            scores=str(tmp_path / "scores.csv"),
            annotators=["a2", "a3"],
        )
    differing = rows.merge(scores, on="item")
    mine = differing["item"] == victim
    differing.loc[mine, "score"] = np.linspace(0.1, 0.2, int(mine.sum()))
    with pytest.raises(DataError, match=f"item '{victim}' has different score values on its rows"):
        summarize_long_dask(dd.from_pandas(differing, npartitions=3))


def test_cli_gold_with_long_out_of_core(tmp_path):
    """``bayescal audit FOLDER --long ... --gold known`` (binary): one shuffle, gold counted."""
    case = make_case(2)
    rows, table = long_rows(case)
    write_parts(rows.merge(table, on="item").drop(columns=["truth"]), tmp_path / "long", "csv", 3)
    folder = str(tmp_path / "long" / "*.csv")
    counts = audit_gold_counts(tmp_path, folder, "--long", "item,annotator,label")
    assert counts == summarize(case.data).binary.n_gold
