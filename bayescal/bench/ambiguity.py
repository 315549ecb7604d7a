"""``bayescal bench ambiguity``: every calibrator of Tao et al. on CIFAR-10H or ChaosNLI.

Protocol (SPEC §2): stratified 50/50 calibration/test split by voted label,
one split per seed; every method is fitted on the calibration half only,
except the Oracle TS, which is fitted on the test half and labelled as an
oracle wherever it appears. Metrics on the test half: ECE_true, aECE, cwECE
(100 label draws, 15 bins), the plug-in ECE_true, ECE_voted (all in percent),
Brier and NLL against the annotator distribution, voted-label accuracy.

Ablations (on the first seed's split, test half unchanged):
``--ablate-cal-size`` (fractions of the calibration half, stratified),
``--ablate-annotations`` (m annotations per calibration item, drawn without
replacement from the counts; voted labels and soft targets both come from
the m annotations) and ``--ablate-entropy`` (pointwise TS error
``|p_c - pi_c|`` by annotation-entropy strata, unanimous items first, Prop. 2).

``--mcts-sweep`` (Tao et al., Table 1): MCTS with S = 1, 5, 20, 50, 200 sampled
annotations per calibration item on the first seed's split, each S refitted
with five sampling seeds while the metric's label draws stay fixed (so the
spread is the sampling's alone), beside TS and SLTS (the S -> infinity limit).

Besides Tao et al.'s methods the table carries the Dirichlet calibrators at the
paper's fixed ODIR weight (``Dirichlet-Hard (ODIR 1e-3)``, ``Dirichlet-Soft
(ODIR 1e-3)``) next to the library's cross-validated default, and the
Discussion's two-stage recipe (``Dirichlet-Soft + TS``).
"""

from __future__ import annotations

import json
import time

from bayescal.ambiguity.calibrators import (
    TAO_ODIR,
    DirichletCalibration,
    MethodSpec,
    MonteCarloTemperatureScaling,
    SoftDirichletCalibration,
)
from bayescal.ambiguity.evaluation import entropy_strata_errors, fit_evaluate
from bayescal.bench._io import environment, mean_sd

__all__ = ["add_arguments", "run"]

#: Tao et al.'s split seed; the benchmark's published JSON uses it.
PAPER_SEED = 42
ABLATION_METHODS = (
    "TS",
    "LS-TS",
    "SLTS",
    "MCTS S=1",
    "VS",
    "SoftPlatt",
    "Dirichlet-Soft",
    "HB-Soft",
    "IR-Soft",
)
ENTROPY_METHODS = ("Uncalibrated", "TS", "SLTS", "Dirichlet-Soft")

#: Rows beside METHODS: the Dirichlet calibrators at Tao et al.'s fixed ODIR weight.
FIXED_ODIR = {
    "Dirichlet-Hard (ODIR 1e-3)": MethodSpec(
        "Dirichlet-Hard (ODIR 1e-3)",
        "voted",
        lambda rs: DirichletCalibration(lambda_offdiag=TAO_ODIR),
    ),
    "Dirichlet-Soft (ODIR 1e-3)": MethodSpec(
        "Dirichlet-Soft (ODIR 1e-3)",
        "soft",
        lambda rs: SoftDirichletCalibration(lambda_offdiag=TAO_ODIR),
    ),
}

#: Tao et al., Table 1 (CIFAR-10H, ResNet-50; mean +- std over 5 seeds): ECE_true (%), T*.
PAPER_TABLE1 = {
    "model": "ResNet-50 on CIFAR-10H (Tao et al., Table 1)",
    "TS": {"ece_true": 4.29, "T": 2.030},
    "MCTS": {
        "1": {"ece_true": [1.53, 0.01], "T": [3.174, 0.041]},
        "5": {"ece_true": [1.53, 0.02], "T": [3.166, 0.014]},
        "20": {"ece_true": [1.52, 0.00], "T": [3.187, 0.013]},
        "50": {"ece_true": [1.52, 0.01], "T": [3.185, 0.007]},
        "200": {"ece_true": [1.52, 0.00], "T": [3.178, 0.003]},
    },
    "SLTS": {"ece_true": 1.51, "T": 3.180},
}
MCTS_SAMPLES = (1, 5, 20, 50, 200)
MCTS_SEEDS = (0, 1, 2, 3, 4)
_ABLATION_KEYS = ("ece_true", "aece", "cwece", "nll", "brier", "brier_sampled")


