"""``bayescal bench real-data`` (also ``bench multiclass-real``, its first name): the noise
track on real annotations, any number of classes.

CIFAR-10H with ResNet-110 (10 classes; the CIFAR-10 test label as truth) and
ChaosNLI-SNLI with RoBERTa-base (3 classes; no truth beyond the annotations).
For each K in ``--k`` and each of ``--replicates`` draws, K annotation slots are
filled per item by sampling K of its real answers without replacement (in random
slot order: each slot is a random crowd member, not a fixed person). Then, on the
same items and the same 10 equal-width bins:

- ``nc_crossfit``: top-label NC-ECE with multiclass Dawid–Skene EM channels fitted
  without each of 5 folds (the sample-use protocol of Hanada & Futami, App. C.4);
- ``nc_estimate``, ``nc_lo``, ``nc_hi``: the bias-aware estimate and 90% interval
  with the EM channels fitted on all items (the audit's point path);
- ``soft_vote``, ``majority_vote``: the K answers taken as truth;
- ``true_label`` (CIFAR-10H only): the top-label ECE against the CIFAR-10 label;
- ``ece_true_full`` / ``ece_true_k``: Tao et al.'s ECE_true on these bins against
  each item's full answer distribution (about 50 answers on CIFAR-10H, 100 on
  ChaosNLI) and against its K sampled answers;
- ``evidence``: the noise-or-ambiguity check on the K slots (its view and
  dispersion).

Once per dataset the check also runs on many answers per item (as many slots as
the item with the fewest answers has: 47 on CIFAR-10H, 100 on ChaosNLI), where
the per-item over-dispersion test has power. Summaries give the mean and sd over replicates.
"""

from __future__ import annotations

import os
import time

from bayescal.ambiguity.loaders import load_chaosnli, load_cifar10h
from bayescal.ambiguity.metrics import ece_true
from bayescal.ambiguity.targets import subsample_annotations
from bayescal.bench._io import environment, mean_sd, write_json
from bayescal.channels.em import dawid_skene_em
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.metrics import (
    class_nc_ece,
    class_oracle_ece,
    class_vote_ece,
    estimate_class_nc_ece,
)
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
from bayescal.summaries import summarize_multiclass


