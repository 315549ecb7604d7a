"""Audit planning: interval width and test power as functions of the audit's size (issue 25).

:func:`plan_audit` answers "how many items for an NC-ECE interval of width ``w``" and
"how many items for power 0.8 against a stated miscalibration", for any number of
classes C >= 2, by simulation through the audit's own estimation path:

1. a :class:`PlanScenario` states the channels (a confusion matrix per annotator), the
   class prevalence, the score distribution and the miscalibration to detect (a
   temperature: the model's probabilities are ``softmax(temperature * z)`` while the
   truth is ``softmax(z)``; 1 is calibrated, > 1 over-confident). It comes from stated
   accuracies (:meth:`PlanScenario.stated`), from a pilot :class:`ChannelFit` or an
   earlier audit's ``posterior.nc`` (:meth:`PlanScenario.from_fit`,
   :meth:`PlanScenario.from_posterior`: posterior-mean confusions and prevalence), and
   optionally a pilot's probabilities as the score distribution (``scores=``);
2. each design (items ``n``, answers per item ``r`` out of the K-annotator panel, gold
   items ``g``) is simulated ``reps`` times with
   :func:`bayescal.simulate.multiclass.simulate_multiclass` (each annotator answers an
   item with probability ``r / K``; the first ``g`` items carry their true class as gold);
   every repetition runs the point Dawid-Skene EM (:func:`bayescal.channels.em.dawid_skene_em`)
   and :func:`bayescal.metrics.uncertainty.multiclass_nc_ece_interval`; the class-wise
   NC-ECE is the default metric (for C = 2 it is the binary NC-ECE of the score ``p_1``:
   with equal-width bins class 0's bins mirror class 1's);
3. the interval (``interval=``): ``"bootstrap"`` (default) carries the channels' sampling
   spread, ``channel_draws`` draws of :func:`bayescal.channels.bootstrap.bootstrap_channels`
   paired with the item bootstrap (the ``full`` source); ``"evaluation"`` holds the EM
   channels fixed (the evaluation-only interval ``bayescal audit --channels em`` reports).
   The evaluation-only interval under-covers when the channels are estimated from a few
   hundred or thousand items (``bench plan``: coverage 0.41-0.76 at nominal 0.9; EM
   channel errors of ~0.05-0.1 shift every bin's corrected label the same way, so the
   estimate is biased upward and the interval misses below), which is why it is not the
   default;
4. per design: mean interval width, the rejection rate of the calibration test at
   ``level``, coverage of the exact population binned ECE, and their Monte Carlo SEs;
5. the sizes: a grid of ``n`` first; then, around the grid's crossing, a local monotone
   fit (power: a binomial logistic regression of the rejections on ``log n``; width: a
   least-squares line of ``log width`` on ``log n``) over the bracketing grid points and
   ``refine_steps`` designs simulated at the fit's current solution; the final fit's
   solution is the recommended size, simulated once more with fresh seeds (the reported
   prediction, with its MC SE; the fitted curve's value there is reported as well).

Each repetition is cheap (about 0.3-0.6 s with 100 channel draws on a shared 2-core
machine; 0.04 s for the evaluation-only interval).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from bayescal.bayes.posterior_file import load_channel_posterior, load_multiclass_posterior
from bayescal.channels.bootstrap import bootstrap_channels
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError, FitError, IdentificationError
from bayescal.metrics.uncertainty import MulticlassNCECEInterval, multiclass_nc_ece_interval
from bayescal.options import PLAN_DRAW_RANGE, PLAN_MAX_REPS, PLAN_MIN_PILOT_ITEMS
from bayescal.simulate.multiclass import (
    MulticlassPopulation,
    multiclass_population,
    simulate_multiclass,
)
from bayescal.summaries.summary import summarize

__all__ = [
    "DesignPoint",
    "AuditPlan",
    "Recommendation",
    "PlanScenario",
    "plan_audit",
    "simulate_design",
    "audit_interval",
]

METRICS = ("classwise", "top_label")
INTERVALS = ("bootstrap", "evaluation")
#: Largest share of a repetition's channel bootstrap draws that may fail (left out, counted).
MAX_FAILED_DRAWS = 0.2
DEFAULT_SIZES = (250, 500, 1000, 2000, 4000, 8000)
MAX_ITEMS = 1_000_000
MAX_REPS = PLAN_MAX_REPS
MIN_DRAWS, MAX_DRAWS = PLAN_DRAW_RANGE
N_PROFILES = 2000  # profiles of a stated score distribution (finite population, exact ECE)
MIN_PILOT_ITEMS = PLAN_MIN_PILOT_ITEMS  # fewest rows of scores= (--pilot-scores)


def _check_counts(**counts: int | None) -> None:
    """Repetition and draw counts within their limits (``reps``, ``predict_reps``:
    2 to :data:`MAX_REPS`; ``n_bootstrap``, ``channel_draws``: :data:`MIN_DRAWS` to
    :data:`MAX_DRAWS`); ``None`` is not checked."""
    for name, value in counts.items():
        if value is None:
            continue
        low, high = (2, MAX_REPS) if name.endswith("reps") else (MIN_DRAWS, MAX_DRAWS)
        why = " (an MC SE needs two)" if low == 2 else ""
        if isinstance(value, bool) or int(value) != value or not low <= int(value) <= high:
            raise ConfigError(
                f"{name} must be an integer from {low} to {high:,}{why}; got {value!r}."
            )


def _check_orientation(t: np.ndarray) -> None:
    """Channels the plan's simulated fits can recover: its Dawid-Skene EM accepts only
    ``b > a`` for every annotator with two classes, and with more classes it labels the
    classes by the first annotator's largest diagonal. Channels the other way round (a
    posterior whose classes are swapped) would have every simulated fit relabel them, so
    coverage and power would describe another labelling (hostile re-check, issue 23)."""
    c = t.shape[1]
    if c == 2:
        bad = np.flatnonzero(t[:, 1, 1] - t[:, 0, 1] <= 0)
        if bad.size:
            j = int(bad[0])
            raise ConfigError(
                f"annotator {j + 1} of the panel (in the pilot's order) answers 1 no more often "
                f"for class 1 than for class 0 (b = {t[j, 1, 1]:.3g} <= a = {t[j, 0, 1]:.3g}; "
                f"{bad.size} of {t.shape[0]} such): the plan's fits accept only b > a, so its "
                "predictions would not describe these channels. Check the pilot (a and b "
                "swapped, or classes coded the other way round), or leave that annotator out."
            )
        return
    from bayescal.channels.orientation import dominant_diagonal_permutation

    perm = dominant_diagonal_permutation(t[0])
    if not np.array_equal(perm, np.arange(c)):
        moved = int(np.flatnonzero(perm != np.arange(c))[0])
        raise ConfigError(
            f"the first annotator's confusion answers class {int(perm[moved])} most often for "
            f"class {moved}: its largest entries are off the diagonal, so the plan's fits, which "
            "label the classes by the first annotator, would relabel them and its predictions "
            "would describe another labelling. Check the pilot's class order, or put an "
            "annotator whose answers favour the true class first."
        )


def _check_simplex(values: np.ndarray, name: str, fix: str) -> None:
    if not np.all(np.isfinite(values)) or np.any(values <= 0) or np.any(values >= 1):
        raise ConfigError(f"{name} must lie strictly between 0 and 1; {fix}")
    if not np.allclose(values.sum(axis=-1), 1.0, atol=1e-6):
        raise ConfigError(f"{name} rows must sum to one; {fix}")


@dataclass(frozen=True)
class PlanScenario:
    """What the audit will meet: channels, prevalence, scores and the miscalibration.

    Attributes
    ----------
    confusion : ndarray of shape (K, C, C)
        ``T_j[y, a] = P(A_j = a | Y = y)`` of the panel's K annotators.
    prevalence : ndarray of shape (C,)
        Class prevalence of the base classes of the stated score distribution.
    temperature : float
        Miscalibration to detect: model probabilities ``softmax(temperature * z)``, truth
        ``softmax(z)``; 1 is calibrated, > 1 over-confident, < 1 under-confident.
    separation : float
        Logit boost of each profile's base class (the stated score distribution).
    scores : ndarray of shape (N, C), optional
        A pilot's model probabilities: used instead of the stated distribution (truth
        ``softmax(log p / temperature)``, so the model is off by the stated temperature).
    """

    confusion: np.ndarray
    prevalence: np.ndarray
    temperature: float = 1.0
    separation: float = 2.0
    scores: np.ndarray | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.confusion, dtype=np.float64)
        if t.ndim != 3 or t.shape[1] != t.shape[2] or t.shape[1] < 2 or t.shape[0] < 1:
            raise ConfigError(
                f"confusion must have shape (K, C, C) with C >= 2; got {t.shape}. Give one "
                "C x C matrix per annotator (rows: true class, columns: answer)."
            )
        _check_simplex(t, "confusion", "give rows of probabilities P(answer | true class).")
        _check_orientation(t)
        c = t.shape[1]
        p = np.asarray(self.prevalence, dtype=np.float64)
        if p.shape != (c,):
            raise ConfigError(f"prevalence must have {c} entries (one per class); got {p.shape}.")
        _check_simplex(p, "prevalence", "give the class frequencies, e.g. 0.5,0.5.")
        for name in ("temperature", "separation"):
            v = float(getattr(self, name))
            if not (np.isfinite(v) and v > 0):
                raise ConfigError(f"{name} must be a positive number; got {v!r}.")
        object.__setattr__(self, "confusion", t)
        object.__setattr__(self, "prevalence", p)
        if self.scores is not None:
            s = np.asarray(self.scores, dtype=np.float64)
            if s.ndim != 2 or s.shape[1] != c or s.shape[0] < MIN_PILOT_ITEMS:
                raise ConfigError(
                    f"scores must have shape (N >= {MIN_PILOT_ITEMS}, {c}) (a pilot's class "
                    f"probabilities); got {s.shape}."
                )
            _check_simplex(s, "scores", "give class probabilities strictly inside (0, 1).")
            object.__setattr__(self, "scores", s)

    @property
    def n_classes(self) -> int:
        return int(self.confusion.shape[1])

    @property
    def n_annotators(self) -> int:
        return int(self.confusion.shape[0])

    @classmethod
    def stated(
        cls,
        accuracy: list[float] | np.ndarray,
        n_classes: int,
        prevalence: list[float] | np.ndarray | None = None,
        *,
        temperature: float = 1.0,
        separation: float = 2.0,
    ) -> PlanScenario:
        """Symmetric channels: annotator ``j`` answers right with ``accuracy[j]``, errors
        spread evenly over the other classes."""
        acc = np.asarray(accuracy, dtype=np.float64).ravel()
        c = int(n_classes)
        if c < 2:
            raise ConfigError(f"n_classes must be 2 or more; got {n_classes!r}.")
        if acc.size == 0 or not np.all((acc > 1.0 / c) & (acc < 1)):
            raise ConfigError(
                f"accuracy must be one number per annotator between 1/C = {1 / c:.3g} and 1 "
                f"(better than chance, not perfect); got {acc.tolist()}."
            )
        eye = np.eye(c)
        t = acc[:, None, None] * eye + (1 - acc)[:, None, None] * (1 - eye) / (c - 1)
        prev = np.full(c, 1.0 / c) if prevalence is None else prevalence
        return cls(t, np.asarray(prev, dtype=np.float64), temperature, separation)

    @classmethod
    def from_fit(
        cls,
        fit: ChannelFit,
        *,
        temperature: float = 1.0,
        separation: float = 2.0,
        scores: np.ndarray | None = None,
    ) -> PlanScenario:
        """Posterior-mean (or point) confusions and group-weighted prevalence of a pilot fit."""
        conf = fit.confusion.mean("draw").values
        prev_g = fit.class_prevalence.mean("draw").values
        w = np.asarray(fit.group_counts.values, dtype=np.float64)
        w = np.full(prev_g.shape[0], 1.0) if w.sum() <= 0 else w
        prev = (w[:, None] * prev_g).sum(axis=0) / w.sum()
        return cls(conf, prev, temperature, separation, scores)

    @classmethod
    def from_posterior(
        cls, path: str | Path, *, temperature: float = 1.0, separation: float = 2.0
    ) -> PlanScenario:
        """From an earlier audit's ``posterior.nc`` (binary or multiclass schema)."""
        try:
            fit = load_multiclass_posterior(path, option="--pilot")
        except ConfigError as multiclass_error:
            if "binary channel posterior" not in str(multiclass_error):
                raise
            fit = load_channel_posterior(path, option="--pilot")
        return cls.from_fit(fit, temperature=temperature, separation=separation)

    def population(self, answers_per_item: float, random_state: int = 0) -> MulticlassPopulation:
        """The finite population of profiles whose items the plan draws."""
        k = self.n_annotators
        if not (1 <= answers_per_item <= k):
            raise ConfigError(
                f"answers per item must be between 1 and the panel's K = {k} annotators; got "
                f"{answers_per_item!r}. State more annotators' channels for larger panels."
            )
        missing = 1.0 - answers_per_item / k
        if self.scores is None:
            return multiclass_population(
                self.n_classes,
                self.confusion,
                n_profiles=N_PROFILES,
                temperature=self.temperature,
                separation=self.separation,
                prevalence=self.prevalence,
                missing=missing,
                random_state=random_state,
            )
        from scipy.special import softmax

        base = multiclass_population(self.n_classes, self.confusion, n_profiles=2, missing=missing)
        probs = np.asarray(self.scores)
        return MulticlassPopulation(
            profile_probs=probs,
            profile_truth=softmax(np.log(probs) / self.temperature, axis=1),
            profile_weights=np.full(probs.shape[0], 1.0 / probs.shape[0]),
            confusion=base.confusion,
            missing=base.missing,
            classes=base.classes,
            annotators=base.annotators,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "n_classes": self.n_classes,
            "n_annotators": self.n_annotators,
            "confusion": self.confusion.tolist(),
            "prevalence": self.prevalence.tolist(),
            "temperature": self.temperature,
            "separation": self.separation,
            "pilot_scores": None if self.scores is None else int(self.scores.shape[0]),
        }


