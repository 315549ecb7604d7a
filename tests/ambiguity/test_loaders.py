"""Loaders: formats, the ChaosNLI class-order trap, stratified splits, bad files."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from bayescal.ambiguity import load_chaosnli, load_cifar10h, stratified_split
from bayescal.ambiguity.loaders import CHAOSNLI_CLASSES
from bayescal.errors import ConfigError, DataError


def test_cifar10h_layout(cifar10h):
    d = cifar10h
    assert (d.n_items, d.n_classes) == (1000, 10)  # tests/data: 100 images per class
    totals = d.counts.sum(axis=1)
    assert totals.min() >= 47 and totals.max() <= 63
    assert np.all(np.isfinite(d.logits))
    # Stored probabilities go down to ~1e-21: logits down to about -48, not -inf.
    assert d.logits.min() < -40
    np.testing.assert_allclose(np.exp(d.logits).sum(axis=1), 1.0, atol=1e-6)
    # The original CIFAR-10 label agrees with the human majority on ~99% of images.
    assert np.mean(d.reference == d.voted) > 0.98


def test_chaosnli_class_order_is_aligned(chaosnli, chaosnli_paths):
    d = chaosnli
    assert d.n_items == 600 and d.classes == CHAOSNLI_CLASSES  # tests/data subset
    assert np.all(d.counts.sum(axis=1) == 100)
    right = np.mean(d.logits.argmax(axis=1) == d.voted)
    jsonl, preds = chaosnli_paths
    wrong = load_chaosnli(jsonl, preds, prediction_order=CHAOSNLI_CLASSES)
    wrong_agree = np.mean(wrong.logits.argmax(axis=1) == wrong.voted)
    # README: ~74% agreement with the right order, ~32% with the file order taken as is
    # (on the 600-pair subset: 71.8% and 32.3%; the binomial sd there is about 1.8 points).
    assert 0.70 < right < 0.78
    assert wrong_agree < 0.40
    # Original SNLI labels agree with the model about as often as the majority does.
    assert np.mean(d.logits.argmax(axis=1) == d.reference) > 0.65


def test_chaosnli_missing_predictions_are_reported(chaosnli_paths):
    jsonl, preds = chaosnli_paths
    with pytest.raises(DataError, match="have no prediction"):
        load_chaosnli(jsonl, preds[:1])
    with pytest.raises(ConfigError, match="permutation"):
        load_chaosnli(jsonl, preds, prediction_order=("e", "n", "c"))


def test_bad_files_raise(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_cifar10h(tmp_path / "nope.csv")
    short = tmp_path / "short.csv"
    short.write_text("1,2,3\n")
    with pytest.raises(DataError, match="21 columns"):
        load_cifar10h(short)
    row = [3] + [0] * 10 + [0.1] * 10
    zero_row = tmp_path / "zero.csv"
    zero_row.write_text(",".join(map(str, row)) + "\n")
    with pytest.raises(DataError, match="all-zero"):
        load_cifar10h(zero_row)
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text('{"uid": "a", "label_count": [1, 2, 3]}\n{oops\n')
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps({"uid": "a", "logits": [0, 1, 2]}) + "\n")
    with pytest.raises(DataError, match="line 2"):
        load_chaosnli(bad_json, pred)


def test_stratified_split_sizes_and_balance(cifar10h):
    cal, test = stratified_split(cifar10h.voted, random_state=42)
    assert len(cal) == 500 and len(test) == 500
    assert np.intersect1d(cal, test).size == 0
    per_class = np.bincount(cifar10h.voted[cal], minlength=10)
    total = np.bincount(cifar10h.voted, minlength=10)
    assert np.all(np.abs(per_class - total / 2) <= 1)
    again, _ = stratified_split(cifar10h.voted, random_state=42)
    other, _ = stratified_split(cifar10h.voted, random_state=43)
    assert np.array_equal(cal, again) and not np.array_equal(cal, other)
    small, _ = stratified_split(cifar10h.voted, fraction=0.05, random_state=0)
    assert len(small) == 50


# ---------------------------------------------------------------- hostile files (issue 11)
# Synthetic files written here, so these tests run in a fresh clone without shared data.
def _chaos_files(tmp_path, n=30, seed=0, lines=None, preds=None):
    """A small ChaosNLI JSONL and one prediction file; ``lines`` / ``preds`` replace the
    generated lines (each a Python object dumped as JSON, or a raw str written as is)."""
    rng = np.random.default_rng(seed)
    chaos = tmp_path / "chaos.jsonl"
    pred = tmp_path / "pred.jsonl"
    if lines is None:
        lines = [
            {"uid": f"u{i}", "label_count": rng.multinomial(100, [0.5, 0.3, 0.2]).tolist()}
            for i in range(n)
        ]
    if preds is None:
        preds = [{"uid": f"u{i}", "logits": rng.normal(size=3).round(3).tolist()} for i in range(n)]

    def dump(path, rows):
        path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))

    dump(chaos, lines)
    dump(pred, preds)
    return chaos, pred


def test_synthetic_chaosnli_loads_in_chaosnli_order(tmp_path):
    chaos, pred = _chaos_files(
        tmp_path,
        lines=[{"uid": "a", "label_count": [3, 1, 0], "old_label": "e"}],
        preds=[{"uid": "a", "logits": [2.0, 0.5, -1.0]}],
    )
    d = load_chaosnli(chaos, pred)
    # prediction order (e, c, n) -> ChaosNLI order (e, n, c)
    np.testing.assert_array_equal(d.logits, [[2.0, -1.0, 0.5]])
    assert d.counts.tolist() == [[3, 1, 0]] and d.reference.tolist() == [0]


BAD_CHAOS_LINES = [
    ("number as line", "7", "expected a JSON object with 'uid'; got a JSON number"),
    ("null as line", "null", "got a JSON null"),
    ("list as line", "[1, 2]", "got a JSON list"),
    ("list as uid", {"uid": ["a"], "label_count": [1, 2, 3]}, "'uid' must be a non-empty string"),
    ("number as uid", {"uid": 5, "label_count": [1, 2, 3]}, "'uid' must be a non-empty string"),
    ("no label_count", {"uid": "u0"}, "has no 'label_count'"),
    ("two counts", {"uid": "u0", "label_count": [1, 2]}, "'label_count' has 2 entries"),
    ("text count", {"uid": "u0", "label_count": [1, "2", 3]}, "found the JSON string '2'"),
    ("bool count", {"uid": "u0", "label_count": [1, True, 3]}, "found the JSON boolean True"),
    ("null count", {"uid": "u0", "label_count": [1, None, 3]}, "found the JSON null"),
    ("dict counts", {"uid": "u0", "label_count": {"e": 1}}, "must be a list of 3 numbers"),
    ("NaN literal", '{"uid": "u0", "label_count": [1, NaN, 3]}', "NaN is not a JSON number"),
    ("broken JSON", '{"uid": "u0", "label_count": [1, 2', "not valid JSON"),
    (
        "fractional counts",
        {"uid": "u0", "label_count": [1.5, 2.7, 90.9]},
        r"whole numbers of votes; 1.5 at .*chaos.jsonl', line 1, column 0 is a fraction",
    ),
    (
        "counts of 2**62",
        {"uid": "u0", "label_count": [2**62, 2**62, 1]},
        "more than 2\\*\\*53",
    ),
    (
        "integer of 5000 digits",
        '{"uid": "u0", "label_count": [' + "9" * 5000 + ", 1, 1]}",
        "not usable JSON",
    ),
    ("negative count", {"uid": "u0", "label_count": [-1, 2, 3]}, "negative count"),
    ("all-zero counts", {"uid": "u0", "label_count": [0, 0, 0]}, "all-zero"),
]


@pytest.mark.parametrize("name,line,match", BAD_CHAOS_LINES, ids=[b[0] for b in BAD_CHAOS_LINES])
def test_malformed_chaosnli_lines(tmp_path, name, line, match):
    chaos, pred = _chaos_files(
        tmp_path, lines=[line], preds=[{"uid": "u0", "logits": [0.0, 1.0, 2.0]}]
    )
    with pytest.raises(DataError, match=match):
        load_chaosnli(chaos, pred)


def test_non_utf8_chaosnli_line(tmp_path):
    chaos, pred = _chaos_files(tmp_path, n=2)
    chaos.write_bytes(chaos.read_bytes() + '{"uid": "caf\xe9"}\n'.encode("latin1"))
    with pytest.raises(DataError, match=r"line 3, byte 13 \(0xe9\) is not UTF-8"):
        load_chaosnli(chaos, pred)


def test_repeated_uid_is_refused_with_both_lines(tmp_path):
    lines = [{"uid": "a", "label_count": [1, 2, 3]}, {"uid": "a", "label_count": [3, 2, 1]}]
    chaos, pred = _chaos_files(tmp_path, lines=lines, preds=[{"uid": "a", "logits": [0, 1, 2]}])
    with pytest.raises(DataError, match="line 2: uid 'a' already appears on line 1"):
        load_chaosnli(chaos, pred)


BAD_PREDICTIONS = [
    ("dict logits", {"uid": "u0", "logits": {"e": 1.0}}, "'logits' must be a list of 3 numbers"),
    ("string logits", {"uid": "u0", "logits": "0.1 0.2 0.7"}, "got a JSON string"),
    ("text entries", {"uid": "u0", "logits": ["0.1", 0.2, 0.7]}, "found the JSON string"),
    ("four logits", {"uid": "u0", "logits": [0, 1, 2, 3]}, "has 4 entries; 3 are expected"),
    ("no logits", {"uid": "u0", "probs": [0.2, 0.3, 0.5]}, "has no 'logits'"),
    (
        "logit of 1e308",
        {"uid": "u0", "logits": [1e308, 0.0, 0.0]},
        r"beyond \+-1000, first 1e\+308 at .*chaos.jsonl', line 1, column 0",
    ),
    ("infinite logit", '{"uid": "u0", "logits": [1e999, 0, 0]}', "NaN or infinite"),
]


@pytest.mark.parametrize("name,row,match", BAD_PREDICTIONS, ids=[b[0] for b in BAD_PREDICTIONS])
def test_malformed_prediction_lines(tmp_path, name, row, match):
    chaos, pred = _chaos_files(
        tmp_path, lines=[{"uid": "u0", "label_count": [1, 2, 3]}], preds=[row]
    )
    with pytest.raises(DataError, match=match):
        load_chaosnli(chaos, pred)


def test_prediction_repeated_with_other_logits_is_refused(tmp_path):
    chaos, pred = _chaos_files(tmp_path, n=2)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"uid": "u1", "logits": [9.0, 9.0, 9.0]}) + "\n")
    with pytest.raises(DataError, match="uid 'u1' has other logits than on"):
        load_chaosnli(chaos, [pred, other])
    same = tmp_path / "same.jsonl"
    same.write_text(pred.read_text().splitlines()[1] + "\n")
    assert load_chaosnli(chaos, [pred, same]).n_items == 2


def test_logits_at_the_bound_fit_cleanly():
    # MAX_ABS_LOGIT is safe: calibrators fit without warnings on logits of +-1000.
    import warnings

    from bayescal.ambiguity import METHODS
    from bayescal.ambiguity.validation import MAX_ABS_LOGIT

    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 3)) * 2
    z[0] = [MAX_ABS_LOGIT, -MAX_ABS_LOGIT, 0.0]
    counts = rng.multinomial(5, [0.4, 0.3, 0.3], size=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("TS", "VS", "Dirichlet-Soft", "SLTS"):
            p = METHODS[name].factory(0).fit(z, counts).predict_proba(z)
            assert np.all(np.isfinite(p)), name


def test_partial_predictions_refused_by_default_naming_the_option(tmp_path):
    chaos, pred = _chaos_files(tmp_path, n=10)
    pred.write_text("".join(pred.read_text().splitlines(keepends=True)[:7]))
    with pytest.raises(DataError, match=r"3 of 10 ChaosNLI uid\(s\) have no prediction") as exc:
        load_chaosnli(chaos, pred)
    assert "missing_predictions='drop'" in str(exc.value)
    assert "--missing-predictions drop" in str(exc.value)
    with pytest.raises(ConfigError, match="missing_predictions must be one of"):
        load_chaosnli(chaos, pred, missing_predictions="skip")


def test_partial_predictions_dropped_on_request(tmp_path):
    chaos, pred = _chaos_files(tmp_path, n=10)
    full = load_chaosnli(chaos, pred)
    kept = pred.read_text().splitlines(keepends=True)
    pred.write_text("".join(kept[:4] + kept[6:]))  # u4 and u5 have no prediction
    d = load_chaosnli(chaos, pred, missing_predictions="drop")
    assert d.n_items == 8 and "u4" not in d.item_ids and "u5" not in d.item_ids
    assert d.attrs["n_dropped"] == 2 and d.attrs["missing_predictions"] == "drop"
    assert "2 of 10 ChaosNLI uid(s) have no prediction" in d.attrs["dropped_reason"]
    assert "'u4', 'u5'" in d.attrs["dropped_reason"]
    keep = [i for i, u in enumerate(full.item_ids) if u not in ("u4", "u5")]
    np.testing.assert_array_equal(d.counts, full.counts[keep])
    np.testing.assert_array_equal(d.logits, full.logits[keep])
    # the drop is kept through subset() and into the labelled view
    assert d.subset([0, 1]).attrs["n_dropped"] == 2 and d.to_dataset().attrs["n_dropped"] == 2
    # nothing covered: even with drop there is nothing to audit
    pred.write_text(json.dumps({"uid": "zz", "logits": [0, 0, 0]}) + "\n")
    with pytest.raises(DataError, match="have no prediction"):
        load_chaosnli(chaos, pred, missing_predictions="drop")


def test_cli_missing_predictions_flag(tmp_path, capsys):
    from bayescal.cli import main

    chaos, pred = _chaos_files(tmp_path, n=80, seed=3)
    lines = pred.read_text().splitlines(keepends=True)
    pred.write_text("".join(lines[:70]))
    out = tmp_path / "out"
    base = ["audit-ambiguity", "--chaosnli", str(chaos), str(pred), "--out", str(out)]
    fast = ["--n-bins", "3", "--n-draws", "2", "--cv-folds", "2", "--methods", "TS"]
    assert main(base + fast + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--missing-predictions drop" in err[0] and not out.exists()
    assert main(base + fast + ["--missing-predictions", "drop"]) == 0
    err = capsys.readouterr().err
    assert "bayescal: 10 of 80 ChaosNLI uid(s) have no prediction" in err
    summary = json.loads((out / "summary.json").read_text())
    text = json.dumps(summary)
    assert '"n_dropped": 10' in text and "missing_predictions='drop'" in text


BAD_NPZ = [
    ("fractional counts", dict(counts=[[1.5, 2.7], [1, 1]]), "whole numbers of votes; 1.5"),
    ("counts of 2**62", dict(counts=[[2**62, 2**62], [1, 1]]), "more than 2\\*\\*53"),
    ("boolean counts", dict(counts=[[True, False], [True, True]]), "booleans"),
    ("logit of 1e308", dict(logits=[[1e308, 0.0], [0.0, 1.0]]), "beyond \\+-1000"),
    ("text logits", dict(logits=np.array([["a", "b"], ["c", "d"]])), "numbers|numeric"),
    ("numeric class names", dict(classes=np.array([1, 2])), "classes must be strings"),
    ("repeated item ids", dict(item_ids=np.array(["a", "a"])), "must be unique"),
    # M13: an array load_npz does not read was ignored without a word
    (
        "misspelt item_ids",
        dict(item_id=np.array(["a", "b"])),
        "'item_id' \\(did you mean 'item_ids'",
    ),
    ("unknown array", dict(junk=np.zeros(2)), "'junk' that bayescal does not read; the arrays"),
    ("misspelt logits", dict(logit=np.zeros((2, 2))), "did you mean 'logits'"),
]


@pytest.mark.parametrize("name,arrays,match", BAD_NPZ, ids=[b[0] for b in BAD_NPZ])
def test_bad_npz_arrays(tmp_path, name, arrays, match):
    from bayescal.ambiguity.loaders import load_npz

    data = dict(logits=[[1.0, 0.0], [0.0, 1.0]], counts=[[3, 1], [0, 4]]) | arrays
    f = tmp_path / "d.npz"
    np.savez(f, **{k: np.asarray(v) for k, v in data.items()})
    with pytest.raises(DataError, match=match):
        load_npz(f)


def test_npz_that_is_a_npy_or_a_pipe(tmp_path):
    import os

    from bayescal.ambiguity.loaders import load_npz

    f = tmp_path / "d.npz"
    np.save(tmp_path / "d.npy", np.zeros(3))
    (tmp_path / "d.npy").rename(f)
    with pytest.raises(DataError, match="is a NumPy .npy array; save the arrays with np.savez"):
        load_npz(f)
    fifo = tmp_path / "p.npz"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="named pipe"):
        load_npz(fifo)


def test_cifar10h_cells_follow_the_csv_rules(tmp_path):
    row = [3] + [5] * 10 + [0.1] * 10
    f = tmp_path / "c.csv"
    f.write_text(",".join(map(str, row)) + "\n" + ",".join(map(str, row[:-1] + ["nan"])) + "\n")
    with pytest.raises(DataError, match=r"column 20: 'nan' at .*c.csv', line 2 is not a number"):
        load_cifar10h(f)
    f.write_text(",".join(map(str, row[:3] + [2.5] + row[4:])) + "\n")
    with pytest.raises(DataError, match="whole numbers of votes; 2.5"):
        load_cifar10h(f)
    f.write_bytes(gzip.compress(b"1,2,3\n"))
    with pytest.raises(DataError, match="gzip-compressed"):
        load_cifar10h(f)
    f.write_text(",".join(map(str, [12] + row[1:])) + "\n")
    with pytest.raises(DataError, match="out of range"):
        load_cifar10h(f)
    f.write_text(",".join(map(str, row)) + "\n" + ",".join(map(str, row)) + ",9\n")
    with pytest.raises(
        DataError, match="line 2 has 22 fields but the first row \\(line 1\\) has 21"
    ):
        load_cifar10h(f)
