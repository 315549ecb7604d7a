"""MulticlassAnnotations: constructors, readers and validation that names every problem."""

import numpy as np
import pandas as pd
import pytest

from bayescal.data.multiclass import MulticlassAnnotations, load_multiclass_csv
from bayescal.errors import DataError

P = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]
L = [[0, 0, np.nan], [2, 1, 2], [np.nan, np.nan, np.nan]]


def test_from_arrays_round_trip_and_facts():
    d = MulticlassAnnotations.from_arrays(
        P, L, truth=[0, 2, 1], annotators=["u", "v", "w"], classes=["cat", "dog", "fox"]
    )
    assert d.n_items == 3 and d.n_classes == 3 and d.n_unannotated == 1
    assert d.predicted.tolist() == [0, 2, 1]
    np.testing.assert_array_equal(d.confidence, [0.7, 0.6, 0.5])
    facts = d.describe()
    assert facts["answer_counts"]["v"] == {"cat": 1, "dog": 1, "fox": 0}
    assert facts["unanimous_fraction"] == 0.5
    again = MulticlassAnnotations.from_dataset(d.dataset)
    assert again.data_hash() == d.data_hash()
    assert "3 classes (cat, dog, fox)" in repr(d)
    sub = d.subset([1])
    assert sub.n_items == 1 and sub.truth.tolist() == [2]


@pytest.mark.parametrize(
    "probs, match",
    [
        ([[0.7, 0.2, 0.2], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]], r"sum to one.*item\(s\) 0"),
        ([[0.7, 0.2, 0.1], [0.1, np.nan, 0.6], [0.2, 0.5, 0.3]], r"non-finite.*item\(s\) 1"),
        ([[2.0, -0.5, -0.5], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]], "not logits"),
        ([[1.0], [1.0], [1.0]], "at least two"),
        ([0.7, 0.2, 0.1], "2-D"),
    ],
)
def test_bad_probabilities_are_named(probs, match):
    with pytest.raises(DataError, match=match):
        MulticlassAnnotations.from_arrays(probs, L if np.ndim(probs) == 2 else [[0]])


def test_rounded_probabilities_pass_with_a_stated_tolerance():
    coarse = [[0.33, 0.33, 0.33], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]
    with pytest.raises(DataError, match="sum_tol"):
        MulticlassAnnotations.from_arrays(coarse, L)
    d = MulticlassAnnotations.from_arrays(coarse, L, sum_tol=0.02)
    assert d.probs[0, 0] == 0.33  # kept as given, not renormalised


@pytest.mark.parametrize(
    "labels, match",
    [
        ([[0, 3, np.nan], [2, 1, 2], [0, 0, 0]], "annotator 'v' = 3"),
        ([[0, 1.5, np.nan], [2, 1, 2], [0, 0, 0]], "1.5"),
        ([[0, -1, np.nan], [2, 1, 2], [0, 0, 0]], "-1"),
        ([[np.inf, 1, np.nan], [2, 1, 2], [0, 0, 0]], "inf"),
        ([[np.nan] * 3] * 3, "every label is missing"),
    ],
)
def test_bad_labels_are_named(labels, match):
    with pytest.raises(DataError, match=match):
        MulticlassAnnotations.from_arrays(P, labels, annotators=["u", "v", "w"])


def test_bad_truth_names_and_duplicate_names():
    with pytest.raises(DataError, match=r"class indices 0..2.*item\(s\) 1"):
        MulticlassAnnotations.from_arrays(P, L, truth=[0, 3, 1])
    with pytest.raises(DataError, match="duplicate class"):
        MulticlassAnnotations.from_arrays(P, L, classes=["a", "a", "b"])
    with pytest.raises(DataError, match="3 class names for 2"):
        MulticlassAnnotations.from_arrays([[0.5, 0.5]] * 3, L, classes=["a", "b", "c"])


def test_with_probs_validates_shape():
    d = MulticlassAnnotations.from_arrays(P, L)
    assert d.with_probs(np.full((3, 3), 1 / 3)).probs[0, 0] == pytest.approx(1 / 3)
    with pytest.raises(DataError, match="shape"):
        d.with_probs(np.full((2, 3), 1 / 3))


def test_from_long_ids_as_strings_and_class_names():
    frame = pd.DataFrame(
        {
            "item": [1, 1, "2", 3],
            "annotator": ["u", 7, "u", "7"],
            "label": ["dog", "cat", "fox", "dog"],
            "truth": ["dog", "dog", "fox", "cat"],
        }
    )
    probs = pd.DataFrame(
        [[0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.5, 0.4, 0.1], [0.3, 0.3, 0.4]],
        index=[1, 2, 3, 4],
        columns=["cat", "dog", "fox"],
    )
    truth = {1: "dog", 2: "fox", 3: "cat", 4: "cat"}
    d = MulticlassAnnotations.from_long(frame, probs=probs, truth=truth)
    assert d.annotators == ["u", "7"] and d.classes == ["cat", "dog", "fox"]
    assert list(d.dataset["item"].values) == ["1", "2", "3", "4"]
    np.testing.assert_array_equal(d.labels[:3], [[1, 0], [2, np.nan], [np.nan, 1]])
    assert d.n_unannotated == 1 and d.truth.tolist() == [1, 2, 0, 0]


