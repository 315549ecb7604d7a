"""Issue 11 reproducers about values: silent reinterpretation, and the Python API.

Ids are strings as written; text is never read as a missing answer; a value the
library cannot use is refused where it is written, never clipped or replaced.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hostile_helpers import one_line_error

from bayescal import Annotations, load_csv, load_long
from bayescal.errors import BayescalError, DataError
from bayescal.scale import summarize, summarize_long_dask

LONG_IDS = "item,annotator,label,score\n5,1,1,0.9\n05,1.0,0,0.2\n5,01,1,0.9\n05,1,0,0.2\n"


# ------------------------------------------------------------------ ids as written
def test_long_csv_item_and_rater_ids_are_strings_as_written(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text(LONG_IDS)
    d = load_long(p)
    assert d.items.tolist() == ["5", "05"]
    assert d.annotators == ["1", "1.0", "01"]
    # item "05" was answered by raters "1.0" and "1"; nothing was merged
    np.testing.assert_array_equal(np.nan_to_num(d.labels, nan=-1), [[1, -1, 1], [0, 0, -1]])


def test_out_of_core_long_ids_are_strings_as_written(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(LONG_IDS)
    s = summarize_long_dask(str(folder), groups=2, bins=2)
    assert s.n_items == 2 and sorted(s.annotators) == ["01", "1", "1.0"]


def test_blank_rater_is_refused_not_an_annotator_called_nan(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text(LONG_IDS + "5,,0,0.9\n")
    with pytest.raises(DataError, match=r"annotator column 'annotator' is missing \(blank\) at "):
        load_long(p)
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(LONG_IDS + "5,,0,0.9\n")
    with pytest.raises(DataError, match=r"a.csv', line 6: the annotator 'annotator' is missing"):
        summarize_long_dask(str(folder))
    frame = pd.DataFrame(
        {"item": [1, 2], "annotator": ["x", None], "label": [1, 0], "score": [0.2, 0.3]}
    )
    with pytest.raises(DataError, match=r"annotator column 'annotator' is missing .*row 1"):
        Annotations.from_long(frame)


def test_blank_item_and_blank_label_in_long_csv(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\n,a,1,0.5\n")
    with pytest.raises(DataError, match="item column 'item' is missing"):
        load_long(p)
    p.write_text("item,annotator,label,score\ni,a,,0.5\n")
    with pytest.raises(DataError, match="missing answer is a missing row"):
        load_long(p)


def test_long_score_written_two_ways_is_one_value(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\ni,b,0,0.50\n")
    assert load_long(p).score.tolist() == [0.5]
    p.write_text("item,annotator,label,score\ni,a,1,0.5\ni,b,0,0.6\n")
    with pytest.raises(DataError, match=r"score 'score' differs between rows of item 'i': 0.5 at"):
        load_long(p)


def test_repeated_answer_names_both_lines(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\nj,a,1,0.2\ni,a,0,0.5\n")
    with pytest.raises(DataError, match=r"item 'i' / annotator 'a' appears at .*line 2 and at .*4"):
        load_long(p)


@pytest.mark.parametrize(
    "text", ["nan", "NaN", "NA", "null", "inf", "-", "1,5", "0x1", "1_0", "True", "1e400"]
)
def test_text_in_a_label_cell_is_refused_not_missing(tmp_path, text):
    p = tmp_path / "w.csv"
    cell = f'"{text}"' if "," in text else text
    p.write_text(f"score,r1,r2\n0.5,{cell},1\n0.2,0,1\n")
    with pytest.raises(
        DataError, match=r"annotator column 'r1': .* at .*line 2 is not a (finite )?number"
    ):
        load_csv(p)


def test_cell_of_spaces_is_refused_empty_cell_is_missing(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("score,r1,r2\n0.5,,1\n0.2,1, 1 \n")
    d = load_csv(p)
    assert np.isnan(d.labels[0, 0]) and d.labels[1, 1] == 1
    p.write_text("score,r1,r2\n0.5,  ,1\n")
    with pytest.raises(DataError, match=r"'  ' at .*line 2 is not a number"):
        load_csv(p)


def test_number_too_large_for_float64(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("score,r1\n1e400,1\n")
    with pytest.raises(DataError, match="inf at .*line 2 is not a finite number .*too large"):
        load_csv(p)


def test_item_ids_from_a_csv_are_strings_and_duplicates_name_lines(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("id,score,r1\n5,0.5,1\n05,0.2,0\n")
    assert load_csv(p, item="id").items.tolist() == ["5", "05"]
    p.write_text("id,score,r1\n5,0.5,1\n6,0.3,1\n5,0.2,0\n")
    with pytest.raises(DataError, match=r"'5' appears at .*line 2 and at .*line 4"):
        load_csv(p, item="id")


# ------------------------------------------------------------------ Python API
def test_ragged_label_lists():
    with pytest.raises(DataError, match=r"rows have different lengths \(row 0 has 2 entries"):
        Annotations.from_arrays([0.1, 0.2], [[0, 1], [1]])
    with pytest.raises(DataError, match="rows have different lengths"):
        Annotations.from_arrays([0.1, [0.2, 0.3]], [[0, 1], [1, 1]])


@pytest.mark.parametrize(
    "ids,match",
    [
        ([1, "a", 2], "numbers and strings are mixed"),
        ([1, "1", 2], "numbers and strings are mixed"),
        ([1.5, 2.5, 3.5], "must be strings or integers; 1.5"),
        (["a", None, "c"], "missing"),
        ([True, False, True], "must be strings or integers"),
        ([(1, 2), (3, 4), (5, 6)], "1-D|must be strings"),
    ],
)
def test_mixed_or_odd_item_ids(ids, match):
    with pytest.raises(DataError, match=match):
        Annotations.from_arrays([0.1, 0.2, 0.3], [[0], [1], [1]], item=ids)


@pytest.mark.parametrize(
    "group,match",
    [
        ([1, "a", 2], "numbers and strings are mixed"),
        (["a", None, "b"], "missing"),
        ([0.0, np.nan, 1.0], "missing"),
        ([[1], [2], [3]], "1-D|must be strings"),
    ],
)
def test_mixed_or_missing_groups(group, match):
    with pytest.raises(DataError, match=match):
        Annotations.from_arrays([0.1, 0.2, 0.3], [[0], [1], [1]], group=group)


def test_item_ids_of_the_wrong_length_with_a_bad_score():
    with pytest.raises(DataError, match=r"2.0 at item 1 is outside"):
        Annotations.from_arrays([0.1, 2.0], [[0], [1]], item=["a"])
    with pytest.raises(DataError, match=r"item ids must have shape \(2,\)"):
        Annotations.from_arrays([0.1, 0.2], [[0], [1]], item=["a"])


def test_mixed_ids_in_a_long_frame():
    frame = pd.DataFrame(
        {"item": [1, "1"], "annotator": ["x", "y"], "label": [1, 0], "score": [0.2, 0.2]}
    )
    with pytest.raises(DataError, match="item column 'item': numbers and strings are mixed"):
        Annotations.from_long(frame)


def test_none_label_is_a_missing_answer_and_strings_are_refused():
    d = Annotations.from_arrays([0.1, 0.2], [[0, None], [1, 1]])
    assert np.isnan(d.labels[0, 1])
    with pytest.raises(DataError, match="must be numeric; entry 1 is 'x'"):
        Annotations.from_arrays([0.1, 0.2], np.array([[0, "x"], [1, 1]], dtype=object))


def test_boolean_score_is_refused():
    with pytest.raises(DataError, match="score holds booleans"):
        Annotations.from_arrays([True, False], [[0], [1]])


def _dataset():
    return Annotations.from_arrays([0.1, 0.9], [[0, 1], [1, 1]]).dataset


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda ds: ds.rename({"item": "obs"}), "has dims \\('obs',\\); it must have"),
        (lambda ds: ds.assign(label=ds["label"].rename({"annotator": "rater"})), "'label'"),
        (lambda ds: ds.drop_vars("label"), "no variable 'label'"),
        (lambda ds: ds.assign(truth=(("annotator",), [0, 1])), "'truth' has dims"),
        (lambda ds: {"score": ds["score"]}, "expects an xarray.Dataset"),
    ],
)
def test_from_dataset_with_wrong_dims(make, match):
    with pytest.raises(DataError, match=match):
        Annotations.from_dataset(make(_dataset()))


def test_from_dataset_roundtrip_keeps_values():
    ds = _dataset()
    d = Annotations.from_dataset(ds.transpose("annotator", "item"))
    np.testing.assert_array_equal(d.labels, ds["label"].values)


def test_every_api_error_is_a_bayescal_error():
    frame = pd.DataFrame(
        {"item": [1, 2], "annotator": ["a", "b"], "label": [1, 0], "score": [0.1, 0.2]}
    )
    bad_calls = [
        lambda: Annotations.from_arrays([0.1, 0.2], [[0], [1]], item=5),
        lambda: Annotations.from_arrays([0.1, 0.2], [[0], [1]], annotators=5),
        lambda: Annotations.from_arrays([0.1, 0.2], [[0], [1]], group=object()),
        lambda: Annotations.from_long(frame, item=["item"]),
        lambda: Annotations.from_long(frame, score=5),
        lambda: load_csv("x.csv", score=None),
        lambda: Annotations.from_arrays("abc", [[0]]),
        lambda: Annotations.from_arrays([0.5], {"a": 1}),
        lambda: Annotations.from_arrays([0.5], [[0]], annotators="r1"),
        lambda: Annotations.from_long({"item": [1]}),
        lambda: Annotations.from_dataset(xr.Dataset()),
    ]
    for call in bad_calls:
        with pytest.raises(BayescalError):
            call()


def test_cli_names_the_line_of_a_bad_long_value(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("item,annotator,label,score\ni,a,1,0.5\nj,a,2,0.2\n")
    msg = one_line_error(
        ["audit", str(p), "--long", "item,annotator,label", "--out", str(tmp_path / "o")]
    )
    assert "long.csv', line 3" in msg and "2.0" in msg


@pytest.mark.parametrize("text", ["True", "nan", "  ", "0x1"])
def test_out_of_core_cells_follow_the_same_rules(tmp_path, text):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(f"score,r1,r2\n0.1,{text},1\n0.5,1,\n")
    with pytest.raises(
        DataError, match=r"column 'r1': .* at file .*a.csv', line 2 is not a number"
    ):
        summarize(str(folder))
    with pytest.raises(DataError, match=r"annotator column 'r1': .* at .*line 2 is not a number"):
        load_csv(folder / "a.csv")