@dataclass(frozen=True)
class DesignPoint:
    """Predicted width and power of one design, with Monte Carlo standard errors."""

    n_items: int
    answers_per_item: float
    gold_items: int
    reps: int
    width: float
    width_se: float
    power: float
    power_se: float
    coverage: float
    population_ece: float
    failed: int = 0
    coverage_se: float = float("nan")


def audit_interval(
    data, interval: str, channel_draws: int, prob: float, n_bootstrap: int, seed: int
) -> MulticlassNCECEInterval:
    """The simulated audit's interval on ``data``: point Dawid-Skene EM, then
    ``interval="bootstrap"`` (``channel_draws`` bootstrap channel draws paired with the item
    bootstrap, the ``full`` source) or ``"evaluation"`` (channels held at the EM fit)."""
    summary = summarize(data, groups="all")
    fit = dawid_skene_em(summary, prevalence="pooled", random_state=seed)
    if interval == "evaluation":
        return multiclass_nc_ece_interval(
            data, fit, prob=prob, n_bootstrap=n_bootstrap, sample_use="reuse", random_state=seed + 1
        )
    draws = bootstrap_channels(
        summary, fit, n_draws=channel_draws, max_failed=MAX_FAILED_DRAWS, random_state=seed + 2
    )
    # "split" reports the full source: channel draw r mod S paired with item replicate r
    return multiclass_nc_ece_interval(
        data,
        draws,
        point_channels=fit,
        prob=prob,
        n_bootstrap=max(n_bootstrap, channel_draws),
        sample_use="split",
        random_state=seed + 1,
    )


