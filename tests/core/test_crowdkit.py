"""crowd-kit's long format both ways (issue 16): from_crowdkit / to_crowdkit round trips."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayescal import Annotations
from bayescal.errors import ConfigError, DataError


def _random_data(seed=0, n=60, k=4, ids="str"):
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    lab = (rng.random((n, k)) < z[:, None]).astype(float)
    lab[rng.random((n, k)) < 0.35] = np.nan  # missing answers
    lab[:3] = np.nan  # three items nobody answered
    lab[3, 0] = 1.0
    items = [f"task-{i:03d}" for i in range(n)] if ids == "str" else np.arange(100, 100 + n)
    return Annotations.from_arrays(z, lab, item=items, annotators=[f"worker {j}" for j in range(k)])


@pytest.mark.parametrize("ids", ["str", "int"])
def test_round_trip_keeps_items_annotators_labels_and_missing_answers(ids):
    d = _random_data(ids=ids)
    answers = d.to_crowdkit()
    assert list(answers.columns) == ["task", "worker", "label"]
    assert len(answers) == int(d.answered.sum())  # one row per given answer, none for missing
    assert set(answers["label"]) <= {0, 1}
    back = Annotations.from_crowdkit(answers, scores=pd.Series(d.score, index=d.items))
    assert back.items.tolist() == d.items.tolist()
    assert back.annotators == d.annotators
    np.testing.assert_array_equal(back.labels, d.labels)  # NaN where no answer
    np.testing.assert_array_equal(back.score, d.score)
    assert back.n_unannotated == d.n_unannotated == 3
    assert back.data_hash() == d.data_hash()


def test_crowdkit_frame_round_trip_row_for_row():
    answers = pd.DataFrame(
        {
            "task": ["t2", "t1", "t2", "t3"],
            "worker": ["w9", "w9", "w1", "w1"],
            "label": [1, 0, 0, 1],
        }
    )
    scores = {"t1": 0.2, "t2": 0.7, "t3": 0.9, "t4": 0.5}
    d = Annotations.from_crowdkit(answers, scores)
    assert d.items.tolist() == ["t1", "t2", "t3", "t4"] and d.n_unannotated == 1
    out = d.to_crowdkit()
    key = ["task", "worker"]
    pd.testing.assert_frame_equal(
        out.sort_values(key).reset_index(drop=True),
        answers.astype({"label": np.int8}).sort_values(key).reset_index(drop=True),
    )


def test_string_labels_with_positive_value_and_truth():
    answers = pd.DataFrame(
        {
            "task": [1, 1, 2, 2, 3],
            "worker": ["a", "b", "a", "b", "a"],
            "label": ["yes", "no", "no", "no", "yes"],
            "time": [3.1, 2.0, 4.4, 1.0, 2.2],  # other crowd-kit columns are ignored
        }
    )
    gt = pd.Series({1: 1, 2: 0, 3: 1})
    d = Annotations.from_crowdkit(
        answers, pd.Series({1: 0.9, 2: 0.1, 3: 0.8}), truth=gt, positive="yes"
    )
    np.testing.assert_array_equal(np.nan_to_num(d.labels, nan=-1), [[1, 0], [0, 0], [1, -1]])
    assert d.truth.tolist() == [1, 0, 1]


def test_crowdkit_errors_name_the_problem():
    answers = pd.DataFrame({"task": ["t1"], "worker": ["w1"], "label": [1]})
    with pytest.raises(DataError, match="missing \\['worker'\\]"):
        Annotations.from_crowdkit(answers.drop(columns="worker"), {"t1": 0.5})
    with pytest.raises(DataError, match="crowd-kit answers carry no score column"):
        Annotations.from_crowdkit(answers, "score")
    with pytest.raises(DataError, match="items without a score, for example 't1'"):
        Annotations.from_crowdkit(answers, {"t2": 0.5})
    three = pd.DataFrame({"task": ["t1"] * 3, "worker": ["a", "b", "c"], "label": ["x", "y", "z"]})
    with pytest.raises(DataError, match="the rest must be one negative value"):
        Annotations.from_crowdkit(three, {"t1": 0.5}, positive="x")
    with pytest.raises(DataError, match="'x' is text, so a class name.*pass classes="):
        Annotations.from_crowdkit(three, {"t1": 0.5})
    with pytest.raises(DataError, match="expects a pandas DataFrame"):
        Annotations.from_crowdkit(answers.to_dict(), {"t1": 0.5})
    # ids are compared exactly: task 1 (int) has no score under the key "1" (str)
    ints = pd.DataFrame({"task": [1], "worker": ["w1"], "label": [1]})
    with pytest.raises(DataError, match="1 and '1' differ"):
        Annotations.from_crowdkit(ints, {"1": 0.5})


def test_multiclass_round_trip_with_a_probability_table_and_class_names():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(4), size=30)
    lab = rng.integers(0, 4, size=(30, 3)).astype(float)
    lab[rng.random((30, 3)) < 0.3] = np.nan
    lab[:2] = np.nan  # two items nobody answered
    d = Annotations.from_arrays(probs, lab, item=[f"t{i}" for i in range(30)])
    answers = d.to_crowdkit()
    assert len(answers) == int(d.answered.sum()) and set(answers["label"]) <= {0, 1, 2, 3}
    table = pd.DataFrame(d.probs, index=d.items)
    back = Annotations.from_crowdkit(answers, probs=table)
    assert back.data_hash() == d.data_hash() and back.n_unannotated == d.n_unannotated >= 2
    names = ["a", "b", "c", "d"]
    named = answers.assign(label=[names[k] for k in answers["label"]])
    again = Annotations.from_crowdkit(named, probs=table.set_axis(names, axis=1), classes=names)
    np.testing.assert_array_equal(again.labels, d.labels)
    assert again.classes == names
    with pytest.raises(ConfigError, match="positive= recodes binary labels"):
        Annotations.from_crowdkit(named, probs=table, positive="a")
