"""Calibration metrics against annotator distributions (Tao et al., SPEC §2).

All metrics take predicted probabilities ``proba`` of shape (n_items, n_classes)
and annotator ``targets`` (counts or distributions of the same shape, or voted
labels of shape (n_items,)). Binned metrics return an :class:`xarray.Dataset`
whose scalar ``ece`` is the metric and whose per-bin arrays (dim ``bin``) feed
reliability diagrams; proper scores return floats. Values are fractions (the
benchmark reports percent).

Definitions (top class ``c = argmax_k p_k``, confidence ``p_c``; a draw
``y~ ~ pi`` gives the correctness indicator ``1(y~ = c)``):

- ``ece_true``: mean over ``S`` draws of the 15-bin equal-width top-label ECE
  ``sum_b |sum_{i in b} (1(y~_i = c_i) - p_{c_i})| / n`` (empty bins add zero).
- ``aece``: the same with equal-mass bins.
- ``ece_plugin``: bin accuracy is the mean of ``pi_c`` instead of sampled
  indicators (no sampling noise). By Jensen ``ece_plugin <= E[ece_true]``;
  they meet as bins fill.
- ``ece_voted``: ordinary ECE against the voted label ``y* = argmax pi``.
- ``cwece``: mean over classes ``k`` of the binned error of ``p_k`` against
  ``1(y~ = k)``, averaged over draws.
- ``brier``: Tao et al.'s Eq. 5, ``mean_i sum_k (p_ik - pi_ik)^2`` (distance to the
  annotator distribution; zero for a perfect prediction of ``pi``).
- ``brier_sampled``: the Brier score against a label drawn from the annotator
  distribution, ``mean_i E_{y~ ~ pi_i} ||p_i - e_y~||^2``, computed exactly as
  ``brier + mean_i (1 - ||pi_i||^2)``; its floor is the annotators' own
  disagreement, and it is on the scale of Tao et al.'s published Brier columns.
- ``nll = mean_i -sum_k pi_ik log p_ik``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescal.ambiguity.targets import _sample_kernel
from bayescal.ambiguity.validation import check_proba, check_random_state, check_targets
from bayescal.dims import BIN, CLASS, DRAW
from bayescal.errors import ConfigError

__all__ = [
    "ece_true",
    "aece",
    "ece_plugin",
    "ece_voted",
    "cwece",
    "brier",
    "brier_sampled",
    "nll",
    "accuracy",
    "evaluate",
    "pointwise_error",
]

# Smallest probability used inside the log of the NLL: a hard zero on a class the
# annotators chose costs log(1e300) ~ 691 nats per unit of target mass instead of inf.
NLL_FLOOR = 1e-300


def _inputs(proba, targets):
    p = check_proba(proba)
    pi = check_targets(targets, n_items=p.shape[0], n_classes=p.shape[1])
    return p, pi


def _check_bins(n_bins) -> int:
    b = int(n_bins)
    if b < 1 or b != n_bins:
        raise ConfigError(f"n_bins must be a positive integer, got {n_bins!r}.")
    return b


def _check_draws(n_draws) -> int:
    s = int(n_draws)
    if s < 1 or s != n_draws:
        raise ConfigError(f"n_draws must be a positive integer, got {n_draws!r}.")
    return s


def _bin_index(conf: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    if binning == "width":
        # Same rule as the binary track: searchsorted(edges, z, "right") - 1,
        # the last bin closed on the right.
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        return np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, n_bins - 1)
    if binning == "mass":
        # Equal-mass bins by rank: item of rank r (0-based, stable sort) goes to
        # floor(r * B / n). Tied confidences can straddle a border; with n >= B
        # every bin holds floor(n/B) or ceil(n/B) items.
        n = conf.shape[0]
        order = np.argsort(conf, kind="stable")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        return (rank * n_bins) // n
    raise ConfigError(f"binning must be 'width' or 'mass', got {binning!r}.")


def _binned_kernel(conf, hits, bins, n_bins):
    """Signed per-bin sums for every draw.

    conf : (n,), hits : (n, S) in [0, 1], bins : (n,) -> (count[B], conf_sum[B],
    hit_sum[B, S]) with one bincount over the flattened (draw, bin) index.
    """
    n, s = hits.shape
    count = np.bincount(bins, minlength=n_bins).astype(np.float64)
    conf_sum = np.bincount(bins, weights=conf, minlength=n_bins)
    flat = (np.arange(s)[None, :] * n_bins + bins[:, None]).ravel()
    hit_sum = np.bincount(flat, weights=hits.ravel(), minlength=n_bins * s).reshape(s, n_bins).T
    return count, conf_sum, hit_sum


def _binned_dataset(conf, hits, bins, n_bins, *, binning, estimator, n_items):
    count, conf_sum, hit_sum = _binned_kernel(conf, hits, bins, n_bins)
    per_draw = np.abs(hit_sum - conf_sum[:, None]).sum(axis=0) / n_items
    s = hits.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(count > 0, conf_sum / np.maximum(count, 1), np.nan)
        mean_acc = np.where(count > 0, hit_sum.sum(axis=1) / np.maximum(count * s, 1), np.nan)
    if binning == "width":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        lower, upper = edges[:-1], edges[1:]
    else:
        lo = np.full(n_bins, np.inf)
        hi = np.full(n_bins, -np.inf)
        np.minimum.at(lo, bins, conf)
        np.maximum.at(hi, bins, conf)
        lower = np.where(count > 0, lo, np.nan)
        upper = np.where(count > 0, hi, np.nan)
    ds = xr.Dataset(
        {
            "ece": ((), float(per_draw.mean())),
            "ece_draw": ((DRAW,), per_draw),
            "count": ((BIN,), count.astype(np.int64)),
            "confidence": ((BIN,), mean_conf),
            "accuracy": ((BIN,), mean_acc),
            "gap": ((BIN,), mean_acc - mean_conf),
        },
        coords={
            BIN: np.arange(n_bins),
            DRAW: np.arange(s),
            "bin_lower": ((BIN,), lower),
            "bin_upper": ((BIN,), upper),
        },
        attrs={
            "n_bins": n_bins,
            "n_draws": s,
            "binning": binning,
            "estimator": estimator,
            "n_items": n_items,
        },
    )
    return ds


def _top(p):
    c = p.argmax(axis=1)
    return c, p[np.arange(p.shape[0]), c]


def ece_true(
    proba, targets, *, n_bins: int = 15, n_draws: int = 100, binning: str = "width", random_state=0
) -> xr.Dataset:
    """True-label ECE: top-label ECE averaged over labels drawn from the annotator distribution.

    Parameters
    ----------
    proba : array-like of shape (n_items, n_classes)
        Predicted probabilities (rows on the simplex).
    targets : array-like of shape (n_items, n_classes) or (n_items,)
        Annotator counts or distributions ``pi``; integer labels mean one-hot.
    n_bins : int, default 15
    n_draws : int, default 100
        Label draws ``S``; the correctness indicator of draw ``s`` is Bernoulli(``pi_c``),
        which is exactly the law of ``1(y~ = c)`` for ``y~ ~ pi``.
    binning : {"width", "mass"}, default "width"
        Equal-width bins on [0, 1] or equal-mass bins (see :func:`aece`).
    random_state : int or numpy.random.Generator, default 0

    Returns
    -------
    xarray.Dataset
        ``ece`` (scalar), ``ece_draw[draw]``, and per bin ``count``, mean
        ``confidence``, mean ``accuracy`` over draws, ``gap = accuracy - confidence``,
        coords ``bin_lower``, ``bin_upper``.

    Examples
    --------
    >>> p = [[0.9, 0.1], [0.6, 0.4]]
    >>> float(ece_true(p, [[1, 0], [0, 1]], n_draws=5).ece)  # one-hot: ordinary ECE
    0.35
    """
    p, pi = _inputs(proba, targets)
    b, s = _check_bins(n_bins), _check_draws(n_draws)
    rng = check_random_state(random_state)
    c, conf = _top(p)
    pc = pi[np.arange(p.shape[0]), c]
    hits = (rng.random((p.shape[0], s)) < pc[:, None]).astype(np.float64)
    bins = _bin_index(conf, b, binning)
    return _binned_dataset(
        conf, hits, bins, b, binning=binning, estimator="sampled", n_items=p.shape[0]
    )


def aece(proba, targets, *, n_bins: int = 15, n_draws: int = 100, random_state=0) -> xr.Dataset:
    """Adaptive (equal-mass) true-label ECE; :func:`ece_true` with ``binning="mass"``.

    Examples
    --------
    >>> round(float(aece([[0.9, 0.1], [0.6, 0.4]], [[1, 0], [1, 0]], n_bins=2).ece), 3)
    0.25
    """
    return ece_true(
        proba, targets, n_bins=n_bins, n_draws=n_draws, binning="mass", random_state=random_state
    )


def ece_plugin(proba, targets, *, n_bins: int = 15, binning: str = "width") -> xr.Dataset:
    """Plug-in true-label ECE: bin accuracy is the mean of ``pi_c`` (no sampling).

    Never above the expected sampled ECE (Jensen), approaching it as bins fill.

    Examples
    --------
    >>> round(float(ece_plugin([[0.8, 0.2]], [[3, 1]]).ece), 6)
    0.05
    """
    p, pi = _inputs(proba, targets)
    b = _check_bins(n_bins)
    c, conf = _top(p)
    pc = pi[np.arange(p.shape[0]), c]
    bins = _bin_index(conf, b, binning)
    return _binned_dataset(
        conf, pc[:, None], bins, b, binning=binning, estimator="plugin", n_items=p.shape[0]
    )


def ece_voted(proba, targets, *, n_bins: int = 15, binning: str = "width") -> xr.Dataset:
    """Ordinary top-label ECE against the voted label ``argmax pi`` (ties: lowest index).

    Examples
    --------
    >>> float(ece_voted([[0.9, 0.1], [0.6, 0.4]], [0, 1]).ece)
    0.35
    """
    p, pi = _inputs(proba, targets)
    b = _check_bins(n_bins)
    c, conf = _top(p)
    hits = (c == pi.argmax(axis=1)).astype(np.float64)[:, None]
    bins = _bin_index(conf, b, binning)
    return _binned_dataset(
        conf, hits, bins, b, binning=binning, estimator="voted", n_items=p.shape[0]
    )


def cwece(proba, targets, *, n_bins: int = 15, n_draws: int = 100, random_state=0) -> xr.Dataset:
    """Class-wise true-label ECE averaged over classes and label draws.

    For class ``k`` the error is ``sum_b |sum_{i: p_ik in b} (1(y~_i = k) - p_ik)| / n``
    with 15 equal-width bins on ``p_k``; the metric is its mean over classes,
    then over ``S`` draws ``y~ ~ pi``.

    Returns
    -------
    xarray.Dataset
        ``ece`` (scalar), ``class_ece[class]`` (mean over draws), ``ece_draw[draw]``.

    Examples
    --------
    >>> float(cwece([[1.0, 0.0]], [0]).ece)
    0.0
    """
    p, pi = _inputs(proba, targets)
    b, s = _check_bins(n_bins), _check_draws(n_draws)
    rng = check_random_state(random_state)
    n, k = p.shape
    bins = _bin_index(p.ravel(), b, "width").reshape(n, k)
    # Expected part: sum of p_ik over items in class-bin (k, b).
    cls_bin = np.arange(k)[None, :] * b + bins
    p_sum = np.bincount(cls_bin.ravel(), weights=p.ravel(), minlength=k * b)
    # Sampled part: item i with label y in draw s adds 1 to (s, y, bin[i, y]).
    y = _sample_kernel(pi, s, rng)
    yb = bins[np.arange(n)[:, None], y]
    flat = (np.arange(s)[None, :] * (k * b) + y * b + yb).ravel()
    h_sum = np.bincount(flat, minlength=s * k * b).reshape(s, k * b)
    per = np.abs(h_sum - p_sum[None, :]).reshape(s, k, b).sum(axis=2) / n
    return xr.Dataset(
        {
            "ece": ((), float(per.mean())),
            "class_ece": ((CLASS,), per.mean(axis=0)),
            "ece_draw": ((DRAW,), per.mean(axis=1)),
        },
        coords={CLASS: np.arange(k), DRAW: np.arange(s)},
        attrs={"n_bins": b, "n_draws": s, "binning": "width", "n_items": n},
    )


def brier(proba, targets) -> float:
    """Brier score against the annotator distribution (Tao et al., Eq. 5).

    ``mean_i sum_k (p_ik - pi_ik)^2``: the squared distance of the prediction
    to the annotator distribution ``pi``; zero when ``p = pi``. Compare
    :func:`brier_sampled`, the form on the scale of Tao et al.'s tables.

    Parameters
    ----------
    proba : array-like of shape (n_items, n_classes)
    targets : array-like of shape (n_items, n_classes) or (n_items,)
        Annotator counts or distributions; integer labels mean one-hot.

    Returns
    -------
    float

    Examples
    --------
    >>> brier([[0.5, 0.5]], [[1, 0]])
    0.5
    >>> brier([[0.75, 0.25]], [[3, 1]])  # p equals pi
    0.0
    """
    p, pi = _inputs(proba, targets)
    return float(((p - pi) ** 2).sum(axis=1).mean())


def brier_sampled(proba, targets) -> float:
    """Brier score against a label drawn from the annotator distribution (exact expectation).

    ``mean_i E_{y~ ~ pi_i} ||p_i - e_y~||^2 = brier(p, pi) + mean_i (1 - ||pi_i||^2)``
    (expand the square: ``E e_y~ = pi`` and ``||e_y~||^2 = 1``). The second
    term is the annotators' own disagreement, so even ``p = pi`` scores
    ``1 - ||pi||^2``; this is the scale of the Brier columns in Tao et al.'s
    tables, whose text defines Brier by Eq. 5 (:func:`brier`). No labels are
    sampled: the expectation is exact.

    Parameters
    ----------
    proba : array-like of shape (n_items, n_classes)
    targets : array-like of shape (n_items, n_classes) or (n_items,)
        Annotator counts or distributions; integer labels mean one-hot (then
        both forms agree).

    Returns
    -------
    float

    Examples
    --------
    >>> brier_sampled([[0.75, 0.25]], [[3, 1]])  # p = pi: only the disagreement 1 - 0.625
    0.375
    >>> brier_sampled([[0.5, 0.5]], [0]) == brier([[0.5, 0.5]], [0])
    True
    """
    p, pi = _inputs(proba, targets)
    return float((((p - pi) ** 2).sum(axis=1) + 1.0 - (pi**2).sum(axis=1)).mean())


def nll(proba, targets) -> float:
    """Cross-entropy ``mean_i -sum_k pi_ik log p_ik`` against the annotator distribution.

    Probabilities below ``NLL_FLOOR`` (1e-300) are raised to it, so a hard zero
    on a class the annotators chose gives a large finite penalty.

    Examples
    --------
    >>> round(nll([[0.5, 0.5]], [[3, 1]]), 4)
    0.6931
    """
    p, pi = _inputs(proba, targets)
    return float(-(pi * np.log(np.maximum(p, NLL_FLOOR))).sum(axis=1).mean())


def accuracy(proba, targets) -> float:
    """Share of items whose top class equals the voted label.

    Examples
    --------
    >>> accuracy([[0.9, 0.1], [0.3, 0.7]], [[5, 1], [4, 2]])
    0.5
    """
    p, pi = _inputs(proba, targets)
    return float((p.argmax(axis=1) == pi.argmax(axis=1)).mean())


def pointwise_error(proba, targets) -> np.ndarray:
    """Per-item true-label error ``|p_c - pi_c|`` of shape (n_items,) (Prop. 2)."""
    p, pi = _inputs(proba, targets)
    c, conf = _top(p)
    return np.abs(conf - pi[np.arange(p.shape[0]), c])


def evaluate(
    proba, targets, *, n_bins: int = 15, n_draws: int = 100, random_state=0
) -> dict[str, float]:
    """All metrics of Table 2 at once, as fractions.

    Returns
    -------
    dict
        ``ece_true``, ``aece``, ``cwece``, ``ece_plugin``, ``ece_voted``,
        ``brier`` (Eq. 5), ``brier_sampled``, ``nll``, ``accuracy``. The three
        sampled metrics use independent streams spawned from ``random_state``
        (the first three children of its seed sequence, in that order).

    Examples
    --------
    >>> sorted(evaluate([[0.9, 0.1], [0.2, 0.8]], [[9, 1], [1, 4]], n_draws=10))[:3]
    ['accuracy', 'aece', 'brier']
    """
    rng = check_random_state(random_state)
    r1, r2, r3 = rng.spawn(3)
    return {
        "ece_true": float(
            ece_true(proba, targets, n_bins=n_bins, n_draws=n_draws, random_state=r1).ece
        ),
        "aece": float(aece(proba, targets, n_bins=n_bins, n_draws=n_draws, random_state=r2).ece),
        "cwece": float(cwece(proba, targets, n_bins=n_bins, n_draws=n_draws, random_state=r3).ece),
        "ece_plugin": float(ece_plugin(proba, targets, n_bins=n_bins).ece),
        "ece_voted": float(ece_voted(proba, targets, n_bins=n_bins).ece),
        "brier": brier(proba, targets),
        "brier_sampled": brier_sampled(proba, targets),
        "nll": nll(proba, targets),
        "accuracy": accuracy(proba, targets),
    }