def _one_rep(
    pop: MulticlassPopulation,
    n: int,
    gold: int,
    metric: str,
    prob: float,
    seed: int,
    n_bootstrap: int,
    interval: str,
    channel_draws: int,
) -> tuple[float, float, float]:
    # the data and the simulated audit draw from independent streams (one seed for both
    # made the EM's random starts replay the data's first uniforms)
    data_seq, audit_seq = np.random.SeedSequence(seed).spawn(2)
    data = simulate_multiclass(n, population=pop, random_state=np.random.default_rng(data_seq))
    truth = data.truth
    if gold and truth is not None:  # simulate_multiclass always returns the truth
        g = np.full(n, np.nan)
        g[:gold] = truth[:gold]
        data = type(data).from_arrays(
            data.probs,
            data.labels,
            truth=data.truth,
            gold=g,
            annotators=pop.annotators,
            classes=pop.classes,
        )
    audit_seed = int(audit_seq.generate_state(1)[0] % (2**31 - 3))
    iv = audit_interval(data, interval, channel_draws, prob, n_bootstrap, audit_seed)
    part = iv.classwise if metric == "classwise" else iv.top_label
    lo, hi = part.interval()
    return lo, hi, part.p_value()


def simulate_design(
    scenario: PlanScenario,
    n_items: int,
    *,
    answers_per_item: float | None = None,
    gold_items: int = 0,
    reps: int = 40,
    metric: str = "classwise",
    prob: float = 0.9,
    level: float = 0.05,
    n_bootstrap: int = 200,
    interval: str = "bootstrap",
    channel_draws: int = 100,
    random_state: int = 0,
) -> DesignPoint:
    """Simulate one design ``reps`` times: width and power with their MC SE.

    ``interval`` is ``"bootstrap"`` (EM channels with ``channel_draws`` bootstrap draws:
    the interval carries the channels' sampling spread) or ``"evaluation"`` (channels held
    at the EM fit, as ``bayescal audit --channels em`` reports); see the module docstring.
    """
    n = int(n_items)
    if not (20 <= n <= MAX_ITEMS):
        raise ConfigError(f"n_items must be between 20 and {MAX_ITEMS:,}; got {n_items!r}.")
    if not (0 <= int(gold_items) < n):
        raise ConfigError(f"gold_items must be between 0 and n_items - 1; got {gold_items!r}.")
    if metric not in METRICS:
        raise ConfigError(f"metric must be one of {METRICS}; got {metric!r}.")
    _check_counts(reps=reps, n_bootstrap=n_bootstrap, channel_draws=channel_draws)
    if interval not in INTERVALS:
        raise ConfigError(f"interval must be one of {INTERVALS}; got {interval!r}.")
    r = float(scenario.n_annotators if answers_per_item is None else answers_per_item)
    pop = scenario.population(r)
    truth = pop.binned_ece()[metric]
    widths, rejects, covered = [], [], []
    failed = 0
    for i in range(int(reps)):
        seed = int(
            np.random.SeedSequence([random_state, n, int(r * 100), gold_items, i]).generate_state(
                1
            )[0]
        )
        try:
            lo, hi, p = _one_rep(
                pop,
                n,
                int(gold_items),
                metric,
                prob,
                seed,
                n_bootstrap,
                interval,
                int(channel_draws),
            )
        except (IdentificationError, FitError):  # a failed audit of this design: counted
            failed += 1
            continue
        widths.append(hi - lo)
        rejects.append(p < level)
        covered.append(lo <= truth <= hi)
    if len(widths) < 2:
        raise ConfigError(
            f"the design n = {n}, {r:g} answers per item, {gold_items} gold items failed in "
            f"{failed} of {reps} repetitions (channels not identified); add items, answers or gold."
        )
    w, rej = np.asarray(widths), np.asarray(rejects, dtype=np.float64)
    return DesignPoint(
        n_items=n,
        answers_per_item=r,
        gold_items=int(gold_items),
        reps=len(widths),
        width=float(w.mean()),
        width_se=float(w.std(ddof=1) / np.sqrt(w.size)),
        power=float(rej.mean()),
        power_se=float(np.sqrt(max(rej.mean() * (1 - rej.mean()), 1.0 / w.size) / w.size)),
        coverage=float(np.mean(covered)),
        coverage_se=float(np.sqrt(np.mean(covered) * (1 - np.mean(covered)) / w.size)),
        population_ece=float(truth),
        failed=failed,
    )


