"""``bayescal bench isic``: the ISIC 2019 setting of Tao et al.'s Table 3, simulated.

Tao et al. (Sec. 7.3, Appendix I) draw m = 9 synthetic dermatologist labels
per image from an 8x8 inter-reader confusion matrix (Dawid & Skene: each
label of an image with consensus class ``y`` is drawn from row ``y``); the
matrix ships with the package (``bayescal/ambiguity/data/isic2019_confusion.csv``).
Their classifiers are trained CNN/ViT models we do not have; the data come
from :func:`bayescal.ambiguity.isic.simulate_isic` (ISIC 2019 class
frequencies, a simulated over-confident classifier). Tao et al.'s protocol
otherwise (SPEC §2): stratified 50/50 calibration/test split by voted label,
every method fitted on the calibration half (Oracle TS on the test half),
ECE_true / aECE / cwECE with 100 label draws, both Brier forms, NLL; plus
bootstrap intervals for the first seed (:func:`bayescal.ambiguity.metric_intervals`).

The JSON holds the paper's Table 3 (ISIC 2019, EfficientNet-B4 and ViT-S/16)
beside our rows; the model is simulated, so the comparison is about the
ordering of methods and the Brier scale, not the values.
"""

from __future__ import annotations

import time
from typing import Any

from bayescal.bench._io import environment, mean_sd, write_json
from bayescal.bench.ambiguity import evaluate_methods, select_methods

__all__ = ["add_arguments", "run", "PAPER_TABLE3"]

_COLUMNS = ("T", "ece_true", "aece", "cwece", "brier_as_published", "nll")
_ROWS = {
    "EfficientNet-B4": {
        "Uncalibrated": (None, 25.87, 25.97, 6.64, 0.600, 2.686),
        "TS": (1.77, 18.72, 18.70, 5.02, 0.559, 1.661),
        "ATS": (1.70, 18.83, 18.80, 5.03, 0.560, 1.733),
        "Platt": (None, 19.16, 19.08, 5.20, 0.559, 1.658),
        "Dirichlet-Hard": (None, 20.03, 19.96, 5.25, 0.560, 1.677),
        "SLTS": (4.42, 9.76, 9.91, 3.03, 0.529, 1.149),
        "MCTS S=1": (4.51, 10.09, 10.15, 3.08, 0.530, 1.149),
        "SoftPlatt": (None, 9.98, 9.99, 2.33, 0.523, 1.111),
        "VS": (None, 9.68, 9.64, 2.48, 0.524, 1.123),
        "IR-Soft": (None, 1.77, 2.21, 4.36, 0.539, 1.288),
        "Dirichlet-Soft": (None, 8.35, 8.39, 2.08, 0.518, 1.086),
        "LS-TS": (4.30, 9.34, 9.46, 2.98, 0.528, 1.149),
        "Oracle TS (oracle)": (4.38, 9.64, 9.77, 3.00, 0.528, 1.149),
    },
    "ViT-S/16": {
        "Uncalibrated": (None, 21.28, 21.17, 6.21, 0.650, 1.803),
        "TS": (1.23, 17.04, 16.95, 5.49, 0.630, 1.578),
        "ATS": (1.12, 17.53, 17.48, 5.46, 0.631, 1.730),
        "Platt": (None, 18.17, 18.14, 4.94, 0.610, 1.595),
        "Dirichlet-Hard": (None, 18.51, 18.49, 5.02, 0.613, 1.617),
        "SLTS": (2.68, 7.10, 6.77, 3.35, 0.594, 1.248),
        "MCTS S=1": (2.77, 7.47, 7.15, 3.35, 0.595, 1.248),
        "SoftPlatt": (None, 7.82, 7.71, 1.90, 0.572, 1.201),
        "VS": (None, 7.74, 7.59, 2.14, 0.574, 1.211),
        "IR-Soft": (None, 2.05, 2.13, 5.65, 0.627, 1.479),
        "Dirichlet-Soft": (None, 6.32, 6.28, 1.64, 0.568, 1.184),
        "LS-TS": (3.98, 15.49, 15.47, 4.52, 0.619, 1.303),
        "Oracle TS (oracle)": (2.70, 7.23, 6.86, 3.34, 0.594, 1.248),
    },
}
#: Tao et al., Table 3 (ISIC 2019, m = 9, K = 8): ECE-type metrics in percent.
PAPER_TABLE3: dict[str, dict[str, dict[str, Any]]] = {
    model: {name: dict(zip(_COLUMNS, values)) for name, values in rows.items()}
    for model, rows in _ROWS.items()
}
#: The methods of Table 3, in its order.
TABLE3_METHODS = tuple(PAPER_TABLE3["EfficientNet-B4"])
#: What the JSON keeps of each method's evaluation per seed.
_KEPT = ("T", "ece_true", "aece", "cwece", "ece_voted", "brier", "brier_sampled", "nll")
_KEPT_ALSO = ("accuracy", "seconds")


