"""``bayescal bench cifar-recal``: real ResNet-110 scores, simulated annotators (semi-synthetic).

Binary task: animal (CIFAR-10 classes 2..7) vs vehicle (0, 1, 8, 9). The score is the
model's animal probability, ``sum of the six animal softmax entries / sum of all ten``
(the rows sum to one only up to 2e-7, and a score must lie in [0, 1]). The original
CIFAR-10 labels are the reference; CIFAR-10H's own human labels are nearly error
free on this question, so annotators are simulated: K in {2, 3, 4} class-conditional
flip annotators under the four regimes of :data:`bayescal.bench.tabular.REGIMES`
(K = 2, 3 use the first columns of K = 4), ten seeds.

Per seed the 10,000 test images are split at random into a channel sample (3000),
a recalibration sample (3000) and a test sample (4000); each sample gets its own
annotations. Channels are fitted on the channel sample: marginal Dawid-Skene EM
for K >= 3 (as in the paper's CIFAR study) and joint score-bin EM with five
equal-width score groups (empty groups dropped) for K = 2, where the marginal
model is not identified. Corrected targets use plug-in inverse-variance weights.
Maps: temperature (T in [0.05, 20]), Platt (u and v in [-10, 10], App. G.4),
histogram (ten equal-width bins). Oracle ECE on the test sample: ten equal-width
bins on ``g(Z)`` with the CIFAR-10 labels. Summaries as in the tabular study:
seed-level means over the K x regime grid, then mean and SD over seeds.
"""

from __future__ import annotations

import time

import numpy as np

from bayescal.bench._io import environment, write_json
from bayescal.bench.tabular import (
    K_VALUES,
    REGIMES,
    binned_ece,
    recalibrate_cell,
    regime_channels,
    seed_level_summary,
)

ANIMALS = (2, 3, 4, 5, 6, 7)
SIZES = (3000, 3000, 4000)  # channel / recalibration / test


def add_arguments(parser) -> None:
    parser.add_argument("--data", required=True, help="cifar10h/resnet-110.csv")
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))


def read_resnet110(path):
    """The Kerrigan et al. CSV of the CIFAR-10 test images: CIFAR-10 label, CIFAR-10H's 10
    human vote counts and ResNet-110's 10 probabilities of each image."""
    from pathlib import Path

    from bayescal.errors import DataError

    path = Path(path)
    if not path.is_file():
        raise DataError(f"no such file: {str(path)!r} (expected cifar10h/resnet-110.csv).")
    arr = np.loadtxt(path, delimiter=",")
    if arr.ndim != 2 or arr.shape[1] != 21:
        raise DataError(
            f"{str(path)!r} should have 21 columns (label, "
            f"10 counts, 10 probabilities); got {arr.shape}."
        )
    return arr[:, 0].astype(np.int64), arr[:, 1:11].astype(np.int64), arr[:, 11:21]


def load_animal_scores(path):
    """Animal-vs-vehicle scores and labels from the Kerrigan et al. CSV."""
    label, _, prob = read_resnet110(path)
    animal = prob[:, list(ANIMALS)].sum(axis=1)
    vehicle = prob[:, [0, 1, 8, 9]].sum(axis=1)
    score = animal / (animal + vehicle)
    truth = np.isin(label, ANIMALS).astype(np.int64)
    return score, truth


def run(args) -> int:
    import warnings

    from bayescal.channels import fit_channels
    from bayescal.data.container import Annotations
    from bayescal.errors import BayescalWarning
    from bayescal.simulate import simulate_annotations

    score, truth = load_animal_scores(args.data)
    t0 = time.perf_counter()
    rows, failures = [], []
    for seed in args.seeds:
        perm = np.random.default_rng(seed).permutation(score.size)
        c1, c2 = SIZES[0], SIZES[0] + SIZES[1]
        chan, rec, test = perm[:c1], perm[c1:c2], perm[c2:]
        for r_i, regime in enumerate(REGIMES):
            a4, b4 = regime_channels(regime, 4)
            lab_chan = simulate_annotations(
                truth[chan], a4, b4, random_state=np.random.default_rng([seed, r_i, 0])
            )
            lab_rec = simulate_annotations(
                truth[rec], a4, b4, random_state=np.random.default_rng([seed, r_i, 1])
            )
            for k in K_VALUES:
                names = [f"a{j + 1}" for j in range(k)]
                chan_data = Annotations.from_arrays(score[chan], lab_chan[:, :k], annotators=names)

                def fit(_rec_data, _d=chan_data, _k=k, _seed=seed):
                    if _k >= 3:
                        return fit_channels(_d, "dawid_skene_em", random_state=_seed)
                    return fit_channels(
                        _d, "score_bin_em", groups=5, empty_groups="drop", random_state=_seed
                    )

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BayescalWarning)
                    cell, fail = recalibrate_cell(
                        score[rec],
                        lab_rec[:, :k],
                        truth[rec],
                        score[test],
                        truth[test],
                        a4[:k],
                        b4[:k],
                        fit,
                        platt_slope_bounds=(-10.0, 10.0),
                    )
                for row in cell:
                    rows.append({**row, "seed": seed, "regime": regime, "k": k})
                if fail:
                    failures.append({"seed": seed, "regime": regime, "k": k, "reason": fail})
    recal_rows = [r for r in rows if r["family"] != "channels"]
    out = {
        "protocol": {
            "data": "CIFAR-10 test set, ResNet-110 softmax (Kerrigan et al.), animal vs vehicle",
            "seeds": args.seeds,
            "sizes": {"channel": SIZES[0], "recalibration": SIZES[1], "test": SIZES[2]},
            "regimes": REGIMES,
            "k": list(K_VALUES),
            "channels": "marginal Dawid-Skene EM (K >= 3), joint score-bin "
            "EM with 5 groups (K = 2), channel sample",
            "weights": "plug-in inverse variance",
            "platt_box": "u, v in [-10, 10]",
            "test_ece": "10 equal-width bins on g(Z), CIFAR-10 labels",
        },
        "base_ece_all_items": binned_ece(score, truth),
        "summary": seed_level_summary(recal_rows),
        "summary_by_k": seed_level_summary(recal_rows, keys=("k", "family", "target")),
        "summary_by_regime": seed_level_summary(recal_rows, keys=("regime", "family", "target")),
        "channel_rmse": seed_level_summary(
            [r for r in rows if r["family"] == "channels"], keys=("k",)
        ),
        "failures": failures,
        "rows": rows,
        "seconds": time.perf_counter() - t0,
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0