def _first_met(values: list[float], target: float, decreasing: bool) -> int | None:
    """Index of the first grid point meeting the goal (None: the grid does not reach it)."""
    for i, v in enumerate(values):
        if (v <= target) if decreasing else (v >= target):
            return i
    return None


def _power_curve(points: list[DesignPoint]) -> tuple[float, float] | None:
    """Binomial logistic regression of the rejections on ``log n``: ``(intercept, slope)``.

    Half a rejection and half a non-rejection are added to every design (the
    Haldane-Anscombe correction), so the fit stays finite when the points separate
    (none rejecting at the lower end, all at the upper). None when the slope is not
    positive (no increasing curve to invert).
    """
    x = np.log([p.n_items for p in points])
    m = np.array([p.reps for p in points], dtype=np.float64) + 1.0
    k = np.array([p.power * p.reps for p in points]) + 0.5
    xc = x.mean()
    design = np.column_stack([np.ones_like(x), x - xc])
    beta = np.zeros(2)
    for _ in range(100):
        mu = 1.0 / (1.0 + np.exp(-(design @ beta)))
        hess = design.T @ (design * (m * mu * (1 - mu))[:, None])
        step = np.linalg.solve(hess + 1e-12 * np.eye(2), design.T @ (k - m * mu))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    if not (np.all(np.isfinite(beta)) and beta[1] > 0):
        return None
    return float(beta[0] - beta[1] * xc), float(beta[1])