def add_arguments(parser) -> None:
    parser.add_argument(
        "--cifar10h", required=True, metavar="CSV", help="CIFAR-10H + ResNet-110 CSV"
    )
    parser.add_argument(
        "--chaosnli",
        nargs="+",
        required=True,
        metavar="FILE",
        help="ChaosNLI-SNLI JSONL followed by the RoBERTa prediction files",
    )
    parser.add_argument("--k", type=int, nargs="+", default=[3, 4, 5], help="slots per item")
    parser.add_argument("--replicates", type=int, default=5, help="slot draws per K")
    parser.add_argument("--bins", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _slots(counts, k, rng):
    """(n, k) answers: k of each item's answers without replacement, in random slot order."""
    import numpy as np

    counts = np.asarray(counts, dtype=np.int64)
    n, c = counts.shape
    counts = subsample_annotations(counts, k, random_state=rng)
    classes = np.repeat(np.tile(np.arange(c), n), counts.ravel()).reshape(n, k)
    return rng.permuted(classes, axis=1).astype(np.float64)


def _replicate(probs, counts, truth, classes, k, bins, rng, seed):
    import numpy as np

    t0 = time.perf_counter()
    lab = _slots(counts, k, rng)
    data = MulticlassAnnotations.from_arrays(probs, lab, truth=truth, classes=classes)
    summary = summarize_multiclass(data, bins=bins)
    em = dawid_skene_em(summary, prevalence="grouped", random_state=seed)
    iv = multiclass_nc_ece_interval(summary, em, n_bootstrap=1000, random_state=seed)
    lo, hi = iv.top_label.interval()
    cross = estimate_class_nc_ece(data, bins=bins, random_state=seed)
    k_counts = np.stack([(lab == y).sum(axis=1) for y in range(probs.shape[1])], axis=1)
    check = noise_or_ambiguity(summary, em, n_replicates=100, random_state=seed)
    out = {
        "k": k,
        "nc_crossfit": cross.top_label.value,
        "nc_plugin": iv.top_label.plugin,
        "nc_estimate": iv.top_label.estimate,
        "nc_lo": lo,
        "nc_hi": hi,
        "soft_vote": class_vote_ece(summary, "soft_vote").top_label.value,
        "majority_vote": class_vote_ece(summary, "majority_vote").top_label.value,
        "ece_true_full": float(ece_true(probs, counts, n_bins=bins, random_state=seed).ece),
        "ece_true_k": float(ece_true(probs, k_counts, n_bins=bins, random_state=seed).ece),
        "evidence": check.view,
        "dispersion": check.overall["dispersion_observed"],
        "dispersion_replicated": check.overall["dispersion_replicated"],
        "dispersion_tail": check.overall["dispersion_tail"],
        "mean_diagonal": float(np.einsum("jyy->", em.confusion.values[0]) / (k * probs.shape[1])),
        "seconds": 0.0,
    }
    if truth is not None:
        out["true_label"] = class_oracle_ece(summary).top_label.value
        out["interval_covers_true_label"] = bool(lo <= out["true_label"] <= hi)
    out["seconds"] = time.perf_counter() - t0
    return out


def _all_answers(probs, counts, truth, classes, bins, rng, seed):

    t0 = time.perf_counter()
    # every item keeps as many answers as the item with the fewest has (47 on CIFAR-10H,
    # 100 on ChaosNLI), so every slot answers every item: a slot that answers only the few
    # items with the most answers never uses some classes and cannot be inverted
    k = int(counts.sum(axis=1).min())
    data = MulticlassAnnotations.from_arrays(
        probs, _slots(counts, k, rng), truth=truth, classes=classes
    )
    summary = summarize_multiclass(data, groups="all", bins=bins)
    em = dawid_skene_em(summary, prevalence="grouped", random_state=seed, n_starts=3)
    check = noise_or_ambiguity(summary, em, n_replicates=100, random_state=seed)
    return {
        "slots": data.n_annotators,
        "median_answers": check.answers["median_per_item"],
        "check": check.to_dict(),
        "nc_all_answers": class_nc_ece(summary, em).top_label.value,
        "seconds": time.perf_counter() - t0,
    }


def _summaries(rows):
    keys = [k for k, v in rows[0].items() if isinstance(v, float) and k != "seconds"]
    return {key: mean_sd([r[key] for r in rows], single=None) for key in keys}


def run(args) -> int:
    import warnings

    import numpy as np
    from scipy.special import softmax

    load_at_start = list(os.getloadavg())
    rng = np.random.default_rng(args.seed)
    sets = {
        "cifar10h": load_cifar10h(args.cifar10h),
        "chaosnli_snli": load_chaosnli(args.chaosnli[0], args.chaosnli[1:]),
    }
    datasets: dict[str, dict] = {}
    result = {
        "benchmark": "multiclass-real",
        "settings": {
            "k": args.k,
            "replicates": args.replicates,
            "bins": args.bins,
            "seed": args.seed,
        },
        "load_average_at_start": load_at_start,
        "environment": environment(),
        "datasets": datasets,
    }
    for name, ds in sets.items():
        probs = softmax(ds.logits, axis=1)
        truth = ds.reference if name == "cifar10h" else None
        classes = list(ds.classes)
        by_k: dict[str, dict] = {}
        entry: dict[str, object] = {
            "n_items": int(probs.shape[0]),
            "classes": list(ds.classes),
            "by_k": by_k,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in args.k:
                rows = [
                    _replicate(probs, ds.counts, truth, classes, k, args.bins, rng, args.seed + r)
                    for r in range(args.replicates)
                ]
                by_k[str(k)] = {"replicates": rows, "summary": _summaries(rows)}
                print(name, k, {key: round(v["mean"], 4) for key, v in _summaries(rows).items()})
            entry["all_answers"] = _all_answers(
                probs, ds.counts, truth, classes, args.bins, rng, args.seed
            )
        datasets[name] = entry
    result["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.json_path)
    return 0
