"""The one container (any C >= 2): builders, readers, validation that names every problem.

Merged from the v0.2 binary container tests, the multiclass container tests and the data
parts of the hostile-input tests (issue 21, layer 1); behaviours that hold for both binary
and multiclass data are parametrised over C = 2 and C = 3.
"""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayescal as bc
from bayescal import Annotations, MulticlassAnnotations, load_csv, load_long, load_table
from bayescal.data import load_multiclass_csv
from bayescal.errors import BayescalError, ConfigError, DataError

P3 = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]
L3 = [[0, 0, np.nan], [2, 1, 2], [np.nan, np.nan, np.nan]]
Z = [0.1, 0.5, 1.0]
L2 = [[0, 1, np.nan], [np.nan, 1, 1], [np.nan, np.nan, np.nan]]


def _data(c, **kw):
    """A three-item container with one unannotated item: binary (score) or C = 3."""
    if c == 2:
        return Annotations.from_arrays(Z, L2, annotators=["u", "v", "w"], **kw)
    return Annotations.from_arrays(P3, L3, annotators=["u", "v", "w"], **kw)


def _write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------- one class, every C
def test_multiclass_annotations_is_the_one_container():
    assert MulticlassAnnotations is Annotations is bc.MulticlassAnnotations
    assert "MulticlassAnnotations" in bc.__all__
    from bayescal.data.multiclass import MulticlassAnnotations as old_path

    assert old_path is Annotations


@pytest.mark.parametrize("c", [2, 3])
def test_from_arrays_round_trip_and_facts(c):
    d = _data(c, truth=[0, 1, 1], item=["a", "b", "c"])
    assert (d.n_items, d.n_annotators, d.n_classes, d.n_unannotated) == (3, 3, c, 1)
    assert d.dataset["probs"].dims == ("item", "class")
    assert d.dataset["label"].dims == ("item", "annotator")
    assert d.annotators == ["u", "v", "w"] and d.items.tolist() == ["a", "b", "c"]
    assert d.classes == [str(k) for k in range(c)]
    assert d.truth.tolist() == [0, 1, 1] and d.truth.dtype == np.int32
    assert d.labels.dtype == np.float32 and d.probs.dtype == np.float64
    np.testing.assert_array_equal(d.answered, ~np.isnan(np.array(L2 if c == 2 else L3)))
    np.testing.assert_array_equal(d.predicted, d.probs.argmax(axis=1))
    np.testing.assert_array_equal(d.confidence, d.probs.max(axis=1))
    again = Annotations.from_dataset(d.dataset)
    assert again.data_hash() == d.data_hash() and len(d.data_hash()) == 64
    sub = d.subset([1])
    assert sub.n_items == 1 and sub.truth.tolist() == [1] and sub.n_classes == c
    assert d.subset(np.array([True, False, True])).items.tolist() == ["a", "c"]
    with pytest.raises(DataError, match="selects no items"):
        d.subset([])


def test_binary_probs_column_1_is_the_score_bit_for_bit():
    rng = np.random.default_rng(0)
    z = rng.random(1000) ** 3  # many values whose 1 - (1 - z) differs from z
    d = Annotations.from_arrays(z, (rng.random((1000, 2)) < 0.5).astype(float))
    assert d.n_classes == 2 and d.classes == ["0", "1"]
    assert d.score.tobytes() == z.tobytes() and d.probs[:, 1].tobytes() == z.tobytes()
    np.testing.assert_array_equal(d.probs[:, 0], 1.0 - z)
    assert Annotations.from_arrays(score=z, labels=d.labels).data_hash() == d.data_hash()
    assert d.subset(np.arange(10)).score.tobytes() == z[:10].tobytes()
    assert d.score.flags.c_contiguous and not d.score.flags.writeable
    # a C = 2 container built from probs is binary data too: its score is probs[:, 1]
    p = np.column_stack([1 - z, z])
    two = Annotations.from_arrays(p, d.labels)
    assert two.n_classes == 2 and two.score.tobytes() == z.tobytes()


def test_score_view_refuses_more_than_two_classes():
    d = _data(3)
    with pytest.raises(DataError, match="binary view .* these data have 3 classes .*Use .probs"):
        _ = d.score
    with pytest.raises(DataError, match="3 classes"):
        d.with_score([0.1, 0.2, 0.3])


def test_with_score_and_with_probs_validate():
    d = _data(2)
    e = d.with_score([0.3, 0.2, 0.1])
    assert e.score.tolist() == [0.3, 0.2, 0.1] and np.array_equal(e.labels, d.labels, True)
    with pytest.raises(DataError, match="new score has 2 items"):
        d.with_score([0.1, 0.2])
    m = _data(3)
    assert m.with_probs(np.full((3, 3), 1 / 3)).probs[0, 0] == pytest.approx(1 / 3)
    with pytest.raises(DataError, match="shape"):
        m.with_probs(np.full((2, 3), 1 / 3))


def test_score_and_probs_together_or_neither_are_refused():
    with pytest.raises(ConfigError, match="either score= .* or probs="):
        Annotations.from_arrays(P3, L3, score=Z)
    with pytest.raises(DataError, match="no probabilities"):
        Annotations.from_arrays(labels=L3)
    with pytest.raises(DataError, match="no labels"):
        Annotations.from_arrays(P3)


