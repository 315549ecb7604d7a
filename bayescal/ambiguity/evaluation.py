"""Fit calibrators on a calibration half and score them on a test half (Tao et al.'s protocol).

SPEC §2 / Tao et al. (arXiv:2603.22879), experimental protocol: every method
is fitted on the calibration half only, except the Oracle TS, which is fitted
on the test half and labelled as an oracle wherever it appears; the test half
is scored against the annotator distributions (``ECE_true``, aECE, cwECE with
label draws, the plug-in ``ECE_true``, ``ECE_voted``, Brier, NLL, accuracy).
These functions are the library's; the ``audit-ambiguity`` report and the
``bench ambiguity`` benchmark both call them.
"""

from __future__ import annotations

import logging
import time
import warnings as _warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import seed_from
from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.calibrators import METHODS, MethodSpec
from bayescal.ambiguity.loaders import AmbiguityData
from bayescal.ambiguity.metrics import ece_true, evaluate, pointwise_error
from bayescal.ambiguity.targets import annotation_entropy
from bayescal.errors import BayescalError, ConfigError
from bayescal.flags import Flag
from bayescal.progress import step

_log = logging.getLogger(__name__)

__all__ = [
    "ECE_KEYS",
    "FIT_FAILURES",
    "MethodResults",
    "fit_evaluate",
    "evaluate_methods",
    "entropy_strata_errors",
]

#: Metrics reported in percent; Brier, NLL and accuracy stay fractions.
ECE_KEYS = ("ece_true", "aece", "cwece", "ece_plugin", "ece_voted")

#: What a calibrator may raise on data it cannot fit (singular systems, bad
#: targets for its kind, overflow); such a method is reported as failed, not
#: dropped. Programming errors (TypeError, AttributeError, ...) propagate.
FIT_FAILURES = (BayescalError, ArithmeticError, ValueError, np.linalg.LinAlgError)

_ROW_KEYS = (
    "ece_true",
    "aece",
    "cwece",
    "ece_plugin",
    "ece_voted",
    "brier",
    "brier_sampled",
    "nll",
    "accuracy",
)


def fit_evaluate(
    spec: MethodSpec,
    data: AmbiguityData,
    cal: np.ndarray,
    test: np.ndarray,
    *,
    random_state: RandomState = 0,
    n_bins: int = 15,
    n_draws: int = 100,
    targets: ArrayLike | None = None,
    keep_bins: bool = False,
) -> tuple[dict, xr.Dataset | None, np.ndarray]:
    """Fit one method (on ``cal``, or on ``test`` for the oracle) and score it on ``test``.

    Tao et al., SPEC §2: metrics against the annotator distribution of the
    test half, ECE-type values in percent.

    Parameters
    ----------
    spec : MethodSpec
        An entry of :data:`bayescal.ambiguity.METHODS`.
    data : AmbiguityData
    cal, test : ndarray of int
        Item indices of the calibration and test halves.
    random_state : None, int or Generator, default 0
        Seeds the method (MCTS draws) and the metric's label draws; an int
        gives the benchmark's published numbers.
    n_bins, n_draws : int, default 15, 100
        Bins and label draws of the sampled ECEs.
    targets : array-like of shape (len(cal), n_classes), optional
        Fitting targets other than ``data.counts[cal]`` (ablations); ignored
        by the oracle, which fits the test counts.
    keep_bins : bool, default False
        Also return the per-bin ``ece_true`` data of the same label draws.

    Returns
    -------
    row : dict
        The metrics of :func:`~bayescal.ambiguity.evaluate` plus ``group``,
        ``oracle``, ``T`` (temperature methods; the second stage's for a
        two-stage recipe), ``lambda_offdiag`` (the ODIR weight of Dirichlet
        maps), ``seconds``, ``converged``, ``n_iter``.
    bins : xarray.Dataset or None
        Per-bin ``ece_true`` data (only with ``keep_bins``).
    proba : ndarray of shape (len(test), n_classes)
        Test-half probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import METHODS, AmbiguityData
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 100)
    >>> d = AmbiguityData(logits=3 * np.log(pi), counts=rng.multinomial(20, pi),
    ...                   classes=("a", "b", "c"), item_ids=np.arange(100))
    >>> row, _, p = fit_evaluate(METHODS["TS"], d, np.arange(50), np.arange(50, 100), n_draws=5)
    >>> p.shape, sorted(k for k in row if k.startswith("ece"))
    ((50, 3), ['ece_plugin', 'ece_true', 'ece_voted'])
    """
    seed = seed_from(random_state)
    model = spec.factory(seed)
    fit_idx = test if spec.group == "oracle" else cal
    fit_targets = data.counts[fit_idx] if (targets is None or spec.group == "oracle") else targets
    t0 = time.perf_counter()
    model.fit(data.logits[fit_idx], fit_targets)
    proba = model.predict_proba(data.logits[test])
    seconds = time.perf_counter() - t0
    m = evaluate(proba, data.counts[test], n_bins=n_bins, n_draws=n_draws, random_state=seed)
    out = {"group": spec.group, "oracle": bool(spec.group == "oracle")}
    if hasattr(model, "temperature_"):
        out["T"] = float(model.temperature_)
    # The cross-validated ODIR weight of a Dirichlet map, or of a two-stage recipe's first stage.
    odir = next(
        (s for s in (model, getattr(model, "first_", None)) if hasattr(s, "lambda_offdiag_")),
        None,
    )
    if odir is not None:
        out["lambda_offdiag"] = float(odir.lambda_offdiag_)
    for k, v in m.items():
        out[k] = 100.0 * v if k in ECE_KEYS else v
    out["seconds"] = seconds
    out["converged"] = bool(model.converged_)
    out["n_iter"] = int(model.n_iter_)
    bins = None
    if keep_bins:
        # The same stream evaluate() gives ece_true, so a figure shows the JSON value.
        r1 = np.random.default_rng(seed).spawn(3)[0]
        bins = ece_true(proba, data.counts[test], n_bins=n_bins, n_draws=n_draws, random_state=r1)
    return out, bins, proba


