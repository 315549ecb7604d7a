"""Long (one row per answer) out-of-core summaries: shuffle on item, pivot, refuse repeats."""

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import pandas as pd  # noqa: E402
from scale_helpers import write_parts  # noqa: E402

from bayescal import Annotations, summarize  # noqa: E402
from bayescal.errors import DataError  # noqa: E402
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