def add_arguments(parser) -> None:
    parser.add_argument("--json", metavar="OUT", help="Write the results JSON here too.")
    parser.add_argument(
        "--n-items", type=int, default=7600, help="Items (calibration + test; default 7600)."
    )
    parser.add_argument("--m", type=int, default=9, help="Annotations per item (default 9).")
    parser.add_argument(
        "--sharpness", type=float, default=4.0, help="Over-confidence of the model (default 4)."
    )
    parser.add_argument(
        "--noise", type=float, default=3.0, help="Logit noise of the model (default 3)."
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2], help="Seeds (default: 0 1 2)."
    )
    parser.add_argument("--n-draws", type=int, default=100, help="Label draws (default 100).")
    parser.add_argument(
        "--n-boot", type=int, default=200, help="Bootstrap replicates, first seed (200)."
    )
    parser.add_argument("--methods", nargs="+", metavar="NAME", help="Subset of Table 3's methods.")


def run(args) -> int:
    import os

    import numpy as np

    from bayescal.ambiguity import METHODS, metric_intervals
    from bayescal.ambiguity.isic import ISIC2019_CLASS_COUNTS, simulate_isic
    from bayescal.ambiguity.metric_intervals import intervals_to_dict
    from bayescal.ambiguity.targets import annotation_entropy
    from bayescal.errors import ConfigError

    specs = select_methods(args.methods, METHODS, list(TABLE3_METHODS))
    names = list(specs)
    if args.n_items < 100 or args.m < 1:
        raise ConfigError("--n-items must be at least 100 and --m at least 1.")
    started = time.perf_counter()
    per_seed, describe, intervals = {}, {}, None
    for i, seed in enumerate(args.seeds):
        data = simulate_isic(
            args.n_items, m=args.m, sharpness=args.sharpness, noise=args.noise, random_state=seed
        )
        cal, test, rows, _, probas = evaluate_methods(specs, data, seed, n_draws=args.n_draws)
        per_seed[str(seed)] = {
            n: {k: r.get(k) for k in _KEPT + _KEPT_ALSO} for n, r in rows.items()
        }
        if i == 0:
            describe = {
                "accuracy_vs_voted": float(np.mean(data.logits.argmax(1) == data.voted)),
                "accuracy_vs_consensus": float(np.mean(data.logits.argmax(1) == data.reference)),
                "mean_normalised_annotation_entropy": float(annotation_entropy(data.counts).mean()),
                "mean_annotation_entropy_nats": float(
                    annotation_entropy(data.counts).mean() * np.log(data.n_classes)
                ),
                "paper_mean_annotation_entropy": 0.66,
                "voted_equals_consensus": float(np.mean(data.voted == data.reference)),
                "n_cal": int(cal.size),
                "n_test": int(test.size),
            }
            ds = metric_intervals(
                probas,
                data.counts[test],
                n_boot=args.n_boot,
                n_draws=args.n_draws,
                random_state=seed,
            )
            intervals = intervals_to_dict(ds)
    summary: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in names:
        summary[name] = {}
        for key in ("T", "ece_true", "aece", "cwece", "brier", "brier_sampled", "nll"):
            vals: list[float] = [v for s in per_seed if (v := per_seed[s][name][key]) is not None]
            if vals:
                summary[name][key] = mean_sd(vals)
    ok = [n for n in names if "(oracle)" not in n]

    def best(key):
        return min(ok, key=lambda n: summary[n][key]["mean"])

    paper = PAPER_TABLE3["EfficientNet-B4"]
    result = {
        "benchmark": "isic",
        "design": {
            "n_items": args.n_items,
            "m": args.m,
            "sharpness": args.sharpness,
            "noise": args.noise,
            "n_draws": args.n_draws,
            "n_boot": args.n_boot,
            "seeds": list(args.seeds),
            "class_counts": ISIC2019_CLASS_COUNTS,
            "units": "ece_true, aece, cwece, ece_voted in percent; brier (Eq. 5) and "
            "brier_sampled (Eq. 5 + 1 - ||pi||^2) as fractions",
            "interval_method": "bootstrap over test items of the first seed "
            "(bayescal.ambiguity.metric_intervals)",
        },
        "data": describe,
        "results": summary,
        "per_seed": per_seed,
        "intervals_first_seed": intervals,
        "best": {key: best(key) for key in ("ece_true", "aece", "cwece", "brier", "nll")},
        "paper_best_efficientnet_b4": {
            "ece_true": min(
                (n for n in paper if "(oracle)" not in n), key=lambda n: paper[n]["ece_true"]
            ),
            "nll": min((n for n in paper if "(oracle)" not in n), key=lambda n: paper[n]["nll"]),
            "brier_as_published": min(
                (n for n in paper if "(oracle)" not in n),
                key=lambda n: paper[n]["brier_as_published"],
            ),
        },
        "paper_table3": PAPER_TABLE3,
        "environment": environment(),
        "load_average_1min": os.getloadavg()[0],
        "seconds": time.perf_counter() - started,
    }
    write_json(result, args.json)
    return 0
