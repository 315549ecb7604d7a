import numpy as np
import pandas as pd
import pytest

import bayescal as bc
from bayescal import Annotations, load_csv
from bayescal.errors import DataError


def test_from_arrays_roundtrip():
    d = Annotations.from_arrays(
        [0.1, 0.5, 1.0],
        [[0, 1], [np.nan, 1], [np.nan, np.nan]],
        truth=[0, 1, 1],
        annotators=["x", "y"],
    )
    assert d.n_items == 3 and d.n_annotators == 2 and d.annotators == ["x", "y"]
    assert d.n_unannotated == 1
    assert d.dataset["label"].dims == ("item", "annotator")
    assert list(d.dataset["annotator"].values) == ["x", "y"]
    assert d.truth.tolist() == [0, 1, 1]
    np.testing.assert_array_equal(d.answered, [[True, True], [False, True], [False, False]])


def test_mask_and_masked_array_are_missing():
    lab = np.array([[0, 1], [1, 1]])
    d1 = Annotations.from_arrays([0.2, 0.3], lab, mask=np.array([[False, True], [False, False]]))
    d2 = Annotations.from_arrays(
        [0.2, 0.3], np.ma.masked_array(lab, mask=[[False, True], [False, False]])
    )
    np.testing.assert_array_equal(d1.answered, d2.answered)
    assert np.isnan(d1.labels[0, 1]) and np.isnan(d2.labels[0, 1])


def test_bool_labels_accepted():
    d = Annotations.from_arrays([0.2, 0.3], np.array([[True, False], [False, False]]))
    assert d.labels[0, 0] == 1.0


def test_from_long_matches_wide():
    frame = pd.DataFrame(
        {
            "item": ["i1", "i1", "i2", "i3", "i3", "i3"],
            "annotator": ["x", "y", "y", "x", "y", "z"],
            "label": [1, 0, 1, 0, 0, 1],
            "score": [0.9, 0.9, 0.4, 0.1, 0.1, 0.1],
        }
    )
    d = Annotations.from_long(frame)
    assert d.annotators == ["x", "y", "z"]
    np.testing.assert_array_equal(
        np.nan_to_num(d.labels, nan=-1), [[1, 0, -1], [-1, 1, -1], [0, 0, 1]]
    )
    np.testing.assert_allclose(d.score, [0.9, 0.4, 0.1])


def test_from_long_score_mapping_keeps_unannotated_items():
    frame = pd.DataFrame({"item": [1, 2], "annotator": ["x", "x"], "label": [1, 0]})
    d = Annotations.from_long(frame, score={1: 0.3, 2: 0.6, 3: 0.9})
    assert d.n_items == 3 and d.n_unannotated == 1


