"""Every calibrator of Tao et al. on one dataset, and a recommendation: the library result.

:func:`assess_ambiguity` splits the items into a calibration and a test half
(stratified by voted label), profiles the annotations, recommends a method
from the calibration half alone (:mod:`bayescal.ambiguity.recommend`), fits
and scores every requested method (:mod:`bayescal.ambiguity.evaluation`), and
measures the error by annotation entropy. It returns a typed
:class:`AmbiguityAssessment`; :func:`bayescal.report.audit_ambiguity` renders
one as a report.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import seed_from
from bayescal._typing import RandomState
from bayescal.ambiguity.calibrators import METHODS
from bayescal.ambiguity.evaluation import MethodResults, entropy_strata_errors, evaluate_methods
from bayescal.ambiguity.loaders import AmbiguityData, stratified_split
from bayescal.ambiguity.metric_intervals import metric_intervals
from bayescal.ambiguity.recommend import (
    ANNOTATION_LEVELS,
    OBJECTIVES,
    AmbiguityRecommendation,
    annotation_profile,
    check_guideline,
    explain_recommendation,
    input_flags,
    outcome_flags,
    usable,
)
from bayescal.errors import ConfigError, DataError

_log = logging.getLogger(__name__)

__all__ = ["AmbiguityAssessment", "assess_ambiguity", "MIN_ITEMS"]

#: Fewest items an assessment accepts: it needs a calibration and a test half.
MIN_ITEMS = 20

#: Methods that always run: the references and whatever is recommended.
_ALWAYS = ("Uncalibrated", "TS")


@dataclass(eq=False)
class AmbiguityAssessment:
    """What :func:`assess_ambiguity` found.

    Attributes
    ----------
    seed : int
        The seed every random step used (drawn and recorded when
        ``random_state`` was None or a Generator).
    cal, test : ndarray of int
        Item indices of the calibration and test halves.
    profile : dict
        From :func:`~bayescal.ambiguity.recommend.annotation_profile` (all items).
    entropy : ndarray of shape (n_items,)
        Normalised annotation entropy per item.
    methods : MethodResults
        Rows (with ``usable``), per-bin data and test-half probabilities.
    recommendation : AmbiguityRecommendation
    strata : dict or None
        Error by annotation entropy (None when not requested).
    flags : list of Flag
        Input, per-method and outcome warnings, in that order.
    settings : dict
        The settings used.
    intervals : xarray.Dataset or None
        Test-half metrics of every method that ran with bootstrap intervals
        (:func:`~bayescal.ambiguity.metric_intervals`); None when ``n_boot=0``.
    """

    seed: int
    cal: np.ndarray
    test: np.ndarray
    profile: dict
    entropy: np.ndarray
    methods: MethodResults
    recommendation: AmbiguityRecommendation
    strata: dict | None
    flags: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    intervals: xr.Dataset | None = None

    @property
    def level(self) -> str:
        """The annotation level the recommendation followed."""
        return self.profile["level"]


def assess_ambiguity(
    data: AmbiguityData,
    *,
    random_state: RandomState = 0,
    methods: Iterable[str] | None = None,
    annotations: str = "auto",
    objective: str = "overall",
    cal_fraction: float = 0.5,
    n_bins: int = 15,
    n_draws: int = 100,
    cv_folds: int = 5,
    entropy_strata: int = 5,
    distribution_threshold: int = 10,
    n_boot: int = 200,
    interval_prob: float = 0.9,
) -> AmbiguityAssessment:
    """Compare Tao et al.'s calibrators on one dataset and recommend one.

    Tao et al. (arXiv:2603.22879): SPEC §2 protocol for the comparison, the
    Discussion's practical guidelines (checked by cross-validation on the
    calibration half) for the recommendation, Proposition 2 for the error by
    annotation entropy. The test half only scores.

    Parameters
    ----------
    data : AmbiguityData
        Logits and annotator counts.
    random_state : None, int or Generator, default 0
        The one seed: split, cross-validation folds, MCTS draws, ECE label draws.
        (``bayescal bench ambiguity`` passes 42, Tao et al.'s split seed.)
    methods : list of str, optional
        Methods of :data:`~bayescal.ambiguity.METHODS` to compare (default all);
        Uncalibrated, TS and the recommended method always run.
    annotations : {"auto", "voted", "samples", "distribution"}, default "auto"
        What the calibration data hold; ``"auto"`` reads it from the counts. Declare
        ``"samples"`` when one label per item is a random annotator's answer rather than
        a consensus, or a lower level to see what you would get with less.
    objective : {"overall", "ece", "both"}, default "overall"
        ``"ece"`` follows the guideline for "the sole objective is minimising ECE";
        ``"both"`` the two-stage recipe for true-label and voted-label ECE.
    cal_fraction : float, default 0.5
        Share of items in the calibration half (stratified by voted label).
    n_bins, n_draws : int, default 15, 100
        Bins and label draws of the sampled ECEs.
    cv_folds : int, default 5
        Folds of the calibration-half check behind the recommendation.
    entropy_strata : int, default 5
        Strata of the error-versus-annotation-entropy table (unanimous items first);
        below 2, no table.
    distribution_threshold : int, default 10
        Median annotations per item from which counts read as distributions.
    n_boot : int, default 200
        Bootstrap replicates behind the metric intervals and the "not
        distinguishable" statements (0: none).
    interval_prob : float, default 0.9
        Probability of those intervals.

    Returns
    -------
    AmbiguityAssessment

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import AmbiguityData
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 200)
    >>> d = AmbiguityData(logits=3 * np.log(pi), counts=rng.multinomial(20, pi),
    ...                   classes=("a", "b", "c"), item_ids=np.arange(200))
    >>> a = assess_ambiguity(d, methods=["TS", "SLTS"], n_draws=5, cv_folds=2)
    >>> a.level, a.recommendation.method in ("Dirichlet-Soft", "SoftPlatt", "SLTS", "TS")
    ('distribution', True)
    """
    names = _check_settings(data, methods, annotations, objective, cv_folds, n_bins, n_draws)
    seed = seed_from(random_state)
    _log.info("splitting %d items into calibration and test halves", data.n_items)
    cal, test = stratified_split(data.voted, fraction=cal_fraction, random_state=seed)
    if cal.size < 2 * cv_folds or test.size < 2:
        raise DataError(
            f"the split leaves {cal.size} calibration and {test.size} "
            "test items; use more items or a different cal_fraction."
        )
    profile, entropy = annotation_profile(data.counts, annotations, distribution_threshold)
    level = profile["level"]
    common = {"random_state": seed, "n_bins": n_bins, "n_draws": n_draws}
    with _one_blas_thread():
        _log.info(
            "recommendation check: %d-fold cross-validation on the calibration half", cv_folds
        )
        method, check, fallbacks = check_guideline(
            data, cal, level, objective, folds=int(cv_folds), **common
        )
        run = [n for n in METHODS if n in names or n in (*_ALWAYS, method)]
        _log.info("fitting %d methods on %d items, scoring on %d", len(run), cal.size, test.size)
        results = evaluate_methods(data, cal, test, run, **common)
        intervals = None
        if n_boot and results.probas:
            _log.info("bootstrap intervals of the metrics (%d replicates)", n_boot)
            intervals = metric_intervals(
                results.probas, data.counts[test], n_boot=n_boot, prob=interval_prob, **common
            )
    for row in results.rows.values():
        row["usable"] = usable(row["group"], level)
    rec = explain_recommendation(method, level, objective, profile, check, fallbacks, results.rows)
    strata = None
    strata_methods = [n for n in (*_ALWAYS, method) if n in results.probas]
    if entropy_strata >= 2 and strata_methods:
        strata = entropy_strata_errors(
            data, test, {n: results.probas[n] for n in strata_methods}, int(entropy_strata)
        )
    flags = [*input_flags(data, cal.size, profile), *results.flags]
    flags += outcome_flags(rec, results.rows, level)
    return AmbiguityAssessment(
        seed=seed,
        cal=cal,
        test=test,
        profile=profile,
        entropy=entropy,
        methods=results,
        recommendation=rec,
        strata=strata,
        flags=flags,
        settings={
            "methods": names,
            "annotations": annotations,
            "objective": objective,
            "cal_fraction": cal_fraction,
            "n_bins": n_bins,
            "n_draws": n_draws,
            "cv_folds": int(cv_folds),
            "entropy_strata": entropy_strata,
            "distribution_threshold": distribution_threshold,
            "n_boot": n_boot,
            "interval_prob": interval_prob,
        },
        intervals=intervals,
    )


def _check_settings(data, methods, annotations, objective, cv_folds, n_bins, n_draws) -> list[str]:
    if not isinstance(data, AmbiguityData):
        raise ConfigError(f"expected AmbiguityData; got {type(data).__name__}.")
    if annotations not in ("auto", *ANNOTATION_LEVELS):
        raise ConfigError(
            f"annotations must be 'auto' or one of {ANNOTATION_LEVELS}; got {annotations!r}."
        )
    if objective not in OBJECTIVES:
        raise ConfigError(f"objective must be one of {OBJECTIVES}; got {objective!r}.")
    # Below these every method would fail to score and the audit would still recommend one.
    for name, value, low in (
        ("cv_folds", cv_folds, 2),
        ("n_bins", n_bins, 1),
        ("n_draws", n_draws, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}; got {value!r}.")
    names = list(METHODS) if methods is None else list(methods)
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}.")
    if data.n_items < MIN_ITEMS:
        raise DataError(
            f"{data.n_items} items: an audit splits items into a "
            f"calibration and a test half and needs at least {MIN_ITEMS}."
        )
    return names


def _one_blas_thread():
    """One BLAS thread while fitting, when threadpoolctl is installed.

    The calibrators multiply (n, K) by (K, K) matrices thousands of times; on a
    shared machine multi-threaded BLAS made Dirichlet-Soft 3-15 times slower
    than one thread (measured on CIFAR-10H, 400-5,000 items).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it the fits are only slower
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
