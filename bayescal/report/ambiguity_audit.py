"""The multiclass ambiguity audit: every calibrator of Tao et al. on one dataset, and a
recommendation.

:func:`audit_ambiguity` splits the items into a calibration and a test half
(stratified by voted label), fits every method of
:data:`bayescal.ambiguity.METHODS` on the calibration half (the Oracle TS, an
upper reference, on the test half, and it is labelled as an oracle wherever it
appears), scores them on the test half against the annotator distributions,
and recommends a method by the paper's practical guidelines: *what annotations
you have decides the method*.

The recommendation never looks at the test half. The guideline's default for
your annotation level is kept unless a cross-validation on the calibration
half shows it failing its purpose (a true-label ECE above Temperature
Scaling's); then the next method of the guideline's list for that level is
tried, and TS is the last resort. The test half only reports how the choice
did.

The result renders itself in Jupyter and ``save(out)`` writes ``report.html``
and ``summary.json`` (atomically: an error never leaves a partial report).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
import warnings as _warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayescal._json import json_default
from bayescal.errors import ConfigError, DataError
from bayescal.report.audit import Section

__all__ = [
    "audit_ambiguity",
    "AmbiguityAuditResult",
    "ANNOTATION_LEVELS",
    "GUIDELINES",
    "CANDIDATES",
    "detect_annotation_level",
]

#: What the calibration set holds, from least to most: voted labels only, a few
#: recorded annotations per item, or (many annotations making) a distribution.
ANNOTATION_LEVELS = ("voted", "samples", "distribution")

#: The paper's practical guidelines (Tao et al., arXiv:2603.22879, Discussion), quoted.
GUIDELINES = {
    "distribution": (
        "When the full annotator distribution is available, Dirichlet-Soft is "
        "recommended as the default: it consistently achieves the best overall "
        "calibration quality; SoftPlatt is a competitive alternative for NLI tasks, "
        "and IR-Soft should be preferred when the sole objective is minimising ECE."
    ),
    "samples": (
        "When individual per-example annotations are stored but have not been aggregated into "
        "distributions, MCTS S=1 provides an effective solution: a single randomly drawn "
        "annotation per calibration example yields ECE comparable to the full distribution."
    ),
    "voted": (
        "When only voted labels are available, LS-TS constructs a data-driven soft "
        "pseudo-target from the model's own confidence and reduces ECE by 9-77% "
        "relative to Temperature Scaling without requiring any annotator data."
    ),
}

#: Methods tried in order for (level, objective); the first that beats TS in the
#: calibration-half cross-validation is recommended (TS if none does).
CANDIDATES = {
    ("distribution", "overall"): ("Dirichlet-Soft", "SoftPlatt", "SLTS", "MCTS S=1"),
    ("distribution", "ece"): ("IR-Soft", "HB-Soft", "Dirichlet-Soft"),
    ("samples", "overall"): ("MCTS S=1", "SLTS"),
    ("samples", "ece"): ("MCTS S=1", "SLTS"),
    ("voted", "overall"): ("LS-TS", "Ent-LS"),
    ("voted", "ece"): ("LS-TS", "Ent-LS"),
}

_GROUP_TEXT = {
    "reference": "nothing (reference)",
    "voted": "voted labels",
    "soft": "annotations (distribution or samples)",
    "annotation-free": "voted labels only (pseudo-soft target)",
    "oracle": "ORACLE: fitted on the test half; an upper reference, not a method",
}

_ECE_KEYS = ("ece_true", "aece", "cwece", "ece_plugin", "ece_voted")
MIN_ITEMS = 20


@dataclass(eq=False)
class AmbiguityAuditResult:
    """Everything :func:`audit_ambiguity` computed; ``save(out)`` writes the report files.

    Attributes
    ----------
    summary : dict
        The ``summary.json`` content.
    sections : list of Section
    probas : dict of str -> ndarray
        Test-half probabilities of every method that ran.
    split : tuple of ndarray
        Calibration and test item indices.
    """

    summary: dict
    sections: list
    probas: dict = field(default_factory=dict)
    split: tuple = ()
    title: str = "bayescal ambiguity audit"

    @property
    def recommendation(self) -> dict:
        return self.summary["recommendation"]

    def to_html(self) -> str:
        from bayescal.report.html import render

        return render(self, template="ambiguity.html")

    def _repr_html_(self) -> str:  # Jupyter
        return self.to_html()

    def save(self, out) -> dict:
        """Write ``report.html`` and ``summary.json`` into directory ``out``.

        Both are rendered first and written to temporary names, then renamed,
        so an error never leaves a partial report behind.
        """
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} exists and is not a directory.")
        html = self.to_html()
        text = json.dumps(self.summary, indent=2, default=json_default, allow_nan=False) + "\n"
        out.mkdir(parents=True, exist_ok=True)
        staged = []
        for name, content in (("report.html", html), ("summary.json", text)):
            tmp = out / f".{name}.partial"
            tmp.write_text(content, encoding="utf-8")
            staged.append((tmp, out / name))
        written = {}
        for tmp, final in staged:
            tmp.replace(final)
            written[final.name] = str(final)
        return written

    def __repr__(self) -> str:
        rec = self.recommendation
        m = self.summary["methods"]
        ece = m.get(rec["method"], {}).get("ece_true")
        return (
            f"<AmbiguityAuditResult {self.summary['dataset']}: {self.summary['n_cal']} cal / "
            f"{self.summary['n_test']} test items x {self.summary['n_classes']} classes; "
            f"annotations: {rec['annotations']['level']}; recommended {rec['method']}"
            + (f" (test ECE_true {ece:.2f}%)" if ece is not None else "")
            + f"; {len(self.summary['warnings'])} warning(s)>"
        )


def detect_annotation_level(counts, *, distribution_threshold: int = 10) -> str:
    """What a count matrix can stand for: ``"voted"``, ``"samples"`` or ``"distribution"``.

    One annotation per item reads as voted labels (it could also be one random
    annotator's answer; declare ``"samples"`` then). A median below
    ``distribution_threshold`` annotations per item reads as a few recorded
    annotations, otherwise as annotator distributions.

    Examples
    --------
    >>> detect_annotation_level([[1, 0], [0, 1]])
    'voted'
    >>> detect_annotation_level([[2, 1], [0, 3]])
    'samples'
    >>> detect_annotation_level([[40, 10], [5, 45]])
    'distribution'
    """
    n = np.asarray(counts).sum(axis=1)
    if np.all(n == 1):
        return "voted"
    if np.median(n) < distribution_threshold:
        return "samples"
    return "distribution"


def _data_hash(data) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(data.logits, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(data.counts, dtype=np.int64).tobytes())
    h.update("\x1f".join(map(str, data.classes)).encode())
    h.update("\x1f".join(map(str, data.item_ids)).encode())
    return h.hexdigest()


def _blas_limited():
    """One BLAS thread while fitting, when threadpoolctl is installed.

    The calibrators multiply (n, K) by (K, K) matrices thousands of times; on a
    shared machine multi-threaded BLAS made Dirichlet-Soft 3-15 times slower
    than one thread (measured on CIFAR-10H, 400-5,000 items).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it the fits are only slower
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _folds(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Stratified fold index per item: permute, stable-sort by label, deal out round-robin."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(labels.size)
    order = perm[np.argsort(labels[perm], kind="stable")]
    fold = np.empty(labels.size, dtype=np.int64)
    fold[order] = np.arange(labels.size) % k
    return fold


def _cv_score(name, data, cal, *, k, seed, n_bins, n_draws):
    """Out-of-fold ECE_true (percent) and NLL of one method on the calibration half only."""
    from bayescal.ambiguity import METHODS, evaluate

    fold = _folds(data.voted[cal], k, seed)
    proba = np.empty((cal.size, data.n_classes))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        for f in range(k):
            tr, va = cal[fold != f], fold == f
            model = METHODS[name].factory(seed)
            model.fit(data.logits[tr], data.counts[tr])
            proba[va] = model.predict_proba(data.logits[cal[va]])
    m = evaluate(proba, data.counts[cal], n_bins=n_bins, n_draws=n_draws, random_state=seed)
    return {"ece_true": 100.0 * m["ece_true"], "nll": m["nll"], "brier": m["brier"]}


def _recommend(data, cal, level, objective, *, k, seed, n_bins, n_draws, checkable):
    """Walk the guideline's candidates for ``level``; keep the first that beats TS in CV on ``cal``.

    Returns the method, the check record and the candidates rejected before it.
    """
    chain = CANDIDATES[(level, objective)]
    check = {
        "folds": k,
        "metric": "ece_true (percent, out-of-fold on the calibration half)",
        "scores": {},
    }
    if not checkable:
        check["skipped"] = (
            "every calibration item has a single annotation declared as a voted "
            "label, so the true-label ECE cannot be estimated without annotator data"
        )
        return chain[0], check, []

    def score(name):
        if name not in check["scores"]:
            try:
                check["scores"][name] = _cv_score(
                    name, data, cal, k=k, seed=seed, n_bins=n_bins, n_draws=n_draws
                )
            except (
                Exception
            ) as exc:  # a candidate that cannot be fitted on these folds is passed over
                check["scores"][name] = {"error": f"{type(exc).__name__}: {exc}"}
        return check["scores"][name]

    ts = score("TS")
    if "error" in ts:
        check["skipped"] = f"TS could not be fitted in cross-validation ({ts['error']})"
        return chain[0], check, []
    for i, name in enumerate(chain):
        s = score(name)
        if "error" not in s and s["ece_true"] <= ts["ece_true"]:
            return name, check, list(chain[:i])
    return "TS", check, list(chain)


def _annotation_profile(data, cal, test, declared, distribution_threshold):
    from bayescal.ambiguity import annotation_entropy

    n = data.counts.sum(axis=1)
    h = annotation_entropy(data.counts)
    detected = detect_annotation_level(data.counts, distribution_threshold=distribution_threshold)
    level = detected if declared == "auto" else declared
    q = np.quantile(h, [0.1, 0.25, 0.5, 0.75, 0.9])
    return {
        "level": level,
        "detected": detected,
        "declared": None if declared == "auto" else declared,
        "distribution_threshold": distribution_threshold,
        "per_item": {
            "min": int(n.min()),
            "median": float(np.median(n)),
            "mean": float(n.mean()),
            "max": int(n.max()),
        },
        "total": int(n.sum()),
        "unanimous_fraction": float(np.mean(h == 0)),
        "entropy": {
            "mean": float(h.mean()),
            "quantiles": {
                f"q{int(p * 100)}": float(v) for p, v in zip((0.1, 0.25, 0.5, 0.75, 0.9), q)
            },
        },
        "disagreement_rate": float(1.0 - (data.counts.max(axis=1) / n).mean()),
    }, h


def _usable(group: str, level: str) -> bool:
    if group == "oracle":
        return False
    if group == "soft":
        return level in ("samples", "distribution")
    return True


def _finite_or_none(obj):
    """NaN / inf become None, so ``summary.json`` is strict JSON."""
    if isinstance(obj, dict):
        return {k: _finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_or_none(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    return obj


def _fmt(x, digits=2):
    if x is None:
        return "–"
    if isinstance(x, (float, np.floating)):
        return f"{x:.{digits}f}"
    return str(x)


def _fit_all(data, cal, test, names, level, objective, *, seed, n_bins, n_draws, cv_folds, warn):
    """The recommendation (calibration half only), then every method fitted on cal and scored
    on test."""
    from bayescal.ambiguity import METHODS
    from bayescal.bench.ambiguity import fit_evaluate

    # Recommendation first, from the calibration half alone.
    checkable = not (level == "voted" and int(data.counts[cal].sum(axis=1).max()) == 1)
    rec_name, check, fallbacks = _recommend(
        data,
        cal,
        level,
        objective,
        k=cv_folds,
        seed=seed,
        n_bins=n_bins,
        n_draws=n_draws,
        checkable=checkable,
    )

    # Every method, fitted on the calibration half and scored on the test half.
    run = [n for n in METHODS if n in names or n in ("Uncalibrated", "TS", rec_name)]
    results, bins_true, probas = {}, {}, {}
    for name in run:
        spec = METHODS[name]
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            try:
                r, b, p = fit_evaluate(
                    spec, data, cal, test, seed=seed, n_bins=n_bins, n_draws=n_draws, keep_bins=True
                )
            except Exception as exc:  # a failed method is reported, never silently dropped
                results[name] = {
                    "group": spec.group,
                    "oracle": spec.group == "oracle",
                    "status": "failed",
                    "error": f"{type(exc).__name__}: {exc}",
                    "usable": _usable(spec.group, level),
                }
                warn.append(f"[{name}] failed: {type(exc).__name__}: {exc}")
                continue
        for w in caught:
            msg = f"[{name}] {w.message}"
            if msg not in warn:
                warn.append(msg)
        row = {
            "group": spec.group,
            "oracle": bool(r["oracle"]),
            "status": "ok",
            "usable": _usable(spec.group, level),
        }
        for key in (
            "ece_true",
            "aece",
            "cwece",
            "ece_plugin",
            "ece_voted",
            "brier",
            "nll",
            "accuracy",
        ):
            row[key] = float(r[key])
        row["temperature"] = r.get("T")
        row["seconds"] = float(r["seconds"])
        row["converged"] = bool(r["converged"])
        if not row["converged"] and not caught:
            warn.append(
                f"[{name}] the optimiser did not converge (n_iter={r['n_iter']}); "
                "its row is usable but may not be the optimum."
            )
        results[name] = row
        bins_true[name] = b
        probas[name] = p
    return rec_name, check, fallbacks, results, bins_true, probas


def audit_ambiguity(
    data,
    *,
    seed: int = 42,
    methods=None,
    annotations: str = "auto",
    objective: str = "overall",
    cal_fraction: float = 0.5,
    n_bins: int = 15,
    n_draws: int = 100,
    cv_folds: int = 5,
    entropy_strata: int = 5,
    distribution_threshold: int = 10,
    command: str | None = None,
    title: str | None = None,
) -> AmbiguityAuditResult:
    """Audit multiclass calibration against annotator distributions and recommend a calibrator.

    Parameters
    ----------
    data : AmbiguityData
        Logits and annotator counts (``load_cifar10h``, ``load_chaosnli``,
        ``load_npz`` or built directly).
    seed : int, default 42
        The one seed: split, cross-validation folds, MCTS draws, ECE label draws.
    methods : list of str, optional
        Methods of :data:`bayescal.ambiguity.METHODS` for the comparison table
        (default: all). Uncalibrated, TS and the recommended method are always run.
    annotations : {"auto", "voted", "samples", "distribution"}, default "auto"
        What your calibration data holds; ``"auto"`` reads it from the counts
        (:func:`detect_annotation_level`). Declare ``"samples"`` when one label
        per item is a random annotator's answer rather than a consensus, or a
        lower level to see what you would get with less.
    objective : {"overall", "ece"}, default "overall"
        ``"ece"`` follows the guideline for "the sole objective is minimising ECE"
        (IR-Soft first when distributions are available).
    cal_fraction : float, default 0.5
        Share of items in the calibration half (stratified by voted label).
    n_bins, n_draws : int, default 15, 100
        Bins and label draws of the sampled ECEs.
    cv_folds : int, default 5
        Folds of the calibration-half check behind the recommendation.
    entropy_strata : int, default 5
        Strata of the error-versus-annotation-entropy table (unanimous items first).
    distribution_threshold : int, default 10
        Median annotations per item from which counts read as distributions.
    command : str, optional
        The command line, recorded for reproducibility.
    title : str, optional

    Returns
    -------
    AmbiguityAuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import AmbiguityData
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 200)
    >>> d = AmbiguityData(logits=3 * np.log(pi), counts=rng.multinomial(20, pi),
    ...                   classes=("a", "b", "c"), item_ids=np.arange(200))
    >>> r = audit_ambiguity(d, methods=["Uncalibrated", "TS", "SLTS"], n_draws=5, cv_folds=2)
    >>> (r.recommendation["annotations"]["level"],
    ...  r.recommendation["method"] in ("SLTS", "Dirichlet-Soft", "TS"))
    ('distribution', True)
    """
    from bayescal.ambiguity import METHODS, AmbiguityData, stratified_split
    from bayescal.bench.ambiguity import entropy_strata_errors

    if not isinstance(data, AmbiguityData):
        raise ConfigError(f"audit_ambiguity expects AmbiguityData; got {type(data).__name__}.")
    if annotations not in ("auto", *ANNOTATION_LEVELS):
        raise ConfigError(
            f"annotations must be 'auto' or one of {ANNOTATION_LEVELS}; got {annotations!r}."
        )
    if objective not in ("overall", "ece"):
        raise ConfigError(f"objective must be 'overall' or 'ece'; got {objective!r}.")
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise ConfigError(f"seed must be a non-negative integer; got {seed!r}.")
    if not (isinstance(cv_folds, (int, np.integer)) and cv_folds >= 2):
        raise ConfigError(f"cv_folds must be an integer >= 2; got {cv_folds!r}.")
    names = list(METHODS) if methods is None else list(methods)
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}.")
    if data.n_items < MIN_ITEMS:
        raise DataError(
            f"{data.n_items} items: an audit splits items into a "
            f"calibration and a test half and needs at least {MIN_ITEMS}."
        )

    t_start = time.perf_counter()
    warn: list[str] = []
    cal, test = stratified_split(data.voted, fraction=cal_fraction, random_state=seed)
    if cal.size < 2 * cv_folds or test.size < 2:
        raise DataError(
            f"the split leaves {cal.size} calibration and {test.size} "
            "test items; use more items or a different cal_fraction."
        )
    profile, entropy = _annotation_profile(data, cal, test, annotations, distribution_threshold)
    level = profile["level"]
    if profile["declared"] and ANNOTATION_LEVELS.index(
        profile["declared"]
    ) > ANNOTATION_LEVELS.index(profile["detected"]):
        warn.append(
            f"You declared '{profile['declared']}' annotations but the counts look "
            f"like '{profile['detected']}' (median {profile['per_item']['median']:g} "
            "per item); the recommendation follows your declaration."
        )
    if profile["per_item"]["max"] == 1:
        warn.append(
            "Every item has a single annotation: the 'true-label' metrics are measured "
            "against those single labels. If they are consensus (voted) labels, "
            "ECE_true equals ECE_voted here and cannot show ambiguity; if each is one "
            "randomly chosen annotator's answer, declare annotations='samples'."
        )
    if cal.size < 100:
        warn.append(
            f"Only {cal.size} calibration items: the fitted "
            "maps and the recommendation check are noisy."
        )
    looks_like_proba = (data.logits >= 0).all() and np.allclose(
        data.logits.sum(axis=1), 1.0, atol=1e-6
    )
    if looks_like_proba:
        warn.append(
            "The logits are non-negative and every row sums to one: these look like probabilities. "
            "Pass logits (or log-probabilities) instead; "
            "softmax of probabilities is nearly uniform."
        )

    with _blas_limited():
        rec_name, check, fallbacks, results, bins_true, probas = _fit_all(
            data,
            cal,
            test,
            names,
            level,
            objective,
            seed=seed,
            n_bins=n_bins,
            n_draws=n_draws,
            cv_folds=int(cv_folds),
            warn=warn,
        )
    default = CANDIDATES[(level, objective)][0]

    rec_row = results.get(rec_name, {})
    ts_row = results.get("TS", {})
    if rec_row.get("status") == "ok" and ts_row.get("status") == "ok" and rec_name != "TS":
        if rec_row["ece_true"] > ts_row["ece_true"]:
            warn.append(
                f"On the test half the recommended {rec_name} has a higher ECE_true "
                f"({rec_row['ece_true']:.2f}%) than TS ({ts_row['ece_true']:.2f}%)"
                + (
                    ", although it beat TS in the calibration-half check. A difference "
                    "this size can come from the split alone; compare on more data."
                    if "skipped" not in check
                    else "; without annotator data the guideline's "
                    "choice could not be checked beforehand."
                )
            )

    recommendation = _recommendation_text(
        rec_name, default, level, objective, profile, check, fallbacks, results, data.name
    )
    if fallbacks:
        if rec_name == "TS":
            warn.append(
                f"No ambiguity-aware method for '{level}' annotations ({', '.join(fallbacks)}) "
                "beat TS in the calibration-half check; TS is recommended as the safe choice."
            )
        else:
            warn.append(
                f"The guideline's default {default} did worse than TS in the "
                f"calibration-half check (ECE_true); {rec_name} is recommended instead."
            )

    strata = None
    strata_methods = [n for n in ("Uncalibrated", "TS", rec_name) if n in probas]
    if entropy_strata >= 2 and strata_methods:
        with _warnings.catch_warnings():
            _warnings.simplefilter(
                "ignore", RuntimeWarning
            )  # a one-item stratum has no standard error (NaN)
            strata = entropy_strata_errors(
                data, test, {n: probas[n] for n in strata_methods}, int(entropy_strata)
            )

    import bayescal

    versions = {
        "bayescal": bayescal.__version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    for mod in ("scipy", "xarray", "matplotlib", "jinja2"):
        m = sys.modules.get(mod)
        if m is not None:
            versions[mod] = getattr(m, "__version__", "?")
    settings = {
        "methods": names,
        "annotations": annotations,
        "objective": objective,
        "cal_fraction": cal_fraction,
        "n_bins": n_bins,
        "n_draws": n_draws,
        "cv_folds": int(cv_folds),
        "entropy_strata": entropy_strata,
        "distribution_threshold": distribution_threshold,
    }
    repro = {
        "command": command,
        "seed": int(seed),
        "versions": versions,
        "platform": platform.platform(),
        "data_hash": _data_hash(data),
        "source": {k: v for k, v in data.attrs.items()},
        "settings": settings,
    }

    summary = {
        "dataset": data.name,
        "n_items": data.n_items,
        "n_cal": int(cal.size),
        "n_test": int(test.size),
        "n_classes": data.n_classes,
        "classes": [str(c) for c in data.classes],
        "annotations": profile,
        "protocol": {
            "split": f"stratified {cal_fraction:g}/{1 - cal_fraction:g} by voted label "
            f"(ties: lowest class index), seed {seed}",
            "fitting": "every method is fitted on the calibration half; the recommendation uses "
            "only the calibration half (cross-validation); the test half only scores",
            "oracle": "'Oracle TS (oracle)' is SLTS fitted on the TEST half: an upper reference, "
            "never a method and never recommended",
            "n_bins": n_bins,
            "n_draws": n_draws,
            "units": "ece_true, aece, cwece, ece_plugin, ece_voted in percent; brier, nll, "
            "accuracy as fractions; accuracy against voted labels",
        },
        "methods": results,
        "recommendation": recommendation,
        "entropy_strata": strata,
        "warnings": warn,
    }
    if data.reference is not None:
        summary["reference_agreement"] = float(np.mean(data.voted == data.reference))

    sections = [
        _data_section(data, cal, test, profile, entropy, summary),
        _recommendation_section(recommendation, results),
        _methods_section(results, rec_name, level),
        _reliability_section(data, test, bins_true, probas, rec_name, default, n_bins),
        _entropy_section(strata),
        Section(title="Warnings", notes=list(warn) or ["No warnings."]),
    ]
    repro["seconds"] = time.perf_counter() - t_start
    from bayescal.report.sections import reproducibility_section

    sections.append(reproducibility_section(repro))
    summary["reproducibility"] = repro
    summary = _finite_or_none(summary)
    return AmbiguityAuditResult(
        summary=summary,
        sections=sections,
        probas=probas,
        split=(cal, test),
        title=title or f"bayescal ambiguity audit: {data.name or 'data'}",
    )


def _recommendation_text(
    rec, default, level, objective, profile, check, fallbacks, results, dataset
):
    per = profile["per_item"]
    have = {
        "voted": "voted (consensus) labels only",
        "samples": f"a few recorded annotations per item (median {per['median']:g})",
        "distribution": f"annotator distributions (median {per['median']:g} annotations per item)",
    }[level]
    reasons = [
        f"You have {have}, so the paper's practical guidelines point to {default} (quoted above)."
    ]
    if objective == "ece" and level == "distribution":
        reasons.append(
            "You asked to minimise ECE alone, so the ECE-only choice (IR-Soft) comes first."
        )
    scores = check["scores"]
    if "skipped" in check:
        reasons.append(f"The guideline's choice could not be checked: {check['skipped']}.")
    elif not fallbacks:
        s, t = scores[rec], scores["TS"]
        reasons.append(
            f"Check on the calibration half only ({check['folds']}-fold cross-validation, no test "
            f"item used): {rec} ECE_true {s['ece_true']:.2f}% vs TS {t['ece_true']:.2f}%, NLL "
            f"{s['nll']:.3f} vs {t['nll']:.3f}; it does what the guideline expects, so it is kept."
        )
    else:
        tried = ", ".join(
            f"{n} {scores[n]['ece_true']:.2f}%"
            if "ece_true" in scores.get(n, {})
            else f"{n} (failed)"
            for n in fallbacks
        )
        reasons.append(
            f"Check on the calibration half only ({check['folds']}-fold cross-validation): "
            f"TS reaches {scores['TS']['ece_true']:.2f}% ECE_true; {tried} did worse, so "
            + (
                f"the guideline's next choice {rec} is recommended."
                if rec != "TS"
                else "no ambiguity-aware method helps here and TS is the safe choice."
            )
        )
    if (
        profile["declared"]
        and "skipped" not in check
        and ANNOTATION_LEVELS.index(profile["declared"])
        < ANNOTATION_LEVELS.index(profile["detected"])
    ):
        reasons.append(
            f"You declared '{profile['declared']}' while the counts hold "
            "more; the check above scored against those counts, which a "
            "dataset with only that level of annotation would not have."
        )
    if level == "voted":
        reasons.append(
            "Caveat: LS-TS smooths by the model's own mean complement confidence. When the "
            "model's errors, not annotator disagreement, make it unsure, it over-smooths "
            "(temperature above the oracle's) and ends underconfident: the paper reports this for "
            "ISIC 2019 ViT-S/16, and our ResNet-110 on CIFAR-10H shows "
            "it (LS-TS 8.8% vs TS 3.3% ECE_true, docs/ambiguity.md). Ent-LS did better in "
            "our runs but the paper finds it inconsistent (8.6% on ChaosNLI DeBERTa-v3). "
            "Recording one random annotator's answer per calibration item is enough for "
            "MCTS S=1, which the paper finds as good as the full distribution."
        )
    if level == "samples":
        reasons.append(
            "MCTS S=1 matched SLTS on the full distribution within 0.6 ECE points "
            "in all eight of the paper's settings; a distribution is not needed."
        )
    alternatives = []
    if level == "distribution":
        for alt, why in (
            ("SoftPlatt", "competitive alternative for NLI tasks"),
            ("IR-Soft", "preferred when the sole objective is ECE"),
            ("Dirichlet-Soft", "best overall calibration quality (the default)"),
        ):
            if alt != rec and results.get(alt, {}).get("status") == "ok":
                alternatives.append(
                    {
                        "method": alt,
                        "why": why,
                        "test_ece_true": results[alt]["ece_true"],
                        "test_nll": results[alt]["nll"],
                    }
                )
    test = {}
    for n in ("Uncalibrated", "TS", rec):
        r = results.get(n, {})
        if r.get("status") == "ok":
            test[n] = {k: r[k] for k in ("ece_true", "ece_voted", "brier", "nll", "accuracy")}
    if rec in test and "TS" in test and rec != "TS":
        a, b = test[rec]["ece_true"], test["TS"]["ece_true"]
        reasons.append(
            f"Held-out test half (never used to fit or choose): {rec} "
            f"ECE_true {a:.2f}% vs TS {b:.2f}% ({100 * (a - b) / b:+.0f}%), "
            f"NLL {test[rec]['nll']:.3f} vs {test['TS']['nll']:.3f}."
        )
    if (
        rec != "TS"
        and rec in test
        and "TS" in test
        and test[rec]["ece_voted"] > test["TS"]["ece_voted"]
    ):
        reasons.append(
            f"Expect a higher voted-label ECE ({test[rec]['ece_voted']:.2f}% vs TS "
            f"{test['TS']['ece_voted']:.2f}%): the voted label is not the target under ambiguity. "
            "If a voted-label guarantee is required, the paper "
            "suggests applying TS on top of the ambiguity-aware calibrator's output."
        )
    return {
        "method": rec,
        "guideline_default": default,
        "reason": " ".join(reasons),
        "reasons": reasons,
        "guideline": GUIDELINES[level],
        "objective": objective,
        "annotations": {
            "level": level,
            "detected": profile["detected"],
            "declared": profile["declared"],
            "available": have,
        },
        "check": check,
        "alternatives": alternatives,
        "test": test,
    }


def _data_section(data, cal, test, profile, entropy, summary):
    from bayescal.report.figures import _plt, to_base64

    per = profile["per_item"]
    rows = [
        ("dataset", data.name or "(unnamed)"),
        ("items", data.n_items),
        (
            "classes",
            f"{data.n_classes}: {', '.join(map(str, data.classes[:20]))}"
            + (" …" if data.n_classes > 20 else ""),
        ),
        ("calibration / test items", f"{cal.size} / {test.size}"),
        (
            "annotations per item (min / median / mean / max)",
            f"{per['min']} / {per['median']:g} / {per['mean']:.1f} / {per['max']}",
        ),
        ("annotations in total", profile["total"]),
        (
            "annotation level",
            f"{profile['level']} (detected: {profile['detected']}"
            + (f", declared: {profile['declared']})" if profile["declared"] else ")"),
        ),
        ("unanimous items", f"{100 * profile['unanimous_fraction']:.1f}%"),
        (
            "annotations disagreeing with the item's majority",
            f"{100 * profile['disagreement_rate']:.1f}%",
        ),
        ("mean normalised annotation entropy", f"{profile['entropy']['mean']:.3f}"),
        (
            "model accuracy against voted labels",
            f"{100 * float(np.mean(data.logits.argmax(1) == data.voted)):.1f}%",
        ),
    ]
    if "reference_agreement" in summary:
        rows.append(
            (
                "voted label = dataset's reference label",
                f"{100 * summary['reference_agreement']:.1f}%",
            )
        )
    voted = np.bincount(data.voted, minlength=data.n_classes)
    share = data.counts.sum(axis=0) / data.counts.sum()
    pred = np.bincount(data.logits.argmax(1), minlength=data.n_classes)
    class_rows = [
        (str(c), int(voted[j]), f"{100 * share[j]:.1f}%", int(pred[j]))
        for j, c in enumerate(data.classes[:50])
    ]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.hist(entropy, bins=np.linspace(0, 1, 21), color="#4c72b0", edgecolor="white")
    ax.set_xlabel("normalised annotation entropy (0 = unanimous, 1 = uniform)")
    ax.set_ylabel("items")
    ax.grid(alpha=0.3)
    notes = []
    if data.n_classes > 50:
        notes.append(f"The class table shows the first 50 of {data.n_classes} classes.")
    return Section(
        title="Data",
        html_tables=[
            ("Items and annotations", ("", "value"), rows),
            (
                "Classes",
                ("class", "items voted", "share of annotations", "model's top class"),
                class_rows,
            ),
        ],
        figures=[("Annotation entropy per item: how much annotators disagree.", to_base64(fig))],
        notes=notes,
    )


def _recommendation_section(rec, results):
    rows = [
        ("recommended method", rec["method"]),
        ("guideline default for your annotations", rec["guideline_default"]),
        ("annotations available", rec["annotations"]["available"]),
    ]
    for n, r in rec["test"].items():
        rows.append(
            (
                f"test half: {n}",
                f"ECE_true {r['ece_true']:.2f}%, ECE_voted {r['ece_voted']:.2f}%, "
                f"NLL {r['nll']:.3f}, Brier {r['brier']:.4f}",
            )
        )
    tables = [("Recommendation", ("", ""), rows)]
    scores = rec["check"].get("scores", {})
    if scores:
        tables.append(
            (
                f"Calibration-half check ({rec['check']['folds']}-fold "
                "cross-validation; the test half is not used)",
                ("method", "ECE_true %", "NLL", "Brier"),
                [
                    (n, _fmt(s.get("ece_true")), _fmt(s.get("nll"), 3), _fmt(s.get("brier"), 4))
                    if "error" not in s
                    else (n, "failed: " + s["error"], "", "")
                    for n, s in scores.items()
                ],
            )
        )
    if rec["alternatives"]:
        tables.append(
            (
                "Alternatives the guideline names",
                ("method", "when", "test ECE_true %", "test NLL"),
                [
                    (a["method"], a["why"], _fmt(a["test_ece_true"]), _fmt(a["test_nll"], 3))
                    for a in rec["alternatives"]
                ],
            )
        )
    return Section(title="Recommendation", html_tables=tables, notes=list(rec["reasons"]))


def _methods_section(results, rec, level):
    header = (
        "method",
        "fitted on",
        "usable with your annotations",
        "T",
        "ECE_true %",
        "aECE %",
        "cwECE %",
        "ECE_voted %",
        "Brier",
        "NLL",
        "accuracy %",
        "seconds",
    )
    rows = []
    for name, r in results.items():
        label = name + ("  ← recommended" if name == rec else "")
        usable = (
            "oracle: no"
            if r["oracle"]
            else ("yes" if r["usable"] else f"no (needs more than {level})")
        )
        if r["status"] != "ok":
            rows.append(
                (label, _GROUP_TEXT[r["group"]], usable, "failed: " + r["error"], *[""] * 8)
            )
            continue
        rows.append(
            (
                label,
                _GROUP_TEXT[r["group"]],
                usable,
                _fmt(r["temperature"]),
                _fmt(r["ece_true"]),
                _fmt(r["aece"]),
                _fmt(r["cwece"]),
                _fmt(r["ece_voted"]),
                _fmt(r["brier"], 4),
                _fmt(r["nll"], 3),
                _fmt(100 * r["accuracy"], 1),
                _fmt(r["seconds"], 2),
            )
        )
    notes = [
        "All numbers are on the test half. ECE_true, aECE and cwECE compare "
        "confidences with labels drawn from the annotator distribution; ECE_voted "
        "with the voted label; Brier and NLL score the whole predicted distribution "
        "against the annotator distribution (lower is better everywhere).",
        "Oracle TS (oracle) is fitted on the test half itself: it shows how far a single "
        "temperature can go, it is not a method you can use, and it is never recommended.",
    ]
    return Section(
        title="Method comparison",
        html_tables=[("Every method, test half", header, rows)],
        notes=notes,
    )


def _reliability_section(data, test, bins_true, probas, rec, default, n_bins):
    from bayescal.ambiguity import ece_voted
    from bayescal.ambiguity.plotting import reliability_diagram
    from bayescal.report.figures import _plt, to_base64

    show = [n for n in ("Uncalibrated", "TS", default, rec, "Oracle TS (oracle)") if n in bins_true]
    show = list(dict.fromkeys(show))
    if not show:
        return Section(
            title="Reliability diagrams", status="skipped", reason="no method produced predictions."
        )
    plt = _plt()
    fig, axes = plt.subplots(2, len(show), figsize=(2.7 * len(show), 5.8), squeeze=False)
    for j, name in enumerate(show):
        label = name + (" (recommended)" if name == rec and name != "TS" else "")
        reliability_diagram(bins_true[name], ax=axes[0, j], title=f"{label}\ntrue labels")
        reliability_diagram(
            ece_voted(probas[name], data.counts[test], n_bins=n_bins),
            ax=axes[1, j],
            title=f"{label}\nvoted labels",
        )
    fig.tight_layout()
    return Section(
        title="Reliability diagrams",
        figures=[
            (
                "Top row: accuracy against labels drawn from the annotator "
                "distribution (ECE_true); bottom row: against the voted label "
                "(ECE_voted). Red = overconfident, green = underconfident. Test half.",
                to_base64(fig),
            )
        ],
        notes=[
            "A voted-label calibrator such as TS can look calibrated "
            "in the bottom row while staying overconfident in the top "
            "row: under ambiguity the voted label is the wrong target."
        ],
    )


def _entropy_section(strata):
    if not strata:
        return Section(
            title="Error by annotation entropy",
            status="skipped",
            reason="entropy strata were not requested (entropy_strata < 2).",
        )
    methods = [k for k in strata if k != "strata"]
    header = ("stratum", "items", "entropy range", *[f"{m}: mean |p − π| %" for m in methods])
    rows = []
    for i, s in enumerate(strata["strata"]):
        rng_text = (
            "0 (unanimous)"
            if s["entropy_max"] == 0
            else f"{s['entropy_min']:.2f}–{s['entropy_max']:.2f}"
        )
        rows.append((i + 1, s["n"], rng_text, *[_fmt(strata[m]["mean_error"][i]) for m in methods]))
    notes = [
        "|p − π|: the gap between the top-class confidence and the share of annotators choosing "
        "that class, per item. The paper's Proposition 2: for TS it grows with annotation entropy."
    ]
    for m in methods:
        notes.append(
            f"{m}: {'rises' if strata[m]['strictly_increasing'] else 'does not rise strictly'} "
            "with entropy; "
            f"{'monotone within two standard errors' if strata[m]['monotone'] else 'not monotone'}."
        )
    return Section(
        title="Error by annotation entropy", html_tables=[("Test half", header, rows)], notes=notes
    )
