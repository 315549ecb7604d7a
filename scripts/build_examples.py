"""Build the embedded examples from ../shared/data (seeded, reproducible).

    python scripts/build_examples.py [--data ../shared/data]

(a) snli-entailment: ChaosNLI-SNLI, "is it entailment?". Score = RoBERTa-base
    P(entailment) (softmax of its logits; entailment is class 0 in both class
    orders). Three real annotations per pair, sampled without replacement from
    the 100 ChaosNLI annotations (1 = entailment). Reference = majority of the
    other 97 annotations (entailment when more than 48.5 of them say so).
(b) cifar10h-catdog: the 2,000 CIFAR-10 test images labelled cat or dog. Score =
    ResNet-110 P(dog | cat or dog) = p_dog / (p_cat + p_dog). Three real human
    answers sampled without replacement from all of the image's votes; 1 = dog,
    0 = cat, and an answer naming another class is left blank (missing), which
    makes the example exercise missing answers. Reference = the CIFAR-10 label
    (1 = dog).

(c) snli-3class (multiclass): the 1,514 ChaosNLI-SNLI pairs. Probabilities =
    softmax of RoBERTa-base's logits reordered from (entailment, contradiction,
    neutral) to ChaosNLI's (entailment, neutral, contradiction). Three real
    annotations per pair, sampled without replacement from its 100, written as
    class names. No reference column: ChaosNLI has no true class beyond the
    annotations (the audit's ambiguity view uses the answers themselves).
(d) cifar10h-10class (multiclass): 1,000 CIFAR-10 test images drawn without
    replacement. Probabilities = ResNet-110 softmax (six decimals; every row
    sums to one within 1e-5). Three real human answers sampled without
    replacement from the image's votes, as class names. Reference = the
    CIFAR-10 label. (c) and (d) use their own generator (seed + 14), so (a) and
    (b) are unchanged.

ChaosNLI and CIFAR-10H collect answers from anonymous crowds, so the three
columns are annotation slots (random crowd members), not three fixed people:
their channels describe the crowd's average answer behaviour.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from bayescal.examples import MULTICLASS_EXAMPLES

SEED = 20261129
OUT = Path(__file__).resolve().parents[1] / "bayescal" / "examples"


def _softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _snli_predictions(data: Path) -> dict:
    preds = {}
    for name in ("SNLI_dev_roberta-base_0.json", "SNLI_test_roberta-base_0.json"):
        for line in (data / "chaosnli" / "predictions" / name).read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                preds[rec["uid"]] = rec
    return preds


def build_snli(data: Path, rng) -> list[dict]:
    preds = _snli_predictions(data)
    rows = []
    for line in (data / "chaosnli" / "chaosNLI_snli.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        counts = np.asarray(rec["label_count"])  # entailment, neutral, contradiction
        pool = np.repeat([1, 0, 0], counts)  # 1 = entailment
        pick = rng.choice(pool.size, size=3, replace=False)
        rest = np.delete(pool, pick)
        p = _softmax(preds[rec["uid"]]["logits"])[0]  # entailment: index 0 in both orders
        rows.append(
            {
                "item": rec["uid"],
                "score": f"{p:.6f}",
                "r1": int(pool[pick[0]]),
                "r2": int(pool[pick[1]]),
                "r3": int(pool[pick[2]]),
                "reference": int(rest.sum() > rest.size / 2),
            }
        )
    return rows


def build_cifar(data: Path, rng) -> list[dict]:
    table = np.loadtxt(data / "cifar10h" / "resnet-110.csv", delimiter=",")
    label = table[:, 0].astype(int)
    counts = table[:, 1:11].astype(int)
    prob = table[:, 11:21]
    rows = []
    for i in np.flatnonzero((label == 3) | (label == 5)):
        pool = np.repeat(np.arange(10), counts[i])
        pick = pool[rng.choice(pool.size, size=3, replace=False)]
        answer = ["1" if c == 5 else "0" if c == 3 else "" for c in pick]  # other classes: blank
        score = prob[i, 5] / (prob[i, 3] + prob[i, 5])
        rows.append(
            {
                "item": f"cifar10-test-{i}",
                "score": f"{score:.6f}",
                "r1": answer[0],
                "r2": answer[1],
                "r3": answer[2],
                "reference": int(label[i] == 5),
            }
        )
    return rows


SNLI_CLASSES = MULTICLASS_EXAMPLES["snli-3class"][0]
CIFAR_CLASSES = MULTICLASS_EXAMPLES["cifar10h-10class"][0]


def build_snli_multiclass(data: Path, rng) -> list[dict]:
    preds = _snli_predictions(data)
    rows = []
    for line in (data / "chaosnli" / "chaosNLI_snli.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        pool = np.repeat(np.arange(3), rec["label_count"])
        pick = pool[rng.choice(pool.size, size=3, replace=False)]
        p = _softmax(np.asarray(preds[rec["uid"]]["logits"])[[0, 2, 1]])
        row = {"item": rec["uid"]}
        row.update({f"p_{c}": f"{v:.6f}" for c, v in zip(SNLI_CLASSES, p)})
        row.update({f"r{j + 1}": SNLI_CLASSES[a] for j, a in enumerate(pick)})
        rows.append(row)
    return rows


def build_cifar_multiclass(data: Path, rng) -> list[dict]:
    table = np.loadtxt(data / "cifar10h" / "resnet-110.csv", delimiter=",")
    label = table[:, 0].astype(int)
    counts = table[:, 1:11].astype(int)
    prob = table[:, 11:21]
    rows = []
    for i in np.sort(rng.choice(label.size, size=1000, replace=False)):
        pool = np.repeat(np.arange(10), counts[i])
        pick = pool[rng.choice(pool.size, size=3, replace=False)]
        row = {"item": f"cifar10-test-{i}"}
        row.update({f"p_{c}": f"{v:.6f}" for c, v in zip(CIFAR_CLASSES, prob[i] / prob[i].sum())})
        row.update({f"r{j + 1}": CIFAR_CLASSES[a] for j, a in enumerate(pick)})
        row["reference"] = CIFAR_CLASSES[label[i]]
        rows.append(row)
    return rows


def write(rows, path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{path}: {len(rows)} rows, {path.stat().st_size / 1024:.1f} kB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    args = parser.parse_args()
    data = Path(args.data)
    rng = np.random.default_rng(SEED)
    write(build_snli(data, rng), OUT / "snli-entailment.csv")
    write(build_cifar(data, rng), OUT / "cifar10h-catdog.csv")
    rng_mc = np.random.default_rng(SEED + 14)
    write(build_snli_multiclass(data, rng_mc), OUT / "snli-3class.csv")
    write(build_cifar_multiclass(data, rng_mc), OUT / "cifar10h-10class.csv")


if __name__ == "__main__":
    main()