def add_arguments(parser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--cifar10h", metavar="PATH", help="CIFAR-10H CSV (label, 10 counts, 10 probabilities)."
    )
    src.add_argument(
        "--chaosnli",
        nargs="+",
        metavar=("JSONL", "PRED"),
        help="ChaosNLI JSONL followed by one or more prediction files (joined on uid).",
    )
    parser.add_argument(
        "--json", metavar="OUT", help="Write the results JSON here (it is also printed)."
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[PAPER_SEED],
        help=f"Split seeds (default: {PAPER_SEED}, the paper's).",
    )
    parser.add_argument(
        "--figure", metavar="PNG", help="Reliability-diagram panel of every method (first seed)."
    )
    parser.add_argument(
        "--n-draws", type=int, default=100, help="Label draws for the sampled ECEs (default 100)."
    )
    parser.add_argument("--n-bins", type=int, default=15, help="Bins of the ECEs (default 15).")
    parser.add_argument(
        "--methods", nargs="+", metavar="NAME", help="Subset of methods (default: all)."
    )
    parser.add_argument(
        "--ablate-cal-size", action="store_true", help="Calibration-set-size ablation."
    )
    parser.add_argument(
        "--cal-fractions",
        nargs="+",
        type=float,
        default=[0.05, 0.1, 0.2, 0.5, 1.0],
        help="Fractions of the calibration half (default: 0.05 0.1 0.2 0.5 1.0).",
    )
    parser.add_argument(
        "--ablate-annotations", action="store_true", help="Annotations-per-item ablation."
    )
    parser.add_argument(
        "--annotation-counts",
        nargs="+",
        default=["1", "2", "5", "10", "all"],
        help="Values of m (integers or 'all'; default: 1 2 5 10 all).",
    )
    parser.add_argument(
        "--ablate-entropy", action="store_true", help="Pointwise error by annotation entropy."
    )
    parser.add_argument(
        "--entropy-bins", type=int, default=5, help="Equal-frequency entropy strata (default 5)."
    )
    parser.add_argument("--ablations", action="store_true", help="Run all three ablations.")
    parser.add_argument(
        "--mcts-sweep",
        action="store_true",
        help="MCTS with S sampled annotations per item (Tao et al., Table 1), first seed's split.",
    )
    parser.add_argument(
        "--mcts-samples",
        nargs="+",
        type=int,
        default=list(MCTS_SAMPLES),
        help="Values of S (default: 1 5 20 50 200, Table 1's).",
    )
    parser.add_argument(
        "--mcts-seeds",
        nargs="+",
        type=int,
        default=list(MCTS_SEEDS),
        help="Sampling seeds per S (default: 0 1 2 3 4).",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=200,
        help="Bootstrap replicates of the first seed's metric intervals (default 200; 0: none).",
    )


def _load(args):
    from bayescal.ambiguity import load_chaosnli, load_cifar10h
    from bayescal.errors import ConfigError

    if args.cifar10h:
        return load_cifar10h(args.cifar10h)
    if len(args.chaosnli) < 2:
        raise ConfigError(
            "--chaosnli needs the ChaosNLI JSONL followed by at least one prediction file."
        )
    return load_chaosnli(args.chaosnli[0], args.chaosnli[1:])


def select_methods(requested, table: dict, default: list[str]) -> dict:
    """The specs of the ``--methods`` asked for (``default`` without any); an unknown name is
    refused with the list to choose from."""
    from bayescal.errors import ConfigError

    names = list(requested) if requested else list(default)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; choose from {', '.join(table)}.")
    return {n: table[n] for n in names}


