"""``bayescal bench tabular``: recalibration on CreditDefault with simulated annotators (App. G.3).

Protocol (paper Table 2 / App. G.3, on the one of its four datasets available here):

- Splits 0.36 / 0.12 / 0.12 / 0.20 / 0.20 for base training / channel fitting /
  recalibration / validation / test. Test uses seed 42, validation the run seed,
  the training / post-hoc division seed 50, the channel / recalibration division
  seed 51 + run seed.
- Six predictor families from scikit-learn, trained on the original labels:
  decision tree, random forest, linear SVM (its hard 0/1 predictions are the
  scores; the maps clip them before taking logits), Gaussian naive Bayes,
  logistic regression, MLP (the epoch with the best validation accuracy is kept).
  Features are standardised for the SVM, logistic regression and MLP.
- K in {2, 3, 4} simulated annotators flip the original label with annotator-
  and class-specific rates under four regimes (:data:`REGIMES`, ours: the paper's
  values were lost); K = 2, 3 use the first columns of K = 4; each split gets
  independent annotations shared by all predictors.
- Channels: joint score-bin EM on the recalibration split with ten equal-width
  score groups (empty groups dropped), plug-in inverse-variance weights. A fit
  whose gaps are not all above 1e-4, or that fails, stops that cell (counted).
- Maps on the recalibration split: temperature (T in [0.05, 20]), Platt (u in
  [0, 10], v in [-10, 10]), histogram (ten equal-width bins); targets Naive
  (mean annotation), Corrected (IV-weighted corrected labels), and two references:
  Corrected with the true channels (``corrected_oracle``) and Clean labels.
- Oracle ECE on the test split with the original labels, ten equal-width bins on
  ``g(Z)``, and accuracy (``g(Z) >= 0.5`` against the original label). The
  auxiliary Joint map (Table 2): the score-bin EM fit's prevalence of each score
  group, the overall fitted prevalence in dropped (empty) groups
  (:class:`~bayescal.recal.ScoreBinMap`). Summaries: ten seed-level means (each
  averaging the 6 x 3 x 4 predictor / K / regime grid), then mean and SD over seeds.
- Table 7 (channel estimation and ECE evaluation): every estimator's channel
  RMSE against the simulated channels and the absolute gap between the base
  predictor's NC-ECE on the test split (its own independent annotations, equal
  weights, ten equal-width bins on ``Z``) and its Oracle ECE. Estimators: joint
  score-bin EM (recalibration split, K = 2, 3, 4), constrained GMM (K = 2, channel
  split, two equal-count groups from score ranks with ties broken by item order,
  prevalence increasing; a fit whose high-score group's prevalence does not exceed
  the low one's by 1e-5 fails), marginal Dawid-Skene EM (K = 3, 4, channel split),
  and the simulated channels themselves (``known``: the gap left by binning and
  label noise alone). A failed or inadmissible fit (gaps not all above 1e-4) drops
  that estimator's row of the cell (counted). Summaries: mean and SD over the
  predictor x seed x regime cells for each K, as the paper's caption says.

Noise regimes (``rho_0 = P(A = 1 | Y = 0)``, ``rho_1 = P(A = 0 | Y = 1)``):
``low`` 5-12% symmetric; ``fn_heavy`` missed positives 15-30%; ``fp_heavy``
false alarms 15-30%; ``mixed`` heterogeneous up to 35%.
"""

from __future__ import annotations

import time

import numpy as np

from bayescal.bench._io import environment, map_jobs, mean_sd, write_json

#: Minimum gap of an admissible channel fit, and the GMM's required prevalence order (App. G.3).
MIN_GAP = 1e-4
MIN_PREVALENCE_STEP = 1e-5

REGIMES = {
    "low": [(0.05, 0.05), (0.08, 0.08), (0.10, 0.10), (0.12, 0.12)],
    "fn_heavy": [(0.05, 0.25), (0.05, 0.20), (0.10, 0.30), (0.08, 0.15)],
    "fp_heavy": [(0.20, 0.05), (0.25, 0.10), (0.15, 0.05), (0.30, 0.10)],
    "mixed": [(0.10, 0.35), (0.30, 0.10), (0.20, 0.20), (0.35, 0.25)],
}
K_VALUES = (2, 3, 4)
FAMILIES = ("temperature", "platt", "histogram")
TARGETS = ("naive", "corrected", "corrected_oracle", "clean")
PREDICTORS = ("decision_tree", "random_forest", "svm", "naive_bayes", "logistic_regression", "mlp")
LABEL = "default.payment.next.month"