@dataclass(eq=False)
class MethodResults:
    """Every method fitted on the calibration half and scored on the test half.

    Tao et al., Sec. 7 protocol (SPEC §2).

    Attributes
    ----------
    rows : dict of str -> dict
        Per method: ``group``, ``oracle``, ``status`` (``"ok"`` or
        ``"failed"`` with ``error``), the metrics (ECE-type in percent),
        ``temperature`` (None for non-temperature methods), ``seconds``,
        ``converged``.
    bins : dict of str -> xarray.Dataset
        Per-bin ``ece_true`` data of the methods that ran.
    probas : dict of str -> ndarray
        Test-half probabilities of the methods that ran.
    flags : list of Flag
        Failures, warnings raised while fitting, unconverged optimisers.
    """

    rows: dict = field(default_factory=dict)
    bins: dict = field(default_factory=dict)
    probas: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)

    def ok(self, name: str) -> bool:
        """True when ``name`` ran and was scored."""
        return self.rows.get(name, {}).get("status") == "ok"


def evaluate_methods(
    data: AmbiguityData,
    cal: np.ndarray,
    test: np.ndarray,
    names: Iterable[str],
    *,
    random_state: RandomState = 0,
    n_bins: int = 15,
    n_draws: int = 100,
) -> MethodResults:
    """Fit each named method on ``cal`` and score it on ``test`` (Tao et al., SPEC §2 protocol).

    Methods run in the order of :data:`~bayescal.ambiguity.METHODS`. A method
    that fails on these data is kept as ``status="failed"`` with its error and
    a flag; warnings raised while fitting become flags with the method as
    source.

    Parameters
    ----------
    data : AmbiguityData
    cal, test : ndarray of int
    names : iterable of str
        Method names of :data:`~bayescal.ambiguity.METHODS`.
    random_state : None, int or Generator, default 0
    n_bins, n_draws : int, default 15, 100

    Returns
    -------
    MethodResults

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import AmbiguityData
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 100)
    >>> d = AmbiguityData(logits=3 * np.log(pi), counts=rng.multinomial(20, pi),
    ...                   classes=("a", "b", "c"), item_ids=np.arange(100))
    >>> r = evaluate_methods(d, np.arange(50), np.arange(50, 100), ["TS", "SLTS"], n_draws=5)
    >>> sorted(r.rows), r.ok("SLTS")
    (['SLTS', 'TS'], True)
    """
    wanted = set(names)
    unknown = sorted(wanted - set(METHODS))
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}.")
    seed = seed_from(random_state)
    out = MethodResults()
    todo = [n for n in METHODS if n in wanted]
    for i, name in enumerate(todo, 1):
        step(_log, i, len(todo), "fitting and scoring %s", name)
        spec = METHODS[name]
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            try:
                row, bins, proba = fit_evaluate(
                    spec,
                    data,
                    cal,
                    test,
                    random_state=seed,
                    n_bins=n_bins,
                    n_draws=n_draws,
                    keep_bins=True,
                )
            except FIT_FAILURES as exc:
                error = f"{type(exc).__name__}: {exc}"
                out.rows[name] = {
                    "group": spec.group,
                    "oracle": spec.group == "oracle",
                    "status": "failed",
                    "error": error,
                }
                out.flags.append(Flag("method.failed", f"failed: {error}", name))
                continue
        for w in caught:
            flag = Flag("method.warning", str(w.message), name)
            if flag not in out.flags:
                out.flags.append(flag)
        result = {"group": spec.group, "oracle": bool(row["oracle"]), "status": "ok"}
        result.update({key: float(row[key]) for key in _ROW_KEYS})
        result["temperature"] = row.get("T")
        result["seconds"] = float(row["seconds"])
        result["converged"] = bool(row["converged"])
        if not result["converged"] and not caught:
            out.flags.append(
                Flag(
                    "method.not-converged",
                    f"the optimiser did not converge (n_iter={row['n_iter']}); its row is "
                    "usable but may not be the optimum.",
                    name,
                )
            )
        out.rows[name] = result
        out.bins[name] = bins
        out.probas[name] = proba
    return out


