"""``bayescal bench multiclass-evidence``: the noise-or-ambiguity verdict against its own null.

Null cells draw data *exactly* from the noise model (one true class per item, answers
independent given it) in four populations: the project's default
(:func:`bayescal.simulate.simulate_multiclass`), two designs of
:mod:`bayescal.simulate.noise_designs` (banded ordinal confusions with per-class
accuracies; sparse confusions with thinly spread errors; skewed prevalences,
missing answers, a few answers per item out of many annotators) and scikit-learn's
digits (a logistic regression's probabilities on 899 test digits, three simulated
annotators with accuracies 0.9 / 0.8 / 0.7: the example of issue 22). The verdict
should be "noise" in at least 90% of them (the check's own bound is
``1 - 3 alpha = 0.97``, see :mod:`bayescal.metrics.noise_or_ambiguity`).

Power cells draw genuinely ambiguous items: Dirichlet item distributions around the
class rows (:mod:`bayescal.simulate.ambiguous`), boundary items between two classes
(:mod:`bayescal.simulate.boundary`) and a latent item difficulty shared by all
annotators (:func:`bayescal.simulate.dependent.simulate_multiclass_dependent`).

Each data set gets multiclass EM channels (10 starts, empty channel groups dropped)
and the check (parametric bootstrap refitted on every replicate, ``--replicates``,
level 0.01). Per cell: the share of each verdict with its Monte Carlo standard error
``sqrt(p (1 - p) / N)``, a one-sided 95% Clopper-Pearson lower bound on the share
called "noise" (null) or "ambiguity" (power), each test's rejection rate, the mean
tail probabilities, EM failures (counted, not hidden) and seconds. The JSON is
rewritten after every cell; ``--resume`` keeps the finished cells of an earlier run
with the same settings.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bayescal._json import json_default
from bayescal.bench._io import earlier_json, load_average, share_se, write_run
from bayescal.channels.em import dawid_skene_em
from bayescal.data.container import Annotations
from bayescal.errors import BayescalError
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.simulate.ambiguous import simulate_ambiguous_multiclass
from bayescal.simulate.boundary import simulate_boundary_items
from bayescal.simulate.dependent import simulate_multiclass_dependent
from bayescal.simulate.noise_designs import simulate_noise_design
from bayescal.summaries import summarize

ALPHA = 0.01

#: The verdict's tests and the tail probability each reads in ``check.overall``.
TESTS = {
    "dispersion_upper": "dispersion_tail",
    "dispersion_lower": "dispersion_lower_tail",
    "pair_tables": "pattern_tail",
    "disagreement": "disagreement_tail",
}


@dataclass(frozen=True)
class Cell:
    """One population of the bench: who draws the data, and how many of what."""

    name: str
    truth: str  # "noise" or "ambiguity"
    simulator: str  # "project", "banded", "sparse", "digits", "dirichlet", "boundary", "difficulty"
    classes: int
    annotators: int
    items: int
    options: dict = field(default_factory=dict)
    note: str = ""


def _table(truth: str, rows) -> list[Cell]:
    """Cells of one truth from ``(name, simulator, C, K, items, options, note)`` rows."""
    return [Cell(name, truth, *rest) for name, *rest in rows]


# fmt: off
NULL_CELLS = _table("noise", [
    *((f"grid-C{c}-K{k}", "project", c, k, max(400, 100 * c), {}, "")
      for c in (2, 5, 10) for k in (3, 5, 8)),
    ("digits-C10-K3", "digits", 10, 3, 899, {}, "issue 22's example"),
    ("few-C10-K3", "project", 10, 3, 300, {}, "30 items per class"),
    ("few-C5-K8", "project", 5, 8, 150, {}, "30 items per class"),
    ("skewed-C10-K4", "banded", 10, 4, 1000, {"prevalence": "skewed"},
     "Zipf prevalences, banded confusions"),
    ("skewed-C2-K3", "banded", 2, 3, 600, {"prevalence": [0.85, 0.15]}, "binary, 15% positives"),
    ("accuracy-0.6-C4-K3", "sparse", 4, 3, 800, {"accuracy": [0.6, 0.62]},
     "every annotator at accuracy 0.6"),
    ("accuracy-0.95-C4-K5", "banded", 4, 5, 800, {"accuracy": [0.93, 0.95]},
     "every annotator at accuracy 0.95"),
    ("missing-C3-K6", "project", 3, 6, 600, {"population": {"missing": 0.4}},
     "40% of answers missing"),
    ("crowd-C6-K8", "sparse", 6, 8, 900, {"answers_per_item": [2, 4]}, "2-4 answers per item of 8"),
    ("crowd-C10-K8", "sparse", 10, 8, 1000, {"answers_per_item": 3}, "3 answers per item of 8"),
    ("banded-C3-K8", "banded", 3, 8, 600, {"missing": 0.2}, "banded, 20% missing"),
])
#: name prefix: (simulator, options, note) of the power cells at K = 3, 8, 20 (C = 4)
_POWER = {
    "dirichlet-5": ("dirichlet", {"concentration": 5.0}, "intra-item correlation 0.17"),
    "dirichlet-20": ("dirichlet", {"concentration": 20.0}, "intra-item correlation 0.048"),
    "boundary": ("boundary", {"share": 0.5}, "half the items between two classes"),
    "difficulty": ("difficulty", {"loading": 1.0},
                   "shared item difficulty, latent correlation 0.5"),
}
POWER_CELLS = _table("ambiguity", [
    *((f"{name}-C4-K{k}", sim, 4, k, 1000, opts, note)
      for k in (3, 8, 20) for name, (sim, opts, note) in _POWER.items()),
    ("boundary-C4-K5", "boundary", 4, 5, 1000, {"share": 0.5}, "K = 5"),
    ("boundary-C2-K8", "boundary", 2, 8, 1000, {"share": 0.5}, "binary"),
    ("difficulty-C2-K8", "difficulty", 2, 8, 1000, {"loading": 1.0},
     "binary, shared item difficulty"),
    ("boundary-C10-K8", "boundary", 10, 8, 1000, {"share": 0.5}, "C = 10"),
])
# fmt: on


def add_arguments(parser) -> None:
    parser.add_argument("--suite", choices=("null", "power", "all"), default="all")
    parser.add_argument(
        "--cells", nargs="+", default=None, help="run only the cells with these names"
    )
    parser.add_argument("--datasets", type=int, default=100, help="data sets per null cell")
    parser.add_argument("--power-datasets", type=int, default=50, help="data sets per power cell")
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--resume", action="store_true", help="keep the finished cells of --json (same settings)"
    )
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


# ----------------------------------------------------------------- simulation
_DIGITS: dict = {}


def _digits_probs():
    """Logistic-regression probabilities on the second half of scikit-learn's digits."""
    if not _DIGITS:
        from sklearn.datasets import load_digits
        from sklearn.linear_model import LogisticRegression

        x, y = load_digits(return_X_y=True)
        half = x.shape[0] // 2
        model = LogisticRegression(max_iter=5000).fit(x[:half] / 16.0, y[:half])
        _DIGITS["probs"] = model.predict_proba(x[half:] / 16.0)
        _DIGITS["truth"] = y[half:]
    return _DIGITS["probs"], _DIGITS["truth"]


