"""Option vocabularies and limits shared by the library and the command line.

The library checks its arguments against these names and bounds, and the
command line's parser offers them as ``choices`` and argparse types. This module
imports nothing, so ``bayescal audit --help`` and a malformed command line are
answered without loading numpy, pandas, xarray, PyMC or ArviZ.
"""

from __future__ import annotations

__all__ = [
    "MAX_CELLS",
    "MAX_DRAWS",
    "MAX_CHAINS",
    "MAX_INFLATE",
    "CHANNEL_CHOICES",
    "MULTICLASS_CHANNEL_CHOICES",
    "VIEW_CHOICES",
    "SKIP_SECTIONS",
    "SUBGROUP_CHANNEL_CHOICES",
    "MULTICLASS_SKIP_SECTIONS",
]

#: Hard cap on the number of cells of any partition (score groups, ECE bins). The binary
#: view keeps dense (cell x observed pattern) arrays, and a binned error over more than a
#: thousand bins is dominated by its noise floor below about 10**6 items (the plug-in's
#: upward bias is about 0.64 sd(U) sqrt(M / n), SPEC §4), so more cells is a mistake, not
#: a finer audit.
MAX_CELLS = 1000

#: Most draws (or tuning steps) per chain: the NC-ECE interval's Monte Carlo error is far
#: below its width long before this, and the saved posterior predictive holds
#: draws x groups x pattern-cell counts per chain (gigabytes beyond it).
MAX_DRAWS = 1_000_000

#: Most chains: more chains than this add nothing to R-hat and multiply the posterior
#: (10^9 chains made the sampler abort the Python process on a 32 GB allocation).
MAX_CHAINS = 64

#: Largest drift discount of priors from an earlier audit (``--priors-inflate``): beyond it
#: an earlier audit of a million items counts as less than one item.
MAX_INFLATE = 1e6

#: ``bayescal plan``: most repetitions per design and of the final prediction (10,000 put
#: the power's Monte Carlo SE below 0.005; a plan with 10^9 ran without end), and the
#: range of channel bootstrap draws / item bootstrap replicates per simulated audit.
PLAN_MAX_REPS = 10_000
PLAN_DRAW_RANGE = (20, 10_000)
#: Fewest pilot items (rows of ``--pilot-scores``, ``PlanScenario(scores=)``) a plan draws from.
PLAN_MIN_PILOT_ITEMS = 10

#: ``--channels`` choices of the binary audit: the Bayesian grouped model or a point estimator.
CHANNEL_CHOICES = ("bayes", "score-bin-em", "dawid-skene-em", "gmm", "hui-walter")

#: ``--channels`` choices of the multiclass audit.
MULTICLASS_CHANNEL_CHOICES = ("bayes", "dawid-skene-em")

#: ``--view``: pick the analysis the evidence supports, or run one or both.
VIEW_CHOICES = ("auto", "noise", "ambiguity", "both")

#: ``--skip SECTION``: the optional sections of the binary audit (section key -> what it is).
#: A skipped section stays in the report, and in ``summary.json["skipped"]``, with the reason.
SKIP_SECTIONS = {
    "crowdkit": "the naive comparison with crowd-kit's aggregated labels",
    "recalibration": "the recalibration maps, fitted and judged on held-out items",
    "items": "the item posteriors (items.csv and summary.json['items'])",
    "subgroups": "the calibration per subgroup (with --subgroup COL)",
    "next": "where to annotate next (next.csv and summary.json['next_annotations'])",
}

#: ``--skip SECTION`` of the multiclass audit (it has no crowd-kit comparison).
MULTICLASS_SKIP_SECTIONS = {
    "recalibration": "corrected temperature and vector scaling, fitted and judged on held-out "
    "items",
    "items": "the item posteriors (items.csv and summary.json['items'])",
    "subgroups": "the calibration per subgroup (with --subgroup COL)",
    "next": "where to annotate next (next.csv and summary.json['next_annotations'])",
}

#: ``--subgroup-channels``: how each subgroup's channels are fitted
#: (:mod:`bayescal.metrics.subgroups`).
SUBGROUP_CHANNEL_CHOICES = ("pooled", "shared", "per-subgroup")