def test_mask_and_masked_array_are_missing():
    lab = np.array([[0, 1], [1, 1]])
    d1 = Annotations.from_arrays([0.2, 0.3], lab, mask=np.array([[False, True], [False, False]]))
    d2 = Annotations.from_arrays(
        [0.2, 0.3], np.ma.masked_array(lab, mask=[[False, True], [False, False]])
    )
    np.testing.assert_array_equal(d1.answered, d2.answered)
    assert np.isnan(d1.labels[0, 1]) and np.isnan(d2.labels[0, 1])


def test_masked_entries_of_other_arrays_are_missing_gold_or_refused():
    """Only labels honoured a mask: a masked score was read at its hidden value and masked
    gold cells became gold items of class 0 (hostile re-check, issue 23). Gold: masked is
    'not a gold item'; a score, probability, truth, id or group cannot be missing."""
    z = np.array([0.2, 0.3, 0.7, 0.9])
    lab = np.array([[0, 1], [1, 1], [1, 0], [1, 1]])
    gold = np.ma.masked_array([1.0, 0.0, 0.0, 0.0], mask=[False, True, True, True])
    assert Annotations.from_arrays(z, lab, gold=gold).n_gold == 1
    hidden = np.ma.masked_array(z, mask=[False, False, True, False])
    with pytest.raises(DataError, match=r"score has 1 masked entry \(the first at item 2\)"):
        Annotations.from_arrays(hidden, lab)
    with pytest.raises(DataError, match="truth has 1 masked entry"):
        Annotations.from_arrays(z, lab, truth=np.ma.masked_array([0, 1, 1, 1], mask=[0, 0, 0, 1]))
    with pytest.raises(DataError, match="item id has 1 masked entry"):
        Annotations.from_arrays(z, lab, item=np.ma.masked_array([5, 6, 7, 8], mask=[1, 0, 0, 0]))
    probs = np.ma.masked_array(np.column_stack([1 - z, z]), mask=[[0, 0], [0, 1], [0, 0], [0, 0]])
    with pytest.raises(DataError, match="probs has 1 masked entry .*item 1"):
        Annotations.from_arrays(probs, lab)
    # nothing masked: the values as given
    assert Annotations.from_arrays(np.ma.masked_array(z), lab).n_items == 4


def test_bool_and_none_labels():
    d = Annotations.from_arrays([0.2, 0.3], np.array([[True, False], [False, False]]))
    assert d.labels[0, 0] == 1.0
    d = Annotations.from_arrays([0.1, 0.2], [[0, None], [1, 1]])
    assert np.isnan(d.labels[0, 1])
    text = "'x' is text, so a class name, but no class names were given: pass classes="
    with pytest.raises(DataError, match=text):
        Annotations.from_arrays([0.1, 0.2], np.array([[0, "x"], [1, 1]], dtype=object))


def test_rounded_probabilities_pass_with_a_stated_tolerance():
    coarse = [[0.33, 0.33, 0.33], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]
    with pytest.raises(DataError, match="sum_tol"):
        Annotations.from_arrays(coarse, L3)
    d = Annotations.from_arrays(coarse, L3, sum_tol=0.02)
    assert d.probs[0, 0] == 0.33  # kept as given, not renormalised
    with pytest.raises(ConfigError, match="sum_tol must be a number"):
        Annotations.from_arrays(coarse, L3, sum_tol=2)


# ---------------------------------------------------------------- class names
@pytest.mark.parametrize("c", [2, 3])
def test_class_names_in_labels_truth_and_gold(c):
    names = ["cat", "dog", "fox"][:c]
    probs = np.array(P3)[:, :c] / np.array(P3)[:, :c].sum(axis=1, keepdims=True)
    labels = [["cat", "dog", None], [names[-1], "dog", np.nan], [None, None, None]]
    d = Annotations.from_arrays(
        probs, labels, classes=names, truth=["dog", "cat", names[-1]], gold=[np.nan, "cat", None]
    )
    assert d.classes == names and d.n_classes == c
    np.testing.assert_array_equal(d.labels[:2], [[0, 1, np.nan], [c - 1, 1, np.nan]])
    assert d.truth.tolist() == [1, 0, c - 1] and d.n_gold == 1 and d.gold[1] == 0
    same = Annotations.from_arrays(probs, [[0, 1, None], [c - 1, 1, None], [None] * 3])
    np.testing.assert_array_equal(same.labels, d.labels)  # indices and names mix freely
    with pytest.raises(DataError, match="'zebra' at item 1, column 0 is not a class name"):
        Annotations.from_arrays(probs, [[0, 1, 1], ["zebra", 1, 1], [0, 0, 0]], classes=names)
    with pytest.raises(DataError, match="no class names were given: pass classes="):
        Annotations.from_arrays(probs, labels)


def test_class_names_that_are_other_numbers_make_indices_ambiguous():
    with pytest.raises(DataError, match="could be a class index or a class name"):
        Annotations.from_arrays(P3, [[1, 2, 3]] * 3, classes=["1", "2", "3"])
    d = Annotations.from_arrays(P3, [["1", "2", "3"]] * 3, classes=["1", "2", "3"])
    assert d.labels[0].tolist() == [0, 1, 2]


def test_duplicated_or_miscounted_class_names():
    with pytest.raises(DataError, match=r"duplicated class name\(s\) \['a'\]"):
        Annotations.from_arrays(P3, L3, classes=["a", "a", "b"])
    with pytest.raises(DataError, match="3 class names for 2"):
        Annotations.from_arrays([[0.5, 0.5]] * 3, [[0]] * 3, classes=["a", "b", "c"])


# ---------------------------------------------------------------- bad arrays
GOOD_Z = [0.1, 0.5, 0.9]
GOOD_L = [[0, 1, 1], [1, 1, 0], [0, 0, 1]]