def _width_curve(points: list[DesignPoint]) -> tuple[float, float] | None:
    """Least-squares line of ``log width`` on ``log n``; None when it does not decrease."""
    x = np.log([p.n_items for p in points])
    y = np.log([p.width for p in points])
    if np.ptp(x) == 0 or not np.all(np.isfinite(y)):
        return None
    slope, intercept = np.polyfit(x, y, 1)
    return (float(intercept), float(slope)) if slope < 0 else None


def _solve(curve: tuple[float, float], target: float, power: bool) -> float:
    """``n`` where the fitted curve equals the target."""
    a, b = curve
    y = np.log(target / (1 - target)) if power else np.log(target)
    return float(np.exp((y - a) / b))


def _curve_value(curve: tuple[float, float], n: int, power: bool) -> float:
    eta = curve[0] + curve[1] * np.log(n)
    return float(1.0 / (1.0 + np.exp(-eta))) if power else float(np.exp(eta))


@dataclass(frozen=True)
class Recommendation:
    """The smallest number of items that meets one goal for one design (None: not reached)."""

    goal: str
    answers_per_item: float
    gold_items: int
    n_items: int | None
    largest_n: int
    predicted: DesignPoint | None
    fitted: float | None = None
    refinements: list[DesignPoint] = field(default_factory=list)

    @property
    def design(self) -> str:
        return f"{self.answers_per_item:g} answers per item, {self.gold_items} gold items"

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["design"] = self.design
        return out


