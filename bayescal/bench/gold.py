"""``bayescal bench gold``: posterior width of the channels against the number of gold items.

Issue 15: "with gold items the posterior width shrinks at the rate expected from the added
information". Two scenarios: the toy study's three annotators in three score groups, and its
first two annotators in two score groups (the Hui-Walter design, where the unknown items
identify the channels only through the groups' different prevalences, so gold items matter
more). Each has ``--n`` unknown items (``simulate_toy``) plus ``n_gold`` further items of the
same population marked gold (their class known), for each ``n_gold`` in ``--gold``, and is
fitted with the grouped Bayesian model (nutpie, 2 chains); the posterior sd of every ``a_j``
and ``b_j`` is recorded.

Expected rate: gold items add Fisher information ``n0_j / (a_j (1 - a_j))`` about ``a_j``
(``n0_j`` = gold-0 items annotator ``j`` answered; likewise ``b_j`` with gold-1 items), on top
of what the unknown items carry. With the posterior sd without gold ``sd_0`` standing for the
latter (its inverse square is the information of the unknown items and the prior), the
prediction is ``sd(n_gold) = 1 / sqrt(1 / sd_0**2 + I_gold)`` (information adds for
independent items; the correlation of a rate with the prevalences is neglected, so the
prediction is approximate). The JSON reports observed and predicted sds per level, averaged over
annotators and ``--seeds`` data sets, and their ratio.

``--multiclass`` runs the multiclass track's scenarios instead (same options;
``docs/results/gold_multiclass.json``; ``models/gold.md``, "Multiclass track"): confusion
posterior width against the number of gold items, multiclass Dawid–Skene.

Two scenarios with K = 3 annotators and C = 3 classes: accurate annotators (every confusion
row 0.8 on the diagonal, 0.1 off it) and weak ones (0.6 / 0.2). Each has ``--n`` unknown items
(``simulate_multiclass``, 10% missing answers) plus ``n_gold`` further items of the same
population marked gold (their class known), for each ``n_gold`` in ``--gold``, fitted with
:func:`~bayescal.bayes.fit.fit_channels_bayes` (nutpie, 2 chains,
prevalence per predicted class); the posterior sd of every confusion entry is recorded.

Expected rate. A gold item of class ``y`` answered by annotator ``j`` is one multinomial
observation of the row ``T_j[y, :]``. In the row's probabilities (free coordinates
``p_1 .. p_{C-1}``, ``p_0 = 1 - sum``; the information is the same for any choice of the
dropped entry) ``n_jy`` such answers carry Fisher information
``I = n_jy (diag(1 / p_free) + 1 / p_0)``, whose inverse is the familiar
``(diag(p) - p p^T) / n_jy``. Log-likelihoods of independent items add, so the precision of
the fit with gold is that of the fit without gold (prior + unknown items) plus ``I`` for every
row. With ``S_0`` the posterior covariance of all free confusion coordinates (K C (C - 1)) and
the free prevalence coordinates without gold, estimated from its draws, the prediction is

    S(n_gold) = (S_0^{-1} + blockdiag_jy I_jy)^{-1},

and the predicted sd of each entry (dropped ones by ``p_0 = 1 - sum``) comes from ``S``.
Approximations: the posterior is taken as normal in the probabilities (Bernstein–von Mises,
exact in the limit), ``I`` is evaluated at the true confusions (as the binary bench), and
``S_0`` is a Monte Carlo estimate. The full ``S_0`` keeps the correlations between rows and
with the prevalences that the unknown items induce (through the latent class); adding ``I``
to each row's own block of ``S_0`` ignores them; the JSON reports both
(``ratio_to_rowwise_prediction_mean``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from bayescal.bench._io import environment, write_json
from bayescal.errors import ConfigError


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=2000, help="unknown items (default 2000)")
    parser.add_argument(
        "--gold",
        default="0,100,200,400,800,1600",
        help="comma-separated numbers of gold items (default 0,100,200,400,800,1600)",
    )
    parser.add_argument("--seeds", type=int, default=4, help="data sets per level (default 4)")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    parser.add_argument("--tune", type=int, default=400, help="tuning steps (default 400)")
    parser.add_argument(
        "--multiclass",
        action="store_true",
        help="multiclass Dawid-Skene (K = 3, C = 3, accurate and weak annotators) instead of "
        "the binary channels",
    )
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


SCENARIOS = {"three_annotators": (3, 3), "two_annotators": (2, 2)}  # name: (K, score groups)


def _fit_sd(data, args, seed, groups):
    from bayescal import summarize
    from bayescal.bayes import fit_channels_bayes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_channels_bayes(
            summarize(data, groups=groups),
            draws=args.draws,
            tune=args.tune,
            chains=2,
            cores=1,
            random_state=seed,
            posterior_predictive=False,
        )
    return fit.a.values.std(0), fit.b.values.std(0), fit.converged


def _scenario(k, groups, levels, args):
    from bayescal import Annotations
    from bayescal.simulate import simulate_toy
    from bayescal.simulate.toy import TOY_FN, TOY_FP

    # the toy study's channels: the Fisher information is taken at the true rates
    fp, fn = TOY_FP[:k], TOY_FN[:k]
    a, b = np.asarray(fp, dtype=float), 1 - np.asarray(fn, dtype=float)
    rows = {g: {"obs": [], "pred": []} for g in levels}
    converged = True
    for seed in range(args.seeds):
        full = simulate_toy(args.n + max(levels), random_state=seed, fp=fp, fn=fn)
        base = None
        for g in levels:
            gold = np.full(full.n_items, np.nan)
            gold[args.n : args.n + g] = full.truth[args.n : args.n + g]
            keep = np.arange(args.n + g)
            data = Annotations.from_arrays(
                full.score[keep], full.labels[keep], truth=full.truth[keep], gold=gold[keep]
            )
            sd_a, sd_b, ok = _fit_sd(data, args, seed, groups)
            converged &= bool(ok)
            if base is None:
                base = (sd_a, sd_b)
            answered = ~np.isnan(full.labels[args.n : args.n + g])
            y = full.truth[args.n : args.n + g]
            n0 = (answered & (y == 0)[:, None]).sum(axis=0)
            n1 = (answered & (y == 1)[:, None]).sum(axis=0)
            pred_a = 1 / np.sqrt(1 / base[0] ** 2 + n0 / (a * (1 - a)))
            pred_b = 1 / np.sqrt(1 / base[1] ** 2 + n1 / (b * (1 - b)))
            rows[g]["obs"].append(np.concatenate([sd_a, sd_b]))
            rows[g]["pred"].append(np.concatenate([pred_a, pred_b]))
    out = [_level(g, np.array(rows[g]["obs"]), np.array(rows[g]["pred"])) for g in levels]
    return {"annotators": k, "score_groups": groups, "levels": out, "all_converged": converged}


def _level(n_gold, obs, pred) -> dict:
    """Observed vs predicted posterior sds at one number of gold items (over entries and
    seeds): their means and the ratio's mean, minimum and maximum."""
    ratio = obs / pred
    return {
        "n_gold": n_gold,
        "sd_observed_mean": float(obs.mean()),
        "sd_predicted_mean": float(pred.mean()),
        "ratio_observed_to_predicted_mean": float(ratio.mean()),
        "ratio_min": float(ratio.min()),
        "ratio_max": float(ratio.max()),
    }


