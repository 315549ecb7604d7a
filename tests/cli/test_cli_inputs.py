"""The audit command's inputs (report/inputs.py): one loader for wide and long tables, a
score or class probabilities; two probability columns are binary data."""

import json

import numpy as np
import pytest

from bayescal.cli import main
from bayescal.simulate import simulate_multiclass, simulate_toy


def _audit(tmp_path, name, *args):
    out = tmp_path / name
    code = main(["audit", *map(str, args), "--channels", "dawid-skene-em", "--out", str(out),
                 "--quiet"])  # fmt: skip
    assert code == 0
    return json.loads((out / "summary.json").read_text())


def _rows(data, probs):
    """(item, probability cells, answers) per item, answers None where missing."""
    for i in range(data.n_items):
        answers = [None if np.isnan(v) else str(int(v)) for v in data.labels[i]]
        yield f"i{i}", [repr(float(v)) for v in probs[i]], answers


@pytest.fixture(scope="module")
def answered():
    """C = 3, K = 3, every item answered and the first by everyone (same annotator order
    in the wide and the long table)."""
    d = simulate_multiclass(600, 3, random_state=8, missing=0.2)
    keep = d.annotated & ~np.all(d.answered, axis=1)
    order = np.concatenate([np.flatnonzero(np.all(d.answered, axis=1)), np.flatnonzero(keep)])
    return d.subset(order)


def test_long_table_with_probabilities_audits_like_the_wide_one(answered, tmp_path):
    cols = ["p0", "p1", "p2"]
    wide, long = ["item,p0,p1,p2,r1,r2,r3"], ["item,annotator,label,p0,p1,p2"]
    for item, probs, answers in _rows(answered, answered.probs):
        wide.append(",".join([item, *probs, *(a or "" for a in answers)]))
        long += [",".join([item, f"r{j + 1}", a, *probs]) for j, a in enumerate(answers) if a]
    (tmp_path / "wide.csv").write_text("\n".join(wide) + "\n")
    (tmp_path / "long.csv").write_text("\n".join(long) + "\n")
    a = _audit(tmp_path, "a", tmp_path / "wide.csv", "--probs", ",".join(cols), "--item", "item")
    b = _audit(tmp_path, "b", tmp_path / "long.csv", "--probs", ",".join(cols),
               "--long", "item,annotator,label")  # fmt: skip
    assert a["reproducibility"]["data_hash"] == b["reproducibility"]["data_hash"]
    assert a["ece"] == b["ece"] and a["n_classes"] == b["n_classes"] == 3


def test_two_probability_columns_are_binary_data(tmp_path):
    d = simulate_toy(800, random_state=5)
    lines_p, lines_z = ["item,p0,p1,r1,r2,r3"], ["item,score,r1,r2,r3"]
    for item, _, answers in _rows(d, d.probs):
        cells = [a or "" for a in answers]
        z = repr(float(d.score[int(item[1:])]))
        lines_p.append(",".join([item, repr(float(1 - d.score[int(item[1:])])), z, *cells]))
        lines_z.append(",".join([item, z, *cells]))
    (tmp_path / "p.csv").write_text("\n".join(lines_p) + "\n")
    (tmp_path / "z.csv").write_text("\n".join(lines_z) + "\n")
    by_probs = _audit(tmp_path, "p", tmp_path / "p.csv", "--probs", "p0,p1", "--item", "item",
                      "--classes", "neg,pos")  # fmt: skip
    by_score = _audit(tmp_path, "z", tmp_path / "z.csv", "--item", "item")
    assert "n_classes" not in by_probs  # the binary audit's summary
    assert by_probs["ece"] == by_score["ece"]


def test_a_folder_names_what_it_skips_and_keeps_the_item_column_out(tmp_path):
    """Out of core (a folder as DATA), files that are not read were skipped without a word
    and --item was ignored: a missing item column passed, and without --annotators the item
    column was taken for an annotator (a hostile re-check, issue 23)."""
    from cli_helpers import run

    folder = tmp_path / "parts"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name, lo in (("a.csv", 0), (".b.csv", 100), ("notes.txt", None)):
        if lo is None:
            (folder / name).write_text("not data\n")
            continue
        rows = ["item,score,r1,r2,r3"]
        for i in range(lo, lo + 100):
            z = rng.random()
            rows.append(f"i{i},{z:.3f}," + ",".join(str(int(rng.random() < z)) for _ in range(3)))
        (folder / name).write_text("\n".join(rows) + "\n")
    base = ["audit", folder, "--channels", "dawid-skene-em", "--skip", "crowdkit"]
    code, err = run([*base, "--item", "item", "--out", tmp_path / "o1"])
    assert code == 0, err
    assert "holds 3 files; 1 CSV / Parquet file(s) are read and 2 are not" in err
    assert ".b.csv" in err and "notes.txt" in err
    assert "--item item is left out of the annotators" in err and "not checked for repeats" in err
    assert "100 annotated items, 3 annotators" in err  # the .b.csv rows are not read
    # and both caveats are in the report, not only on the terminal (hostile re-check M8)
    notes = [
        w["message"]
        for w in json.loads((tmp_path / "o1" / "summary.json").read_text())["warnings"]
        if w["code"] == "data.unchecked"
    ]
    assert len(notes) == 2 and "not checked for repeats" in notes[1] and ".b.csv" in notes[0]
    assert "not checked for repeats" in (tmp_path / "o1" / "report.html").read_text()
    code, err = run([*base, "--annotators", "r1,r2,r3", "--item", "nope", "--out", tmp_path / "o2"])
    assert code == 2 and "has no column 'nope'" in err, err