def test_from_long_refuses_duplicates_unknown_items_and_bad_classes():
    probs = pd.DataFrame([[0.5, 0.5]], index=["a"])
    frame = pd.DataFrame({"item": ["a", "a"], "annotator": ["u", "u"], "label": [0, 1]})
    with pytest.raises(DataError, match="repeat an"):
        MulticlassAnnotations.from_long(frame, probs=probs)
    frame = pd.DataFrame({"item": ["a", "b"], "annotator": ["u", "u"], "label": [0, 1]})
    with pytest.raises(DataError, match="without probabilities.*'b'"):
        MulticlassAnnotations.from_long(frame, probs=probs)
    frame = pd.DataFrame({"item": ["a"], "annotator": ["u"], "label": ["zebra"]})
    with pytest.raises(DataError, match="'zebra'"):
        MulticlassAnnotations.from_long(frame, probs=probs, classes=["x", "y"])


def test_from_long_probability_columns_must_be_constant_per_item():
    frame = pd.DataFrame(
        {
            "item": [1, 1],
            "annotator": ["u", "v"],
            "label": [0, 1],
            "p0": [0.4, 0.5],
            "p1": [0.6, 0.5],
        }
    )
    with pytest.raises(DataError, match="differ between rows"):
        MulticlassAnnotations.from_long(frame, probs=["p0", "p1"])


def _write(tmp_path, text, name="m.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_reader_with_names_truth_and_blanks(tmp_path):
    path = _write(
        tmp_path,
        "id,p_a,p_b,p_c,r1,r2,y\nx,0.7,0.2,0.1,a, ,a\nz,0.1,0.3,0.6,2,c,2\n",
    )
    d = load_multiclass_csv(
        path, probs=["p_a", "p_b", "p_c"], truth="y", item="id", classes=["a", "b", "c"]
    )
    assert d.annotators == ["r1", "r2"]
    np.testing.assert_array_equal(d.labels, [[0, np.nan], [2, 2]])
    assert d.truth.tolist() == [0, 2] and list(d.dataset["item"].values) == ["x", "z"]


@pytest.mark.parametrize(
    "text, match",
    [
        ("p0,p1,r1\n0.5,0.5,0\n0.5,0.6,1\n", "line 3.*sum to 1.1"),
        ("p0,p1,r1\n0.5,0.5,0\n0.5,,1\n", "'p1' is blank at line 3"),
        ("p0,p1,r1\n0.5,0.5,2\n", "'r1' has the value 2 at line 2"),
        ("p0,p1,r1\n0.5,0.5,yes\n", "'yes' at line 2"),
        ("p0,p1,r1,r1\n0.5,0.5,0,1\n", r"\['r1'\] more than once"),
        ("p0,p1,r1\n", "no data rows"),
    ],
)
def test_csv_errors_name_line_column_and_value(tmp_path, text, match):
    with pytest.raises(DataError, match=match):
        load_multiclass_csv(_write(tmp_path, text), probs=["p0", "p1"])


def test_csv_missing_columns_and_files(tmp_path):
    path = _write(tmp_path, "p0,p1,r1\n0.5,0.5,0\n")
    with pytest.raises(DataError, match=r"no column\(s\) \['p2'\]"):
        load_multiclass_csv(path, probs=["p0", "p1", "p2"])
    with pytest.raises(DataError, match="one column per class"):
        load_multiclass_csv(path, probs="p0")
    with pytest.raises(DataError, match="does not exist"):
        load_multiclass_csv(tmp_path / "nope.csv", probs=["p0", "p1"])
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"p0,p1,r1\n0.5,0.5,\xff\n")
    with pytest.raises(DataError, match="UTF-8"):
        load_multiclass_csv(bad, probs=["p0", "p1"])


def test_parquet_reader_matches_csv(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {"p0": [0.7, 0.1], "p1": [0.2, 0.3], "p2": [0.1, 0.6], "r1": [0, 2], "r2": [None, 1.0]}
    )
    frame.to_parquet(tmp_path / "m.parquet")
    frame.to_csv(tmp_path / "m.csv", index=False)
    a = load_multiclass_csv(tmp_path / "m.parquet", probs=["p0", "p1", "p2"])
    b = load_multiclass_csv(tmp_path / "m.csv", probs=["p0", "p1", "p2"])
    assert a.data_hash() == b.data_hash()
    frame.assign(r1=["0", "x"]).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match="'x' at row 1"):
        load_multiclass_csv(tmp_path / "bad.parquet", probs=["p0", "p1", "p2"])


def test_default_class_names_are_indices():
    d = MulticlassAnnotations.from_arrays(P, L)
    assert d.classes == ["0", "1", "2"] and d.annotators == ["a1", "a2", "a3"]
