"""Forward simulation of gold items, for simulation-based calibration and predictive checks.

Gold items enter the channel models through ``P(pattern | Y = y)`` at their known
class (:mod:`bayescal.bayes.models`). Replicated gold data keep the observed design:
how many gold items of each class show each missingness mask; their answers are
drawn from the channels (Hanada & Futami's class-conditional noise, SPEC §1).
"""

from __future__ import annotations

import numpy as np

from bayescal.bayes.models import ChannelModelSpec, require_complete

__all__ = ["sample_gold_counts"]


def sample_gold_counts(spec: ChannelModelSpec, a, b, rng) -> np.ndarray:
    """Replicated gold counts (S, 2, P) with the observed gold totals per class and mask.

    Parameters
    ----------
    spec : ChannelModelSpec
    a, b : array-like of shape (S, K)
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (S, 2, P)

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations, summarize
    >>> from bayescal.bayes.models import make_spec
    >>> data = Annotations.from_arrays(
    ...     [0.1, 0.5, 0.9, 0.3], [[0, 1], [1, 1], [0, 0], [1, np.nan]], gold=[0, 1, 0, np.nan])
    >>> spec = make_spec(summarize(data, groups=1), "marginal")
    >>> rep = sample_gold_counts(spec, [[0.1, 0.2]], [[0.9, 0.8]], np.random.default_rng(0))
    >>> rep.shape, rep.sum(axis=2).tolist()
    ((1, 2, 6), [[2, 1]])
    """
    require_complete(spec, "replicated gold counts")
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    assert spec.gold is not None  # __post_init__ fills it
    one = (spec.states == 1).astype(np.float64)
    zero = (spec.states == 0).astype(np.float64)
    out = np.zeros((a.shape[0], 2, spec.states.shape[0]), dtype=np.int64)
    for y, rate in ((0, a), (1, b)):
        # log P(pattern | Y = y): (S, P); each mask's patterns sum to one
        logp = np.log(rate) @ one.T + np.log1p(-rate) @ zero.T
        for m in range(int(spec.mask_id.max()) + 1):
            cells = np.flatnonzero(spec.mask_id == m)
            n = int(spec.gold[y, cells].sum())
            if n == 0:
                continue
            p = np.exp(logp[:, cells])
            out[:, y, cells] = rng.multinomial(n, p / p.sum(axis=1, keepdims=True))
    return out
