"""``bayescal bench stress-test``: the human-label stress test of Hanada & Futami (Sec. 6.3,
App. G.4, Tables 3 and 8), rebuilt on the shared data with real human answers.

The paper uses CIFAR-10N (three answers per image, animal vs vehicle, CLIP scores), which
is not available here. Two binary tasks with real human answers are:

- **CIFAR-10H cat vs dog**: the 2,000 CIFAR-10 test images whose true class is cat or
  dog; score = ResNet-110 ``p_cat / (p_cat + p_dog)``; K = 3 answer slots sampled without
  replacement from the image's real human votes (cat = 1, dog = 0, any other class =
  missing); reference = the CIFAR-10 label (cat = 1).
- **ChaosNLI-SNLI entailment vs rest**: the 1,514 pairs; score = RoBERTa-base
  P(entailment) (softmax of its logits); K = 3 slots sampled without replacement from the
  100 ChaosNLI answers (entailment = 1); reference = the majority of the other 97.

Protocol (:func:`bayescal.recal.selection.choose_recalibration` with the paper's
settings): disjoint pilot / evaluation-channel / test partitions of 20 / 40 / 40% of the
annotated items; five pilot splits into channel / recalibration / validation subsets;
candidates Base ("none") plus temperature, Platt and fixed-bin (ten equal-width score
bins) maps, each naive and corrected; corrected labels with inverse-variance weights;
one correction from the evaluation-channel sample; test Oracle (reference-label) /
soft-vote / NC-ECE on ten shared equal-width bins of ``g(Z)``. Channels: marginal
Dawid-Skene EM and joint score-bin EM (five equal-width score groups), as in Table 8.
Each repeat draws new answer slots and new partitions; the numbers are means (and SDs)
over repeats of the five pilot fits' test means.

The paper's claims (Sec. 6.3), checked per data set and channel model: naive
recalibration reduces soft-vote ECE but worsens reference-label ECE; correction reverses
both changes; NC-ECE is close to the reference-label ECE and tracks its direction.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from scipy.special import softmax

from bayescal.bench._io import environment, mean_sd, write_json
from bayescal.bench.cifar_recal import read_resnet110

DATASETS = ("cifar10h-catdog", "chaosnli-snli-entailment")
CHANNELS = ("dawid_skene_em", "score_bin_em")
FAMILIES = ("temperature", "platt", "histogram")
CLAIMS = (
    "naive recalibration reduces soft-vote ECE but worsens reference-label ECE",
    "correction reverses both changes",
    "NC-ECE is close to the reference-label (Oracle) ECE and tracks its direction",
)


def add_arguments(parser) -> None:
    parser.add_argument(
        "--data",
        default="../shared/data",
        help="folder holding cifar10h/resnet-110.csv and chaosnli/ (default: %(default)s)",
    )
    parser.add_argument(
        "--datasets", nargs="+", default=list(DATASETS), choices=DATASETS, help="tasks to run"
    )
    parser.add_argument(
        "--channels", nargs="+", default=list(CHANNELS), choices=CHANNELS, help="channel models"
    )
    parser.add_argument("--repeats", type=int, default=5, help="slot draws x partitions")
    parser.add_argument("--pilot-splits", type=int, default=5)
    parser.add_argument(
        "--fractions",
        nargs=2,
        type=float,
        default=[0.2, 0.4],
        metavar=("PILOT", "EVAL_CHANNEL"),
        help="shares of the pilot and evaluation-channel partitions; the test gets the rest "
        "(default: the paper's 0.2 0.4)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)


def _cifar(data: Path):
    """Scores, per-image vote pools (1 = cat, 0 = dog, NaN = other) and the reference."""
    label, counts, prob = read_resnet110(data / "cifar10h" / "resnet-110.csv")
    keep = np.flatnonzero((label == 3) | (label == 5))  # cat = 3, dog = 5
    score = prob[keep, 3] / (prob[keep, 3] + prob[keep, 5])
    pools = []
    for i in keep:
        votes = np.repeat(np.arange(10), counts[i])
        pools.append(np.where(votes == 3, 1.0, np.where(votes == 5, 0.0, np.nan)))
    return score, pools, (label[keep] == 3).astype(int), None


def _snli(data: Path):
    """Scores, vote pools (1 = entailment) and, per item, the reference of the other votes."""
    from bayescal.errors import DataError

    folder = data / "chaosnli"
    if not (folder / "chaosNLI_snli.jsonl").is_file():
        raise DataError(f"no ChaosNLI file under {str(folder)!r}.")
    preds = {}
    for name in ("SNLI_dev_roberta-base_0.json", "SNLI_test_roberta-base_0.json"):
        for line in (folder / "predictions" / name).read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                preds[rec["uid"]] = rec["logits"]
    score, pools = [], []
    for line in (folder / "chaosNLI_snli.jsonl").read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            # Entailment is class 0 both in ChaosNLI's and in the prediction files' order.
            score.append(float(softmax(np.asarray(preds[rec["uid"]], dtype=np.float64))[0]))
            pools.append(np.repeat([1.0, 0.0, 0.0], rec["label_count"]))
    return np.asarray(score), pools, None, "other-votes-majority"


def _draw(pools, reference, rule, rng, k: int = 3):
    """K answer slots per item, sampled without replacement from its votes."""
    labels = np.empty((len(pools), k))
    ref = np.empty(len(pools), dtype=int) if reference is None else reference
    for i, pool in enumerate(pools):
        pick = rng.choice(pool.size, size=k, replace=False)
        labels[i] = pool[pick]
        if rule == "other-votes-majority":
            rest = np.delete(pool, pick)
            ref[i] = int(rest.sum() > rest.size / 2)
    return labels, ref


def _claims(test: dict) -> dict:
    """The paper's three claims on mean test errors (per candidate: oracle, soft_vote, nc)."""
    base = test["none"]
    per_family: dict[str, dict[str, bool]] = {}
    out: dict[str, object] = {"per_family": per_family}
    for fam in FAMILIES:
        naive, corr = test[f"{fam}_naive"], test[f"{fam}_corrected"]
        per_family[fam] = {
            "naive_lowers_soft_vote": naive["soft_vote"] < base["soft_vote"],
            "naive_raises_oracle": naive["oracle"] > base["oracle"],
            "corrected_raises_soft_vote_vs_naive": corr["soft_vote"] > naive["soft_vote"],
            "corrected_lowers_oracle_vs_naive": corr["oracle"] < naive["oracle"],
        }
    changed = [c for c in test if c != "none"]
    agree = [
        np.sign(test[c]["nc"] - base["nc"]) == np.sign(test[c]["oracle"] - base["oracle"])
        for c in changed
    ]
    out["nc_tracks_oracle_direction"] = f"{int(np.sum(agree))} of {len(changed)}"
    out["mean_abs_nc_minus_oracle"] = float(
        np.mean([abs(test[c]["nc"] - test[c]["oracle"]) for c in test])
    )
    out["mean_abs_soft_vote_minus_oracle"] = float(
        np.mean([abs(test[c]["soft_vote"] - test[c]["oracle"]) for c in test])
    )
    return out


