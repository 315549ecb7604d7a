"""Per-item fitting targets for recalibration: corrected, naive and clean labels.

Every target a recalibration map is fitted to is a function of one item's
response pattern (or, for the clean reference, of its true label). A
:class:`RecalTargets` therefore stores

- ``score[item]``: the original scores of the items used for fitting,
- ``pattern[item]``: a small integer code per item,
- ``table[draw, code]``: the target value of each code under each channel draw,

and the target of item ``i`` under draw ``d`` is ``table[d, pattern[i]]``.
A posterior with 4000 draws over 10**5 items thus costs a (4000, P) table for
the P observed patterns, never a (4000, 10**5) matrix; the histogram map works
on it directly and the parametric maps only need two weighted sums per draw.

Kinds (Hanada & Futami, Sec. 5, SPEC §1 "Recalibration"):

``"corrected"``
    ``U = sum_j alpha'_j (A_j - a_j) / delta_j``, the noise-corrected label with
    weights renormalised over the annotators who answered; ``E[U | Y, Z] = Y``
    when the channels are right. Not clipped: ``U`` may leave [0, 1].
``"naive"``
    The mean of the item's answered annotations (soft vote).
``"clean"``
    The true label (simulations and benchmarks only, as a reference).

Items that nobody annotated carry no target and are left out (for every kind,
so the three kinds fit on the same items).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._typing import ArrayLike, Weights
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.dims import DRAW
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import (
    corrected_onehot_targets,
    corrected_pattern_targets,
    soft_vote_targets,
)
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, annotator_weights
from bayescal.summaries.patterns import item_states, unique_patterns

__all__ = [
    "RecalTargets",
    "TARGET_KINDS",
    "corrected_targets",
    "naive_targets",
    "clean_targets",
    "make_targets",
    "probs_to_logits",
    "corrected_target_stats",
    "DEFAULT_PROB_CLIP",
]

TARGET_KINDS = ("corrected", "naive", "clean")

#: Default weight rule for corrected targets: the shrunk plug-in inverse-variance
#: rule Hanada & Futami use for recalibration (App. G.2).
DEFAULT_WEIGHTS = "shrunk_inverse_variance"


@dataclass(eq=False)
class RecalTargets:
    """Fitting targets of one kind, for one or many channel draws.

    Hanada & Futami, Sec. 5 (targets of the recalibration fit; SPEC §1 "Targets").

    Attributes
    ----------
    kind : {"corrected", "naive", "clean"}
    score : ndarray of shape (n_items,)
        Original scores of the fitting items (annotated items only).
    pattern : ndarray of shape (n_items,), int64
        Code of each item: the index of its response pattern among the fitting
        items' observed patterns or, for ``"clean"``, its true label.
    table : ndarray of shape (n_draws, n_codes)
        Target value of each code under each draw.
    weights : xarray.DataArray of shape (draw, annotator) or None
        Annotator weights behind corrected targets.
    info : dict

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> data = Annotations.from_arrays([0.2, 0.8], [[0, 1], [1, 1]])
    >>> naive_targets(data).values().tolist()
    [0.5, 1.0]
    """

    kind: str
    score: np.ndarray
    pattern: np.ndarray
    table: np.ndarray
    weights: xr.DataArray | None = None
    info: dict = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.score.shape[0])

    @property
    def n_draws(self) -> int:
        return int(self.table.shape[0])

    def values(self, draw: int = 0) -> np.ndarray:
        """Per-item targets of shape (n_items,) under one draw."""
        if not -self.n_draws <= int(draw) < self.n_draws:
            raise ConfigError(f"draw {draw} out of range for {self.n_draws} draw(s).")
        return self.table[int(draw)][self.pattern]

    def code_sums(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum over the items of each code of ``weights`` (default 1), shape (n_codes,)."""
        return np.bincount(self.pattern, weights=weights, minlength=self.table.shape[1])

    def select_draws(self, index: ArrayLike) -> RecalTargets:
        """Targets restricted to some draws."""
        index = np.atleast_1d(np.asarray(index))
        w = None if self.weights is None else self.weights.isel({DRAW: index})
        return RecalTargets(
            self.kind, self.score, self.pattern, self.table[index], w, dict(self.info)
        )

    def __repr__(self) -> str:
        return (
            f"<RecalTargets kind={self.kind!r} items={self.n_items} draws={self.n_draws} "
            f"codes={self.table.shape[1]} range=[{self.table.min():.3g}, {self.table.max():.3g}]>"
        )