@dataclass
class AuditPlan:
    """Grid predictions and the recommended sizes (:func:`plan_audit`)."""

    scenario: PlanScenario
    settings: dict[str, object]
    grid: list[DesignPoint]
    recommendations: list[Recommendation] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "scenario": self.scenario.to_dict(),
            "settings": self.settings,
            "grid": [asdict(p) for p in self.grid],
            "recommendations": [r.to_dict() for r in self.recommendations],
        }

    def summary(self) -> str:
        lines = [
            f"Audit plan: C = {self.scenario.n_classes}, K = {self.scenario.n_annotators}, "
            f"temperature {self.scenario.temperature:g} "
            f"({self.settings['metric']} NC-ECE, {self.settings['reps']} simulations a design)"
        ]
        for rec in self.recommendations:
            pt = rec.predicted
            if rec.n_items is None or pt is None:
                lines.append(f"- {rec.goal} ({rec.design}): not reached by n = {rec.largest_n:,}")
                continue
            lines.append(
                f"- {rec.goal} ({rec.design}): n = {rec.n_items:,} items -> width "
                f"{pt.width:.4f} +- {pt.width_se:.4f}, power {pt.power:.2f} +- {pt.power_se:.2f}, "
                f"coverage {pt.coverage:.2f}"
            )
        return "\n".join(lines)


