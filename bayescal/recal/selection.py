"""Choosing a recalibration map by Hanada & Futami's protocol (Sec. 6.3, App. G.4, Tables 3, 8).

One choice for every number of classes C. The original score ("none", the paper's
Base) is always a candidate beside a naive map (fitted to the answer shares) and a
corrected map (fitted to noise-corrected targets) of each family: for two classes the
score maps (temperature, Platt, histogram) on ``p_1``, for C > 2 the maps on logits
(corrected temperature and vector scaling, SPEC §3) judged by the top-label NC-ECE on
bins of the recalibrated confidence. The annotated items are split once into three
disjoint partitions:

- **pilot**: split ``pilot_splits`` times at random into a channel subset (channels
  are fitted on it), a recalibration subset (maps are fitted on it) and a validation
  subset (each candidate's NC-ECE, corrected with the channel subset's channels);
- **evaluation-channel**: one channel fit, the common correction of the test;
- **test**: every candidate of every pilot split is evaluated on it, on shared
  equal-width bins of ``g(Z)`` (NC-ECE, soft-vote and, with truth, reference-label
  ECE share predictions and bins; only the label targets change).

The validation criterion is the bias-corrected NC-ECE estimate (the bootstrap
correction of :func:`~bayescal.metrics.uncertainty.nc_ece_interval`): the plug-in is
biased upward in proportion to the occupied bins, which favours maps that pool the
items into few values of ``g(Z)`` (histogram maps) for no reason of calibration. The
recommended candidate has the smallest mean validation estimate over the pilot
splits, provided it beats the original score by more than one standard error of their
paired split-wise difference (the one-SE rule; otherwise the original score is kept:
a map changes every score and must earn it). The test numbers are reported beside it,
never used to choose. How often each candidate wins across the splits is the
selection's uncertainty.

What the rule guarantees for a calibrated model. Let ``d_s`` be the original score's
validation estimate minus the best map's in split ``s`` (S splits). When the model is
calibrated, no map can lower the population NC-ECE, so ``E[d_s] <= 0`` up to the
bias a map's fit on the recalibration subset removes from its own validation estimate
(none: maps are fitted on a disjoint subset). A map is recommended only when
``mean(d) > sd(d) / sqrt(S)``, i.e. the paired t statistic exceeds 1; if the ``d_s``
were normal with mean 0 that happens with probability ``P(t_{S-1} > 1)`` (0.187 at
S = 5) for a fixed candidate, and the best of several candidates can only be chosen
more often. The tests bound the rate on calibrated populations from this.

Channel uncertainty. Every pilot split fits its own channels on its own channel
subset, so the split-to-split spread of ``d_s`` that the one-SE rule compares against
already holds the channel-estimation error of a point fit at a sixth of the items; a
Bayesian audit passes its posterior (``posterior=``) and a recommended corrected map
is then also fitted under every posterior draw on the pilot items (one map per draw,
:mod:`bayescal.recal.ensemble`): if the identity map lies inside that band of maps at
every validation item, the posterior does not tell the map from the original score
and the original score is kept (``recommended["posterior_band_holds_identity"]``).

Sparse bins on ``g(Z)``: a histogram map takes J values, so most equal-width bins of
``g(Z)`` are empty by construction; an empty bin adds nothing to a binned ECE, so
only non-empty bins holding fewer than ``MIN_BIN_ITEMS`` items count as sparse (the
generic "too many bins" check, which also counts empty bins, is not applied to
``g(Z)``). A test evaluation with more than ``SPARSE_ITEM_SHARE`` of its items in
sparse bins is flagged (``recalibration.sparse-bins``).

Deviation from the paper: its partitions are 20 / 40 / 40% of 50,000 images; an audit
has a few thousand items, so the default gives the pilot half (each pilot subset
then holds a sixth) and the evaluation-channel and test partitions a quarter each.

Item cap. The selection's cost grows with the items, not with the summary:
every pilot split refits the channels and the maps on its items, and the posterior
band refits a corrected map under each of up to 200 draws on the whole pilot. Beyond
:data:`MAX_CLASS_SELECTION_ITEMS` annotated items a C-class selection, and beyond
:data:`MAX_BINARY_SELECTION_ITEMS` a binary one, runs on a seeded random subsample of
that many (``max_items=``; ``sizes["annotated"]`` and ``sizes["used"]`` record both).
The protocol is valid at any size: the one-SE rule compares the maps with their own
split-to-split spread measured on the subsample, so fewer items only make it keep the
original probabilities more often (less power), never recommend a map more often. At
the C-class cap each pilot subset holds about 3,300 items and the test 5,000; at the
binary cap about 16,700 and 25,000.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bayescal._random import check_random_state
from bayescal._typing import Bins, RandomState, Weights
from bayescal.channels.fit import fit_channels
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError, FitError
from bayescal.flags import Flag
from bayescal.metrics.binned import class_oracle_ece, class_vote_ece
from bayescal.metrics.ncece import EVALUATION_WEIGHTS, class_nc_ece, recalibrated_values
from bayescal.metrics.uncertainty import multiclass_nc_ece_interval, nc_ece_interval
from bayescal.recal.ensemble import CLASS_MAP_MAKERS, MapBand, fit_map_band
from bayescal.recal.evaluate import evaluate_map
from bayescal.recal.histogram import HistogramMap
from bayescal.recal.parametric import (
    PlattMap,
    TemperatureMap,
)
from bayescal.recal.targets import naive_targets, probs_to_logits
from bayescal.summaries.partition import MIN_BIN_ITEMS, SPARSE_ITEM_SHARE
from bayescal.summaries.patterns import item_states
from bayescal.summaries.summary import summarize

__all__ = [
    "BASE",
    "MIN_PART_ITEMS",
    "MAX_CLASS_SELECTION_ITEMS",
    "MAX_BINARY_SELECTION_ITEMS",
    "SELECTION_FAMILIES",
    "CLASS_FAMILIES",
    "RecalibrationChoice",
    "choose_recalibration",
]

#: The original score as a candidate (the paper's "Base").
BASE = "none"

#: Map families tried by default for two classes (maps of the score ``p_1``).
SELECTION_FAMILIES = ("temperature", "platt", "histogram")

#: Map families for more than two classes (maps of the logits, SPEC §3).
CLASS_FAMILIES = ("temperature", "vector")

#: Fewest items in each pilot subset, the evaluation-channel and the test partition.
MIN_PART_ITEMS = 50

#: Most annotated items a C > 2 selection uses; beyond it a seeded random subsample
#: (module docstring, "Item cap"). At 10^5 items, C = 10 the whole-data selection took
#: 180 s of a 530 s audit (``docs/results/audit_large.json``).
MAX_CLASS_SELECTION_ITEMS = 20_000

#: Most annotated items a binary selection uses (module docstring, "Item cap"). On all
#: 10^6 items of ``bench audit-large`` the selection took 193 s of the audit's 356 s wall
#: (81 CPU s in all, load 15); capped, 16 s of 101 s (32 CPU s, load 12). At the cap each
#: pilot subset still holds about 16,700 items and the test 25,000.
MAX_BINARY_SELECTION_ITEMS = 100_000

#: Bootstrap replicates of each validation estimate (its Monte Carlo error, about
#: sd / sqrt(500), is small beside the split-to-split spread the one-SE rule uses).
VALIDATION_REPLICATES = 500

_TARGETS = ("naive", "corrected")
_MAKERS = {"temperature": TemperatureMap, "platt": PlattMap}


def _candidate(family: str, target: str) -> str:
    return f"{family}_{target}"


@dataclass(eq=False)
class RecalibrationChoice:
    """The outcome of :func:`choose_recalibration`.

    Attributes
    ----------
    candidates : list of str
        ``"none"`` then ``"{family}_{target}"`` for every family and target.
    validation : dict of str -> ndarray of shape (pilot_splits,)
        Validation NC-ECE of each candidate per pilot split (NaN where the split's
        channel fit failed).
    wins : dict of str -> int
        Pilot splits in which each candidate had the smallest validation NC-ECE.
    test : dict of str -> dict
        Per candidate, means and SDs over the pilot fits on the test partition:
        ``nc``, ``nc_sd``, ``soft_vote`` and, with truth, ``oracle``.
    recommended : dict
        ``map`` (``"none"`` or a family), ``target`` (None, ``"naive"`` or
        ``"corrected"``), ``validation_nc_ece``, ``test_nc_ece``.
    maps : dict of str -> list
        The fitted maps of each candidate, one per pilot split (``None`` for
        ``"none"`` and for failed splits).
    sizes : dict of str -> int
        Items per partition and per pilot subset; ``annotated`` (all annotated items)
        and ``used`` (after the item cap, ``max_items``).
    flags : list of Flag
    settings : dict
    posterior_band : MapBand or None
        With a channel posterior: the corrected map refitted under every draw on the
        pilot items (:func:`~bayescal.recal.ensemble.fit_map_band`), of the recommended
        map (``role`` "recommended") or, when the original score or a naive map is
        kept, of the best corrected candidate by validation (``role`` "best corrected
        candidate").
    """

    candidates: list
    validation: dict
    wins: dict
    test: dict
    recommended: dict
    maps: dict
    sizes: dict
    flags: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    posterior_band: MapBand | None = None

    @property
    def keeps_original(self) -> bool:
        """True when the data say: keep the original score."""
        return self.recommended["map"] == BASE

    def table(self) -> list[dict]:
        """One row per candidate: validation mean / SD, wins, test numbers."""
        rows = []
        for name in self.candidates:
            v = self.validation[name]
            ok = v[np.isfinite(v)]
            family, _, target = name.partition("_")
            rows.append(
                {
                    "candidate": name,
                    "map": family,
                    "target": target or None,
                    "validation_nc_ece": float(ok.mean()) if ok.size else None,
                    "validation_nc_ece_sd": float(ok.std(ddof=1)) if ok.size > 1 else None,
                    "wins": self.wins[name],
                    **{f"test_{k}": v for k, v in self.test[name].items()},
                }
            )
        return rows

    def to_dict(self) -> dict:
        """JSON-ready: ``recommended``, ``candidates`` (the table), ``wins``, ``sizes``."""
        return {
            "recommended": dict(self.recommended),
            "candidates": self.table(),
            "wins": dict(self.wins),
            "validation_per_split": {
                k: [None if not np.isfinite(x) else float(x) for x in v]
                for k, v in self.validation.items()
            },
            "sizes": dict(self.sizes),
            "settings": dict(self.settings),
            "posterior_band": None
            if self.posterior_band is None
            else self.posterior_band.to_dict(),
        }


def _partition(n: int, fractions: tuple[float, float], rng) -> tuple[np.ndarray, ...]:
    order = rng.permutation(n)
    n_pilot = int(round(fractions[0] * n))
    n_channel = int(round(fractions[1] * n))
    return (
        np.sort(order[:n_pilot]),
        np.sort(order[n_pilot : n_pilot + n_channel]),
        np.sort(order[n_pilot + n_channel :]),
    )


def _fit_channels(data, method, groups, seed, options):
    # Channels and evaluation share the groups; empty groups of a small subset are dropped.
    summary = summarize(data, groups=groups, bins=1)
    opts = dict(options)
    if method in ("score_bin_em", "dawid_skene_em", "gmm"):
        opts.setdefault("random_state", seed)
    if method == "score_bin_em" or data.n_classes > 2:
        opts.setdefault("empty_groups", "drop")
    with _warnings.catch_warnings(record=True):
        _warnings.simplefilter("always")
        return fit_channels(summary, method, **opts)


def _recalibrated(g, data: Annotations) -> Annotations:
    """The items with the candidate's predictions: ``g`` is None (the original score) or
    a fitted map (a score map for two classes, a map of the logits for more)."""
    if data.n_classes > 2:
        return data if g is None else g.recalibrate(data)
    return data.with_score(recalibrated_values(data.score if g is None else g, data))


def _evaluate(data, channels, bins, weights) -> dict:
    """Test errors of the (recalibrated) items: NC-ECE, soft-vote and, with truth, the
    reference-label ECE (top-label for C > 2), on shared bins of the prediction."""
    # The generic occupancy warning counts empty bins, which a histogram map's g(Z)
    # leaves by construction; sparse non-empty bins are checked by the caller.
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        if data.n_classes == 2:
            return evaluate_map(data.score, data, channels=channels, bins=bins, weights=weights)
        out = {
            "nc": class_nc_ece(data, channels, weights=weights, bins=bins).top_label,
            "soft_vote": class_vote_ece(data, "soft_vote", bins=bins).top_label,
        }
        if data.truth is not None:
            out["oracle"] = class_oracle_ece(data, bins=bins).top_label
        return out


def _validation_estimate(data, channels, bins, weights, seed) -> float:
    """Bias-corrected NC-ECE of the recalibrated items of a validation subset
    (top-label for C > 2; docs/intervals.md).

    The plug-in sum of |bin moments| is biased upward by about ``s_m sqrt(2 / pi)`` per
    bin near calibration, so a map that puts the items in fewer bins of ``g(Z)`` (a
    histogram map) looks better by that alone; the bootstrap bias correction removes
    most of it. The channels come from another subset: ``sample_use="split"``.
    """
    opts = {"weights": weights, "bins": bins, "n_bootstrap": VALIDATION_REPLICATES}
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        if data.n_classes > 2:
            mc = multiclass_nc_ece_interval(data, channels, random_state=seed, **opts)
            return mc.top_label.estimate
        return nc_ece_interval(data, channels, random_state=seed, **opts).estimate


def _answer_shares(data: Annotations) -> np.ndarray:
    """Each item's share of answers per class (the naive target of a C-class map)."""
    states = item_states(data.labels, data.n_classes)
    votes = np.stack([(states == y).sum(axis=1) for y in range(data.n_classes)], axis=1)
    return votes / votes.sum(axis=1, keepdims=True)


def _fit_candidate(family, target, recal_d, channels, histogram):
    """One map of ``family`` fitted to the naive or corrected targets of ``recal_d``."""
    if recal_d.n_classes > 2:
        m = CLASS_MAP_MAKERS[family]()
        if target == "naive":
            return m.fit(probs_to_logits(recal_d.probs), _answer_shares(recal_d))
        return m.fit_corrected(recal_d, channels)
    j = max(2, int(round(recal_d.n_items ** (1 / 3))))  # Hanada & Futami's J = n^(1/3)
    m = _MAKERS[family]() if family in _MAKERS else HistogramMap(**(histogram or {"bins": j}))
    if target == "naive":
        return m.fit_targets(naive_targets(recal_d))
    return m.fit_corrected(recal_d, channels)


def _sparse_share(binned) -> float:
    counts = np.asarray(binned.bin_count.values)
    n = counts.sum()
    sparse = (counts > 0) & (counts < MIN_BIN_ITEMS)
    return float(counts[sparse].sum() / n) if n else 0.0


def _select(candidates, table, means) -> tuple[str, dict]:
    """The smallest mean validation NC-ECE, unless it beats the original score by less
    than one standard error of the paired split-wise difference (the one-SE rule:
    recalibrating changes every score, so it must earn the change)."""
    best = int(np.argmin(means))
    diff = table[0] - table[best]  # row 0 is the original score
    se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else 0.0
    margin = {"improvement": float(diff.mean()), "improvement_se": se}
    if best == 0 or diff.mean() <= se:
        return BASE, margin
    return candidates[best], margin


def _band(family, data, posterior, histogram, prob) -> MapBand:
    """:func:`~bayescal.recal.ensemble.fit_map_band` without its per-draw fit warnings."""
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        return fit_map_band(family, data, posterior, histogram=histogram, prob=prob)


def _item_cap(n_classes: int, max_items) -> int | None:
    """The number of annotated items a selection uses at most (None: all)."""
    if max_items is None:
        return MAX_CLASS_SELECTION_ITEMS if n_classes > 2 else MAX_BINARY_SELECTION_ITEMS
    if isinstance(max_items, bool) or not isinstance(max_items, (int, np.integer)):
        raise ConfigError(f"max_items must be an integer or None; got {max_items!r}.")
    if max_items < 6 * MIN_PART_ITEMS:
        raise ConfigError(
            f"max_items must be at least {6 * MIN_PART_ITEMS} (every partition and pilot "
            f"subset needs {MIN_PART_ITEMS} items); got {max_items}."
        )
    return int(max_items)


def _check(data, families, pilot_splits, fractions, weights_ok) -> None:
    if not isinstance(data, Annotations):
        raise DataError(
            f"choose_recalibration needs per-item data (an Annotations container); got "
            f"{type(data).__name__}. A summary has no scores to recalibrate."
        )
    allowed = SELECTION_FAMILIES if data.n_classes == 2 else CLASS_FAMILIES
    unknown = [f for f in families if f not in allowed]
    if unknown or not families:
        raise ConfigError(
            f"families for {data.n_classes} classes must be a non-empty subset of {allowed}; "
            f"got {list(families)}."
        )
    if not isinstance(pilot_splits, (int, np.integer)) or pilot_splits < 1:
        raise ConfigError(f"pilot_splits must be a positive integer; got {pilot_splits!r}.")
    if len(fractions) != 2 or min(fractions) <= 0 or sum(fractions) >= 1:
        raise ConfigError(
            f"fractions (pilot, evaluation-channel) must be positive with a sum below 1, leaving "
            f"the test partition; got {fractions}."
        )
    if not weights_ok:
        raise ConfigError("weights must be a weight rule name or an array of annotator weights.")


def choose_recalibration(
    data: Annotations,
    *,
    channels: str | None = None,
    groups: Bins | str | None = None,
    bins: Bins = 10,
    families: Sequence[str] | None = None,
    weights: Weights = EVALUATION_WEIGHTS,
    pilot_splits: int = 5,
    fractions: tuple[float, float] = (0.5, 0.25),
    channel_options: dict | None = None,
    histogram: dict | None = None,
    posterior: ChannelFit | None = None,
    prob: float = 0.9,
    random_state: RandomState = 0,
    max_items: int | None = None,
) -> RecalibrationChoice:
    """Choose between the original score and naive / corrected maps on held-out data.

    Hanada & Futami, Sec. 6.3 and App. G.4 (Tables 3 and 8): channels, map fitting and
    selection use disjoint pilot subsets; the chosen candidate's error is then measured
    on a test partition not used for any of them, corrected with channels from a
    separate evaluation-channel partition, on shared bins of ``g(Z)``.

    Parameters
    ----------
    data : Annotations
        Scores (or class probabilities) and answers; items nobody answered are left out.
    channels : str, optional
        Point channel estimator (:func:`~bayescal.channels.fit.fit_channels` method);
        default ``"score_bin_em"`` (the paper's joint score-bin EM) for two classes,
        ``"dawid_skene_em"`` for more (for two classes the paper's marginal model).
    groups : int, edges or str, optional
        Channel groups of the channel fits: default 5 score groups for two classes, the
        predicted class for more.
    bins : int or edges, default 10
        Evaluation bins on ``g(Z)`` (on the recalibrated confidence for C > 2), shared
        by every candidate and label target.
    families : sequence of str, optional
        Map families; each gives a naive and a corrected candidate. Default
        :data:`SELECTION_FAMILIES` for two classes, :data:`CLASS_FAMILIES` for more.
    weights : str or array-like, default "equal"
        Annotator weights of the NC-ECE (validation and test); corrected maps are
        fitted with their own default (shrunk inverse variance).
    pilot_splits : int, default 5
    fractions : (float, float), default (0.5, 0.25)
        Shares of the pilot and evaluation-channel partitions; the test gets the rest.
    channel_options : dict, optional
        Extra options of the channel estimator.
    histogram : dict, optional
        Parameters of the histogram maps (:class:`~bayescal.recal.HistogramMap`);
        default J = round(n^(1/3)) equal-mass bins. The paper's fixed-bin maps are
        ``{"bins": 10, "strategy": "uniform"}``.
    posterior : ChannelFit, optional
        A channel posterior (many draws) of the same annotators: a recommended corrected
        map is then refitted under every draw on the pilot items, and the original score
        is kept when the identity lies inside that ``prob`` band at every pilot item
        (module docstring).
    prob : float, default 0.9
        Mass of that band.
    random_state : None, int or Generator, default 0
    max_items : int, optional
        Use at most this many annotated items (a seeded random subsample beyond it);
        default :data:`MAX_CLASS_SELECTION_ITEMS` for more than two classes,
        :data:`MAX_BINARY_SELECTION_ITEMS` for two (module docstring, "Item cap").

    Returns
    -------
    RecalibrationChoice

    Raises
    ------
    DataError
        Too few annotated items for the partitions (each part needs
        :data:`MIN_PART_ITEMS`), or a summary instead of items.
    FitError
        The evaluation-channel fit failed, or every pilot split's channel fit did.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> c = choose_recalibration(simulate_toy(2000, "calibrated", random_state=0),
    ...                          families=("platt",), pilot_splits=2)
    >>> c.candidates
    ['none', 'platt_naive', 'platt_corrected']
    >>> c.recommended["map"] in ("none", "platt")
    True
    """
    if channels is None:
        channels = "score_bin_em" if data.n_classes == 2 else "dawid_skene_em"
    if groups is None:
        groups = 5 if data.n_classes == 2 else "predicted"
    if families is None:
        families = SELECTION_FAMILIES if data.n_classes == 2 else CLASS_FAMILIES
    _check(
        data,
        tuple(families),
        pilot_splits,
        tuple(fractions),
        isinstance(weights, str) or np.ndim(weights) == 1,
    )
    cap = _item_cap(data.n_classes, max_items)
    rng = check_random_state(random_state)
    annotated = data.subset(np.flatnonzero(data.annotated))
    n_annotated = annotated.n_items
    if cap is not None and n_annotated > cap:  # (no draw below the cap: same partitions)
        annotated = annotated.subset(np.sort(rng.choice(n_annotated, cap, replace=False)))
    pilot_i, channel_i, test_i = _partition(
        annotated.n_items, (float(fractions[0]), float(fractions[1])), rng
    )
    sizes = {
        "annotated": int(n_annotated),
        "used": int(annotated.n_items),
        "pilot": int(pilot_i.size),
        "evaluation_channel": int(channel_i.size),
        "test": int(test_i.size),
        "pilot_subset": int(pilot_i.size // 3),
    }
    small = {k: v for k, v in sizes.items() if v < MIN_PART_ITEMS}
    if small:
        raise DataError(
            f"{annotated.n_items} annotated items are too few for held-out map selection: "
            f"{small} hold fewer than {MIN_PART_ITEMS} items. Use more items (about "
            f"{6 * MIN_PART_ITEMS / fractions[0]:.0f} at the default fractions)."
        )
    options = dict(channel_options or {})
    seed = int(rng.integers(2**31 - 1))
    pilot, test = annotated.subset(pilot_i), annotated.subset(test_i)
    eval_channels = _fit_channels(annotated.subset(channel_i), channels, groups, seed, options)

    candidates = [BASE] + [_candidate(f, t) for f in families for t in _TARGETS]
    validation = {c: np.full(pilot_splits, np.nan) for c in candidates}
    maps: dict[str, list] = {c: [None] * pilot_splits for c in candidates}
    test_runs: dict[str, list] = {c: [] for c in candidates}
    flags: list[Flag] = []
    sparse: dict[str, float] = {}

    def on_test(name, g):
        ev = _evaluate(_recalibrated(g, test), eval_channels, bins, weights)
        sparse[name] = max(sparse.get(name, 0.0), _sparse_share(ev["nc"]))
        test_runs[name].append({k: v.value for k, v in ev.items()})

    on_test(BASE, None)
    for split in range(pilot_splits):
        order = rng.permutation(pilot.n_items)
        third = order.size // 3
        parts = [np.sort(order[:third]), np.sort(order[third : 2 * third])]
        parts.append(np.sort(order[2 * third :]))
        channel_d, recal_d, valid_d = (pilot.subset(p) for p in parts)
        try:
            split_channels = _fit_channels(channel_d, channels, groups, seed + split + 1, options)
        except FitError as exc:
            flags.append(
                Flag(
                    "recalibration.split-failed",
                    f"pilot split {split + 1}: the channel fit failed ({exc}); the split is "
                    "left out of the selection.",
                    "recalibration",
                )
            )
            continue
        vseed = seed + 100 * (split + 1)
        validation[BASE][split] = _validation_estimate(
            _recalibrated(None, valid_d), split_channels, bins, weights, vseed
        )
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            for family in families:
                for target in _TARGETS:
                    name = _candidate(family, target)
                    m = _fit_candidate(family, target, recal_d, split_channels, histogram)
                    maps[name][split] = m
                    validation[name][split] = _validation_estimate(
                        _recalibrated(m, valid_d), split_channels, bins, weights, vseed
                    )
                    on_test(name, m)
        flags.extend(
            Flag("recalibration.fit", f"pilot split {split + 1}: {w.message}", "recalibration")
            for w in caught
        )
    done = np.isfinite(validation[BASE])
    if not done.any():
        raise FitError(
            f"every pilot split's channel fit ({channels}) failed; no candidate can be "
            "validated. Use more items or fewer score groups."
        )
    table = np.array([validation[c] for c in candidates])
    winners = np.nanargmin(table[:, done], axis=0)
    wins = {c: int((winners == i).sum()) for i, c in enumerate(candidates)}
    means = np.nanmean(table[:, done], axis=1)
    best, margin = _select(candidates, table[:, done], means)
    test_summary = {}
    for c in candidates:
        runs = test_runs[c]
        out: dict[str, float | None] = {}
        for key in runs[0]:
            vals = np.array([r[key] for r in runs])
            out[key] = float(vals.mean())
            if key == "nc":
                out["nc_sd"] = float(vals.std(ddof=1)) if vals.size > 1 else None
        test_summary[c] = out
    for c, share in sparse.items():
        if share > SPARSE_ITEM_SHARE:
            flags.append(
                Flag(
                    "recalibration.sparse-bins",
                    f"candidate {c}: {share:.0%} of the test items sit in non-empty bins of g(Z) "
                    f"with fewer than {MIN_BIN_ITEMS} items; its test errors are inflated by "
                    "noise. Use fewer evaluation bins.",
                    "recalibration",
                )
            )
    family, _, target = best.partition("_")
    band_identity, band, band_role = None, None, None
    if posterior is not None and posterior.n_draws > 1:
        # the band of the recommended corrected map, else of the best corrected candidate
        # by validation (shown beside the choice; only the former can change it)
        corrected = [c for c in candidates if c.endswith("_corrected")]
        pick = (
            best
            if target == "corrected"
            else min(corrected, key=lambda c: means[candidates.index(c)])
        )
        band_role = "recommended" if target == "corrected" else "best corrected candidate"
        band = _band(pick.partition("_")[0], pilot, posterior, histogram, prob)
        if target == "corrected":
            band_identity = band.holds_identity(pilot)
            if band_identity:
                best, (family, _, target) = BASE, (BASE, "", "")
                band_role = "best corrected candidate"
    recommended = {
        "map": family,
        "target": target or None,
        "validation_nc_ece": float(means[candidates.index(best)]),
        "test_nc_ece": test_summary[best]["nc"],
        "best_by_validation": candidates[int(np.argmin(means))],
        "improvement_over_original": margin["improvement"],
        "improvement_se": margin["improvement_se"],
        "posterior_band_holds_identity": band_identity,
    }
    if band is not None:
        band.role = band_role
    return RecalibrationChoice(
        candidates=candidates,
        validation=validation,
        wins=wins,
        test=test_summary,
        recommended=recommended,
        maps=maps,
        sizes=sizes,
        flags=list(dict.fromkeys(flags)),
        posterior_band=band,
        settings={
            "channels": channels,
            "pilot_splits": int(pilot_splits),
            "splits_used": int(done.sum()),
            "fractions": [float(x) for x in fractions],
            "weights": weights if isinstance(weights, str) else "explicit",
        },
    )