#: The digits annotators' accuracies (issue 22's example); errors spread evenly.
DIGITS_ACCURACIES = (0.9, 0.8, 0.7)


def digits_confusions():
    """(3, 10, 10) true confusion rows of the digits annotators."""
    import numpy as np

    c = 10
    return np.stack(
        [
            np.full((c, c), (1 - acc) / (c - 1)) + (acc - (1 - acc) / (c - 1)) * np.eye(c)
            for acc in DIGITS_ACCURACIES
        ]
    )


def digits_annotations(rng) -> Annotations:
    """899 digits with a logistic regression's probabilities, answered by three simulated
    annotators (:data:`DIGITS_ACCURACIES`, errors spread evenly), true classes attached."""
    import numpy as np

    probs, y = _digits_probs()
    labels = np.empty((y.size, 3))
    for j, t in enumerate(digits_confusions()):
        cum = np.cumsum(t[y], axis=1)
        labels[:, j] = np.minimum((rng.random((y.size, 1)) > cum).sum(axis=1), probs.shape[1] - 1)
    return Annotations.from_arrays(probs, labels, truth=y)


def simulate_cell(cell: Cell, rng) -> Annotations:
    """One data set of ``cell``; ``rng`` a numpy Generator."""
    o, c, k, n = dict(cell.options), cell.classes, cell.annotators, cell.items
    if cell.simulator in ("project", "difficulty"):
        # a fresh default population (confusions and profiles) per data set
        pop = multiclass_population(
            c, n_annotators=k, random_state=int(rng.integers(2**31)), **o.pop("population", {})
        )
        if cell.simulator == "difficulty":
            return simulate_multiclass_dependent(n, population=pop, random_state=rng, **o)[0]
        return simulate_multiclass(n, population=pop, random_state=rng)
    if cell.simulator in ("banded", "sparse"):
        return simulate_noise_design(
            n, c, design=cell.simulator, n_annotators=k, random_state=rng, **o
        )
    if cell.simulator == "digits":
        return digits_annotations(rng)
    if cell.simulator == "dirichlet":
        return simulate_ambiguous_multiclass(n, c, n_annotators=k, random_state=rng, **o)
    if cell.simulator == "boundary":
        return simulate_boundary_items(n, c, n_annotators=k, random_state=rng, **o)
    raise ValueError(f"unknown simulator {cell.simulator!r}")