def _check_data(data):

    if not isinstance(data, Annotations):
        raise DataError(
            f"targets need an Annotations container; got {type(data).__name__}. Build one with "
            "Annotations.from_arrays or load_csv."
        )
    keep = data.annotated
    if not keep.any():
        raise DataError("no item has an annotation: there is nothing to fit a map to.")
    return keep


def corrected_targets(
    data: Annotations,
    channels: ChannelFit,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
) -> RecalTargets:
    """Noise-corrected labels ``U`` per item and channel draw.

    Hanada & Futami, Sec. 3, Lemma 1: ``U = sum_j w_j (A_j - a_j) / (b_j - a_j)`` with
    ``E[U | Y, Z] = Y`` (SPEC §1 "Corrected labels and weights").

    Parameters
    ----------
    data : Annotations
        Fitting items (scores and annotations); unannotated items are left out.
    channels : ChannelFit
        Point estimate or posterior; the table has one row per draw.
    weights : str or array-like, default "shrunk_inverse_variance"
        Weight rule (see :func:`bayescal.annotator_weights`) or explicit weights.
    lam : float, default :data:`bayescal.metrics.DEFAULT_SHRINKAGE`
        Shrinkage of the shrunk inverse-variance rule.

    Returns
    -------
    RecalTargets
        ``table`` of shape (n_draws, P) for the P observed patterns.

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_gaussian
    >>> data = simulate_gaussian(3000, random_state=0)
    >>> ch = ChannelFit.known([0.05, 0.05], [0.75, 0.95])
    >>> t = corrected_targets(data, ch, weights="equal")
    >>> bool(abs(t.values().mean() - data.truth.mean()) < 0.03)
    True
    """

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    keep = _check_data(data)
    if list(channels.annotators) != list(data.annotators):
        raise DataError(
            f"channels are for annotators {channels.annotators} but the data have "
            f"{data.annotators}; they must match in name and order."
        )
    w = annotator_weights(channels, weights, lam=lam)
    states, codes = _observed_patterns(data, keep)
    table = corrected_pattern_targets(states, channels.a.values, channels.b.values, w.values)
    return RecalTargets(
        "corrected",
        data.score[keep],
        codes,
        table,
        w,
        {"channels": channels.method, "weight_rule": w.attrs["rule"]},
    )


def naive_targets(data: Annotations) -> RecalTargets:
    """Mean of each item's answered annotations (the soft vote), one draw.

    Hanada & Futami, Sec. 6 baselines (the soft vote taken as truth).

    Parameters
    ----------
    data : Annotations

    Returns
    -------
    RecalTargets
        ``table`` of shape (1, P) for the P observed patterns.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> data = Annotations.from_arrays([0.3, 0.6], [[1, np.nan], [0, 1]])
    >>> naive_targets(data).values().tolist()
    [1.0, 0.5]
    """

    keep = _check_data(data)
    states, codes = _observed_patterns(data, keep)
    table = soft_vote_targets(states)[None, :]
    return RecalTargets("naive", data.score[keep], codes, table)