def _binary_study(args, levels):
    """The binary scenarios: (benchmark name, setup, scenarios)."""
    scenarios = {
        name: _scenario(k, groups, levels, args) for name, (k, groups) in SCENARIOS.items()
    }
    setup = {
        "unknown_items": args.n,
        "model": "grouped",
        "sampler": "nutpie",
        "chains": 2,
        "draws": args.draws,
        "tune": args.tune,
        "seeds": args.seeds,
        "prediction": "sd(n_gold) = 1 / sqrt(1 / sd(0)**2 + n_answered_gold_of_class / "
        "(rate (1 - rate))), the Fisher information of the gold items added",
    }
    return "gold", setup, scenarios


#: name: (diagonal, off-diagonal) of every annotator's confusion rows (K = 3, C = 3)
MULTICLASS_SCENARIOS = {"accurate": (0.8, 0.1), "weak": (0.6, 0.2)}
K, C, MISSING = 3, 3, 0.1


def _free(draws) -> np.ndarray:
    """Free coordinates of each simplex (all entries but class 0): (S, ..., C) -> (S, n_free)."""
    return draws[..., 1:].reshape(draws.shape[0], -1)


def gold_information(t, n_answered) -> np.ndarray:
    """Block-diagonal Fisher information of gold answers on the free confusion coordinates.

    Parameters
    ----------
    t : array-like of shape (K, C, C)
        Confusion rows where the information is evaluated.
    n_answered : array-like of shape (K, C)
        Gold items of class ``y`` answered by annotator ``j``.

    Returns
    -------
    ndarray of shape (K C (C-1), K C (C-1))
        ``n_jy (diag(1 / p_1..p_{C-1}) + 1 / p_0)`` for each row ``p = t[j, y]``, in the
        order of ``t[..., 1:].ravel()``.

    Examples
    --------
    >>> t = np.array([[[0.5, 0.5], [0.2, 0.8]]])  # C = 2: the binomial 1 / (p (1 - p))
    >>> np.diag(gold_information(t, [[4, 10]])).round(3).tolist()
    [16.0, 62.5]
    """
    t = np.asarray(t, dtype=np.float64)
    n = np.asarray(n_answered, dtype=np.float64)
    k, c, _ = t.shape
    m = c - 1
    out = np.zeros((k * c * m, k * c * m))
    for j in range(k):
        for y in range(c):
            p = t[j, y]
            block = n[j, y] * (np.diag(1.0 / p[1:]) + 1.0 / p[0])
            i = (j * c + y) * m
            out[i : i + m, i : i + m] = block
    return out