BAD_BINARY = [
    ("nan score", dict(score=[0.1, np.nan, 0.9]), "non-finite"),
    ("inf score", dict(score=[0.1, np.inf, 0.9]), "non-finite"),
    ("score above 1", dict(score=[0.1, 1.5, 0.9]), "outside \\[0, 1\\]"),
    ("negative score", dict(score=[-0.1, 0.5, 0.9]), "outside \\[0, 1\\]"),
    ("logit scores", dict(score=[-2.0, 0.3, 3.0]), "logits"),
    ("string scores", dict(score=["a", "b", "c"]), "numeric"),
    ("2-D score=", dict(score=[[0.1, 0.5, 0.9]]), "1-D"),
    ("empty scores", dict(score=[], labels=np.zeros((0, 3))), "empty"),
    ("label 2", dict(labels=[[0, 2, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("label -1", dict(labels=[[0, -1, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("label 0.5", dict(labels=[[0, 0.5, 1], [1, 1, 0], [0, 0, 1]]), "0, 1 or missing"),
    ("string labels", dict(labels=[["yes", "no", "no"]] * 3), "pass classes="),
    ("inf label", dict(labels=[[0, np.inf, 1], [1, 1, 0], [0, 0, 1]]), "has inf at item 0"),
    ("1-D labels", dict(labels=[0, 1, 1]), "2-D"),
    ("3-D labels", dict(labels=np.zeros((3, 2, 2))), "2-D"),
    ("row mismatch", dict(labels=[[0, 1, 1], [1, 1, 0]]), "2 rows but there are 3 scores"),
    ("no annotator columns", dict(labels=np.zeros((3, 0))), "no annotator"),
    ("all missing", dict(labels=np.full((3, 3), np.nan)), "every label is missing"),
    ("duplicate names", dict(annotators=["x", "y", "x"]), "duplicate annotator"),
    ("wrong name count", dict(annotators=["x", "y"]), "names"),
    ("empty name", dict(annotators=["x", " ", "z"]), "non-empty"),
    ("truth 2", dict(truth=[0, 2, 1]), "0 or 1"),
    ("truth nan", dict(truth=[0, np.nan, 1]), "missing"),
    ("truth length", dict(truth=[0, 1]), "shape"),
    ("gold 2", dict(gold=[0, 2, np.nan]), "not 0 or 1"),
    ("mask shape", dict(mask=np.zeros((3, 2), bool)), "mask"),
    ("mask dtype", dict(mask=np.zeros((3, 3))), "boolean"),
    ("duplicate item ids", dict(item=["a", "a", "b"]), "unique"),
    ("complex scores", dict(score=np.array([0.1, 0.5, 0.9]) + 0j), "real"),
    ("group nan", dict(group=[0.0, np.nan, 1.0]), "group"),
    ("ragged labels", dict(score=[0.1, 0.2], labels=[[0, 1], [1]]), "row 0 has 2 entries"),
    ("ragged score", dict(score=[0.1, [0.2, 0.3]], labels=[[0, 1], [1, 1]]), "different lengths"),
    ("boolean score", dict(score=[True, False], labels=[[0], [1]]), "score holds booleans"),
]


@pytest.mark.parametrize("name,kwargs,match", BAD_BINARY, ids=[b[0] for b in BAD_BINARY])
def test_bad_binary_arrays_raise_named_errors(name, kwargs, match):
    args = dict(score=GOOD_Z, labels=GOOD_L)
    args.update(kwargs)
    with pytest.raises(DataError, match=match):
        Annotations.from_arrays(score=args.pop("score"), labels=args.pop("labels"), **args)


BAD_MULTICLASS = [
    ("row sum", dict(probs=[[0.7, 0.2, 0.2], *P3[1:]]), r"sum to one.*at item 0 .*sums to 1.1"),
    ("nan prob", dict(probs=[P3[0], [0.1, np.nan, 0.6], P3[2]]), "non-finite .*at item 1"),
    ("logits", dict(probs=[[2.0, -0.5, -0.5], *P3[1:]]), "not logits"),
    ("one column", dict(probs=[[1.0]] * 3), "at least two"),
    ("label 3", dict(labels=[[0, 3, np.nan], [2, 1, 2], [0, 0, 0]]), "annotator 'v' has 3.0"),
    ("label 1.5", dict(labels=[[0, 1.5, np.nan], [2, 1, 2], [0, 0, 0]]), "0..2 .*1.5"),
    ("label -1", dict(labels=[[0, -1, np.nan], [2, 1, 2], [0, 0, 0]]), "-1"),
    ("label inf", dict(labels=[[np.inf, 1, np.nan], [2, 1, 2], [0, 0, 0]]), "inf"),
    ("all missing", dict(labels=[[np.nan] * 3] * 3), "every label is missing"),
    ("row mismatch", dict(labels=[[0, 1, 1]]), "1 rows but there are 3 probability rows"),
    ("truth 3", dict(truth=[0, 3, 1]), r"3.0 at item 1 is not a class index 0..2"),
    ("gold 1.5", dict(gold=[1.5, np.nan, np.nan]), "1.5 at item 0 is not a class index 0..2"),
]


@pytest.mark.parametrize("name,kwargs,match", BAD_MULTICLASS, ids=[b[0] for b in BAD_MULTICLASS])
def test_bad_multiclass_arrays_raise_named_errors(name, kwargs, match):
    args = dict(probs=P3, labels=L3, annotators=["u", "v", "w"])
    args.update(kwargs)
    with pytest.raises(DataError, match=match):
        Annotations.from_arrays(args.pop("probs"), args.pop("labels"), **args)


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
@pytest.mark.parametrize("c", [2, 3])
def test_mixed_or_odd_item_ids(ids, match, c):
    with pytest.raises(DataError, match=match):
        _data(c, item=ids)


@pytest.mark.parametrize(
    "group,match",
    [
        ([1, "a", 2], "numbers and strings are mixed"),
        (["a", None, "b"], "missing"),
        ([0.0, np.nan, 1.0], "missing"),
        ([[1], [2], [3]], "1-D|must be strings"),
    ],
)
@pytest.mark.parametrize("c", [2, 3])
def test_mixed_or_missing_groups(group, match, c):
    with pytest.raises(DataError, match=match):
        _data(c, group=group)


def test_item_ids_of_the_wrong_length_with_a_bad_score():
    with pytest.raises(DataError, match=r"2.0 at item 1 is outside"):
        Annotations.from_arrays([0.1, 2.0], [[0], [1]], item=["a"])
    with pytest.raises(DataError, match=r"item ids must have shape \(2,\)"):
        Annotations.from_arrays([0.1, 0.2], [[0], [1]], item=["a"])


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
        lambda: load_csv("x.csv", probs="p0"),
        lambda: Annotations.from_arrays("abc", [[0]]),
        lambda: Annotations.from_arrays([0.5], {"a": 1}),
        lambda: Annotations.from_arrays([0.5], [[0]], annotators="r1"),
        lambda: Annotations.from_arrays(P3, L3, classes="abc"),
        lambda: Annotations.from_long({"item": [1]}),
        lambda: Annotations.from_dataset(xr.Dataset()),
    ]
    for call in bad_calls:
        with pytest.raises(BayescalError):
            call()


# ---------------------------------------------------------------- from_dataset
def _dataset(c=2):
    return _data(c).dataset


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda ds: ds.rename({"item": "obs"}), r"has dims \('obs', 'class'\); it must have"),
        (lambda ds: ds.assign(label=ds["label"].rename({"annotator": "rater"})), "'label'"),
        (lambda ds: ds.drop_vars("label"), "no variable 'label'"),
        (lambda ds: ds.drop_vars("probs"), "no variable 'probs'"),
        (lambda ds: ds.assign(truth=(("annotator",), [0, 1, 1])), "'truth' has dims"),
        (lambda ds: ds.assign(score=(("item",), [0.1, 0.2, 0.3])), "both 'probs' and 'score'"),
        (lambda ds: {"probs": ds["probs"]}, "expects an xarray.Dataset"),
    ],
)
def test_from_dataset_with_wrong_layout(make, match):
    with pytest.raises(DataError, match=match):
        Annotations.from_dataset(make(_dataset()))


@pytest.mark.parametrize("c", [2, 3])
def test_from_dataset_keeps_values_in_any_dim_order(c):
    ds = _dataset(c)
    d = Annotations.from_dataset(ds.transpose("annotator", "class", "item"))
    np.testing.assert_array_equal(d.labels, ds["label"].values)
    np.testing.assert_array_equal(d.probs, ds["probs"].values)


def test_from_dataset_reads_the_v02_binary_layout():
    d = _data(2, truth=[0, 1, 1])
    old = xr.Dataset(
        {"score": (("item",), d.score), "label": (("item", "annotator"), d.labels)},
        coords={"item": d.items, "annotator": d.annotators},
    ).assign(truth=(("item",), d.truth.astype(np.int8)))
    again = Annotations.from_dataset(old)
    assert again.data_hash() == d.data_hash() and again.classes == ["0", "1"]


# ---------------------------------------------------------------- long tables
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
    p = frame.assign(p0=1 - frame["score"], p1=frame["score"]).drop(columns="score")
    both = Annotations.from_long(p, probs=["p0", "p1"])
    assert both.n_classes == 2 and both.classes == ["p0", "p1"]
    np.testing.assert_array_equal(both.labels, d.labels)
    assert both.score.tolist() == d.score.tolist()


def test_from_long_score_mapping_keeps_unannotated_items():
    frame = pd.DataFrame({"item": [1, 2], "annotator": ["x", "x"], "label": [1, 0]})
    d = Annotations.from_long(frame, score={1: 0.3, 2: 0.6, 3: 0.9})
    assert d.n_items == 3 and d.n_unannotated == 1


def test_from_long_with_a_probability_table_class_names_and_truth():
    frame = pd.DataFrame(
        {
            "item": [1, 1, 2, 3],
            "annotator": ["u", "7", "u", "7"],
            "label": ["dog", "cat", "fox", "dog"],
        }
    )
    probs = pd.DataFrame(
        [[0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.5, 0.4, 0.1], [0.3, 0.3, 0.4]],
        index=[1, 2, 3, 4],
        columns=["cat", "dog", "fox"],
    )
    truth = {1: "dog", 2: "fox", 3: "cat", 4: "cat"}
    d = Annotations.from_long(frame, probs=probs, truth=truth, classes=["cat", "dog", "fox"])
    assert d.annotators == ["u", "7"] and d.classes == ["cat", "dog", "fox"]
    assert d.items.tolist() == [1, 2, 3, 4]  # ids exactly as given
    np.testing.assert_array_equal(d.labels[:3], [[1, 0], [2, np.nan], [np.nan, 1]])
    assert d.n_unannotated == 1 and d.truth.tolist() == [1, 2, 0, 0]
    assert Annotations.from_long(frame, probs=probs, classes=d.classes).classes == d.classes


def test_from_long_probability_columns_must_be_constant_per_item():
    frame = pd.DataFrame(
        {"item": [1, 1], "annotator": ["u", "v"], "label": [0, 1], "p0": [0.4, 0.5]}
    ).assign(p1=lambda f: 1 - f["p0"])
    with pytest.raises(DataError, match=r"probability vector \['p0', 'p1'\] differs between rows"):
        Annotations.from_long(frame, probs=["p0", "p1"])


def _long(**cols):
    base = {"item": [1, 2], "annotator": ["x", "x"], "label": [1, 0], "score": [0.2, 0.3]}
    return pd.DataFrame({**base, **cols})


BAD_LONG = [
    ("missing column", _long().drop(columns="annotator"), {}, "no column 'annotator'"),
    ("empty", _long().iloc[:0], {}, "empty"),
    ("contradicting rows", _long(item=[1, 1]), {}, "one label per item"),
    ("score varies", _long(item=[1, 1], annotator=["x", "y"]), {}, "differs"),
    ("blank label", _long(label=[1, np.nan]), {}, "missing row"),
    ("label 3", _long(label=[1, 3]), {}, "0, 1 or missing"),
    ("mixed item ids", _long(item=[1, "1"]), {}, "item column 'item': numbers and strings"),
    ("blank rater", _long(annotator=["x", None]), {}, r"'annotator' is missing .*row 1"),
    ("two roles", _long(), dict(annotator="item"), r"'item' is given two roles"),
    ("zebra", _long(label=["dog", "zebra"]), dict(classes=["cat", "dog"]), "'zebra'"),
    ("no probs", _long(), dict(probs=pd.DataFrame([[0.5, 0.5]], index=[1])), "without prob"),
    ("score and probs", _long(), dict(score="score", probs=["a", "b"]), "either score="),
    ("truth not per item", _long(), dict(truth={1: 1}), "truth has no value for item 2"),
    ("gold of no item", _long(), dict(gold={9: 1}), "gold names 1 item.* for example 9"),
    (
        "gold varies",
        _long(item=[1, 1], annotator=["x", "y"], score=[0.2] * 2, g=[1, None]),
        dict(gold="g"),
        r"gold 'g' \(blank shown as -1\) differs between rows of item 1",
    ),
]


@pytest.mark.parametrize("name,frame,kw,match", BAD_LONG, ids=[b[0] for b in BAD_LONG])
def test_bad_long_tables(name, frame, kw, match):
    with pytest.raises(BayescalError, match=match):
        Annotations.from_long(frame, **kw)


def test_from_long_needs_dataframe():
    with pytest.raises(DataError, match="DataFrame"):
        Annotations.from_long([[1, "x", 1]])


# ---------------------------------------------------------------- wide files
def test_load_csv_blank_is_missing_and_ids_as_written(tmp_path):
    p = _write(tmp_path, "id,score,r1,r2,y\n05,0.1,0,,0\n5,0.8,1, 1 ,1\nc,0.5,,,1\n")
    d = load_csv(p, score="score", annotators=["r1", "r2"], truth="y", item="id")
    assert d.n_items == 3 and d.n_unannotated == 1 and np.isnan(d.labels[0, 1])
    assert d.labels[1, 1] == 1  # spaces around a number are allowed
    assert d.items.tolist() == ["05", "5", "c"]
    assert load_csv(p, truth="y", item="id").annotators == ["r1", "r2"]  # default: the rest
    p.write_text("id,score,r1\n5,0.5,1\n6,0.3,1\n5,0.2,0\n")
    with pytest.raises(DataError, match=r"'5' appears at .*line 2 and at .*line 4"):
        load_csv(p, item="id")


def test_csv_reader_with_class_names_truth_and_blanks(tmp_path):
    path = _write(
        tmp_path, "id,p_a,p_b,p_c,r1,r2,y\nx,0.7,0.2,0.1,a,,a\nz,0.1,0.3,0.6,2,c,2\n", "m.csv"
    )
    d = load_csv(path, probs=["p_a", "p_b", "p_c"], truth="y", item="id", classes=["a", "b", "c"])
    assert d.annotators == ["r1", "r2"] and d.classes == ["a", "b", "c"]
    np.testing.assert_array_equal(d.labels, [[0, np.nan], [2, 2]])
    assert d.truth.tolist() == [0, 2] and d.items.tolist() == ["x", "z"]
    assert load_multiclass_csv(path, probs=["p_a", "p_b", "p_c"], truth="y", item="id", classes=[
        "a", "b", "c"]).data_hash() == d.data_hash()  # fmt: skip
    plain = load_csv(_write(tmp_path, "p0,p1,p2,r1\n0.7,0.2,0.1,0\n"), probs=["p0", "p1", "p2"])
    assert plain.classes == ["p0", "p1", "p2"]  # default names: the probability columns


def test_numeric_class_names_are_read_as_names(tmp_path):
    path = _write(tmp_path, "p0,p1,p2,r1,r2\n0.7,0.2,0.1,1,3\n0.1,0.3,0.6,2,2\n")
    d = load_csv(path, probs=["p0", "p1", "p2"], classes=["1", "2", "3"])
    np.testing.assert_array_equal(d.labels, [[0, 2], [1, 1]])


BAD_CSV = [
    ("non-numeric score", "score,r1,r2\n0.1,0,1\nabc,1,1\n", "'abc' at '.*bad.csv', line 3 is not"),
    ("label 2", "score,r1,r2\n0.1,0,2\n0.4,1,1\n", "'r2' has 2.0 at '.*bad.csv', line 2"),
    ("blank score", "score,r1,r2\n,0,1\n0.4,1,1\n", "blank at '.*bad.csv', line 2"),
    ("score out of range", "score,r1,r2\n0.1,0,1\n1.4,1,1\n", "outside \\[0, 1\\]"),
    ("duplicated column", "score,r1,r1\n0.1,0,1\n0.4,1,1\n", "twice"),
    ("empty file", "", "empty"),
    ("header only", "score,r1,r2\n", "no data rows"),
    ("text label", "score,r1,r2\n0.1,yes,1\n0.4,1,1\n", "'yes' at .*line 2 is not a number"),
    ("spaces only", "score,r1,r2\n0.5,  ,1\n", r"'  ' at .*line 2 is not a number"),
    ("too large", "score,r1\n1e400,1\n", "inf at .*line 2 is not a finite number .*too large"),
]
BAD_CSV_3 = [
    ("row sum", "p0,p1,p2,r1\n0.5,0.5,0,0\n0.5,0.6,0,1\n", "bad.csv', line 3 .*sums to 1.1"),
    ("blank prob", "p0,p1,p2,r1\n0.5,0.5,0,0\n0.5,,0.5,1\n", "'p1' is blank at .*line 3"),
    ("label 3", "p0,p1,p2,r1\n0.5,0.5,0,3\n", "class indices 0..2 .*'r1' has 3.0 at .*line 2"),
    ("text label", "p0,p1,p2,r1\n0.5,0.5,0,yes\n", "'yes' at .*line 2 is not a number"),
    ("duplicated column", "p0,p1,p2,r1,r1\n0.5,0.5,0,0,1\n", "the column 'r1' twice"),
    ("header only", "p0,p1,p2,r1\n", "no data rows"),
]


@pytest.mark.parametrize(
    "c,text,match",
    [(2, t, m) for _, t, m in BAD_CSV] + [(3, t, m) for _, t, m in BAD_CSV_3],
    ids=[f"C2-{b[0]}" for b in BAD_CSV] + [f"C3-{b[0]}" for b in BAD_CSV_3],
)
def test_bad_csv_names_file_line_column_and_value(tmp_path, c, text, match):
    p = _write(tmp_path, text, "bad.csv")
    with pytest.raises(DataError, match=match):
        load_csv(p) if c == 2 else load_csv(p, probs=["p0", "p1", "p2"])


@pytest.mark.parametrize(
    "text", ["nan", "NaN", "NA", "null", "inf", "-", "1,5", "0x1", "1_0", "True", "1e400"]
)
def test_text_in_a_label_cell_is_refused_not_missing(tmp_path, text):
    cell = f'"{text}"' if "," in text else text
    p = _write(tmp_path, f"score,r1,r2\n0.5,{cell},1\n0.2,0,1\n")
    with pytest.raises(
        DataError, match=r"annotator column 'r1': .* at .*line 2 is not a (finite )?number"
    ):
        load_csv(p)


def test_csv_missing_columns_and_files(tmp_path):
    p = _write(tmp_path, "score,r1,r2\n0.1,0,1\n")
    with pytest.raises(DataError, match="no annotator column"):
        load_csv(p, annotators=["r1", "r9"])
    with pytest.raises(DataError, match="no column 'prob'"):
        load_csv(p, score="prob")
    with pytest.raises(DataError, match="no column 'p2'"):
        load_csv(p, probs=["score", "p2"])
    with pytest.raises(DataError, match="one column per class"):
        load_csv(p, probs="score")
    with pytest.raises(DataError, match="does not exist"):
        load_csv(tmp_path / "nope.csv")
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"p0,p1,r1\n0.5,0.5,\xff\n")
    with pytest.raises(DataError, match="UTF-8"):
        load_csv(bad, probs=["p0", "p1"])


@pytest.mark.parametrize(
    "kw,match",
    [
        (
            dict(probs=["p0", "p1"], truth="r1", annotators=["r1", "r2"]),
            r"cannot be both an annotator and .*truth='r1'",
        ),
        (dict(probs=["p0", "p1"], annotators=["p1", "r1"]), r"\['p1'\] cannot be both .*probab"),
        (dict(probs=["p0", "p1"], truth="p0"), "'p0' is given two roles"),
        (dict(score="p0", probs=["p0", "p1"]), "either score='p0'"),
    ],
)
def test_contradicting_roles_are_config_errors(tmp_path, kw, match):
    p = _write(tmp_path, "p0,p1,r1,r2\n0.5,0.5,0,1\n")
    with pytest.raises(ConfigError, match=match):
        load_csv(p, **kw)


# ---------------------------------------------------------------- safe default roles
@pytest.mark.parametrize("name", ["truth", "Gold", "label", "target", "y", "true_label", "y_true"])
@pytest.mark.parametrize("c", [2, 3])
def test_reference_like_columns_are_never_default_annotators(tmp_path, name, c):
    head = "score" if c == 2 else "p0,p1,p2"
    row = "0.4" if c == 2 else "0.2,0.2,0.6"
    p = _write(tmp_path, f"{head},r1,r2,{name}\n{row},0,1,1\n{row},1,1,0\n")
    kw = {} if c == 2 else {"probs": ["p0", "p1", "p2"]}
    with pytest.raises(DataError, match=rf"column '{name}' is named like a reference label, .*"
                       r"pass annotators= \(--annotators\)"):  # fmt: skip
        load_table(p, **kw)
    d = load_table(p, truth=name, **kw)  # named as the reference: fine
    assert d.annotators == ["r1", "r2"] and d.columns["truth"] == name
    assert load_table(p, annotators=["r1", "r2", name], **kw).n_annotators == 3  # deliberate


@pytest.mark.parametrize("name", ["item", "id", "item_id", "ItemID", "Unnamed: 0"])
def test_id_like_columns_are_never_default_annotators(tmp_path, name):
    p = _write(tmp_path, f"score,r1,{name}\n0.4,0,7\n0.6,1,8\n")
    with pytest.raises(DataError, match=rf"'{name}' is named like an item id.*item= \(--item\)"):
        load_csv(p)
    assert load_csv(p, item=name).items.tolist() == ["7", "8"]


def test_the_reader_records_which_column_got_which_role(tmp_path):
    p = _write(
        tmp_path, "item,p0,p1,p2,r1,r2,note,known\na,0.2,0.2,0.6,0,2,x,\nb,.1,.1,.8,1,,y,2\n"
    )
    d = load_table(p, probs=["p0", "p1", "p2"], annotators=["r1", "r2"], item="item", gold="known")
    expected = {
        "item": "item",
        "probs": ["p0", "p1", "p2"],
        "annotators": ["r1", "r2"],
        "truth": None,
        "gold": "known",
        "unused": ["note"],
    }
    assert d.columns == expected and d.describe()["columns"] == expected
    assert d.subset([1]).columns == expected and d.n_gold == 1
    d.dataset.to_netcdf(tmp_path / "d.nc")  # the record is text: the dataset stays netCDF-safe
    again = Annotations.from_dataset(xr.load_dataset(tmp_path / "d.nc"))
    assert again.columns == expected and again.data_hash() == d.data_hash()
    assert _data(2).columns is None
    long = _write(tmp_path, "task,worker,answer,score,extra\nt,w,1,0.5,z\n", "long.csv")
    rec = load_long(long, item="task", annotator="worker", label="answer").columns
    assert rec == {
        "item": "task",
        "annotator": "worker",
        "label": "answer",
        "score": "score",
        "truth": None,
        "gold": None,
        "unused": ["extra"],
    }


# ---------------------------------------------------------------- long files
LONG_IDS = "item,annotator,label,score\n5,1,1,0.9\n05,1.0,0,0.2\n5,01,1,0.9\n05,1,0,0.2\n"


def test_long_csv_ids_are_strings_as_written(tmp_path):
    d = load_long(_write(tmp_path, LONG_IDS, "long.csv"))
    assert d.items.tolist() == ["5", "05"] and d.annotators == ["1", "1.0", "01"]
    # item "05" was answered by raters "1.0" and "1"; nothing was merged
    np.testing.assert_array_equal(np.nan_to_num(d.labels, nan=-1), [[1, -1, 1], [0, 0, -1]])


def test_long_csv_rules(tmp_path):
    p = tmp_path / "long.csv"
    for text, match in [
        ("item,annotator,label,score\n,a,1,0.5\n", "item column 'item' is missing"),
        ("item,annotator,label,score\ni,a,,0.5\n", "missing answer is a missing row"),
        ("item,annotator,label,score\ni,a,1,0.5\ni,b,0,0.6\n", r"'score' differs .*'i': 0.5 at"),
        (
            "item,annotator,label,score\ni,a,1,.5\nj,a,1,.2\ni,a,0,.5\n",
            r"'i' / annotator 'a' ap"
            r"pears at .*line 2 and at .*4",
        ),  # fmt: skip
        (LONG_IDS + "5,,0,0.9\n", r"annotator column 'annotator' is missing \(blank\) at "),
    ]:
        p.write_text(text)
        with pytest.raises(DataError, match=match):
            load_long(p)
    p.write_text("item,annotator,label,score\ni,a,1,0.5\ni,b,0,0.50\n")
    assert load_long(p).score.tolist() == [0.5]  # one value written two ways


def test_long_tables_with_probabilities(tmp_path):
    text = (
        "item,annotator,label,p_cat,p_dog,p_fox,y\n"
        "a,u,fox,0.1,0.2,0.7,fox\na,v,dog,0.1,0.2,0.7,fox\nb,u,cat,0.6,0.3,0.1,cat\n"
    )
    p = _write(tmp_path, text, "long.csv")
    cols = ["p_cat", "p_dog", "p_fox"]
    d = load_long(p, probs=cols, classes=["cat", "dog", "fox"], truth="y")
    assert d.n_classes == 3 and d.items.tolist() == ["a", "b"] and d.truth.tolist() == [2, 0]
    np.testing.assert_array_equal(d.labels, [[2, 1], [0, np.nan]])
    same = load_table(p, long=("item", "annotator", "label"), probs=cols, classes=d.classes,
                      truth="y")  # fmt: skip
    assert same.data_hash() == d.data_hash()
    p.write_text(text.replace("a,v,dog,0.1,0.2,0.7", "a,v,dog,0.2,0.1,0.7"))
    with pytest.raises(DataError, match="probability vector .* differs between rows of item 'a'"):
        load_long(p, probs=cols, classes=d.classes)
    with pytest.raises(ConfigError, match="'item' is given two roles"):
        load_long(p, annotator="item", probs=cols)
    with pytest.raises(ConfigError, match="either score="):
        load_long(p, score="p_cat", probs=cols)


# ---------------------------------------------------------------- Parquet
@pytest.mark.parametrize("c", [2, 3])
def test_parquet_reader_matches_csv(tmp_path, c):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"p0": [0.7, 0.1], "p1": [0.2, 0.3], "p2": [0.1, 0.6]})
    if c == 2:
        frame = pd.DataFrame({"score": [0.3, 0.9]})
    frame = frame.assign(r1=[0, 1], r2=[None, 1.0], item=["x", "y"])
    frame.to_parquet(tmp_path / "m.parquet")
    frame.to_csv(tmp_path / "m.csv", index=False)
    kw = {"item": "item"} if c == 2 else {"item": "item", "probs": ["p0", "p1", "p2"]}
    a = load_table(tmp_path / "m.parquet", **kw)
    b = load_table(tmp_path / "m.csv", **kw)
    assert a.data_hash() == b.data_hash() and a.items.tolist() == ["x", "y"]
    assert a.columns == b.columns


def test_parquet_class_names_and_typed_columns(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {"p0": [0.7, 0.1], "p1": [0.2, 0.3], "p2": [0.1, 0.6], "r1": ["a", "c"], "r2": [None, "b"]}
    )
    frame.to_parquet(tmp_path / "m.parquet")
    d = load_table(tmp_path / "m.parquet", probs=["p0", "p1", "p2"], classes=["a", "b", "c"])
    np.testing.assert_array_equal(d.labels, [[0, np.nan], [2, 1]])
    frame.assign(r1=["a", "x"]).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match=r"'x' at .*bad.parquet', row 2 is not a class name"):
        load_table(tmp_path / "bad.parquet", probs=["p0", "p1", "p2"], classes=["a", "b", "c"])
    with pytest.raises(DataError, match="column 'r1' has type string"):  # names need classes
        load_table(tmp_path / "m.parquet", probs=["p0", "p1", "p2"])
    long = pd.DataFrame(
        {"item": [1, 1, 2], "annotator": ["u", "v", "u"], "label": ["b", "a", "c"]}
    ).assign(p0=[0.2, 0.2, 0.5], p1=[0.3, 0.3, 0.4], p2=[0.5, 0.5, 0.1])
    long.to_parquet(tmp_path / "long.parquet")
    d = load_long(tmp_path / "long.parquet", probs=["p0", "p1", "p2"], classes=["a", "b", "c"])
    assert d.items.tolist() == [1, 2] and d.labels.tolist()[0] == [1.0, 0.0]


