"""Simulated binary data with gold items and known channels (shared by the knowledge tests)."""

import numpy as np

from bayescal import Annotations


def gold_data(n, a, b, *, mu=0.3, n_gold=0, missing=0.2, seed=0, gold_classes=(0, 1)):
    """Items with ``Y ~ Bernoulli(mu)`` (score-independent prevalence unless noted), answers
    Bernoulli(a_j) / Bernoulli(b_j) given Y, ``missing`` answers dropped at random (at least
    one kept per item), ``n_gold`` random items of the classes in ``gold_classes`` marked gold.

    Returns (Annotations, truth).
    """
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a, float), np.asarray(b, float)
    k = a.size
    z = rng.random(n)
    y = (rng.random(n) < mu).astype(int)
    lab = np.where(y[:, None] == 1, rng.random((n, k)) < b, rng.random((n, k)) < a).astype(float)
    drop = rng.random((n, k)) < missing
    drop[np.arange(n), rng.integers(0, k, n)] = False  # every item keeps one answer
    lab[drop] = np.nan
    gold = np.full(n, np.nan)
    eligible = np.flatnonzero(np.isin(y, gold_classes))
    chosen = rng.choice(eligible, size=n_gold, replace=False)
    gold[chosen] = y[chosen]
    return Annotations.from_arrays(z, lab, gold=gold, truth=y), y
