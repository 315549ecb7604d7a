"""``bayescal bench gold --multiclass``: confusion posterior width against the number of gold
items, multiclass Dawid–Skene (issue 15; ``models/gold.md``, "Multiclass track").

Two scenarios with K = 3 annotators and C = 3 classes: accurate annotators (every confusion
row 0.8 on the diagonal, 0.1 off it) and weak ones (0.6 / 0.2). Each has ``--n`` unknown items
(``simulate_multiclass``, 10% missing answers) plus ``n_gold`` further items of the same
population marked gold (their class known), for each ``n_gold`` in ``--gold``, fitted with
:func:`~bayescal.bayes.multiclass_fit.fit_multiclass_channels_bayes` (nutpie, 2 chains,
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

import warnings

import numpy as np

#: name: (diagonal, off-diagonal) of every annotator's confusion rows (K = 3, C = 3)
SCENARIOS = {"accurate": (0.8, 0.1), "weak": (0.6, 0.2)}
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


def _fit(data, args, seed):
    from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_multiclass_channels_bayes(
            data, draws=args.draws, tune=args.tune, chains=2, cores=1, random_state=seed
        )
    return fit.confusion.values, fit.class_prevalence.values, fit.converged


def _scenario(diagonal, off, levels, args):
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
            conf, prev, ok = _fit(data, args, seed)
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
        obs, pred = np.array(rows[g]["obs"]), np.array(rows[g]["pred"])
        ratio = obs / pred
        rowwise = obs / np.array(rows[g]["rowwise"])
        out.append(
            {
                "n_gold": g,
                "sd_observed_mean": float(obs.mean()),
                "sd_predicted_mean": float(pred.mean()),
                "ratio_observed_to_predicted_mean": float(ratio.mean()),
                "ratio_min": float(ratio.min()),
                "ratio_max": float(ratio.max()),
                "ratio_to_rowwise_prediction_mean": float(rowwise.mean()),
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
    written by :func:`bayescal.bench.gold.run`."""
    scenarios = {
        name: _scenario(diag, off, levels, args) for name, (diag, off) in SCENARIOS.items()
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
