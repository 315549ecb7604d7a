"""Items on the boundary between two classes: ambiguity of another kind (SPEC §3).

:func:`~bayescal.simulate.ambiguous.simulate_ambiguous_multiclass` spreads every
item's answer distribution around its class's row (exchangeable annotators). Here
most items are clear, and a share of them genuinely sits between their class ``y``
and a second class ``y'``: each answer to such an item is given as if the item were
``y`` with probability ``lambda_i`` and ``y'`` otherwise (``lambda_i ~ Beta(a, b)``,
drawn once per item), and then passes through the annotator's own confusion row,
``A_ij ~ T_j[z_ij, :]``. Answers to a boundary item are correlated beyond its class
through the shared ``lambda_i``; the annotators keep their individual confusions.
``share = 0`` is the noise model.
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate._checks import check_n_items
from bayescal.simulate.multiclass import multiclass_population, simulate_multiclass

__all__ = ["simulate_boundary_items"]


def simulate_boundary_items(
    n,
    classes=3,
    *,
    n_annotators: int = 3,
    share: float = 0.5,
    mix=(2.0, 2.0),
    random_state=None,
    **population_options,
) -> Annotations:
    """Items of which a share lies between two classes (module docstring).

    Parameters
    ----------
    n : int
        Number of items.
    classes : int or sequence of str, default 3
    n_annotators : int, default 3
    share : float in [0, 1], default 0.5
        Share of boundary items; their second class is uniform among the others.
    mix : (float, float), default (2, 2)
        Beta parameters of ``lambda_i``, the weight of the item's own class.
    random_state : None, int or Generator
        Randomness of the items (the population has its own fixed seed).
    **population_options
        Passed to :func:`~bayescal.simulate.multiclass.multiclass_population`
        (``confusions``, ``missing``, ``temperature``, ...).

    Returns
    -------
    Annotations
        With ``truth`` (each item's own class ``y``).

    Examples
    --------
    >>> d = simulate_boundary_items(500, 4, n_annotators=5, random_state=0)
    >>> d.n_items, d.n_classes, d.n_annotators
    (500, 4, 5)
    """
    n = check_n_items(n)
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"share must be in [0, 1]; got {share!r}.")
    a, b = (float(x) for x in mix)
    if not (a > 0 and b > 0):
        raise ConfigError(f"mix must be two positive Beta parameters; got {mix!r}.")
    pop = multiclass_population(classes, n_annotators=n_annotators, **population_options)
    rng = check_random_state(random_state)
    base = simulate_multiclass(n, population=pop, random_state=rng)
    c, k = pop.n_classes, pop.n_annotators
    y = np.asarray(base.truth, dtype=np.int64)
    boundary = rng.random(n) < share
    other = (y + rng.integers(1, c, size=n)) % c
    lam = np.where(boundary, rng.beta(a, b, size=n), 1.0)
    z = np.where(rng.random((n, k)) < lam[:, None], y[:, None], other[:, None])  # (n, K)
    cum = np.cumsum(pop.confusion, axis=2)
    cum[:, :, -1] = 1.0
    u = rng.random((n, k))
    labels = np.empty((n, k))
    for j in range(k):
        labels[:, j] = np.minimum((u[:, j, None] > cum[j, z[:, j]]).sum(axis=1), c - 1)
    labels[np.isnan(base.labels)] = np.nan  # the population's missingness, kept
    return Annotations.from_arrays(
        base.probs, labels, truth=y, annotators=pop.annotators, classes=pop.classes
    )