def predicted_sd(cov0, info, k: int, c: int) -> np.ndarray:
    """Posterior sd (K, C, C) of every confusion entry predicted by adding ``info`` (on the
    confusion coordinates, the first ``K C (C-1)`` of ``cov0``) to the precision ``cov0^-1``.

    Examples
    --------
    >>> cov0 = np.diag([0.04, 0.01])  # one annotator, C = 2; no gold: sd unchanged
    >>> predicted_sd(cov0, np.zeros((2, 2)), 1, 2).round(3).tolist()
    [[[0.2, 0.2], [0.1, 0.1]]]
    """
    prec = np.linalg.inv(cov0)
    n_conf = info.shape[0]
    prec[:n_conf, :n_conf] += info
    cov = np.linalg.inv(prec)[:n_conf, :n_conf]
    m = c - 1
    out = np.empty((k, c, c))
    for j in range(k):
        for y in range(c):
            i = (j * c + y) * m
            block = cov[i : i + m, i : i + m]
            out[j, y, 1:] = np.sqrt(np.diag(block))
            out[j, y, 0] = np.sqrt(block.sum())  # p_0 = 1 - sum of the free entries
    return out


def row_blocks(cov0, k: int, c: int) -> np.ndarray:
    """``cov0`` restricted to the confusion coordinates with the covariances between rows (and
    with the prevalences) set to 0: the prediction that treats each row on its own.

    Examples
    --------
    >>> row_blocks(np.arange(16.0).reshape(4, 4) + 1, 2, 2).tolist()  # two rows, one coordinate
    [[1.0, 0.0, 0.0, 0.0], [0.0, 6.0, 0.0, 0.0], [0.0, 0.0, 11.0, 0.0], [0.0, 0.0, 0.0, 16.0]]
    """
    m = c - 1
    n = k * c * m
    row = np.arange(n) // m
    return np.where(row[:, None] == row[None, :], cov0[:n, :n], 0.0)


def _multiclass_fit(data, args, seed):
    from bayescal.bayes.fit import fit_channels_bayes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_channels_bayes(
            data, draws=args.draws, tune=args.tune, chains=2, cores=1, random_state=seed
        )
    return fit.confusion.values, fit.class_prevalence.values, fit.converged


