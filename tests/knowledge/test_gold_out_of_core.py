"""``--gold`` out of core (binary): the dask summary reads the gold column and equals the
in-memory summary exactly (issue 15)."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from gold_data import gold_data

from bayescal import Annotations, summarize
from bayescal.cli import main
from bayescal.errors import DataError
from bayescal.scale import summarize_dask


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


def test_cli_gold_out_of_core(tmp_path, data):
    folder = _write_parts(tmp_path / "parts", data)
    err = io.StringIO()
    argv = ["audit", str(folder / "*.csv"), "--annotators", "a1,a2,a3", "--gold", "known"]
    argv += ["--channels", "score-bin-em", "--groups", "3", "--bins", "5", "--quiet"]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*argv, "--out", str(tmp_path / "report")])
    assert code == 0, err.getvalue()
    s = json.loads((tmp_path / "report" / "summary.json").read_text())
    g = s["knowledge"]["gold"]
    assert (g["n_gold_0"], g["n_gold_1"]) == tuple(int(x) for x in summarize(data).n_gold)
