"""Subgroup calibration under annotator noise (issue 25 item 1): one NC-ECE per subgroup.

Is the model calibrated for every site (sex, scanner, ...)? Per subgroup ``g`` the
target is the population binned ECE of the items of ``g`` (SPEC §1, §3), corrected for
annotator noise with channels chosen by ``channels``:

``"shared"``
    One Dawid-Skene EM fit (:func:`bayescal.channels.em.dawid_skene_em`) on every item;
    right when readers err alike in every subgroup, biased when they do not.
``"per-subgroup"``
    EM on the subgroup's items alone (started at the shared fit); refused with
    :class:`~bayescal.errors.IdentificationError` for a subgroup whose design cannot
    identify its channels (:func:`~bayescal.channels.identification.check_multiclass_design`)
    or whose fit is degenerate (a confusion matrix with smallest singular value below
    :data:`MIN_SINGULAR`, the EM's own acceptance rule).
``"pooled"`` (default): empirical-Bayes partial pooling within reader clusters
    First the subgroups are split into clusters of subgroups whose readers err alike
    (:func:`reader_clusters`): every pair of subgroups is tested for equal confusion
    rows (Hotelling's T^2 on the difference of their own EM rows, covariance from the
    bootstrap replicates, level :data:`POOLING_LEVEL`), and, largest subgroup first,
    each subgroup joins the first cluster all of whose members it agrees with. Within a
    cluster each subgroup's confusion rows get a Dirichlet prior centred on the
    cluster's shared fit, ``T_gj[y, .] ~ Dirichlet(kappa T_j[y, .] + 1)``, and EM
    maximises the subgroup's posterior (:func:`~bayescal.channels.em.em_run` with
    ``prior``); a subgroup alone in its cluster keeps its own channels. The
    concentration ``kappa`` (prior items per confusion row) is estimated from the
    within-cluster spread of the per-subgroup EM rows by moments: with ``p_g`` a
    subgroup's row entry, ``n_g`` its expected answers and ``T`` the cluster's entry,
    ``E (p_g - T)^2 = T (1 - T) [1 / n_g + (1 - 1 / n_g) / (kappa + 1)]``, so
    ``1 / (kappa + 1) = sum [(p_g - T)^2 - T (1 - T) / n_g] / sum T (1 - T) (1 - 1 / n_g)``
    over the cluster's subgroups, annotators, true and answered classes, clipped to
    ``[MIN_KAPPA, MAX_KAPPA]``; the same sum restricted to one subgroup gives its own
    concentration, and each subgroup is pooled with the smaller of the two. Why the
    clusters: the moment ``kappa`` is right on average over subgroups, but a subgroup
    whose readers really differ is still pulled part of the way toward channels that are
    wrong for it, a bias every bootstrap replicate reproduces (each shrinks toward its
    own centre), so the interval does not cover it (``bench subgroups`` before the
    clusters: the 600-item subgroup with noisier readers covered 0.80-0.85, misses all
    above). Small subgroups whose readers agree borrow strength (their rows move toward
    the cluster's by ``kappa / (n_g + kappa)``). The E-step counts are soft (the class is
    latent), which makes ``T (1 - T) / n_g`` understate the sampling variance, so
    ``kappa`` errs small (less pooling): the conservative side. The clusters are chosen
    again in every bootstrap replicate, from that replicate's own pairwise tests
    (:func:`replicate_clusters`), so the intervals carry the uncertainty of the choice: a
    subgroup whose readers differ but whose point test missed it is kept apart in the
    replicates where its evidence is stronger. (With the clusters held at the point
    fit's, the 600-item subgroup with 25% noisier readers covered 0.815 +- 0.027 over
    200 repetitions of ``bench subgroups``; chosen per replicate, 0.855 +- 0.025.)

Uncertainty: a stratified Bayesian bootstrap of the whole procedure. Each replicate
draws item weights ``Dirichlet(1, ..., 1)`` within every subgroup (subgroup sizes
fixed), refits the shared channels, the per-subgroup channels and ``kappa`` on the
weighted pattern counts (EM from the point fits), and recomputes every subgroup's signed
bin moments on the weighted items. Channel uncertainty therefore enters each interval,
correlated with the evaluation noise as it is (the channels are fitted on the evaluated
items). The replicates feed the one interval engine's kernels
(:func:`~bayescal.metrics.uncertainty.debiased_ece`,
:func:`~bayescal.metrics.uncertainty.bias_aware_interval`,
:func:`~bayescal.metrics.uncertainty.calibration_p_value`), so each subgroup's estimate,
interval and test are built exactly as the audit's headline ones.

The metric is the audits' headline: for two classes the binary NC-ECE on ``p_1``
(Hanada & Futami; the class-1 view of the class-wise metric, equal to
:func:`bayescal.nc_ece`), for more classes the top-label NC-ECE (equal to
:func:`bayescal.metrics.ncece.class_nc_ece`'s ``top_label``); ``metric="classwise"``
gives the mean class-wise NC-ECE for C > 2.

"Calibrated in every subgroup" is tested with Holm's step-down correction across the
subgroups (strong family-wise error control at ``1 - prob`` under any dependence
between the subgroups' tests); its global p-value is Holm's smallest adjusted p-value,
``min(1, G min_g p_g)``. The largest between-subgroup gap is the difference of the
bias-corrected NC-ECE of the worst and the best subgroup (chosen on the estimates), with
a basic-bootstrap interval from the same replicates; the pair is chosen on the data, so
read the interval as descriptive, not as a test of a pre-registered difference.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bayescal._random import check_random_state
from bayescal._typing import Bins, RandomState
from bayescal.channels.em import dawid_skene_em, em_run, expected_answer_counts
from bayescal.channels.identification import check_multiclass_design
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.data.validation import ItemWhere
from bayescal.display import name_list
from bayescal.errors import ConfigError, DataError, IdentificationError
from bayescal.metrics.binned import corrected_onehot_targets
from bayescal.metrics.uncertainty import (
    bias_aware_interval,
    calibration_p_value,
    debiased_ece,
)
from bayescal.options import SUBGROUP_CHANNEL_CHOICES
from bayescal.summaries.partition import assign
from bayescal.summaries.patterns import item_states, unique_patterns
from bayescal.summaries.summary import Summary, item_groups, summarize

__all__ = [
    "subgroup_nc_ece",
    "SubgroupCalibration",
    "SubgroupEstimate",
    "holm_adjust",
    "subgroup_values",
    "check_subgroups",
    "SUBGROUP_CHANNELS",
    "SUBGROUP_METRICS",
    "MIN_SUBGROUP_ITEMS",
    "DEFAULT_SUBGROUP_REPLICATES",
    "MIN_KAPPA",
    "MAX_KAPPA",
    "MIN_SINGULAR",
    "POOLING_LEVEL",
    "reader_clusters",
]

#: How each subgroup's channels are obtained (module docstring; the CLI's choices).
SUBGROUP_CHANNELS = SUBGROUP_CHANNEL_CHOICES

#: The subgroup metric: ``auto`` = the audits' headline (binary NC-ECE for C = 2, top-label
#: for C > 2).
SUBGROUP_METRICS = ("auto", "top_label", "classwise")

#: Fewest annotated items a subgroup may have. Below about 50 items the bias-aware interval
#: of a ten-bin NC-ECE is wider than the ECE's range of interest (its noise floor is about
#: 0.64 sd(U) sqrt(M / n) ~ 0.5 at n = 50, SPEC §4) and the per-subgroup EM is not
#: identified in practice; merge such subgroups or leave them out.
MIN_SUBGROUP_ITEMS = 50

#: Bootstrap replicates of the whole procedure (each refits every channel fit by EM).
DEFAULT_SUBGROUP_REPLICATES = 400

#: Bounds of the pooling concentration (prior items per confusion row): at least one
#: prior item keeps a 50-item subgroup's rows off the simplex boundary; 10**4 is full
#: pooling for any subgroup this module accepts.
MIN_KAPPA = 1.0
MAX_KAPPA = 1e4

#: The largest binned calibration error of probabilities against targets in [0, 1]
#: (binary, top-label, and class-wise averaged over classes): a subgroup's plug-in above it
#: is impossible, not an estimate.
MAX_ECE = 1.0

#: Level of the pairwise tests that split the subgroups into reader clusters
#: (:func:`reader_clusters`). Pooling a subgroup whose channels differ biases its NC-ECE
#: toward the others' channels, a bias the bootstrap reproduces rather than covers
#: (``bench subgroups`` with the moment concentration alone: the 600-item noisier
#: subgroup covered 0.80-0.85). The bootstrap spread of an EM fit's rows understates
#: their sampling spread somewhat (12 data sets of two 1500-item subgroups with the same
#: readers, C = 2, 100 replicates: 3 pairwise p-values below 0.03), so the level is
#: strict: a false split costs a subgroup its pooling (a wider interval), not coverage.
POOLING_LEVEL = 0.01

#: Smallest singular value of an accepted per-subgroup confusion (the EM's default rule).
MIN_SINGULAR = 1e-3

#: Largest share of bootstrap EM runs that may stop at the iteration cap before the result
#: carries a warning.
_MAX_FAILED = 0.01

#: EM stopping rule of the bootstrap replicates (the point fits keep the EM's defaults,
#: 1e-9 and 1000). All replicates iterate as one array program until the slowest stops,
#: and a 200-item subgroup's replicate near the simplex boundary can crawl for 1000
#: iterations; at a relative change of 1e-7 in the mean log-likelihood the confusion
#: entries have settled to well under 1e-3 of their sampling sd.
BOOTSTRAP_TOL = 1e-7
BOOTSTRAP_MAX_ITER = 250


@dataclass(frozen=True)
class SubgroupEstimate:
    """One subgroup's noise-corrected calibration error.

    Attributes
    ----------
    name : str
    n_items : int
        Annotated items of the subgroup (the NC-ECE's ``n``).
    estimate, plugin, lo, hi : float
        Bias-corrected NC-ECE, raw plug-in, and the bias-aware interval.
    p_value, p_holm : float
        Test of perfect calibration in this subgroup, and its Holm-adjusted value.
    identified : bool
        Whether the subgroup's own EM fit was identified and non-degenerate.
    shrinkage : float
        ``kappa / (n + kappa)``: how far the pooled channels sit toward the shared ones
        (1 = shared, 0 = the subgroup's own; 1 for ``"shared"``, 0 for ``"per-subgroup"``).
    pooled : bool
        Whether the subgroup's channels were pooled with others' (``"pooled"``: it shares
        a reader cluster with another subgroup, :func:`reader_clusters`; True for
        ``"shared"``, False for ``"per-subgroup"``).
    agreement_p : float or None
        ``"pooled"`` only: the smallest pairwise p-value of "these readers err alike"
        with the members of its cluster; for a subgroup alone in its cluster, the p-value
        that kept it out of the most compatible cluster.
    plausible : bool
        False when the plug-in exceeds 1, which no binned calibration error of
        probabilities can (:data:`MAX_ECE`): the subgroup's channels are then nearly
        unidentified and its inverse correction amplifies noise; its numbers are not an
        estimate (the audit flags them as an error).
    """

    name: str
    n_items: int
    estimate: float
    plugin: float
    lo: float
    hi: float
    p_value: float
    p_holm: float
    identified: bool
    shrinkage: float
    pooled: bool = False
    agreement_p: float | None = None
    plausible: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "subgroup": self.name,
            "n_items": self.n_items,
            "point": self.estimate,
            "plugin": self.plugin,
            "lo": self.lo,
            "hi": self.hi,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "identified": self.identified,
            "shrinkage": self.shrinkage,
            "pooled": self.pooled,
            "agreement_p": self.agreement_p,
            "plausible": self.plausible,
        }


@dataclass(frozen=True)
class SubgroupCalibration:
    """Per-subgroup NC-ECE, the test of calibration in every subgroup, the largest gap.

    Attributes
    ----------
    subgroups : list of SubgroupEstimate
        In the order of the sorted subgroup names.
    metric : str
        ``"binary"`` (C = 2: NC-ECE on ``p_1``), ``"top_label"`` or ``"classwise"``.
    channels : str
        One of :data:`SUBGROUP_CHANNELS`.
    prob : float
    p_all : float
        Holm's global p-value of "calibrated in every subgroup".
    correction : str
    gap : dict
        ``worst``, ``best``, ``estimate``, ``lo``, ``hi``.
    kappa : float or None
        The pooling concentration of the largest subgroup's reader cluster (``"pooled"``
        only; :data:`MIN_KAPPA` when that cluster pools nothing).
    clusters : list of list of str or None
        ``"pooled"`` only: the reader clusters the channels pool within.
    n_replicates, failed_replicates : int
    label : str
        The name of the subgroup variable (``"site"``).
    warnings : list of str
    """

    subgroups: list[SubgroupEstimate]
    metric: str
    channels: str
    prob: float
    p_all: float
    correction: str
    gap: dict[str, Any]
    kappa: float | None
    n_replicates: int
    failed_replicates: int
    label: str = "subgroup"
    warnings: list[str] = field(default_factory=list)
    clusters: list[list[str]] | None = None
    #: ``"pooled"``: share of bootstrap replicates whose own reader clusters differ from the
    #: point fit's (each replicate decides its clusters, :func:`replicate_clusters`)
    clusters_differ_share: float | None = None

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.subgroups]

    def calibrated_everywhere(self) -> bool:
        """True when no subgroup's Holm-adjusted test rejects at level ``1 - prob``."""
        return self.p_all > 1.0 - self.prob

    def to_dict(self) -> dict[str, Any]:
        """``summary.json["subgroups"]``: one entry per subgroup plus the family results."""
        return {
            "label": self.label,
            "metric": self.metric,
            "channels": self.channels,
            "prob": self.prob,
            "entries": [s.to_dict() for s in self.subgroups],
            "test": {
                "hypothesis": "calibrated in every subgroup",
                "correction": self.correction,
                "p_value": self.p_all,
                "rejected": not self.calibrated_everywhere(),
                "level": round(1.0 - self.prob, 12),
            },
            "gap": dict(self.gap),
            "kappa": self.kappa,
            "clusters": self.clusters,
            "clusters_differ_share": self.clusters_differ_share,
            "n_replicates": self.n_replicates,
            "failed_replicates": self.failed_replicates,
            "interval_method": "stratified Bayesian bootstrap of items within subgroups, "
            "every channel fit, the reader clusters and the pooling concentration refitted "
            "per replicate; "
            "bias-aware interval of the one interval engine",
            "warnings": list(self.warnings),
        }


def holm_adjust(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values (family-wise error control under any dependence).

    Examples
    --------
    >>> holm_adjust(np.array([0.01, 0.04, 0.03])).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    m = p.size
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def subgroup_values(data: Annotations, subgroup: str | Any | None) -> tuple[str, np.ndarray]:
    """The subgroup label and one value per item (as strings).

    ``subgroup`` is the name of the container's per-item ``group`` variable (any string:
    the column name it was read from, for example ``load_csv(..., group="site")``), or
    an array of one value per item. Missing values (NaN, None, blank) are refused.
    """
    if subgroup is None or isinstance(subgroup, str):
        if data.group is None:
            raise ConfigError(
                f"subgroup={subgroup!r} needs a per-item subgroup: read the data with "
                "load_csv(..., group='COLUMN') (--subgroup COLUMN), build them with "
                "Annotations.from_arrays(..., group=values), or pass one value per item."
            )
        label = subgroup or str((data.columns or {}).get("group") or "group")
        raw = np.asarray(data.group, dtype=object)
    else:
        label = "subgroup"
        raw = np.asarray(subgroup, dtype=object)
        if raw.shape != (data.n_items,):
            raise DataError(
                f"subgroup must have one value per item, shape ({data.n_items},); got {raw.shape}."
            )
    missing = [
        i
        for i, v in enumerate(raw)
        if v is None
        or (isinstance(v, float) and np.isnan(v))
        or (isinstance(v, str) and not v.strip())
    ]
    if missing:
        named = f"subgroup {label!r}" if subgroup is None or isinstance(subgroup, str) else label
        raise DataError(
            f"{named} is missing for {len(missing)} item(s) (None, NaN or blank), first at "
            f"{ItemWhere(data.items)(missing[0])}; give every item a subgroup (for example "
            "'unknown') or leave those items out."
        )
    return label, np.array([str(v) for v in raw], dtype=object)


@dataclass
class _Design:
    """Item-level arrays of the annotated items that every replicate reuses."""

    states: NDArray[np.int64]  # (P, K) observed patterns
    pattern: NDArray[np.int64]  # (n,) pattern of each item
    group: NDArray[np.int64]  # (n,) channel (prevalence) group of each item
    subgroup: NDArray[np.int64]  # (n,) subgroup index
    probs: NDArray[np.float64]  # (n, C)
    n_groups: int
    edges: NDArray[np.float64]


def _check_options(
    channels: str, metric: str, prob: float, n_bootstrap: int, min_items: int, n_classes: int
) -> str:
    if channels not in SUBGROUP_CHANNELS:
        raise ConfigError(f"channels must be one of {SUBGROUP_CHANNELS}; got {channels!r}.")
    if metric not in SUBGROUP_METRICS:
        raise ConfigError(f"metric must be one of {SUBGROUP_METRICS}; got {metric!r}.")
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 < float(prob) < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob!r}.")
    for name, value, low in (("n_bootstrap", n_bootstrap, 100), ("min_items", min_items, 2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ConfigError(f"{name} must be a whole number of at least {low}; got {value!r}.")
    if metric == "auto":
        return "binary" if n_classes == 2 else "top_label"
    if n_classes == 2:
        return "binary"  # both views of two classes are the binary NC-ECE on p_1
    return str(metric)


def _design(data: Annotations, values: np.ndarray, groups: Bins | str | None, bins: Bins):
    if data.gold is not None and data.n_gold > 0:
        raise ConfigError(
            "the subgroup analysis does not use gold items yet; audit the subgroups without "
            "the gold column (the headline audit still uses them)."
        )
    summary: Summary = summarize(data, groups=groups, bins=bins)
    keep = data.annotated
    c = data.n_classes
    states, pattern = unique_patterns(item_states(data.labels[keep], c), c)
    names, index = np.unique(values[keep], return_inverse=True)
    design = _Design(
        states=np.asarray(states, dtype=np.int64),
        pattern=np.asarray(pattern, dtype=np.int64),
        group=item_groups(data, summary)[keep],
        subgroup=np.asarray(index, dtype=np.int64),
        probs=data.probs[keep],
        n_groups=int(summary.dataset.sizes["group"]),
        edges=np.asarray(summary.bin_edges, dtype=np.float64),
    )
    return summary, [str(x) for x in names], design


def check_subgroups(
    data: Annotations, subgroup: str | Any | None, *, min_items: int = MIN_SUBGROUP_ITEMS
) -> tuple[str, np.ndarray, list[str]]:
    """Validate a subgroup request before any fitting: label, values, sorted names.

    Raises :class:`~bayescal.errors.DataError` for missing values, a single subgroup, or a
    subgroup with fewer than ``min_items`` annotated items (each named with its size).
    """
    label, values = subgroup_values(data, subgroup)
    names, sizes = np.unique(values[data.annotated], return_counts=True)
    if names.size < 2:
        shown = repr(str(names[0])) if names.size else "none"
        raise DataError(
            f"subgroup {label!r} has one value ({shown}) among the annotated items; a "
            "subgroup analysis needs at least two subgroups."
        )
    small = [f"{names[g]!r} ({int(sizes[g])})" for g in np.flatnonzero(sizes < min_items)]
    if small:
        raise DataError(
            f"subgroup(s) {name_list(small, joined=True)} of {label!r} have fewer than {min_items} "
            "annotated items; merge each with a similar subgroup, collect more items for it, "
            "or leave its items out (in Python, subgroup_nc_ece(min_items=) lowers the limit; "
            "intervals get very wide)."
        )
    return label, values, [str(x) for x in names]


def _counts(design: _Design, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted pattern counts (R, L, P) of the items ``rows`` with weights (R, len(rows))."""
    p = design.states.shape[0]
    key = design.group[rows] * p + design.pattern[rows]
    out = np.zeros((weights.shape[0], design.n_groups * p))
    for r in range(weights.shape[0]):
        out[r] = np.bincount(key, weights=weights[r], minlength=design.n_groups * p)
    return out.reshape(weights.shape[0], design.n_groups, p)


def _entries(design: _Design, rows: np.ndarray, metric: str):
    """The (item, class, score, output) entries of the metric's signed moments."""
    probs = design.probs[rows]
    n, c = probs.shape
    m = design.edges.size - 1
    if metric == "binary":
        z = probs[:, 1]
        return np.arange(n), np.ones(n, dtype=np.int64), z, assign(z, design.edges), m, 1.0
    if metric == "top_label":
        k = probs.argmax(axis=1)
        z = probs[np.arange(n), k]
        return np.arange(n), k, z, assign(z, design.edges), m, 1.0
    item = np.repeat(np.arange(n), c)
    cls = np.tile(np.arange(c), n)
    z = probs.ravel()
    return item, cls, z, cls * m + assign(z, design.edges), c * m, float(c)


def _moments(design, rows, metric, confusion, weights, annotators, classes, weight_rule):
    """Signed bin moments (R, M') of the items ``rows`` with confusions (R, K, C, C)."""
    r = confusion.shape[0]
    fit = ChannelFit.from_confusion(
        confusion,
        np.full((r, 1, confusion.shape[2]), 1.0 / confusion.shape[2]),
        annotators=annotators,
        classes=classes,
        groups=["all"],
        group_counts=[rows.size],
        method="subgroup",
    )
    u = corrected_onehot_targets(design.states, fit, weights=weight_rule)  # (R, P, C)
    item, cls, z, out, n_out, scale = _entries(design, rows, metric)
    pat = design.pattern[rows][item]
    vals = weights[:, item] * (u[:, pat, cls] - z[None])
    moments = np.zeros((r, n_out))
    for i in range(r):
        moments[i] = np.bincount(out, weights=vals[i], minlength=n_out)
    return moments / (rows.size * scale)


def _kappa(n_rows: np.ndarray, shared: np.ndarray, per_subgroup: bool = False) -> np.ndarray:
    """Moment estimate of the concentration per replicate (module docstring).

    ``n_rows`` (G, R, K, C, C) per-subgroup E-step counts; ``shared`` (R, K, C, C).
    Returns (R,), or (G, R) with ``per_subgroup`` (each subgroup's own spread).
    """
    n = n_rows.sum(axis=-1, keepdims=True)  # (G, R, K, C, 1)
    ok = n > 1.0
    p = np.where(ok, n_rows / np.maximum(n, 1e-300), 0.0)
    var = shared[None] * (1.0 - shared[None])
    num = np.where(ok, (p - shared[None]) ** 2 - var / np.maximum(n, 1e-300), 0.0)
    den = np.where(ok, var * (1.0 - 1.0 / np.maximum(n, 1e-300)), 0.0)
    axes: tuple[int, ...] = (2, 3, 4) if per_subgroup else (0, 2, 3, 4)
    tau2 = num.sum(axis=axes) / np.maximum(den.sum(axis=axes), 1e-300)
    with np.errstate(divide="ignore"):
        kappa = np.where(tau2 > 0, 1.0 / tau2 - 1.0, MAX_KAPPA)
    return np.clip(kappa, MIN_KAPPA, MAX_KAPPA)


def _degenerate(confusion: np.ndarray) -> bool:
    return bool(np.linalg.svd(confusion, compute_uv=False).min() < MIN_SINGULAR)


def _identified(data: Annotations, values: np.ndarray, name: str, groups, bins) -> bool:
    """Whether the subgroup's own design identifies its channels (the EM's design check)."""
    try:
        check_multiclass_design(summarize(data.subset(values == name), groups=groups, bins=bins))
    except (DataError, IdentificationError):
        return False
    return True


@dataclass
class _OwnFits:
    """One pass's shared fit and per-subgroup EM fits (R replicates; R = 1 for the point)."""

    shared: np.ndarray  # (R, K, C, C)
    shared_rho: np.ndarray  # (R, L, C)
    own: np.ndarray  # (G, R, K, C, C)
    counts: list[np.ndarray]  # per subgroup (R, L, P)
    rhos: list[np.ndarray]  # per subgroup (R, L, C)
    n_rows: np.ndarray  # (G, R, K, C, C) E-step counts of the own fits


def _rows(n_rows: np.ndarray) -> np.ndarray:
    """Confusion rows of E-step counts (an empty row stays 0: its entries carry no test)."""
    n = n_rows.sum(axis=-1, keepdims=True)
    return np.where(n > 0, n_rows / np.maximum(n, 1e-300), 0.0)


def _agreement_ps(rows_g: np.ndarray, rows_h: np.ndarray) -> np.ndarray:
    """P-value of "the readers of two subgroups err alike" (Hotelling T^2).

    ``rows_g``, ``rows_h`` (1 + R, K, C, C): the two subgroups' confusion rows from their
    own fits, first the point fit then R bootstrap replicates (the stratified bootstrap
    draws the subgroups independently, so the replicates' spread of the difference is its
    sampling spread). The free entries (the first C - 1 answers of each row) of the
    difference are standardised by their bootstrap sd (entries whose sd is below 1e-8 of
    the largest are dropped: an empty or boundary row carries no evidence);
    ``T^2 = d' S^+ d`` with ``S`` the replicates' correlation matrix of rank ``q``,
    referred to ``q (R - 1) / (R - q) F(q, R - q)`` (Hotelling's law for a covariance
    estimated from R draws).

    Returns (1 + R,): the point fit's p-value, then each replicate's: its own difference
    under the same standardisation and covariance (the test the point fit would have had
    on that replicate's data), so a replicate can decide the clusters as the point did.
    """
    from scipy.stats import f as f_dist

    diff = (rows_g - rows_h)[..., :-1].reshape(rows_g.shape[0], -1)
    reps = diff[1:]
    sd = reps.std(axis=0, ddof=1)
    keep = sd > 1e-8 * max(float(sd.max()), 1e-300)
    if not keep.any():
        return np.ones(diff.shape[0])
    z = diff[:, keep] / sd[keep]
    zr = (reps[:, keep] - reps[:, keep].mean(axis=0)) / sd[keep]
    corr = zr.T @ zr / (zr.shape[0] - 1)
    q = int(np.linalg.matrix_rank(corr, tol=1e-8 * corr.shape[0]))
    r = reps.shape[0]
    if q < 1 or r - q < 1:
        return np.ones(diff.shape[0])
    t2 = np.einsum("ri,ij,rj->r", z, np.linalg.pinv(corr, rcond=1e-8, hermitian=True), z)
    return np.asarray(f_dist.sf(t2 * (r - q) / (q * (r - 1)), q, r - q), dtype=np.float64)


def reader_clusters(
    point: np.ndarray, replicates: np.ndarray, sizes: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Which subgroups' readers err alike: the clusters the pooled channels pool within.

    ``point`` (G, 1, K, C, C) and ``replicates`` (G, R, K, C, C) are the per-subgroup
    E-step counts of the subgroups' own fits, ``sizes`` (G,) their items. Every pair of
    subgroups is tested (:func:`_agreement_ps`); then, largest subgroup first, each
    subgroup joins the first cluster all of whose members it agrees with (p >= ``level``)
    or opens a new one. Pairwise tests, not a test of each subgroup against the rest: the
    rest mixes the readers of every other subgroup, so with one deviant subgroup every
    subgroup differs from its rest and nothing is pooled; and dropping the most
    significant subgroup first drops the largest one (its rows are the most precise)
    and pools the deviant ones with each other.

    Returns ``cluster`` (G,) (0 is the largest subgroup's cluster) and the pairwise
    p-values (G, G) (1 on the diagonal).
    """
    cluster, p = replicate_clusters(point, replicates, sizes, level)
    return cluster[0], p[0]


def replicate_clusters(
    point: np.ndarray, replicates: np.ndarray, sizes: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`reader_clusters` for the point fit and for every bootstrap replicate:
    ``cluster`` (1 + R, G) and the pairwise p-values (1 + R, G, G), row 0 the point fit's.

    Each replicate decides its own clusters from its own pairwise tests
    (:func:`_agreement_ps`), so the bootstrap carries the uncertainty of the choice: a
    subgroup whose readers differ but whose point test happened to agree is kept apart in
    the replicates where the evidence says so, instead of pooled in every one.
    """
    n = _rows(np.concatenate([point, replicates], axis=1))  # (G, 1 + R, K, C, C)
    g_count, passes = n.shape[0], n.shape[1]
    p = np.ones((passes, g_count, g_count))
    for g in range(g_count):
        for h in range(g + 1, g_count):
            p[:, g, h] = p[:, h, g] = _agreement_ps(n[g], n[h])
    order = np.argsort(-np.asarray(sizes), kind="stable")
    cluster = np.full((passes, g_count), -1)
    for r in range(passes):
        members: list[list[int]] = []
        for g in order:
            for c, m in enumerate(members):
                if all(p[r, g, h] >= level for h in m):
                    m.append(int(g))
                    cluster[r, g] = c
                    break
            else:
                members.append([int(g)])
                cluster[r, g] = len(members) - 1
    return cluster, p


class _Fitter:
    """Every channel fit of one (point or bootstrap) pass, vectorised over replicates."""

    def __init__(self, design: _Design, n_sub: int, start_t: np.ndarray, start_rho: np.ndarray):
        self.tol, self.max_iter = 1e-9, 1000
        self.design = design
        self.n_sub = n_sub
        self.start_t = start_t  # (K, C, C) shared point fit
        self.start_rho = start_rho  # (L, C)
        self.failed = 0
        self.family_kappa: np.ndarray | None = None  # (R,) of the last pooled fit

    def _em(self, counts, t0, rho0, prior=None):
        res = em_run(
            counts, self.design.states, t0, rho0, prior=prior, tol=self.tol, max_iter=self.max_iter
        )
        self.failed += int((~res["converged"]).sum())
        return res["confusion"], res["prevalence"]

    def _start(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        t0 = np.broadcast_to(self.start_t, (r, *self.start_t.shape)).copy()
        rho0 = np.broadcast_to(self.start_rho, (r, *self.start_rho.shape)).copy()
        return t0, rho0

    def shared(self, weights: np.ndarray) -> np.ndarray:
        """The shared fit on every item (R, K, C, C)."""
        d = self.design
        return self._em(_counts(d, np.arange(d.pattern.size), weights), *self._start(len(weights)))[
            0
        ]

    def own(self, weights: np.ndarray) -> _OwnFits:
        """The shared fit and each subgroup's own EM fit (started at the shared one)."""
        d = self.design
        shared, shared_rho = self._em(
            _counts(d, np.arange(d.pattern.size), weights), *self._start(len(weights))
        )
        own, counts, rhos = [], [], []
        for g in range(self.n_sub):
            rows = np.flatnonzero(d.subgroup == g)
            cg = _counts(d, rows, weights[:, rows])
            tg, rg = self._em(cg, shared, shared_rho)
            own.append(tg)
            counts.append(cg)
            rhos.append(rg)
        own_t = np.stack(own)
        n_rows = np.stack(
            [
                expected_answer_counts(counts[g], d.states, own_t[g], rhos[g])
                for g in range(self.n_sub)
            ]
        )
        return _OwnFits(shared, shared_rho, own_t, counts, rhos, n_rows)

    def pooled_per_replicate(self, fits: _OwnFits, clusters: np.ndarray) -> np.ndarray:
        """:meth:`pooled` with each replicate's own clusters ``clusters`` (R, G): the
        replicates are pooled in batches of equal clusters. Returns (G, R, K, C, C)."""
        out = np.empty_like(fits.own)
        patterns, which = np.unique(clusters, axis=0, return_inverse=True)
        which = np.asarray(which).reshape(-1)
        for i, pattern in enumerate(patterns):
            idx = np.flatnonzero(which == i)
            part = _OwnFits(
                fits.shared[idx],
                fits.shared_rho[idx],
                fits.own[:, idx],
                [c[idx] for c in fits.counts],
                [r[idx] for r in fits.rhos],
                fits.n_rows[:, idx],
            )
            out[:, idx] = self.pooled(part, pattern)[0]
        return out

    def pooled(self, fits: _OwnFits, cluster: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pooled confusions (G, R, K, C, C) and each subgroup's kappa (G, R).

        Within each cluster of two or more subgroups (:func:`reader_clusters`) the centre
        is the shared fit of the cluster's items (the shared fit itself when the cluster
        holds every subgroup), and a member is pooled no more than the cluster's spread
        or its own allows; a subgroup alone in its cluster keeps its own channels (the
        :data:`MIN_KAPPA` prior toward the shared fit only keeps its rows off the simplex
        boundary). ``family_kappa`` is the concentration of cluster 0 (the largest
        subgroup's), :data:`MIN_KAPPA` when it pools nothing.
        """
        r = fits.shared.shape[0]
        kappa = np.full((self.n_sub, r), MIN_KAPPA)
        centres = np.broadcast_to(fits.shared, (self.n_sub, *fits.shared.shape)).copy()
        self.family_kappa = np.full(r, MIN_KAPPA)
        for c in np.unique(cluster):
            members = np.flatnonzero(cluster == c)
            if members.size < 2:
                continue
            if members.size == self.n_sub:
                centre = fits.shared
            else:
                counts = sum(fits.counts[g] for g in members)
                centre = self._em(counts, fits.shared, fits.shared_rho)[0]
            family = _kappa(fits.n_rows[members], centre)
            own_k = _kappa(fits.n_rows[members], centre, per_subgroup=True)
            kappa[members] = np.minimum(family[None], own_k)
            centres[members] = centre
            if c == 0:
                self.family_kappa = family
        pooled = np.stack(
            [
                self._em(
                    fits.counts[g],
                    centres[g],
                    fits.rhos[g],
                    prior=kappa[g][:, None, None, None] * centres[g],
                )[0]
                for g in range(self.n_sub)
            ]
        )
        return pooled, kappa


def _stratified_weights(design: _Design, n_rep: int, rng: np.random.Generator) -> np.ndarray:
    """Bayesian-bootstrap item weights (R, n), each subgroup's summing to its size."""
    w = rng.standard_gamma(1.0, size=(n_rep, design.pattern.size))
    sums = np.zeros((n_rep, int(design.subgroup.max()) + 1))
    for g in range(sums.shape[1]):
        sel = design.subgroup == g
        sums[:, g] = w[:, sel].sum(axis=1) / sel.sum()
    return w / sums[:, design.subgroup]


def subgroup_nc_ece(
    data: Annotations,
    subgroup: str | Any | None = None,
    *,
    channels: str = "pooled",
    groups: Bins | str | None = None,
    bins: Bins = 10,
    metric: str = "auto",
    weights: str = "equal",
    prob: float = 0.9,
    n_bootstrap: int = DEFAULT_SUBGROUP_REPLICATES,
    min_items: int = MIN_SUBGROUP_ITEMS,
    random_state: RandomState = 0,
) -> SubgroupCalibration:
    """Noise-corrected calibration error per subgroup, for any number of classes.

    Parameters
    ----------
    data : Annotations
        Item-level data (the subgroups split the items; a summary cannot).
    subgroup : str, array-like of shape (n_items,) or None
        The name of the container's per-item ``group`` (read with
        ``load_csv(..., group="site")``), or the values themselves.
    channels : {"pooled", "shared", "per-subgroup"}, default "pooled"
        How each subgroup's channels are fitted (module docstring).
    groups : channel (prevalence) groups, default 5 score groups for C = 2, the
        predicted class for C > 2 (as the audits); see
        :func:`~bayescal.summaries.summary.summarize`.
    bins : int or edges, default 10
    metric : {"auto", "top_label", "classwise"}, default "auto"
        ``"auto"``: the binary NC-ECE for C = 2, the top-label one for C > 2.
    weights : str, default "equal"
        Annotator weight rule of the corrected targets.
    prob : float, default 0.9
        Interval probability; the tests' family-wise level is ``1 - prob``.
    n_bootstrap : int, default 400
        Replicates of the whole procedure (at least 100).
    min_items : int, default 50
        Fewest annotated items per subgroup (:data:`MIN_SUBGROUP_ITEMS`).
    random_state : None, int or Generator, default 0

    Returns
    -------
    SubgroupCalibration

    Raises
    ------
    DataError
        One subgroup only, a subgroup below ``min_items``, missing subgroup values.
    IdentificationError
        ``channels="per-subgroup"`` and a subgroup whose own channels are not identified.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.simulate import simulate_multiclass
    >>> d = simulate_multiclass(1200, 3, random_state=0)
    >>> site = np.where(np.arange(1200) < 600, "A", "B")
    >>> r = subgroup_nc_ece(d, site, n_bootstrap=100)
    >>> r.names, r.metric, len(r.to_dict()["entries"])
    (['A', 'B'], 'top_label', 2)
    """
    if not isinstance(data, Annotations):
        raise ConfigError(
            f"subgroup_nc_ece needs the item-level Annotations (the subgroups split the "
            f"items); got {type(data).__name__}."
        )
    kind = _check_options(channels, metric, prob, n_bootstrap, min_items, data.n_classes)
    if groups is None:
        groups = 5 if data.n_classes == 2 else "predicted"
    label, values, _ = check_subgroups(data, subgroup, min_items=min_items)
    summary, names, design = _design(data, values, groups, bins)
    warnings: list[str] = []
    identified = [_identified(data, values, g, groups, bins) for g in names]
    shared_fit = dawid_skene_em(summary, prevalence="grouped", random_state=random_state)
    start_t = np.asarray(shared_fit.confusion.values[0])
    start_rho = np.asarray(shared_fit.class_prevalence.values[0])
    fitter = _Fitter(design, len(names), start_t, start_rho)
    n = design.pattern.size
    rng = check_random_state(random_state)
    w = _stratified_weights(design, n_bootstrap, rng)
    point_kappa: np.ndarray | None = None
    family_kappa: float | None = None
    agreement_p: np.ndarray | None = None
    accepted = np.ones(len(names), dtype=bool)
    clusters: list[list[str]] | None = None
    split_share: float | None = None
    if channels == "shared":
        point_t = np.broadcast_to(fitter.shared(np.ones((1, n))), (len(names), 1, *start_t.shape))
        point_own = None
    else:
        point = fitter.own(np.ones((1, n)))
        point_t = point_own = point.own
    for g, name in enumerate(names):
        if identified[g] and point_own is not None and _degenerate(point_own[g, 0]):
            identified[g] = False
        if not identified[g]:
            if channels == "per-subgroup":
                raise IdentificationError(
                    f"subgroup {name!r} of {label!r} cannot identify its own channels (too "
                    "few annotators, classes or items, or a degenerate EM fit); use "
                    "channels='pooled' (partial pooling toward the shared channels) or "
                    "'shared'."
                )
            warnings.append(
                f"subgroup {name!r}: its own channels are not identified; its pooled "
                "channels lean on the shared fit."
            )
    fitter.tol, fitter.max_iter = BOOTSTRAP_TOL, BOOTSTRAP_MAX_ITER
    point_failed, fitter.failed = fitter.failed, 0
    if channels == "shared":
        rep_t = np.broadcast_to(fitter.shared(w), (len(names), n_bootstrap, *start_t.shape))
    else:
        reps = fitter.own(w)
        rep_t = reps.own
    if channels == "pooled":
        sizes = np.bincount(design.subgroup, minlength=len(names))
        all_clusters, all_p = replicate_clusters(point.n_rows, reps.n_rows, sizes, POOLING_LEVEL)
        # a subgroup that cannot identify its own channels has to borrow them (cluster 0
        # holds the largest subgroup in every pass)
        all_clusters[:, ~np.asarray(identified)] = 0
        cluster, pair_p = all_clusters[0], all_p[0]
        in_cluster = np.bincount(cluster, minlength=len(names))[cluster] >= 2
        agreement_p = np.ones(len(names))
        for g in range(len(names)):
            mates = np.flatnonzero((cluster == cluster[g]) & (np.arange(len(names)) != g))
            if in_cluster[g]:
                agreement_p[g] = pair_p[g, mates].min()
            else:  # the p-value that kept it out of the most compatible cluster
                agreement_p[g] = max(
                    pair_p[g, cluster == c].min() for c in np.unique(cluster) if c != cluster[g]
                )
                warnings.append(
                    f"subgroup {names[g]!r}: its readers err unlike every other cluster's "
                    f"(agreement p = {agreement_p[g]:.2g} < {POOLING_LEVEL}); it keeps its "
                    "own channels (no pooling)."
                )
        accepted = in_cluster
        clusters = [[names[g] for g in np.flatnonzero(cluster == c)] for c in np.unique(cluster)]
        failed = fitter.failed
        fitter.tol, fitter.max_iter = 1e-9, 1000
        point_t, point_kappa = fitter.pooled(point, cluster)
        family_kappa = float(fitter.family_kappa[0]) if fitter.family_kappa is not None else None
        point_failed += fitter.failed
        fitter.failed = failed
        fitter.tol, fitter.max_iter = BOOTSTRAP_TOL, BOOTSTRAP_MAX_ITER
        rep_t = fitter.pooled_per_replicate(reps, all_clusters[1:])
        split_share = float((all_clusters[1:] != cluster[None]).any(axis=1).mean())
    if point_failed:
        warnings.append(
            f"{point_failed} point EM fit(s) stopped at the iteration cap before converging."
        )
    if fitter.failed > _MAX_FAILED * n_bootstrap * (1 + 2 * len(names)):
        warnings.append(
            f"{fitter.failed} bootstrap EM runs stopped at the iteration cap before converging; "
            "their channels are used as they are."
        )
    annotators, classes = list(data.annotators), list(data.classes)
    estimates, thetas, plugins = [], [], []
    for g, name in enumerate(names):
        rows = np.flatnonzero(design.subgroup == g)
        d0 = _moments(
            design, rows, kind, point_t[g], np.ones((1, rows.size)), annotators, classes, weights
        )[0]
        dr = _moments(design, rows, kind, rep_t[g], w[:, rows], annotators, classes, weights)
        lo, hi, p = bias_aware_interval(d0, dr, prob)
        dev = dr - dr.mean(axis=0, keepdims=True)
        thetas.append(np.abs(d0 + dev).sum(axis=1))
        plugins.append(float(np.abs(d0).sum()))
        shrink = {"shared": 1.0, "per-subgroup": 0.0}.get(channels)
        if shrink is None and point_kappa is not None:
            kappa0 = float(point_kappa[g, 0])
            shrink = kappa0 / (rows.size + kappa0)
        estimates.append(
            dict(
                name=name,
                n_items=int(rows.size),
                estimate=debiased_ece(d0, dr),
                plugin=plugins[-1],
                lo=lo,
                hi=hi,
                p_value=calibration_p_value(d0, dr),
                identified=bool(identified[g]),
                shrinkage=float(shrink if shrink is not None else 0.0),
                pooled=bool(accepted[g]) if channels == "pooled" else channels == "shared",
                agreement_p=None if agreement_p is None else float(agreement_p[g]),
                plausible=bool(plugins[-1] <= MAX_ECE),
            )
        )
    p_holm = holm_adjust(np.array([e["p_value"] for e in estimates]))
    subgroups = [SubgroupEstimate(**e, p_holm=float(ph)) for e, ph in zip(estimates, p_holm)]
    return SubgroupCalibration(
        subgroups=subgroups,
        metric=kind,
        channels=channels,
        prob=float(prob),
        p_all=float(p_holm.min()),
        correction="holm",
        gap=_gap(subgroups, np.array(plugins), np.stack(thetas), prob),
        kappa=family_kappa,
        n_replicates=int(n_bootstrap),
        failed_replicates=int(fitter.failed),
        label=label,
        warnings=warnings,
        clusters=clusters,
        clusters_differ_share=split_share,
    )


def _gap(subgroups, plugins: np.ndarray, thetas: np.ndarray, prob: float) -> dict[str, Any]:
    """Worst minus best subgroup: bias-corrected difference and basic-bootstrap interval."""
    est = np.array([s.estimate for s in subgroups])
    hi_g, lo_g = int(est.argmax()), int(est.argmin())
    diff = plugins[hi_g] - plugins[lo_g]
    reps = thetas[hi_g] - thetas[lo_g]
    alpha = 1.0 - prob
    q_lo, q_hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return {
        "worst": subgroups[hi_g].name,
        "best": subgroups[lo_g].name,
        "estimate": float(2 * diff - reps.mean()),
        "lo": float(2 * diff - q_hi),
        "hi": float(2 * diff - q_lo),
        "prob": float(prob),
        "note": "pair chosen on the estimates (descriptive interval)",
    }