def evaluate_methods(specs, data, seed, n_bins=15, n_draws=100, *, keep_bins=False):
    """Tao et al.'s protocol on one split seed (SPEC §2): a stratified 50/50 calibration /
    test split by voted label, every method fitted and scored by :func:`fit_evaluate`:
    ``(cal, test, results, bins, probas)``, the last three by method."""
    from bayescal.ambiguity import stratified_split

    cal, test = stratified_split(data.voted, fraction=0.5, random_state=seed)
    results, bins, probas = {}, {}, {}
    for name, spec in specs.items():
        results[name], bins[name], probas[name] = fit_evaluate(
            spec,
            data,
            cal,
            test,
            random_state=seed,
            n_bins=n_bins,
            n_draws=n_draws,
            keep_bins=keep_bins,
        )
    return cal, test, results, bins, probas


def _summary(per_seed: dict) -> dict:
    first = next(iter(per_seed.values()))
    return {
        name: {
            key: mean_sd([r[name][key] for r in per_seed.values()])
            for key, val in row.items()
            if isinstance(val, (int, float)) and not isinstance(val, bool)
        }
        for name, row in first.items()
    }


def _cal_size_ablation(data, cal, test, specs, args, seed):
    import numpy as np

    from bayescal.ambiguity import stratified_split

    rows = {}
    for frac in args.cal_fractions:
        if frac >= 1.0:
            sub = cal
        else:
            first, _ = stratified_split(data.voted[cal], fraction=frac, random_state=seed)
            sub = cal[first]
        res = _ablation_results(data, sub, test, specs, args, seed)
        rows[f"{frac:g}"] = {"n_cal": int(np.size(sub)), "results": res}
    return rows


def _ablation_results(data, cal, test, specs, args, seed, targets=None, keys=_ABLATION_KEYS):
    """The ablation's metrics of every :data:`ABLATION_METHODS` entry among ``specs``."""
    res = {}
    for name in (n for n in ABLATION_METHODS if n in specs):
        r, _, _ = fit_evaluate(
            specs[name],
            data,
            cal,
            test,
            random_state=seed,
            n_bins=args.n_bins,
            n_draws=args.n_draws,
            targets=targets,
        )
        res[name] = {k: r[k] for k in keys if k in r}
    return res


def _annotation_ablation(data, cal, test, specs, args, seed):
    from bayescal.ambiguity import subsample_annotations
    from bayescal.errors import ConfigError

    rows = {}
    for m in args.annotation_counts:
        if str(m) == "all":
            targets = data.counts[cal]
        else:
            try:
                mm = int(m)
            except ValueError as exc:
                raise ConfigError(
                    f"--annotation-counts takes integers or 'all', got {m!r}."
                ) from exc
            targets = subsample_annotations(data.counts[cal], mm, random_state=seed)
        keys = (*_ABLATION_KEYS, "T")  # T where the method has one
        rows[str(m)] = _ablation_results(data, cal, test, specs, args, seed, targets, keys)
    return rows


def _mcts_sweep(data, cal, test, args, seed):
    """Tao et al., Table 1: MCTS for each S and sampling seed; the metric's draws fixed."""

    from bayescal.errors import ConfigError

    bad = [s for s in args.mcts_samples if s < 1]
    if bad or not args.mcts_samples or not args.mcts_seeds:
        raise ConfigError(
            "--mcts-samples takes positive integers and --mcts-seeds at least one seed; "
            f"got {args.mcts_samples} and {args.mcts_seeds}."
        )
    rows = {}
    for s in args.mcts_samples:
        runs = []
        for sampling_seed in args.mcts_seeds:
            spec = MethodSpec(
                f"MCTS S={s}",
                "soft",
                # The factory ignores the evaluation seed: only the sampling seed varies.
                lambda rs, _s=s, _r=sampling_seed: MonteCarloTemperatureScaling(
                    n_samples=_s, random_state=_r
                ),
            )
            r, _, _ = fit_evaluate(
                spec, data, cal, test, random_state=seed, n_bins=args.n_bins, n_draws=args.n_draws
            )
            runs.append(r)
        row = {"sampling_seeds": list(args.mcts_seeds)}
        for key in ("T", *_ABLATION_KEYS, "ece_voted"):
            vals = [float(r[key]) for r in runs]
            row[key] = {**mean_sd(vals), "values": vals}
        rows[str(s)] = row
    return rows