def test_load_csv_blank_is_missing(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("id,score,r1,r2,y\na,0.1,0,,0\nb,0.8,1,1,1\nc,0.5,,,1\n")
    d = load_csv(p, score="score", annotators=["r1", "r2"], truth="y", item="id")
    assert d.n_items == 3 and d.n_unannotated == 1
    assert np.isnan(d.labels[0, 1])
    assert list(d.dataset["item"].values) == ["a", "b", "c"]
    # default annotators: every other column
    d2 = load_csv(p, truth="y", item="id")
    assert d2.annotators == ["r1", "r2"]


def test_summary_excludes_unannotated():
    d = Annotations.from_arrays([0.1, 0.9], [[1, 0], [np.nan, np.nan]])
    s = bc.summarize(d, groups=2, bins=2)
    assert s.n_items == 1 and int(s.n_unannotated.sum()) == 1
    assert float(s.binary.bin_count.sum()) == 1


def test_describe_and_repr():
    d = Annotations.from_arrays([0.1, 0.9, 0.5], [[1, 1], [0, 1], [0, np.nan]])
    info = d.describe()
    assert info["unanimous_fraction"] == pytest.approx(0.5)
    assert "3 items" in repr(d)
    assert len(d.data_hash()) == 64


# ---------------------------------------------------------------- bad inputs
GOOD_Z = [0.1, 0.5, 0.9]
GOOD_L = [[0, 1, 1], [1, 1, 0], [0, 0, 1]]

BAD_ARRAYS = [
    ("nan score", dict(score=[0.1, np.nan, 0.9]), "non-finite"),
    ("inf score", dict(score=[0.1, np.inf, 0.9]), "non-finite"),
    ("score above 1", dict(score=[0.1, 1.5, 0.9]), "outside \\[0, 1\\]"),
    ("negative score", dict(score=[-0.1, 0.5, 0.9]), "outside \\[0, 1\\]"),
    ("logit scores", dict(score=[-2.0, 0.3, 3.0]), "logits"),
    ("string scores", dict(score=["a", "b", "c"]), "numeric"),
    ("2-D scores", dict(score=[[0.1, 0.5, 0.9]]), "1-D"),
    ("empty scores", dict(score=[], labels=np.zeros((0, 3))), "empty"),
    ("label 2", dict(labels=[[0, 2, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("label -1", dict(labels=[[0, -1, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("label 0.5", dict(labels=[[0, 0.5, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("string labels", dict(labels=[["yes", "no", "no"]] * 3), "numeric"),
    ("inf label", dict(labels=[[0, np.inf, 1], [1, 1, 0], [0, 0, 1]]), "has inf at item 0"),
    ("1-D labels", dict(labels=[0, 1, 1]), "2-D"),
    ("3-D labels", dict(labels=np.zeros((3, 2, 2))), "2-D"),
    ("row mismatch", dict(labels=[[0, 1, 1], [1, 1, 0]]), "rows"),
    ("no annotator columns", dict(labels=np.zeros((3, 0))), "no annotator"),
    ("all missing", dict(labels=np.full((3, 3), np.nan)), "every label is missing"),
    ("duplicate names", dict(annotators=["x", "y", "x"]), "duplicate"),
    ("wrong name count", dict(annotators=["x", "y"]), "names"),
    ("empty name", dict(annotators=["x", " ", "z"]), "non-empty"),
    ("truth 2", dict(truth=[0, 2, 1]), "0 or 1"),
    ("truth nan", dict(truth=[0, np.nan, 1]), "missing"),
    ("truth length", dict(truth=[0, 1]), "shape"),
    ("mask shape", dict(mask=np.zeros((3, 2), bool)), "mask"),
    ("mask dtype", dict(mask=np.zeros((3, 3))), "boolean"),
    ("duplicate item ids", dict(item=["a", "a", "b"]), "unique"),
    ("complex scores", dict(score=np.array([0.1, 0.5, 0.9]) + 0j), "real"),
    ("group nan", dict(group=[0.0, np.nan, 1.0]), "group"),
]


@pytest.mark.parametrize("name,kwargs,match", BAD_ARRAYS, ids=[b[0] for b in BAD_ARRAYS])
def test_bad_arrays_raise_named_errors(name, kwargs, match):
    args = dict(score=GOOD_Z, labels=GOOD_L)
    args.update(kwargs)
    score, labels = args.pop("score"), args.pop("labels")
    with pytest.raises(DataError, match=match):
        Annotations.from_arrays(score, labels, **args)


BAD_LONG = [
    (
        "missing column",
        pd.DataFrame({"item": [1], "label": [1], "score": [0.2]}),
        "no column 'annotator'",
    ),
    ("empty", pd.DataFrame({"item": [], "annotator": [], "label": [], "score": []}), "empty"),
    (
        "contradicting rows",
        pd.DataFrame(
            {"item": [1, 1], "annotator": ["x", "x"], "label": [1, 0], "score": [0.2, 0.2]}
        ),
        "one label per item",
    ),
    (
        "score varies within item",
        pd.DataFrame(
            {"item": [1, 1], "annotator": ["x", "y"], "label": [1, 0], "score": [0.2, 0.3]}
        ),
        "differs",
    ),
    (
        "blank label",
        pd.DataFrame(
            {"item": [1, 2], "annotator": ["x", "x"], "label": [1, np.nan], "score": [0.2, 0.3]}
        ),
        "missing row",
    ),
    (
        "label 3",
        pd.DataFrame(
            {"item": [1, 2], "annotator": ["x", "x"], "label": [1, 3], "score": [0.2, 0.3]}
        ),
        "0, 1 or missing",
    ),
]


@pytest.mark.parametrize("name,frame,match", BAD_LONG, ids=[b[0] for b in BAD_LONG])
def test_bad_long_tables(name, frame, match):
    with pytest.raises(DataError, match=match):
        Annotations.from_long(frame)


def test_from_long_needs_dataframe():
    with pytest.raises(DataError, match="DataFrame"):
        Annotations.from_long([[1, "x", 1]])


BAD_CSV = [
    (
        "non-numeric score",
        "score,r1,r2\n0.1,0,1\nabc,1,1\n",
        "'abc' at '.*bad.csv', line 3 is not a number",
    ),
    ("label 2", "score,r1,r2\n0.1,0,2\n0.4,1,1\n", "'r2' has 2.0 at '.*bad.csv', line 2"),
    ("blank score", "score,r1,r2\n,0,1\n0.4,1,1\n", "blank at '.*bad.csv', line 2"),
    ("score out of range", "score,r1,r2\n0.1,0,1\n1.4,1,1\n", "outside \\[0, 1\\]"),
    ("duplicated column", "score,r1,r1\n0.1,0,1\n0.4,1,1\n", "twice"),
    ("empty file", "", "empty"),
    ("header only", "score,r1,r2\n", "no data rows"),
    ("text label", "score,r1,r2\n0.1,yes,1\n0.4,1,1\n", "'yes' at .*line 2 is not a number"),
]


@pytest.mark.parametrize("name,text,match", BAD_CSV, ids=[b[0] for b in BAD_CSV])
def test_bad_csv(tmp_path, name, text, match):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(DataError, match=match):
        load_csv(p)


def test_csv_missing_columns(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("score,r1,r2\n0.1,0,1\n")
    with pytest.raises(DataError, match="no annotator column"):
        load_csv(p, annotators=["r1", "r9"])
    with pytest.raises(DataError, match="no column 'prob'"):
        load_csv(p, score="prob")
    with pytest.raises(DataError, match="does not exist"):
        load_csv(tmp_path / "nope.csv")