def _observed_patterns(data: Annotations, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fitting items' observed patterns (P, K) and each item's index among them."""
    return unique_patterns(item_states(data.labels[keep], 2), 2)


def clean_targets(data: Annotations) -> RecalTargets:
    """The clean labels as targets (reference only; needs ``truth``).

    Hanada & Futami, Sec. 6: the oracle reference, never available in practice.

    Parameters
    ----------
    data : Annotations
        Must carry ``truth``; the annotated items are used, as for the other kinds.

    Returns
    -------
    RecalTargets
        ``pattern`` is the true label and ``table`` is ``[[0, 1]]``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_gaussian
    >>> t = clean_targets(simulate_gaussian(100, random_state=0))
    >>> sorted(set(t.values().tolist()))
    [0.0, 1.0]
    """
    keep = _check_data(data)
    if data.truth is None:
        raise DataError("clean targets need the true labels: the data carry no 'truth'.")
    y = data.truth[keep].astype(np.int64)
    return RecalTargets("clean", data.score[keep], y, np.array([[0.0, 1.0]]))


def make_targets(
    kind: str,
    data: Annotations,
    channels: ChannelFit | None = None,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
) -> RecalTargets:
    """Targets of a named kind: ``"corrected"`` (needs channels), ``"naive"`` or ``"clean"``.

    Hanada & Futami, Sec. 5 / SPEC §1 "Targets".

    Examples
    --------
    >>> from bayescal.simulate import simulate_gaussian
    >>> make_targets("naive", simulate_gaussian(50, random_state=0)).kind
    'naive'
    """
    if kind == "corrected":
        if channels is None:
            raise ConfigError("corrected targets need channels (a ChannelFit).")
        return corrected_targets(data, channels, weights=weights, lam=lam)
    if kind == "naive":
        return naive_targets(data)
    if kind == "clean":
        return clean_targets(data)
    raise ConfigError(f"unknown target kind {kind!r}; choose one of {TARGET_KINDS}.")


# ---------------------------------------------------------------- C-class targets
#: Probabilities are raised to at least this before the log (log 1e-12 = -27.6):
#: a softmax output of exactly 0 would otherwise give an infinite logit.
DEFAULT_PROB_CLIP = 1e-12


def probs_to_logits(probs, eps: float = DEFAULT_PROB_CLIP) -> np.ndarray:
    """``log(max(p, eps))`` of shape (n_items, n_classes): logits that reproduce ``p``.

    Examples
    --------
    >>> probs_to_logits([[0.5, 0.5, 0.0]], eps=1e-4).round(3).tolist()
    [[-0.693, -0.693, -9.21]]
    """
    if not 0 < eps < 1:
        raise ConfigError(f"eps must be in (0, 1); got {eps}.")
    return np.log(np.maximum(np.asarray(probs, dtype=np.float64), eps))


def corrected_target_stats(
    data,
    channels,
    *,
    weights=DEFAULT_WEIGHTS,
    lam=DEFAULT_SHRINKAGE,
    eps: float = DEFAULT_PROB_CLIP,
):
    """Logits of the annotated items and the target statistics of every channel draw.

    The corrected cross-entropy needs the targets only through
    ``M[d, k] = mean_i U_ik z_ik`` and ``N[d, k] = mean_i U_ik``; both are sums
    over response patterns, so S draws cost S x P x C, not S x n x C.

    Parameters
    ----------
    data : MulticlassAnnotations
    channels : ChannelFit
    weights, lam
        Annotator weights of the corrected targets (default shrunk plug-in IV,
        as for binary recalibration).
    eps : float
        Probability clip before the log.

    Returns
    -------
    logits : ndarray of shape (n_annotated, C)
    M, N : ndarrays of shape (S, C)
    """

    if not isinstance(data, Annotations):
        raise DataError(f"expected Annotations; got {type(data).__name__}.")
    if channels.annotators != data.annotators or channels.n_classes != data.n_classes:
        raise DataError(
            f"channels are for annotators {channels.annotators} and {channels.n_classes} classes; "
            f"the data have {data.annotators} and {data.n_classes}."
        )
    keep = data.annotated
    z = probs_to_logits(data.probs[keep], eps)
    states, inv = unique_patterns(item_states(data.labels[keep], data.n_classes), data.n_classes)
    u = corrected_onehot_targets(states, channels, weights=weights, lam=lam)  # (S, P, C)
    n, c, p = z.shape[0], data.n_classes, states.shape[0]
    zsum = np.stack([np.bincount(inv, weights=z[:, k], minlength=p) for k in range(c)], axis=1)
    count = np.bincount(inv, minlength=p).astype(np.float64)
    m = np.einsum("spk,pk->sk", u, zsum) / n
    n_k = np.einsum("spk,p->sk", u, count) / n
    return z, m, n_k