def run(args) -> int:
    import os

    import numpy as np

    from bayescal.ambiguity import METHODS, metric_intervals
    from bayescal.ambiguity.metric_intervals import intervals_to_dict
    from bayescal.errors import ConfigError

    t_start = time.perf_counter()
    if (args.ablations or args.ablate_entropy) and args.entropy_bins < 2:
        raise ConfigError(f"--entropy-bins must be at least 2, got {args.entropy_bins}.")
    data = _load(args)
    table = {**METHODS, **FIXED_ODIR}
    specs = select_methods(args.methods, table, list(table))
    if not args.seeds:
        raise ConfigError("--seeds needs at least one integer.")
    first = args.seeds[0]
    split = evaluate_methods(specs, data, first, args.n_bins, args.n_draws, keep_bins=True)
    cal, test, _, bins_first, probas_first = split
    per_seed = {first: split[2]}
    for seed in args.seeds[1:]:
        per_seed[seed] = evaluate_methods(specs, data, seed, args.n_bins, args.n_draws)[2]
    intervals = None
    if args.n_boot:
        ds = metric_intervals(
            probas_first,
            data.counts[test],
            n_boot=args.n_boot,
            n_bins=args.n_bins,
            n_draws=args.n_draws,
            random_state=first,
        )
        intervals = {
            "interval_method": ds.attrs["interval_method"],
            "prob": ds.attrs["prob"],
            "n_boot": ds.attrs["n_boot"],
            "methods": intervals_to_dict(ds),
        }
    out = {
        "dataset": data.name,
        "n_cal": int(cal.size),
        "n_test": int(test.size),
        "n_classes": data.n_classes,
        "seed": first,
        "protocol": {
            "split": "stratified 50/50 by voted label (ties: lowest class index)",
            "n_bins": args.n_bins,
            "n_draws": args.n_draws,
            "units": "ece_true, aece, cwece, ece_plugin, ece_voted in percent; brier (Tao et "
            "al.'s Eq. 5), brier_sampled (Eq. 5 + 1 - ||pi||^2), nll, accuracy as fractions",
            "oracle": "'Oracle TS (oracle)' is SLTS fitted on the "
            "TEST split: an upper reference, not a method",
            "dirichlet": "Dirichlet-Hard / Dirichlet-Soft cross-validate the ODIR weight on the "
            "calibration half (decades 1e-3..1e3, 5 stratified folds; the chosen value is "
            "'lambda_offdiag' per row); the '(ODIR 1e-3)' rows fix it at Tao et al.'s value",
        },
        "results": per_seed[first],
        "intervals_first_seed": intervals,
        "seconds_all_methods": float(sum(r["seconds"] for r in per_seed[first].values())),
    }
    if len(args.seeds) > 1:
        out["seeds"] = list(args.seeds)
        out["multi_seed"] = _summary(per_seed)
        out["per_seed"] = {str(s): r for s, r in per_seed.items()}

    ablations = {}
    if args.ablations or args.ablate_cal_size:
        ablations["cal_size"] = _cal_size_ablation(data, cal, test, specs, args, first)
    if args.ablations or args.ablate_annotations:
        ablations["annotations"] = _annotation_ablation(data, cal, test, specs, args, first)
    if args.ablations or args.ablate_entropy:
        probas = {n: probas_first[n] for n in ENTROPY_METHODS if n in probas_first}
        ablations["entropy"] = entropy_strata_errors(data, test, probas, int(args.entropy_bins))
    if ablations:
        out["ablations"] = ablations
    if args.mcts_sweep:
        out["mcts_sweep"] = {
            "split_seed": first,
            "metric_seed": first,
            "results": _mcts_sweep(data, cal, test, args, first),
            "paper_table1": PAPER_TABLE1,
        }

    if args.figure:
        from bayescal.plotting import reliability_panels

        reliability_panels(
            bins_first,
            path=args.figure,
            suptitle=f"{data.name}: ECE_true reliability (test half, seed {first})",
        )
        out["figure"] = str(args.figure)
    out["seconds_total"] = time.perf_counter() - t_start
    out["environment"] = environment()
    out["load_average_1min"] = os.getloadavg()[0]

    text = json.dumps(
        out, indent=2, default=lambda o: o.item() if isinstance(o, np.generic) else str(o)
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(text)
    return 0
