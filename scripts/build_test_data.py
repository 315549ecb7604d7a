"""Build the small real-data subsets the test suite reads (tests/data/), seeded and reproducible.

    python scripts/build_test_data.py [--data ../shared/data]

Every output line is a line of the original file, copied byte for byte, in the original
order; only which lines are kept is decided here. The folder layout mirrors the shared data
folder, so anything that takes a data root (the ambiguity notebook's
``BAYESCAL_SHARED_DATA``, the ``--data`` options of the benchmarks) runs on tests/data as
it runs on the full copies.

- cifar10h/resnet-110.csv: 100 images per original CIFAR-10 label (1,000 of 10,000),
  drawn without replacement with seed 7 within each label, so the subset stays balanced
  like the CIFAR-10 test set (6 of 10 classes are animals).
- chaosnli/chaosNLI_snli.jsonl: 600 of the 1,514 ChaosNLI-SNLI lines (seed 8, the
  sample the ambiguity tests used to draw from the full file) and, in
  chaosnli/predictions/, the RoBERTa-base prediction line of each kept ``uid`` from the
  file that holds it (dev or test; the subset has uids from both).
- tabular/credit_default.csv: the header and 3,000 of the 30,000 client rows (seed 9).

tests/data/README.md gives sources, licences and the row counts; keep it in step.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data"
CIFAR_PER_CLASS = 100
CHAOSNLI_ITEMS = 600
CREDIT_ROWS = 3000
PREDICTION_FILES = ("SNLI_dev_roberta-base_0.json", "SNLI_test_roberta-base_0.json")


def _lines(path: Path) -> list[str]:
    """The file's lines with their line endings, blank lines dropped."""
    return [line for line in path.read_text().splitlines(keepends=True) if line.strip()]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    print(
        f"{path.relative_to(OUT)}: {len(lines)} lines, {path.stat().st_size / 1024:.0f} kB, "
        f"sha256 {digest}..."
    )


def build_cifar10h(data: Path) -> None:
    lines = _lines(data / "cifar10h" / "resnet-110.csv")
    label = np.array([int(float(line.split(",", 1)[0])) for line in lines])
    rng = np.random.default_rng(7)
    keep = np.concatenate(
        [rng.choice(np.flatnonzero(label == c), CIFAR_PER_CLASS, replace=False) for c in range(10)]
    )
    _write(OUT / "cifar10h" / "resnet-110.csv", [lines[i] for i in np.sort(keep)])


def build_chaosnli(data: Path) -> None:
    root = data / "chaosnli"
    lines = _lines(root / "chaosNLI_snli.jsonl")
    keep = np.sort(np.random.default_rng(8).choice(len(lines), CHAOSNLI_ITEMS, replace=False))
    kept = [lines[i] for i in keep]
    uids = {json.loads(line)["uid"] for line in kept}
    _write(OUT / "chaosnli" / "chaosNLI_snli.jsonl", kept)
    found = set()
    for name in PREDICTION_FILES:
        preds = [
            line for line in _lines(root / "predictions" / name) if json.loads(line)["uid"] in uids
        ]
        found |= {json.loads(line)["uid"] for line in preds}
        _write(OUT / "chaosnli" / "predictions" / name, preds)
    if found != uids:
        raise SystemExit(f"{len(uids - found)} kept ChaosNLI uids have no prediction line.")


def build_credit(data: Path) -> None:
    header, *rows = _lines(data / "tabular" / "credit_default.csv")
    keep = np.sort(np.random.default_rng(9).choice(len(rows), CREDIT_ROWS, replace=False))
    _write(OUT / "tabular" / "credit_default.csv", [header] + [rows[i] for i in keep])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    data = Path(parser.parse_args().data)
    build_cifar10h(data)
    build_chaosnli(data)
    build_credit(data)


if __name__ == "__main__":
    main()