# ---------------------------------------------------------------- facts
@pytest.mark.parametrize("c", [2, 3])
def test_describe_and_repr(c):
    d = Annotations.from_arrays(
        P3 if c == 3 else [0.1, 0.9, 0.5],
        [[1, 1], [0, 1], [0, np.nan]],
        classes=["cat", "dog", "fox"][:c],
        gold=[np.nan, 1, np.nan],
    )
    info = d.describe()
    assert info["unanimous_fraction"] == pytest.approx(0.5)
    assert info["n_classes"] == c and info["n_gold"] == 1 and info["has_truth"] is False
    assert info["answer_counts"]["a2"]["dog"] == 2
    assert info["answer_counts"]["a1"]["cat"] == 2 and info["answer_counts"]["a1"]["dog"] == 1
    assert sum(info["predicted_counts"].values()) == 3
    if c == 2:
        assert info["positive_rate_per_annotator"] == {"a1": pytest.approx(1 / 3), "a2": 1.0}
    else:
        assert "positive_rate_per_annotator" not in info
    text = repr(d)
    assert "3 items x 2 annotators" in text and f"{c} classes (cat, dog" in text
    assert "1 gold items" in text


def test_summary_excludes_unannotated():
    d = Annotations.from_arrays([0.1, 0.9], [[1, 0], [np.nan, np.nan]])
    s = bc.summarize(d, groups=2, bins=2)
    assert s.n_items == 1 and int(s.n_unannotated.sum()) == 1
    assert float(s.binary.bin_count.sum()) == 1


