"""Helpers shared by the out-of-core tests."""

import types

import numpy as np

from bayescal import Annotations
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass, simulate_toy


def write_parts(frame, folder, fmt, n_parts, **kw):
    """Split ``frame`` by rows into ``n_parts`` files; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, idx in enumerate(np.array_split(np.arange(len(frame)), n_parts)):
        path = folder / f"part-{i:03d}.{fmt}"
        part = frame.iloc[idx]
        if fmt == "csv":
            part.to_csv(path, index=False)
        else:
            part.to_parquet(path, index=False, **kw)
        paths.append(path)
    return paths


def reordered(data, annotators, rows=None, *, truth=True, gold=True):
    """The same items (optionally a subset) with the annotator columns in another order."""
    rows = np.arange(data.n_items) if rows is None else rows
    order = [data.annotators.index(a) for a in annotators]
    kw = {
        "truth": data.truth[rows] if truth else None,
        "gold": data.gold[rows] if gold and data.gold is not None else None,
        "annotators": annotators,
    }
    labels = data.labels[rows][:, order]
    return Annotations.from_arrays(data.probs[rows], labels, classes=data.classes, **kw)


def make_case(c):
    """Items with truth, some nobody answered and 15% gold items, as a container and a frame
    (columns item, score or p0..p{C-1}, a1..a3, truth, known)."""
    import pandas as pd

    rng = np.random.default_rng(c)
    if c == 2:
        d = simulate_toy(2400, "shifted", random_state=12, missing=0.3)
        probs, columns, kw = d.score, {"score": d.score}, {}
    else:
        d = simulate_multiclass(2400, c, random_state=12, missing=0.3, n_profiles=80)
        probs = d.probs
        names = [f"p{k}" for k in range(c)]
        columns, kw = dict(zip(names, probs.T)), {"probs": names}
    labels = d.labels.astype(np.float64)
    labels[rng.random(d.n_items) < 0.02] = np.nan  # items nobody answered
    gold = np.where(rng.random(d.n_items) < 0.15, d.truth, np.nan)
    if c == 2:
        data = Annotations.from_arrays(probs, labels, truth=d.truth, gold=gold)
    else:
        # class names as the out-of-core default: the probability column names
        data = MulticlassAnnotations.from_arrays(
            probs, labels, truth=d.truth, gold=gold, classes=kw["probs"]
        )
    frame = pd.DataFrame(
        {
            "item": [f"it{i}" for i in range(d.n_items)],
            **columns,
            **{a: labels[:, j] for j, a in enumerate(data.annotators)},
            "truth": d.truth,
            "known": gold,
        }
    )
    return types.SimpleNamespace(c=c, data=data, frame=frame, kw=kw)


def audit_gold_counts(tmp_path, *argv):
    """Run ``bayescal audit ... --gold known`` out of core; the gold counts it reports."""
    import contextlib
    import io
    import json

    from bayescal.cli import main

    err = io.StringIO()
    argv = ["audit", *argv, "--gold", "known", "--channels", "score-bin-em"]
    argv += ["--groups", "3", "--bins", "5", "--quiet", "--out", str(tmp_path / "report")]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    assert code == 0, err.getvalue()
    g = json.loads((tmp_path / "report" / "summary.json").read_text())["knowledge"]["gold"]
    return g["n_gold_0"], g["n_gold_1"]