def entropy_strata_errors(
    data: AmbiguityData, test: np.ndarray, probas: dict, n_strata: int
) -> dict:
    """Mean pointwise error ``|p_c - pi_c|`` (percent) by annotation-entropy stratum.

    Tao et al., Proposition 2: for Temperature Scaling the true-label
    miscalibration grows with annotation entropy. Unanimous items (entropy 0)
    form the first stratum; the others are split into ``n_strata - 1``
    equal-frequency strata by rank of normalised entropy. ``monotone`` asks
    whether every step up in entropy raises the mean error or lowers it by
    less than two standard errors of the difference.

    Parameters
    ----------
    data : AmbiguityData
    test : ndarray of int
        Items scored (the test half).
    probas : dict of str -> ndarray of shape (len(test), n_classes)
    n_strata : int
        At least 2.

    Returns
    -------
    dict
        ``"strata"`` (n, entropy range and mean per stratum) and, per method,
        ``mean_error``, ``se``, ``monotone``, ``strictly_increasing``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import AmbiguityData
    >>> counts = np.array([[4, 0], [3, 1], [2, 2], [4, 0], [1, 3], [2, 2]])
    >>> d = AmbiguityData(logits=np.zeros((6, 2)), counts=counts, classes=("a", "b"),
    ...                   item_ids=np.arange(6))
    >>> r = entropy_strata_errors(d, np.arange(6), {"flat": np.full((6, 2), 0.5)}, 2)
    >>> [s["n"] for s in r["strata"]]
    [2, 4]
    """
    if n_strata < 2:
        raise ConfigError(f"entropy strata must be at least 2, got {n_strata}.")
    h = annotation_entropy(data.counts[test])
    strata = np.zeros(h.size, dtype=np.int64)
    pos = np.flatnonzero(h > 0)
    order = pos[np.argsort(h[pos], kind="stable")]
    strata[order] = 1 + (np.arange(order.size) * (n_strata - 1)) // max(order.size, 1)
    used = [s for s in range(n_strata) if np.any(strata == s)]
    rows: list[dict[str, int | float]] = []
    out: dict[str, list[dict[str, int | float]] | dict[str, list[float] | bool]] = {"strata": rows}
    for s in used:
        mask = strata == s
        rows.append(
            {
                "n": int(mask.sum()),
                "entropy_min": float(h[mask].min()),
                "entropy_max": float(h[mask].max()),
                "entropy_mean": float(h[mask].mean()),
            }
        )
    for name, proba in probas.items():
        err = 100.0 * pointwise_error(proba, data.counts[test])
        means = np.array([err[strata == s].mean() for s in used])
        # A one-item stratum has no standard error: NaN, and its steps count as not monotone.
        ses = np.array([_standard_error(err[strata == s]) for s in used])
        steps = np.diff(means)
        slack = 2 * np.sqrt(ses[1:] ** 2 + ses[:-1] ** 2)
        out[name] = {
            "mean_error": means.tolist(),
            "se": ses.tolist(),
            "monotone": bool(np.all(steps >= -slack)),
            "strictly_increasing": bool(np.all(steps > 0)),
        }
    return out


def _standard_error(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