def test_a_dataframe_of_labels_names_the_annotators():
    """``from_arrays(labels=DataFrame)`` named the annotators a1 .. aK and dropped the frame's
    column names without a word (a hostile re-check, issue 23)."""
    import pandas as pd

    from bayescal.data.container import Annotations

    labels = pd.DataFrame([[0, 1, 1], [1, 1, 0], [0, 0, 0]], columns=["p", "q", 7])
    d = Annotations.from_arrays(np.array([0.2, 0.8, 0.1]), labels)
    assert d.annotators == ["p", "q", "7"]
    named = Annotations.from_arrays(np.array([0.2, 0.8, 0.1]), labels, annotators=["x", "y", "z"])
    assert named.annotators == ["x", "y", "z"]  # the names given win


def test_subset_refuses_masks_of_the_wrong_length_and_repeated_items():
    """A 3-long mask on 10 items kept the first two selected items and dropped the rest
    silently; repeated positions made two items with one id; a float index was a raw
    IndexError (hostile re-check, issue 23)."""
    d = Annotations.from_arrays(
        np.linspace(0.05, 0.95, 10),
        np.tile([[0, 1, 1]], (10, 1)),
        item=[f"i{i}" for i in range(10)],
    )
    for index, message in (
        (np.array([True, False, True]), "mask has 3 entries for 10 items"),
        ([0, 0, 1], "selects item position 0 2 times"),
        ([0.5], "integer positions or a boolean mask; got float64"),
        ([10], "position 10 is outside 0 .. 9"),
        ([3, -7], "selects item position 3 2 times"),
        (np.zeros((2, 2), int), "1-D index"),
        ([], "selects no items"),
    ):
        with pytest.raises(DataError, match=message):
            d.subset(index)
    assert [str(x) for x in d.subset([-1, 2]).items] == ["i9", "i2"]
    assert d.subset(np.arange(10) % 2 == 0).n_items == 5
