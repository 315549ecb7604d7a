"""``--gold`` out of core (binary): the dask summaries (wide files, and long files with one
shuffle) read the gold column and equal the in-memory summary exactly (issue 15)."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from gold_data import gold_data

from bayescal import Annotations, summarize
from bayescal.cli import main
from bayescal.errors import ConfigError, DataError
from bayescal.scale import summarize_dask, summarize_long_dask


def _write_parts(folder, d, n_parts=3, fmt="csv"):
    frame = pd.DataFrame({"score": d.score})
    for j, name in enumerate(d.annotators):
        frame[name] = pd.array([None if np.isnan(v) else int(v) for v in d.labels[:, j]], "Int64")
    frame["known"] = pd.array([None if np.isnan(v) else int(v) for v in d.gold], "Int64")
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(d.n_items), n_parts)):
        chunk = frame.iloc[part]
        if fmt == "csv":
            chunk.to_csv(folder / f"part-{i}.csv", index=False)
        else:
            chunk.to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


@pytest.fixture(scope="module")
def data():
    d, _ = gold_data(1500, [0.1, 0.25, 0.2], [0.85, 0.7, 0.8], n_gold=300, seed=21)
    return Annotations.from_arrays(d.score, d.labels, gold=d.gold)  # the files hold no truth


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_out_of_core_gold_equals_in_memory(tmp_path, data, fmt):
    folder = _write_parts(tmp_path / "parts", data, fmt=fmt)
    out = summarize_dask(str(folder / f"*.{fmt}"), gold="known", groups=3, bins=5)
    memory = summarize(data, groups=3, bins=5)
    assert out.has_gold and out.n_gold == memory.n_gold
    assert out.equals(memory, rtol=1e-12)
    # a chunk may hold no gold item at all: summaries still add up
    assert np.array_equal(out.gold_counts(), memory.gold_counts())


def test_out_of_core_gold_value_named_by_file_and_line(tmp_path, data):
    folder = _write_parts(tmp_path / "parts", data)
    path = folder / "part-1.csv"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ",2"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        DataError, match=r"part-1\.csv.*line 4.*gold column 'known' has the value 2"
    ):
        summarize_dask(str(folder / "*.csv"), gold="known", groups=3, bins=5)


def _audit_gold_counts(tmp_path, data_arg, *options):
    """Run the binary audit out of core with --gold known; the gold counts it reports."""
    err = io.StringIO()
    argv = ["audit", data_arg, *options, "--gold", "known", "--channels", "score-bin-em"]
    argv += ["--groups", "3", "--bins", "5", "--quiet", "--out", str(tmp_path / "report")]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    assert code == 0, err.getvalue()
    g = json.loads((tmp_path / "report" / "summary.json").read_text())["knowledge"]["gold"]
    return g["n_gold_0"], g["n_gold_1"]


def test_cli_gold_out_of_core(tmp_path, data):
    folder = _write_parts(tmp_path / "parts", data)
    counts = _audit_gold_counts(tmp_path, str(folder / "*.csv"), "--annotators", "a1,a2,a3")
    assert counts == tuple(int(x) for x in summarize(data).n_gold)


def _long_rows(d):
    """One row per answer, the item's score and gold class repeated on each, shuffled."""
    i, j = np.nonzero(~np.isnan(d.labels))
    frame = pd.DataFrame(
        {
            "task": [f"t{k}" for k in i],
            "worker": np.asarray(d.annotators)[j],
            "label": d.labels[i, j].astype(int),
            "score": d.score[i],
            "known": pd.array([None if np.isnan(v) else int(v) for v in d.gold[i]], "Int64"),
        }
    )
    return frame.sample(frac=1.0, random_state=0).reset_index(drop=True)


def _write_long(folder, frame, n_parts=3):
    folder.mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(frame)), n_parts)):
        frame.iloc[part].to_csv(folder / f"part-{k}.csv", index=False)
    return folder


LONG = {"item": "task", "annotator": "worker", "label": "label"}


def test_long_out_of_core_gold_equals_in_memory(tmp_path, data):
    frame = _long_rows(data)
    folder = _write_long(tmp_path / "long", frame)
    memory = summarize(Annotations.from_long(frame, **LONG, gold="known"), groups=3, bins=5)
    # the in-memory table orders annotators by first appearance: the same order here
    kw = {"groups": 3, "bins": 5, "annotators": memory.annotators, **LONG}
    out = summarize_long_dask(str(folder / "*.csv"), gold="known", **kw)
    assert out.has_gold and out.n_gold == memory.n_gold == summarize(data).n_gold
    assert out.equals(memory, rtol=1e-12)
    # the gold class once per item in a separate score table (items absent: not gold)
    table = frame.drop_duplicates("task")[["task", "score", "known"]]
    table.to_csv(tmp_path / "scores.csv", index=False)
    answers = frame.drop(columns=["score", "known"])
    answers_folder = _write_long(tmp_path / "answers", answers)
    out = summarize_long_dask(
        str(answers_folder / "*.csv"),
        scores=str(tmp_path / "scores.csv"),
        gold="known",
        **kw,
    )
    assert out.equals(memory, rtol=1e-12)


def test_long_out_of_core_gold_conflict_names_the_item(tmp_path, data):
    frame = _long_rows(data)
    item = frame.loc[frame["known"].notna(), "task"].iloc[0]
    rows = np.flatnonzero(frame["task"] == item)
    frame.loc[rows[-1], "known"] = pd.NA  # blank on one of the item's rows, a class on another
    folder = _write_long(tmp_path / "long", frame)
    with pytest.raises(DataError, match=rf"item '{item}' has different gold class.*part-\d\.csv"):
        summarize_long_dask(str(folder / "*.csv"), gold="known", groups=3, bins=5, **LONG)
    with pytest.raises(ConfigError, match="gold='label' is also the item, annotator, label"):
        summarize_long_dask(str(folder / "*.csv"), gold="label", **LONG)


def test_cli_gold_with_long_out_of_core(tmp_path, data):
    folder = _write_long(tmp_path / "long", _long_rows(data))
    counts = _audit_gold_counts(tmp_path, str(folder / "*.csv"), "--long", "task,worker,label")
    assert counts == tuple(int(x) for x in summarize(data).n_gold)