def _multiclass_scenario(diagonal, off, levels, args):
    from bayescal.data.multiclass import MulticlassAnnotations
    from bayescal.simulate import simulate_multiclass

    t = np.repeat((diagonal * np.eye(C) + off * (1 - np.eye(C)))[None], K, axis=0)
    rows = {g: {"obs": [], "pred": [], "rowwise": []} for g in levels}
    converged = True
    for seed in range(args.seeds):
        full = simulate_multiclass(args.n + max(levels), C, t, random_state=seed, missing=MISSING)
        cov0 = None
        for g in levels:
            keep = slice(0, args.n + g)
            gold = np.full(args.n + g, np.nan)
            gold[args.n :] = full.truth[args.n : args.n + g]
            data = MulticlassAnnotations.from_arrays(
                full.probs[keep], full.labels[keep], truth=full.truth[keep], gold=gold
            )
            conf, prev, ok = _multiclass_fit(data, args, seed)
            converged &= bool(ok)
            if cov0 is None:
                free = np.concatenate([_free(conf), _free(prev)], axis=1)
                cov0 = np.cov(free, rowvar=False, bias=True)  # ddof 0, as std below
            labels = full.labels[args.n : args.n + g]
            y = full.truth[args.n : args.n + g].astype(np.int64)
            answered = np.stack(
                [np.bincount(y[~np.isnan(labels[:, j])], minlength=C) for j in range(K)]
            )
            info = gold_information(t, answered)
            rows[g]["obs"].append(conf.std(axis=0).ravel())
            rows[g]["pred"].append(predicted_sd(cov0, info, K, C).ravel())
            rows[g]["rowwise"].append(predicted_sd(row_blocks(cov0, K, C), info, K, C).ravel())
    out = []
    for g in levels:
        obs = np.array(rows[g]["obs"])
        out.append(
            {
                **_level(g, obs, np.array(rows[g]["pred"])),
                "ratio_to_rowwise_prediction_mean": float(
                    (obs / np.array(rows[g]["rowwise"])).mean()
                ),
                "sd_reduction_observed": float((obs / np.array(rows[levels[0]]["obs"])).mean()),
            }
        )
    return {
        "annotators": K,
        "classes": C,
        "confusion_diagonal": diagonal,
        "confusion_off_diagonal": off,
        "levels": out,
        "all_converged": converged,
    }


def multiclass_study(args, levels):
    """The multiclass scenarios at ``levels`` gold items: (benchmark name, setup, scenarios),
    written by :func:`run`."""
    scenarios = {
        name: _multiclass_scenario(diag, off, levels, args)
        for name, (diag, off) in MULTICLASS_SCENARIOS.items()
    }
    setup = {
        "unknown_items": args.n,
        "missing_answers": MISSING,
        "model": "bayes_multiclass (prevalence per predicted class)",
        "sampler": "nutpie",
        "chains": 2,
        "draws": args.draws,
        "tune": args.tune,
        "seeds": args.seeds,
        "prediction": "S(n_gold) = (S_0^-1 + blockdiag n_jy (diag(1/p_free) + 1/p_0))^-1 "
        "on the free confusion and prevalence coordinates, S_0 the posterior covariance "
        "without gold (from its draws), Fisher information at the true confusions; sd of "
        "each entry from S",
        "ratio": "observed / predicted sd per confusion entry; mean, min, max over "
        "entries and seeds",
        "rowwise": "the same prediction with S_0 cut to each confusion row's own block "
        "(correlations between rows and with the prevalences neglected)",
        "sd_reduction_observed": "observed sd with n_gold / observed sd without gold, "
        "mean over entries and seeds",
    }
    return "gold_multiclass", setup, scenarios


def run(args) -> int:
    levels = [int(x) for x in str(args.gold).split(",")]
    if levels[0] != 0 or any(x < 0 for x in levels):
        raise ConfigError(
            f"--gold must start with 0 (the baseline) and hold counts >= 0; got {args.gold!r}."
        )
    started = time.perf_counter()
    study = multiclass_study if args.multiclass else _binary_study
    name, setup, scenarios = study(args, levels)
    result = {
        "benchmark": name,
        "setup": setup,
        "scenarios": scenarios,
        "seconds": time.perf_counter() - started,
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
