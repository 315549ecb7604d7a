"""Shared interface of the recalibration maps (scikit-learn contract).

Keyword-only ``__init__`` that only stores parameters; validation in ``fit``;
fitted attributes end in ``_``; :class:`~bayescal.errors.NotFittedError` before
``fit``; ``get_params`` / ``set_params`` from :class:`bayescal.base.BaseEstimator`.
Every map fits on ``(score, target)`` arrays, on a
:class:`~bayescal.recal.targets.RecalTargets` (one draw), or on data plus channels
through :meth:`RecalibrationMap.fit_corrected`.
"""

from __future__ import annotations

import numpy as np

from bayescal._typing import ArrayLike, Weights
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.data.validation import as_numeric, check_scores
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.weights import DEFAULT_SHRINKAGE
from bayescal.recal.targets import DEFAULT_WEIGHTS, RecalTargets, corrected_targets

__all__ = ["RecalibrationMap", "check_target", "corrected_log_loss"]

_FIT_HINT = "call fit(score, target) or fit_corrected(data, channels) first"


def check_target(target: ArrayLike, n: int) -> np.ndarray:
    """Targets: 1-D, finite, one per item (any real value: corrected labels may leave [0, 1]).

    Hanada & Futami, Sec. 5: corrected targets may leave [0, 1] (SPEC §1: do not clip).
    """
    t = as_numeric(target, "target")
    if t.ndim != 1:
        raise DataError(f"target must be 1-D of shape (n_items,); got shape {t.shape}.")
    if t.shape[0] != n:
        raise DataError(
            f"target has {t.shape[0]} values but there are {n} scores; give one target per item."
        )
    bad = ~np.isfinite(t)
    if bad.any():
        raise DataError(
            f"target has {int(bad.sum())} missing or non-finite value(s) (first at item "
            f"{int(np.flatnonzero(bad)[0])}); drop those items or supply their targets."
        )
    return t


def corrected_log_loss(prob: ArrayLike, target: ArrayLike) -> float:
    """Mean corrected log loss ``-U log p - (1 - U) log(1 - p)``.

    Hanada & Futami, App. E.1, Eq. (E.2) (corrected binary loss).

    With clean 0/1 targets it is the ordinary log loss; with corrected labels
    ``U`` (``E[U | Y, Z] = Y``) it is an unbiased estimate of the clean log loss
    of the fixed predictions ``p`` (Hanada & Futami, Eq. (E.2)).

    Parameters
    ----------
    prob : array-like of shape (n_items,)
        Predicted probabilities, strictly inside (0, 1).
    target : array-like of shape (n_items,)
        Labels, soft labels or corrected labels (any real value).

    Returns
    -------
    float

    Examples
    --------
    >>> round(corrected_log_loss([0.5, 0.5], [1.3, -0.3]), 6)
    0.693147
    """
    p = as_numeric(prob, "prob")
    if p.ndim != 1:
        raise DataError(f"prob must be 1-D; got shape {p.shape}.")
    t = check_target(target, p.shape[0])
    if not np.all((p > 0) & (p < 1)):
        raise DataError(
            "prob must lie strictly inside (0, 1) for the log loss; clip predictions away from 0 "
            "and 1 first (Hanada & Futami's evaluation clips to [1e-8, 1 - 1e-8])."
        )
    return float(np.mean(-t * np.log(p) - (1 - t) * np.log1p(-p)))


class RecalibrationMap(BaseEstimator):
    """Base class of a map ``g: [0, 1] -> [0, 1]`` applied to a predictor's scores.

    Hanada & Futami, Sec. 5 (recalibration from noisy annotations).

    Subclasses implement ``_fit(z, t)`` on validated arrays and ``_predict(z)``,
    and name one fitted attribute in ``_fitted_attr``; parameters, ``repr`` and
    the fitted-state check come from :class:`bayescal.base.BaseEstimator`.
    """

    _fitted_attr = "n_items_"

    # ------------------------------------------------------------ fit
    def fit(self, score: ArrayLike, target: ArrayLike) -> RecalibrationMap:
        """Fit the map to scores and targets.

        Parameters
        ----------
        score : array-like of shape (n_items,)
            Original predictor scores in [0, 1].
        target : array-like of shape (n_items,)
            Clean labels, mean annotations, or corrected labels (any real value).

        Returns
        -------
        self
        """
        z = check_scores(score, name="score")
        t = check_target(target, z.shape[0])
        self._validate_params()
        self._fit(z, t)
        self.n_items_ = int(z.shape[0])
        return self

    def fit_targets(self, targets: RecalTargets, draw: int = 0) -> RecalibrationMap:
        """Fit to a :class:`~bayescal.recal.targets.RecalTargets` under one draw."""
        if not isinstance(targets, RecalTargets):
            raise ConfigError(f"expected RecalTargets; got {type(targets).__name__}.")
        return self.fit(targets.score, targets.values(draw))

    def fit_corrected(
        self,
        data: Annotations,
        channels: ChannelFit,
        *,
        weights: Weights = DEFAULT_WEIGHTS,
        lam: float = DEFAULT_SHRINKAGE,
        draw: int | None = None,
    ) -> RecalibrationMap:
        """Fit to noise-corrected labels built from ``data`` and point ``channels``.

        Parameters
        ----------
        data : Annotations
            Recalibration items (independent of the channel sample, ideally).
        channels : ChannelFit
            One draw; for a posterior pass ``draw=`` or use
            :func:`bayescal.recal.fit_posterior_map`.
        weights, lam
            Annotator weights for the corrected labels (default shrunk plug-in IV).
        draw : int, optional
            Which channel draw to use when there are several.
        """
        targets = corrected_targets(data, channels, weights=weights, lam=lam)
        if draw is None:
            if targets.n_draws > 1:
                raise ConfigError(
                    f"channels have {targets.n_draws} draws; pass draw= to fit one, or use "
                    "fit_posterior_map(...) to fit every draw."
                )
            draw = 0
        return self.fit_targets(targets, draw)

    # ------------------------------------------------------------ predict
    def predict(self, score: ArrayLike) -> np.ndarray:
        """Recalibrated probabilities ``g(z)`` of shape (n_items,).

        Parameters
        ----------
        score : array-like of shape (n_items,)
            Original scores in [0, 1].
        """
        check_is_fitted(self, _FIT_HINT)
        return self._predict(check_scores(score, name="score"))

    def __call__(self, score: ArrayLike) -> np.ndarray:
        return self.predict(score)

    def _validate_params(self) -> None:  # pragma: no cover - overridden
        pass

    def _fit(self, z: np.ndarray, t: np.ndarray) -> None:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__} must implement _fit(z, t).")

    def _predict(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__} must implement _predict(z).")


def check_box(
    bounds: tuple[float, float], name: str, *, positive: bool = False
) -> tuple[float, float]:
    """A compact parameter box ``(lower, upper)``: finite, lower <= upper.

    Hanada & Futami, App. E.2: the parameters live in compact boxes (SPEC §1).
    """
    try:
        lo, hi = (float(x) for x in bounds)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{name} must be a pair (lower, upper) of numbers; got {bounds!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ConfigError(
            f"{name} must be finite (a compact box keeps "
            f"the corrected loss bounded); got {bounds!r}."
        )
    if lo > hi:
        raise ConfigError(f"{name} has lower bound {lo:g} above upper bound {hi:g}; swap them.")
    if positive and lo <= 0:
        raise ConfigError(f"{name} must be positive; got lower bound {lo:g}.")
    return lo, hi
