"""Multiclass items whose answers are ambiguous rather than noisy (the other view of SPEC §3).

Under the noise view every item of true class ``y`` is answered through the same
confusion row ``T[y, :]``. Here each item has its own answer distribution
``pi_i ~ Dirichlet(concentration * T[y_i, :])`` (mean ``T[y_i, :]``, so the answer
rates per class match the noise population) and its annotators answer
independently from ``pi_i``: answers to one item are correlated beyond the class,
with intra-item correlation ``1 / (concentration + 1)`` per class indicator. Large
``concentration`` approaches the noise model. Used to measure the
noise-or-ambiguity check (:mod:`bayescal.metrics.noise_or_ambiguity`).
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate.multiclass import multiclass_population, simulate_multiclass

__all__ = ["simulate_ambiguous_multiclass"]


def simulate_ambiguous_multiclass(
    n,
    classes=3,
    *,
    n_annotators: int = 3,
    concentration: float = 10.0,
    random_state=None,
    **population_options,
) -> Annotations:
    """Items with item-specific answer distributions around the confusion rows.

    Parameters
    ----------
    n : int
        Number of items.
    classes : int or sequence of str, default 3
    n_annotators : int, default 3
        Exchangeable annotators (answers per item).
    concentration : float, default 10
        ``pi_i ~ Dirichlet(concentration * T[y_i])`` with ``T`` the mean of the
        population's default confusions; intra-item correlation ``1 / (concentration + 1)``.
    random_state : None, int or Generator
    **population_options
        Passed to :func:`~bayescal.simulate.multiclass.multiclass_population`
        (``temperature``, ``separation``, ``n_profiles``, ...).

    Returns
    -------
    Annotations
        With ``truth`` (the class ``y_i`` whose row ``pi_i`` is drawn around).

    Examples
    --------
    >>> d = simulate_ambiguous_multiclass(500, 3, n_annotators=5, random_state=0)
    >>> d.n_items, d.n_annotators
    (500, 5)
    """
    if not (np.isfinite(concentration) and concentration > 0):
        raise ConfigError(f"concentration must be a positive number; got {concentration!r}.")
    pop = multiclass_population(classes, n_annotators=n_annotators, **population_options)
    rng = check_random_state(random_state)
    base = simulate_multiclass(n, population=pop, random_state=rng)
    t = pop.confusion.mean(axis=0)
    c = t.shape[0]
    pi = np.empty((n, c))
    for y in range(c):
        rows = np.flatnonzero(base.truth == y)
        pi[rows] = rng.dirichlet(concentration * t[y], size=rows.size)
    u = rng.random((n, n_annotators, 1))
    answers = np.minimum((u > np.cumsum(pi, axis=1)[:, None, :]).sum(axis=2), c - 1)
    return Annotations.from_arrays(
        base.probs,
        answers.astype(np.float64),
        truth=base.truth,
        annotators=pop.annotators,
        classes=pop.classes,
    )