def add_arguments(parser) -> None:
    parser.add_argument("--data", required=True, help="credit_default.csv")
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--predictors", nargs="+", default=list(PREDICTORS))
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--omit-rows", action="store_true", help="leave the per-cell rows out of the JSON"
    )


# -------------------------------------------------------- shared helpers (also used by cifar_recal)
def regime_channels(regime: str, k: int):
    """``(a, b)`` arrays of length k for a regime."""
    pairs = np.array(REGIMES[regime][:k], dtype=np.float64)
    return pairs[:, 0], 1.0 - pairs[:, 1]


def binned_ece(g, y, n_bins: int = 10) -> float:
    """Equal-width ECE of scores ``g`` against labels ``y`` (bins on ``g``)."""
    g = np.asarray(g, dtype=np.float64)
    idx = np.minimum((g * n_bins).astype(np.int64), n_bins - 1)
    return float(
        np.abs(
            np.bincount(idx, weights=np.asarray(y, dtype=np.float64) - g, minlength=n_bins)
        ).sum()
        / g.size
    )


def accuracy(g, y) -> float:
    """Share of items whose thresholded score ``g >= 0.5`` equals the label ``y``."""
    return float(np.mean((np.asarray(g) >= 0.5) == (np.asarray(y) == 1)))


def make_maps(platt_slope_bounds=(0.0, 10.0)):
    from bayescal.recal import HistogramMap, PlattMap, TemperatureMap

    return {
        "temperature": TemperatureMap(),
        "platt": PlattMap(slope_bounds=platt_slope_bounds),
        "histogram": HistogramMap(bins=10, strategy="uniform"),
    }


def recalibrate_cell(
    score_rec,
    labels_rec,
    truth_rec,
    score_test,
    truth_test,
    a_true,
    b_true,
    channels_fn,
    *,
    platt_slope_bounds=(0.0, 10.0),
    weights="inverse_variance",
):
    """Base / Naive / Corrected / references for the three families on one cell.

    ``channels_fn(data) -> ChannelFit`` fits the channels (may raise FitError).
    Returns (list of result dicts, failure reason or None).
    """
    from bayescal import Annotations, ChannelFit
    from bayescal.errors import FitError
    from bayescal.recal import make_targets

    names = [f"a{j + 1}" for j in range(labels_rec.shape[1])]
    rec = Annotations.from_arrays(score_rec, labels_rec, truth=truth_rec, annotators=names)
    rows = [
        {
            "family": "base",
            "target": "none",
            "ece": binned_ece(score_test, truth_test),
            "accuracy": accuracy(score_test, truth_test),
        }
    ]
    try:
        ch = channels_fn(rec)
        gaps = ch.delta.values
        if not np.all(np.isfinite(gaps)) or gaps.min() <= MIN_GAP:
            raise FitError(f"inadmissible channels (min gap {gaps.min():.3g})")
    except FitError as exc:
        return rows, str(exc)
    known = ChannelFit.known(a_true, b_true, annotators=names, mu=float(np.mean(truth_rec)))
    channel_rmse = rmse(ch, a_true, b_true)
    for kind in TARGETS:
        chan = known if kind == "corrected_oracle" else ch
        t = make_targets(
            "corrected" if kind.startswith("corrected") else kind,
            rec,
            chan,
            weights=weights,
            lam=0.0,
        )
        u = t.values()
        for family, g in make_maps(platt_slope_bounds).items():
            g.fit(t.score, u)
            pred = g.predict(score_test)
            rows.append(
                {
                    "family": family,
                    "target": kind,
                    "ece": binned_ece(pred, truth_test),
                    "accuracy": accuracy(pred, truth_test),
                }
            )
    rows.append({"family": "channels", "target": "rmse", "ece": channel_rmse})
    return rows, None


def rmse(ch, a_true, b_true) -> float:
    """Root mean squared error of a point fit's ``a`` and ``b`` against the true channels."""
    err = np.concatenate([ch.a.values[0] - a_true, ch.b.values[0] - b_true])
    return float(np.sqrt(np.mean(err**2)))


def seed_level_summary(rows, keys=("family", "target"), value="ece"):
    """Mean and SD over seeds of seed-level means (the grid averaged within each seed)."""
    from collections import defaultdict

    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[tuple(r[k] for k in keys)][r["seed"]].append(r[value])
    out = []
    for key, seeds in sorted(by.items()):
        means = [np.mean(v) for v in seeds.values()]
        out.append(
            {
                **dict(zip(keys, key)),
                **mean_sd(means),
                "n_seeds": len(means),
                "n_cells": int(sum(len(v) for v in seeds.values())),
            }
        )
    return out