def _one(name, loaded, method, args, rng):
    from bayescal.data.container import Annotations
    from bayescal.recal.selection import choose_recalibration

    score, pools, reference, rule = loaded
    runs = []
    for _ in range(args.repeats):
        labels, ref = _draw(pools, None if reference is None else reference.copy(), rule, rng)
        data = Annotations.from_arrays(score, labels, truth=ref)
        choice = choose_recalibration(
            data,
            channels=method,
            groups=5,
            bins=10,
            weights="inverse_variance",
            pilot_splits=args.pilot_splits,
            fractions=tuple(args.fractions),
            histogram={"bins": 10, "strategy": "uniform"},
            random_state=int(rng.integers(2**31 - 1)),
        )
        runs.append(choice)
    candidates = runs[0].candidates
    test = {}
    for c in candidates:
        test[c] = {}
        for key in ("oracle", "soft_vote", "nc"):
            m = mean_sd([r.test[c][key] for r in runs], single=None)
            test[c][key], test[c][f"{key}_sd"] = m["mean"], m["sd"]
        test[c]["validation_nc"] = float(np.mean([np.nanmean(r.validation[c]) for r in runs]))
        test[c]["wins"] = int(sum(r.wins[c] for r in runs))
    return {
        "dataset": name,
        "channels": method,
        "n_items": int(score.size),
        "sizes": runs[0].sizes,
        "repeats": args.repeats,
        "splits_used": [r.settings["splits_used"] for r in runs],
        "test": test,
        "recommended": [r.recommended for r in runs],
        "claims": _claims(test),
        "flags": sorted({f.code for r in runs for f in r.flags}),
    }


def _markdown(results: list[dict]) -> str:
    lines = []
    for r in results:
        lines.append(
            f"**{r['dataset']}, {r['channels']}** ({r['n_items']} items; test {r['sizes']['test']},"
            f" evaluation-channel {r['sizes']['evaluation_channel']}, pilot {r['sizes']['pilot']};"
            f" {r['repeats']} repeats; x100)"
        )
        lines.append("")
        lines.append(
            "| candidate | Oracle ECE | soft-vote ECE | NC-ECE "
            "| validation NC-ECE (debiased) | wins |"
        )
        lines.append("|---|---|---|---|---|---|")
        for c, t in r["test"].items():
            lines.append(
                f"| {c} | {100 * t['oracle']:.2f} ± {100 * (t['oracle_sd'] or 0):.2f} "
                f"| {100 * t['soft_vote']:.2f} "
                f"| {100 * t['nc']:.2f} ± {100 * (t['nc_sd'] or 0):.2f} "
                f"| {100 * t['validation_nc']:.2f} | {t['wins']} |"
            )
        lines.append("")
    return "\n".join(lines)


def run(args) -> int:
    from bayescal._random import check_random_state
    from bayescal.errors import ConfigError

    if args.repeats < 1 or args.pilot_splits < 1:
        raise ConfigError("--repeats and --pilot-splits must be at least 1.")
    data = Path(args.data)
    loaders = {"cifar10h-catdog": _cifar, "chaosnli-snli-entailment": _snli}
    rng = check_random_state(args.seed)
    t0 = time.perf_counter()
    results = []
    for name in args.datasets:
        loaded = loaders[name](data)
        for method in args.channels:
            results.append(_one(name, loaded, method, args, rng))
    out = {
        "benchmark": "stress-test",
        "paper_claims": list(CLAIMS),
        "settings": {
            "fractions": {
                "pilot": args.fractions[0],
                "evaluation_channel": args.fractions[1],
                "test": 1 - sum(args.fractions),
            },
            "pilot_splits": args.pilot_splits,
            "repeats": args.repeats,
            "slots": 3,
            "bins": 10,
            "weights": "inverse_variance",
            "histogram": "10 equal-width score bins (fixed-bin)",
            "seed": args.seed,
        },
        "results": results,
        "markdown": _markdown(results),
        "seconds": time.perf_counter() - t0,
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0
