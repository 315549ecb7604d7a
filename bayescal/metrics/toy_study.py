"""One replicate of Hanada & Futami's toy study (Sec. 6.1), on plain arrays.

The ``bayescal bench toy`` benchmark repeats :func:`toy_replicate` thousands
of times; notebooks call it for a quick version of the same figure.
"""

from __future__ import annotations

import numpy as np

from bayescal._random import seed_from
from bayescal._typing import RandomState
from bayescal.channels.em import FALLBACK, em_fit_counts
from bayescal.errors import FitError
from bayescal.metrics.binned import (
    corrected_pattern_targets,
    majority_vote_targets,
    soft_vote_targets,
)
from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy
from bayescal.summaries.partition import assign

__all__ = ["toy_replicate", "TOY_METHODS", "TOY_MODES"]

#: Estimators compared: clean-label ECE, soft vote, majority vote, NC-ECE with the
#: given rates and with rates from joint score-bin EM.
TOY_METHODS = ("clean", "soft_vote", "majority_vote", "nc_given", "nc_em")

#: Sample-use modes (Hanada & Futami, Sec. 3 and App. C.4).
TOY_MODES = ("split", "reuse", "crossfit")


def _dense_patterns(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every item's code ``sum_j s_j 3**j`` (state 0, 1, 2 = missing) and the states of all
    3**K codes: the toy study has K = 3, so its 27 cells are counted densely."""
    k = labels.shape[1]
    power = 3 ** np.arange(k, dtype=np.int64)
    state = np.where(np.isnan(labels), 2, labels == 1).astype(np.int64)
    states = (np.arange(3**k, dtype=np.int64)[:, None] // power[None, :]) % 3
    return state @ power, states.astype(np.int8)


def toy_replicate(condition: str, n: int, random_state: RandomState, folds: int = 5) -> dict:
    """Every ECE estimator and sample-use mode on one simulated toy dataset.

    Hanada & Futami, Sec. 6.1 (toy data; App. G.2): clean-label, soft-vote,
    majority-vote and noise-corrected ECE with the given rates and with rates
    from joint score-bin EM, under split / reuse / cross-fit (App. C.4), on
    five equal-width channel groups and ten equal-width bins.

    Uses the same numeric kernels as the public API (EM on pattern counts,
    corrected pattern targets) on plain arrays: 3000 datasets
    per study make labelled-object overhead the dominant cost otherwise.
    ``tests/bench/test_toy.py`` checks one repetition against the public API.

    Parameters
    ----------
    condition : {"calibrated", "shifted", "nonlinear"}
    n : int
        Items.
    random_state : None, int or Generator
        Seeds the simulation and the EM starts (the benchmark passes consecutive ints).
    folds : int, default 5
        Cross-fitting folds.

    Returns
    -------
    dict
        ``"ece"``: ``{(method, mode): value}`` for methods
        :data:`TOY_METHODS` and modes :data:`TOY_MODES`; ``"failures"``: EM
        failures (replaced by Hanada & Futami's fixed fallback) per mode.

    Examples
    --------
    >>> r = toy_replicate("shifted", 1000, 0)
    >>> sorted(r["failures"]), len(r["ece"])
    (['crossfit', 'reuse', 'split'], 15)
    """
    seed = seed_from(random_state)
    data = simulate_toy(n, condition, random_state=seed)
    z, y = data.score, data.truth.astype(np.float64)
    k, n_groups, n_bins = 3, 5, 10
    P = 3**k
    pat, states = _dense_patterns(data.labels)
    g = assign(z, np.linspace(0, 1, n_groups + 1))
    b = assign(z, np.linspace(0, 1, n_bins + 1))
    mid = (np.arange(n_groups) + 0.5) / n_groups
    known_a, known_b = np.array(TOY_FP)[None], 1 - np.array(TOY_FN)[None]
    w_eq = np.full((1, k), 1.0 / k)

    def counts(sel):
        gc = np.bincount(g[sel] * P + pat[sel], minlength=n_groups * P).reshape(n_groups, P)
        bc = np.bincount(b[sel] * P + pat[sel], minlength=n_bins * P).reshape(n_bins, P)
        zs = np.bincount(b[sel], weights=z[sel], minlength=n_bins)
        ys = np.bincount(b[sel], weights=y[sel], minlength=n_bins)
        return gc, bc, zs, ys

    failures = {"split": 0, "reuse": 0, "crossfit": 0}

    def em(gc, mode):
        nonempty = gc.sum(axis=1) > 0
        try:
            if not nonempty.all():
                raise FitError("empty group")
            r = em_fit_counts(gc, states=states, group_mid=mid, random_state=seed)
            return r["a"][None], r["b"][None]
        except FitError:
            failures[mode] += 1
            return np.full((1, k), FALLBACK["a"]), np.full((1, k), FALLBACK["b"])

    def moments(bc, zs, nn, targets):
        return (np.atleast_2d(targets) @ bc.T - zs) / nn

    soft_t, maj_t = soft_vote_targets(states), majority_vote_targets(states)
    idx = np.arange(n)
    half = n // 2
    parts = {"first": idx[:half], "second": idx[half:], "all": idx}
    c = {name: counts(sel) for name, sel in parts.items()}
    fold_idx = np.array_split(idx, folds)
    fold_c = [counts(sel) for sel in fold_idx]
    out = {}
    for mode, key in (("split", "second"), ("reuse", "all"), ("crossfit", "all")):
        gc, bc, zs, ys = c[key]
        nn = bc.sum()
        out[("clean", mode)] = float(np.abs(ys - zs).sum() / nn)
        out[("soft_vote", mode)] = float(np.abs(moments(bc, zs, nn, soft_t)).sum())
        out[("majority_vote", mode)] = float(np.abs(moments(bc, zs, nn, maj_t)).sum())
        u_known = corrected_pattern_targets(states, known_a, known_b, w_eq)
        out[("nc_given", mode)] = float(np.abs(moments(bc, zs, nn, u_known)).sum())
    a_s, b_s = em(c["first"][0], "split")
    gc, bc, zs, _ = c["second"]
    out[("nc_em", "split")] = float(
        np.abs(moments(bc, zs, bc.sum(), corrected_pattern_targets(states, a_s, b_s, w_eq))).sum()
    )
    a_r, b_r = em(c["all"][0], "reuse")
    gc, bc, zs, _ = c["all"]
    out[("nc_em", "reuse")] = float(
        np.abs(moments(bc, zs, n, corrected_pattern_targets(states, a_r, b_r, w_eq))).sum()
    )
    pooled = np.zeros((1, n_bins))
    for gcf, bcf, zsf, _ in fold_c:
        a_f, b_f = em(c["all"][0] - gcf, "crossfit")
        # moments of the fold, weighted n_k / n, i.e. summed over the fold and divided by n
        pooled += moments(bcf, zsf, n, corrected_pattern_targets(states, a_f, b_f, w_eq))
    out[("nc_em", "crossfit")] = float(np.abs(pooled).sum())
    return {"ece": out, "failures": failures}