# ----------------------------------------------------------------- one cell
def run_cell(cell: Cell, datasets: int, replicates: int, seed: int) -> dict:
    """Run ``datasets`` data sets of ``cell`` and summarise the verdicts (module docstring).

    The seed of data set ``r`` is ``SeedSequence([seed, crc32(cell.name), r])``: a cell's
    numbers do not depend on which other cells run.
    """
    import warnings

    import numpy as np
    from scipy.stats import beta

    t0 = time.perf_counter()
    records: list[dict] = []
    for r in range(datasets):
        seq = np.random.SeedSequence([seed, zlib.crc32(cell.name.encode()), r])
        rng = np.random.default_rng(seq)
        data = simulate_cell(cell, rng)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            summary = summarize(data, groups="predicted")
            try:
                fit = dawid_skene_em(
                    summary,
                    prevalence="grouped",
                    empty_groups="drop",
                    random_state=int(rng.integers(2**31)),
                )
            except BayescalError as exc:
                records.append({"view": "fit failed", "error": type(exc).__name__})
                continue
            check = noise_or_ambiguity(
                summary, fit, n_replicates=replicates, alpha=ALPHA, random_state=rng
            )
        refit = check.refit or {"not_converged": 0, "iterations_median": 0.0}  # point fits
        records.append(
            {
                "view": check.view,
                **{name: check.overall[key] for name, key in TESTS.items()},
                "dispersion": check.overall["dispersion_observed"],
                "not_converged": refit["not_converged"],
                "iterations": refit["iterations_median"],
                "seconds": time.perf_counter() - start,
            }
        )
    n = len(records)
    views = [x["view"] for x in records]
    checked = [x for x in records if x["view"] != "fit failed"]

    def share(view: str) -> dict:
        hits = views.count(view)
        p = hits / n
        lower = float(beta.ppf(0.05, hits, n - hits + 1)) if hits > 0 else 0.0
        return {"share": p, "mc_se": share_se(p, n), "lower95": lower}

    target = "noise" if cell.truth == "noise" else "ambiguity"
    out = {
        **asdict(cell),
        "datasets": n,
        "replicates": replicates,
        "views": {v: views.count(v) for v in ("noise", "ambiguity", "misfit", "inconclusive")},
        "fit_failed": views.count("fit failed"),
        "target": target,
        target: share(target),
        **{f"share_{v}": views.count(v) / n for v in ("noise", "ambiguity", "misfit")},
        "test_rejection_rate": {
            t: float(np.mean([x[t] <= ALPHA for x in checked])) if checked else None for t in TESTS
        },
        "tail_mean": {
            t: float(np.mean([x[t] for x in checked])) if checked else None for t in TESTS
        },
        "dispersion_mean": float(np.mean([x["dispersion"] for x in checked])) if checked else None,
        "refits_not_converged": int(sum(x["not_converged"] for x in checked)),
        "refit_iterations_median": float(np.median([x["iterations"] for x in checked]))
        if checked
        else None,
        "seconds_per_dataset": float(np.mean([x["seconds"] for x in checked])) if checked else None,
        "seconds": time.perf_counter() - t0,
    }
    return out


# ----------------------------------------------------------------- run
def _save(path, protocol, cells, started, load_start) -> None:
    """The run so far, without printing (the final write prints)."""
    out = {
        "protocol": {**protocol, "complete": False},
        "cells": cells,
        "seconds": time.perf_counter() - started,
        "load_average": load_average(load_start),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(out, indent=2, default=json_default) + "\n")


def run(args) -> int:
    started = time.perf_counter()
    load_start = os.getloadavg()
    cells = {"null": NULL_CELLS, "power": POWER_CELLS, "all": NULL_CELLS + POWER_CELLS}[args.suite]
    if args.cells is not None:
        known = {c.name for c in NULL_CELLS + POWER_CELLS}
        unknown = sorted(set(args.cells) - known)
        if unknown:
            raise SystemExit(f"unknown cells {unknown}; the cells are {sorted(known)}")
        cells = [c for c in NULL_CELLS + POWER_CELLS if c.name in args.cells]
    protocol = {
        "benchmark": "multiclass-evidence",
        "alpha": ALPHA,
        "replicates": args.replicates,
        "datasets_null": args.datasets,
        "datasets_power": args.power_datasets,
        "seed": args.seed,
        "fit": "dawid_skene_em(summary, empty_groups='drop'), 10 starts",
        "check": "noise_or_ambiguity(summary, fit): parametric bootstrap refitted per replicate",
    }
    done: list[dict] = []
    old = earlier_json(args.json_path) if args.resume else {}
    if {k: v for k, v in old.get("protocol", {}).items() if k != "complete"} == protocol:
        done = [c for c in old["cells"] if c["name"] in {x.name for x in cells}]
    finished = {c["name"] for c in done}
    for cell in cells:
        if cell.name in finished:
            continue
        n = args.datasets if cell.truth == "noise" else args.power_datasets
        result = run_cell(cell, n, args.replicates, args.seed)
        done.append(result)
        target = result[result["target"]]
        print(
            f"{cell.name}: {result['target']} {target['share']:.3f} (MC SE {target['mc_se']:.3f}"
            f", lower95 {target['lower95']:.3f}), views {result['views']}, "
            f"{result['seconds']:.0f} s",
            flush=True,
        )
        if args.json_path:
            _save(args.json_path, protocol, done, started, load_start)
    order = {c.name: i for i, c in enumerate(NULL_CELLS + POWER_CELLS)}
    done.sort(key=lambda c: order[c["name"]])
    write_run(
        {**protocol, "complete": True},
        done,
        started=started,
        load_start=load_start,
        path=args.json_path,
    )
    return 0