# ------------------------------------------------------------------ predictors
def _predictor(name, seed):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    if name == "decision_tree":
        return DecisionTreeClassifier(min_samples_leaf=20, random_state=seed)
    if name == "random_forest":
        return RandomForestClassifier(
            n_estimators=200, min_samples_leaf=5, n_jobs=1, random_state=seed
        )
    if name == "svm":
        return make_pipeline(StandardScaler(), LinearSVC(C=1.0, random_state=seed))
    if name == "naive_bayes":
        return GaussianNB()
    if name == "logistic_regression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    raise ValueError(name)


def train_scores(name, X_tr, y_tr, X_val, y_val, X_out, seed):
    """Fit a predictor on the training split and return its scores on ``X_out`` (list of arrays)."""
    if name == "mlp":
        import copy
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(X_tr)
        xt, xv = scaler.transform(X_tr), scaler.transform(X_val)
        mlp = MLPClassifier(
            hidden_layer_sizes=(64, 32),
            max_iter=1,
            warm_start=True,
            random_state=seed,
            learning_rate_init=1e-3,
            batch_size=256,
        )
        best, best_acc = None, -1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for _ in range(40):
                mlp.fit(xt, y_tr)
                acc = float((mlp.predict(xv) == y_val).mean())
                if acc > best_acc:
                    best, best_acc = copy.deepcopy(mlp), acc
        return [best.predict_proba(scaler.transform(x))[:, 1] for x in X_out]
    model = _predictor(name, seed).fit(X_tr, y_tr)
    if name == "svm":
        return [np.clip(model.predict(x).astype(np.float64), 0.0, 1.0) for x in X_out]
    return [model.predict_proba(x)[:, 1] for x in X_out]


def _splits(n, seed):
    """Index arrays: train, channel, recal, validation, test (0.36/0.12/0.12/0.20/0.20)."""
    idx = np.arange(n)
    test_rng = np.random.default_rng(42)
    perm = test_rng.permutation(idx)
    n_test = int(round(0.2 * n))
    test, rest = perm[:n_test], perm[n_test:]
    rest = np.random.default_rng(seed).permutation(rest)
    n_val = int(round(0.2 * n))
    val, rest = rest[:n_val], rest[n_val:]
    rest = np.random.default_rng(50).permutation(np.sort(rest))
    n_train = int(round(0.36 * n))
    train, post = rest[:n_train], rest[n_train:]
    post = np.random.default_rng(51 + seed).permutation(np.sort(post))
    half = post.size // 2
    return train, post[:half], post[half:], val, test


def _admissible(fit) -> str | None:
    """Why a point fit is inadmissible (App. G.3: finite, every gap above 1e-4), or None."""
    gaps = fit.delta.values
    if not np.all(np.isfinite(gaps)) or gaps.min() <= MIN_GAP:
        return f"inadmissible channels (min gap {np.nanmin(gaps):.3g})"
    return None


