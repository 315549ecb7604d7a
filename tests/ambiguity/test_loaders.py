"""Loaders: formats, the ChaosNLI class-order trap, stratified splits, bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayescal.ambiguity import load_chaosnli, load_cifar10h, stratified_split
from bayescal.ambiguity.loaders import CHAOSNLI_CLASSES
from bayescal.errors import ConfigError, DataError


def test_cifar10h_layout(cifar10h):
    d = cifar10h
    assert (d.n_items, d.n_classes) == (10000, 10)
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
    assert d.n_items == 1514 and d.classes == CHAOSNLI_CLASSES
    assert np.all(d.counts.sum(axis=1) == 100)
    right = np.mean(d.logits.argmax(axis=1) == d.voted)
    jsonl, preds = chaosnli_paths
    wrong = load_chaosnli(jsonl, preds, prediction_order=CHAOSNLI_CLASSES)
    wrong_agree = np.mean(wrong.logits.argmax(axis=1) == wrong.voted)
    # README: ~74% agreement with the right order, ~32% with the file order taken as is.
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
    assert len(cal) == 5000 and len(test) == 5000
    assert np.intersect1d(cal, test).size == 0
    per_class = np.bincount(cifar10h.voted[cal], minlength=10)
    total = np.bincount(cifar10h.voted, minlength=10)
    assert np.all(np.abs(per_class - total / 2) <= 1)
    again, _ = stratified_split(cifar10h.voted, random_state=42)
    other, _ = stratified_split(cifar10h.voted, random_state=43)
    assert np.array_equal(cal, again) and not np.array_equal(cal, other)
    small, _ = stratified_split(cifar10h.voted, fraction=0.05, random_state=0)
    assert len(small) == 500
