"""Build the ambiguity examples shipped in bayescal/ambiguity/data/ from the public data.

    python scripts/build_ambiguity_examples.py [SHARED_DATA]   # default: ../shared/data

- ``chaosnli-snli.npz``: every one of the 1,514 ChaosNLI-SNLI pairs (100 annotations
  each) with the RoBERTa-base logits of Baan et al., read by ``load_chaosnli``
  (logits in ChaosNLI's class order).
- ``cifar10h-2000.npz``: 2,000 CIFAR-10H images, 200 per CIFAR-10 class drawn
  without replacement with seed 20261130, with the ResNet-110 log-probabilities
  read by ``load_cifar10h``, in the original test-set order.

Both are plain ``.npz`` archives (``logits``, ``counts``, ``classes``, ``item_ids``,
``reference``) that ``bayescal.ambiguity.load_npz`` reads without pickling.
"""

import sys
from pathlib import Path

import numpy as np

from bayescal.ambiguity import load_chaosnli, load_cifar10h

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bayescal" / "ambiguity" / "data"
SEED = 20261130
PER_CLASS = 200


def save(path: Path, data) -> None:
    np.savez_compressed(
        path,
        logits=data.logits,
        counts=data.counts.astype(np.int16),
        classes=np.asarray(data.classes),
        item_ids=np.asarray(data.item_ids),
        reference=data.reference,
    )
    print(path, path.stat().st_size, "bytes,", data.n_items, "items")


def main() -> None:
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
    chaos = shared / "chaosnli"
    save(
        OUT / "chaosnli-snli.npz",
        load_chaosnli(
            chaos / "chaosNLI_snli.jsonl",
            [
                chaos / "predictions" / "SNLI_dev_roberta-base_0.json",
                chaos / "predictions" / "SNLI_test_roberta-base_0.json",
            ],
        ),
    )
    cifar = load_cifar10h(shared / "cifar10h" / "resnet-110.csv")
    rng = np.random.default_rng(SEED)
    keep = np.concatenate(
        [
            rng.choice(np.flatnonzero(cifar.reference == c), PER_CLASS, replace=False)
            for c in range(cifar.n_classes)
        ]
    )
    save(OUT / "cifar10h-2000.npz", cifar.subset(np.sort(keep)))


if __name__ == "__main__":
    main()