def rank_groups(score) -> np.ndarray:
    """Two equal-count groups from score ranks, ties broken by item order (App. G.3's GMM)."""
    score = np.asarray(score)
    group = np.zeros(score.size, dtype=np.int64)
    group[np.argsort(score, kind="stable")[score.size - score.size // 2 :]] = 1
    return group


def fit_gmm(score, labels, names, seed):
    """Constrained GMM (K = 2) on two rank groups, prevalence increasing by at least 1e-5."""
    from bayescal import Annotations, fit_channels
    from bayescal.errors import FitError

    data = Annotations.from_arrays(score, labels, annotators=names, group=rank_groups(score))
    try:
        fit = fit_channels(data, "gmm", groups="data", monotone=True, random_state=seed)
    except FitError as exc:
        return f"FitError: {exc}"
    prev = dict(zip(map(str, fit.prevalence["group"].values), fit.prevalence.values[0]))
    step = prev["1"] - prev["0"]
    if step < MIN_PREVALENCE_STEP:
        return f"prevalence of the high-score group exceeds the low one's by {step:.3g} < 1e-5"
    return _admissible(fit) or fit


def fit_marginal_ds(labels, names, seed):
    """Marginal Dawid-Skene EM (K >= 3); the score plays no part (one pooled prevalence)."""
    from bayescal import Annotations, fit_channels
    from bayescal.errors import FitError

    data = Annotations.from_arrays(np.full(labels.shape[0], 0.5), labels, annotators=names)
    try:
        fit = fit_channels(data, "dawid_skene_em", random_state=seed)
    except FitError as exc:
        return f"FitError: {exc}"
    return _admissible(fit) or fit


def table7_rows(estimates, score_test, labels_test, truth_test, a_true, b_true, names):
    """Channel RMSE and |NC-ECE - Oracle ECE| of the base score per estimator (Table 7).

    ``estimates`` maps an estimator to its ChannelFit, or to the reason it failed.
    Returns (rows, failures) without the cell's keys.
    """
    from bayescal import Annotations, nc_ece, oracle_ece

    data = Annotations.from_arrays(score_test, labels_test, truth=truth_test, annotators=names)
    oracle = float(oracle_ece(data, bins=10).value)
    rows, failures = [], []
    for est, fit in estimates.items():
        if isinstance(fit, str):
            failures.append({"estimator": est, "reason": fit})
            continue
        nc = float(nc_ece(data, fit, weights="equal", bins=10).value)
        rows.append(
            {
                "estimator": est,
                "rmse": None if est == "known" else rmse(fit, a_true, b_true),
                "ncece": nc,
                "oracle": oracle,
                "gap": abs(nc - oracle),
            }
        )
    return rows, failures


def cell_summary(rows, keys, value):
    """Mean and SD over cells (not over seed means) of ``value``, by ``keys``."""
    from collections import defaultdict

    by = defaultdict(list)
    for r in rows:
        if r[value] is not None:
            by[tuple(r[k] for k in keys)].append(r[value])
    out = []
    for key, vals in sorted(by.items()):
        out.append({**dict(zip(keys, key)), **mean_sd(vals), "n_cells": len(vals)})
    return out


def _one_seed(args):
    import warnings

    from bayescal import ChannelFit, fit_channels
    from bayescal.errors import BayescalWarning
    from bayescal.recal import ScoreBinMap
    from bayescal.simulate import simulate_annotations

    X, y, seed, predictors = args
    train, chan, rec, val, test = _splits(y.size, seed)
    scores = {}
    for name in predictors:
        scores[name] = train_scores(
            name, X[train], y[train], X[val], y[val], [X[chan], X[rec], X[test]], seed
        )
    rows, failures, t7_rows, t7_failures = [], [], [], []
    for r_i, regime in enumerate(REGIMES):
        a4, b4 = regime_channels(regime, 4)

        def annotate(split, stream, _a=a4, _b=b4, _r=r_i):
            # Streams 0 / 1 / 2: channel / recalibration / test split, independent draws.
            rng = np.random.default_rng([seed, _r, stream])
            return simulate_annotations(y[split], _a, _b, random_state=rng)

        lab4, chan4, test4 = annotate(rec, 1), annotate(chan, 0), annotate(test, 2)
        for k in K_VALUES:
            labels = lab4[:, :k]
            a, b = a4[:k], b4[:k]
            names = [f"a{j + 1}" for j in range(k)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BayescalWarning)
                ds = fit_marginal_ds(chan4[:, :k], names, seed) if k >= 3 else None
            known = ChannelFit.known(a, b, annotators=names, mu=float(np.mean(y[test])))
            for name in predictors:
                s_chan, s_rec, s_test = scores[name]
                fitted = {}

                def fit(data, _seed=seed, _out=fitted):
                    _out["ch"] = fit_channels(
                        data, "score_bin_em", groups=10, empty_groups="drop", random_state=_seed
                    )
                    return _out["ch"]

                where = {"seed": seed, "regime": regime, "k": k, "predictor": name}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BayescalWarning)
                    cell, fail = recalibrate_cell(s_rec, labels, y[rec], s_test, y[test], a, b, fit)
                    estimates = {"score_bin_em": fail or fitted["ch"], "known": known}
                    if k == 2:
                        estimates["gmm"] = fit_gmm(s_chan, chan4[:, :2], names, seed)
                    if ds is not None:
                        estimates["dawid_skene_em"] = ds
                    t7, t7_fail = table7_rows(estimates, s_test, test4[:, :k], y[test], a, b, names)
                if not fail:
                    joint = ScoreBinMap(channels=fitted["ch"]).fit().predict(s_test)
                    cell.append(
                        {
                            "family": "joint",
                            "target": "corrected",
                            "ece": binned_ece(joint, y[test]),
                            "accuracy": accuracy(joint, y[test]),
                        }
                    )
                rows.extend({**row, **where} for row in cell)
                t7_rows.extend({**row, **where} for row in t7)
                t7_failures.extend({**f, **where} for f in t7_fail)
                if fail:
                    failures.append({**where, "reason": fail})
    return rows, failures, t7_rows, t7_failures


def run(args) -> int:
    import pandas as pd

    from bayescal.errors import ConfigError, DataError

    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the tabular benchmark needs scikit-learn: pip install 'bayescal[bench]'."
        ) from None
    unknown = sorted(set(args.predictors) - set(PREDICTORS) - {"mlp"})
    if unknown:
        raise ConfigError(f"unknown predictor(s) {unknown}; choose from {PREDICTORS}.")
    try:
        frame = pd.read_csv(args.data)
    except FileNotFoundError:
        raise DataError(f"no such file: {args.data!r} (expected credit_default.csv).") from None
    if LABEL not in frame.columns:
        raise DataError(f"{args.data!r} has no column {LABEL!r}; is it the CreditDefault CSV?")
    y = frame[LABEL].to_numpy().astype(np.int64)
    X = frame.drop(columns=[c for c in ("ID", LABEL) if c in frame.columns]).to_numpy(np.float64)
    t0 = time.perf_counter()
    jobs = [(X, y, s, list(args.predictors)) for s in args.seeds]
    done = map_jobs(_one_seed, jobs, args.jobs)
    rows = [r for d in done for r in d[0]]
    failures = [f for d in done for f in d[1]]
    t7_rows = [r for d in done for r in d[2]]
    t7_failures = [f for d in done for f in d[3]]
    recal_rows = [r for r in rows if r["family"] != "channels"]
    out = {
        "protocol": {
            "dataset": "CreditDefault (UCI, 30000 clients)",
            "seeds": args.seeds,
            "predictors": args.predictors,
            "splits": "0.36/0.12/0.12/0.20/0.20 train/channel/recal/validation/test",
            "regimes": REGIMES,
            "k": list(K_VALUES),
            "channels": "joint score-bin EM, 10 equal-width groups "
            "(empty dropped), on the recalibration split",
            "weights": "plug-in inverse variance",
            "test_ece": "10 equal-width bins on g(Z), original labels",
            "summary": "mean and SD over seeds of seed-level means over the "
            "predictor x K x regime grid",
            "accuracy": "g(Z) >= 0.5 against the original label on the test split",
            "joint_map": "score-bin EM prevalence of the score group of z; dropped (empty) "
            "groups take the overall fitted prevalence",
            "table7": "channel RMSE (a and b) against the simulated channels; |NC-ECE - Oracle "
            "ECE| of the base score on the test split with its own annotations, equal weights, "
            "10 equal-width bins on Z; score-bin EM on the recalibration split, GMM (K = 2; two "
            "equal-count rank groups, prevalence increasing by >= 1e-5) and marginal "
            "Dawid-Skene (K = 3, 4) on the channel split, 'known' = the simulated channels; "
            "mean and SD over predictor x seed x regime cells",
        },
        "summary": seed_level_summary(recal_rows),
        "summary_by_predictor": seed_level_summary(
            recal_rows, keys=("predictor", "family", "target")
        ),
        "summary_by_regime": seed_level_summary(recal_rows, keys=("regime", "family", "target")),
        "summary_accuracy": seed_level_summary(recal_rows, value="accuracy"),
        "channel_rmse": seed_level_summary(
            [r for r in rows if r["family"] == "channels"], keys=("k",)
        ),
        "table7": {
            "channel_rmse": cell_summary(t7_rows, ("estimator", "k"), "rmse"),
            "ncece_oracle_gap": cell_summary(t7_rows, ("estimator", "k"), "gap"),
            "ncece_oracle_gap_by_regime": cell_summary(
                t7_rows, ("estimator", "k", "regime"), "gap"
            ),
            "channel_rmse_by_predictor": cell_summary(
                t7_rows, ("estimator", "k", "predictor"), "rmse"
            ),
            "ncece_oracle_gap_by_predictor": cell_summary(
                t7_rows, ("estimator", "k", "predictor"), "gap"
            ),
            "failures": t7_failures,
        },
        "failures": failures,
        "seconds": time.perf_counter() - t0,
        "jobs": args.jobs,
        "environment": environment(),
    }
    if args.omit_rows:
        out["note"] = "per-cell rows omitted (--omit-rows); rerun without it to get them"
    else:
        out["rows"] = rows
        out["table7_rows"] = t7_rows
    write_json(out, args.json_path)
    return 0