def plan_audit(
    scenario: PlanScenario,
    *,
    width: float | None = None,
    power: float | None = 0.8,
    sizes: tuple[int, ...] | list[int] = DEFAULT_SIZES,
    answers_per_item: list[float] | None = None,
    gold_items: list[int] | None = None,
    reps: int = 40,
    metric: str = "classwise",
    prob: float = 0.9,
    level: float = 0.05,
    n_bootstrap: int = 200,
    interval: str = "bootstrap",
    channel_draws: int = 100,
    refine_steps: int = 2,
    predict_reps: int | None = None,
    random_state: int = 0,
) -> AuditPlan:
    """Predict width and power over a grid of designs and recommend the sizes.

    Parameters
    ----------
    scenario : PlanScenario
    width : float, optional
        Target interval width (``hi - lo`` of the ``prob`` interval).
    power : float, optional, default 0.8
        Target power of the calibration test at ``level``.
    sizes : sequence of int
        The grid of item counts (increasing).
    answers_per_item, gold_items : lists, optional
        Design grid (default: the full panel; no gold items).
    reps, metric, prob, level, n_bootstrap
        Repetitions per design, the NC-ECE (``classwise`` / ``top_label``), interval
        probability, test level, item bootstrap replicates.
    interval, channel_draws
        The simulated audit interval (see :func:`simulate_design`).
    refine_steps : int, default 2
        Designs simulated at the local fit's solution between the bracketing grid points
        (seeds ``random_state + 1 + step``) before the final fit; the recommended size is
        then simulated again with the seed ``random_state + 1000`` (the prediction).
    predict_reps : int, optional
        Repetitions of that final prediction (default ``reps``). The prediction's Monte
        Carlo SE is ``sqrt(power (1 - power) / predict_reps)``: 0.065 at power 0.5 with
        40-60 repetitions, so a prediction meant to be read within 0.1 needs a few
        hundred (300: SE <= 0.029).
    random_state : int
    """
    if width is None and power is None:
        raise ConfigError("state a goal: width= (interval width) and/or power= (e.g. 0.8).")
    if width is not None and not (0 < width < 1):
        raise ConfigError(f"width must be between 0 and 1; got {width!r}.")
    if not (0 < level < 0.5):
        raise ConfigError(f"level must be between 0 and 0.5; got {level!r}.")
    if power is not None and not (level < power < 1):
        raise ConfigError(f"power must be between the test level {level} and 1; got {power!r}.")
    ns = [int(n) for n in sizes]
    if len(ns) < 2 or sorted(set(ns)) != ns:
        raise ConfigError(f"sizes must be two or more increasing item counts; got {list(sizes)}.")
    if not 20 <= ns[0] <= ns[-1] <= MAX_ITEMS:
        raise ConfigError(f"sizes must be item counts from 20 to {MAX_ITEMS:,}; got {list(sizes)}.")
    if not (0 <= int(refine_steps) <= 10):
        raise ConfigError(f"refine_steps must be between 0 and 10; got {refine_steps!r}.")
    _check_counts(reps=reps, predict_reps=predict_reps, n_bootstrap=n_bootstrap)
    if interval == "bootstrap":
        _check_counts(channel_draws=channel_draws)
    final_reps = int(reps if predict_reps is None else predict_reps)
    rs = [float(scenario.n_annotators)] if answers_per_item is None else list(answers_per_item)
    gs = [0] if gold_items is None else [int(g) for g in gold_items]
    if any(g < 0 or g >= ns[0] for g in gs):
        raise ConfigError(
            f"gold item counts must be from 0 to the smallest size minus one ({ns[0] - 1}); "
            f"got {gs}."
        )

    def design(n: int, r: float, g: int, seed: int, n_reps: int = reps) -> DesignPoint:
        return simulate_design(
            scenario,
            n,
            answers_per_item=r,
            gold_items=g,
            reps=n_reps,
            metric=metric,
            prob=prob,
            level=level,
            n_bootstrap=n_bootstrap,
            interval=interval,
            channel_draws=channel_draws,
            random_state=seed,
        )

    def recommend(goal: str, pts: list[DesignPoint], target: float, is_power: bool, r, g):
        values = [p.power if is_power else p.width for p in pts]
        i = _first_met(values, target, decreasing=not is_power)
        if i is None:
            return Recommendation(goal, r, g, None, pts[-1].n_items, None)
        if i == 0:  # met at the grid's smallest size: no bracket to refine in
            n_rec = pts[0].n_items
            pred = design(n_rec, r, g, random_state + 1000, final_reps)
            return Recommendation(goal, r, g, n_rec, pts[-1].n_items, pred)
        lo_n, hi_n = pts[i - 1].n_items, pts[i].n_items
        local = [pts[i - 1], pts[i]]
        fit_curve = _power_curve if is_power else _width_curve

        def solution() -> int | None:
            curve = fit_curve(local)
            if curve is None:
                return None
            return int(np.clip(np.ceil(_solve(curve, target, is_power)), lo_n, hi_n))

        refinements: list[DesignPoint] = []
        for step in range(int(refine_steps)):
            n_star = solution()
            if n_star is None or n_star in {p.n_items for p in local}:
                break
            pt = design(n_star, r, g, random_state + 1 + step)
            local.append(pt)
            refinements.append(pt)
        solved = solution()
        # no monotone local curve: the grid point that meets the goal
        n_final = hi_n if solved is None else solved
        curve = fit_curve(local)
        fitted = None if curve is None else _curve_value(curve, n_final, is_power)
        pred = design(n_final, r, g, random_state + 1000, final_reps)
        return Recommendation(goal, r, g, n_final, pts[-1].n_items, pred, fitted, refinements)

    grid: list[DesignPoint] = []
    recs: list[Recommendation] = []
    for r in rs:
        for g in gs:
            pts = [design(n, r, g, random_state) for n in ns if n > g]
            grid.extend(pts)
            if width is not None:
                recs.append(recommend(f"width <= {width:g}", pts, width, False, r, g))
            if power is not None:
                recs.append(recommend(f"power >= {power:g}", pts, power, True, r, g))
    settings: dict[str, object] = {
        "width": width,
        "power": power,
        "sizes": ns,
        "answers_per_item": rs,
        "gold_items": gs,
        "reps": reps,
        "metric": metric,
        "prob": prob,
        "level": level,
        "n_bootstrap": n_bootstrap,
        "interval": interval,
        "channel_draws": channel_draws if interval == "bootstrap" else None,
        "refine_steps": refine_steps,
        "predict_reps": final_reps,
        "random_state": random_state,
    }
    return AuditPlan(scenario, settings, grid, recs)
