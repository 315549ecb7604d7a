"""Posterior maps: one recalibration map per channel draw, summarised as a map ensemble.

Given a channel posterior (a :class:`~bayescal.ChannelFit` with many draws),
:func:`fit_posterior_map` fits the chosen family once per draw and returns a
:class:`PosteriorMap` whose ``predict`` is the posterior mean ``E_d[g_d(z)]``,
``predict_interval`` an equal-tailed credible band, and ``params_`` an
:class:`xarray.Dataset` with a ``draw`` dimension (``temperature``,
``slope`` / ``intercept``, ``bin_value[draw, bin]``, ``group_value[draw, group]``).

Cost. Corrected labels depend on an item only through its response pattern,
so per draw the fits need only sums over the items of each pattern:

- histogram and score-bin maps are closed form and use *every* draw: bin means
  for all draws are one ``(draw, pattern) x (pattern, bin)`` product;
- temperature and Platt maps need an optimisation per draw; each objective
  evaluation is a pass over the items, so by default ``max_draws = 200`` draws,
  evenly spaced over the posterior (indices ``round(linspace(0, S - 1, 200))``),
  are fitted. 200 draws put the Monte Carlo error of a 90% band's end points at
  a few percent of the band width; pass ``max_draws=None`` for all draws.

The band describes channel uncertainty only (the map is refitted to the same
recalibration items under each draw); it is not a sampling interval for the
recalibration sample.

:func:`fit_map_band` is the one band of a *chosen* corrected map, for both tracks: the
recalibration choice (:func:`bayescal.recal.selection.choose_recalibration`) fits it on
its pilot items with a channel posterior, keeps the original score when the band holds
the identity at every pilot item, and both audits show that same band
(:class:`MapBand`: its per-draw parameters and their ``prob`` band).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayescal._typing import ArrayLike, Weights
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.channels.mcse import mean_mcse, quantile_mcse
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.data.validation import check_scores
from bayescal.dims import BIN, DRAW, GROUP
from bayescal.errors import ConfigError, ConvergenceWarning
from bayescal.metrics.weights import DEFAULT_SHRINKAGE
from bayescal.recal.base import RecalibrationMap
from bayescal.recal.histogram import HistogramMap, ScoreBinMap, histogram_values, score_bin_values
from bayescal.recal.parametric import (
    CorrectedTemperatureScaling,
    CorrectedVectorScaling,
    MulticlassRecalibrator,
    PlattMap,
    TemperatureMap,
    check_draws,
    fit_many,
)
from bayescal.recal.targets import (
    DEFAULT_PROB_CLIP,
    DEFAULT_WEIGHTS,
    corrected_target_stats,
    make_targets,
    probs_to_logits,
)
from bayescal.summaries.partition import assign, cell_labels

__all__ = [
    "PosteriorMap",
    "fit_posterior_map",
    "FAMILIES",
    "DEFAULT_MAX_DRAWS",
    "thin_draws",
    "MulticlassMapEnsemble",
    "fit_multiclass_posterior_map",
    "CLASS_MAP_MAKERS",
    "MapBand",
    "fit_map_band",
]

FAMILIES = ("temperature", "platt", "histogram", "score_bin")
DEFAULT_MAX_DRAWS = 200
_MAP_CLASSES = {
    "temperature": TemperatureMap,
    "platt": PlattMap,
    "histogram": HistogramMap,
    "score_bin": ScoreBinMap,
}
_CHUNK = 20_000
_FIT_HINT = "call fit(data, channels) first"


def thin_draws(n_draws: int, max_draws: int | None) -> np.ndarray:
    """Evenly spaced draw indices: all of them when ``max_draws`` is None or large enough.

    Used by the posterior maps (Hanada & Futami's Sec. 5 maps, one per channel draw).

    Examples
    --------
    >>> thin_draws(10, 4).tolist()
    [0, 3, 6, 9]
    """
    if max_draws is None or n_draws <= max_draws:
        return np.arange(n_draws)
    if int(max_draws) < 1:
        raise ConfigError(f"max_draws must be a positive int or None; got {max_draws!r}.")
    return np.unique(np.round(np.linspace(0, n_draws - 1, int(max_draws))).astype(np.int64))


class PosteriorMap(BaseEstimator):
    """A recalibration map fitted under every (or a thinned set of) channel draw(s).

    Hanada & Futami, Sec. 5 maps (App. E.2-E.3) refitted under each posterior draw of
    the channels (SPEC §1 "Recalibration"), so the map carries channel uncertainty.

    Parameters
    ----------
    family : {"temperature", "platt", "histogram", "score_bin"}, default "histogram"
    target : {"corrected", "naive", "clean"}, default "corrected"
        Naive and clean targets do not depend on the channels (one draw).
    weights : str or array-like, default "shrunk_inverse_variance"
        Annotator weights for corrected labels (per draw).
    lam : float
        Shrinkage of the shrunk inverse-variance rule.
    max_draws : int or None, default 200
        Thinning for the temperature and Platt families (evenly spaced draws);
        histogram and score-bin maps always use every draw.
    map_params : dict, optional
        Parameters of the per-draw map (for example ``{"bins": 16}`` or
        ``{"slope_bounds": (-10, 10)}``).

    Attributes
    ----------
    params_ : xarray.Dataset
        Per-draw parameters with a ``draw`` coordinate holding the channel draw index.
    template_ : RecalibrationMap
        The unfitted per-draw map (its parameters).
    bin_edges_ : ndarray or None
        Histogram or score-group edges.
    converged_ : bool
        All per-draw optimisations converged (parametric families).
    n_draws_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_gaussian
    >>> data = simulate_gaussian(3000, random_state=0)
    >>> rng = np.random.default_rng(1)
    >>> post = ChannelFit.from_draws(
    ...     0.05 + 0.01 * rng.random((400, 2)), [0.75, 0.95] + 0.01 * rng.random((400, 2)),
    ...     np.full((400, 1), 0.5), annotators=data.annotators, groups=["all"],
    ...     group_counts=[3000], method="synthetic")
    >>> pm = fit_posterior_map("histogram", data, post, map_params={"bins": 10})
    >>> pm.params_["bin_value"].sizes["draw"]
    400
    >>> lo, hi = pm.predict_interval([0.5])
    >>> bool(lo[0] <= pm.predict([0.5])[0] <= hi[0])
    True
    """

    def __init__(
        self,
        *,
        family: str = "histogram",
        target: str = "corrected",
        weights: Weights = DEFAULT_WEIGHTS,
        lam: float = DEFAULT_SHRINKAGE,
        max_draws: int | None = DEFAULT_MAX_DRAWS,
        map_params: dict | None = None,
    ) -> None:
        self.family = family
        self.target = target
        self.weights = weights
        self.lam = lam
        self.max_draws = max_draws
        self.map_params = map_params

    _fitted_attr = "params_"

    # ----------------------------------------------------------- fit
    def fit(self, data: Annotations | None, channels: ChannelFit | None = None) -> PosteriorMap:
        """Fit the family under each channel draw.

        Parameters
        ----------
        data : Annotations
            Recalibration items (unused for ``"score_bin"``).
        channels : ChannelFit
            Point fit or posterior; required for corrected targets and ``"score_bin"``.
        """
        if self.family not in FAMILIES:
            raise ConfigError(f"family must be one of {FAMILIES}; got {self.family!r}.")
        if self.max_draws is not None and (
            not isinstance(self.max_draws, (int, np.integer)) or self.max_draws < 1
        ):
            raise ConfigError(f"max_draws must be a positive int or None; got {self.max_draws!r}.")
        params = dict(self.map_params or {})
        template = _MAP_CLASSES[self.family](**params)
        if self.family == "score_bin":
            if channels is None:
                raise ConfigError("the score-bin map needs channels with score-group prevalences.")
            edges, values = score_bin_values(channels)
            draws = channels.a[DRAW].values
            self.params_ = xr.Dataset(
                {"group_value": ((DRAW, GROUP), values)},
                coords={DRAW: draws, GROUP: cell_labels(edges)},
            )
            self.bin_edges_ = edges
            self.converged_ = True
        else:
            if data is None:
                raise ConfigError(
                    f"the {self.family!r} map needs recalibration items: pass data= (an "
                    "Annotations); only the 'score_bin' family is fitted from channels alone."
                )
            targets = make_targets(self.target, data, channels, weights=self.weights, lam=self.lam)
            if self.family == "histogram":
                draws = np.arange(targets.n_draws)
                self._fit_histogram(template, targets)
            else:
                draws = thin_draws(targets.n_draws, self.max_draws)
                self._fit_parametric(template, targets.select_draws(draws))
            self.params_ = self.params_.assign_coords({DRAW: draws})
            self.params_.attrs.update(target=self.target, n_items=targets.n_items)
        self.params_.attrs["family"] = self.family
        self.template_ = template
        self.n_draws_ = int(self.params_.sizes[DRAW])
        return self

    def _fit_histogram(self, template, targets):
        template._validate_params()
        edges = template.make_edges(targets.score)
        idx = assign(targets.score, edges)
        values, raw, counts = histogram_values(idx, targets.pattern, targets.table, edges.size - 1)
        self.bin_edges_ = edges
        self.params_ = xr.Dataset(
            {
                "bin_value": ((DRAW, BIN), values),
                "bin_mean": ((DRAW, BIN), raw),
                "bin_count": ((BIN,), counts),
            },
            coords={DRAW: np.arange(values.shape[0]), BIN: cell_labels(edges)},
        )
        self.converged_ = True

    def _fit_parametric(self, template, targets):
        template._validate_params()
        X = template.features(targets.score)
        n = X.shape[0]
        code_x = np.stack([targets.code_sums(X[:, j]) for j in range(X.shape[1])], axis=1)  # (P, d)
        M = targets.table @ code_x / n  # (S, d): mean_i U_i x_i per draw
        lo, hi = template._box()
        x0 = np.clip(np.array([1.0, 0.0][: X.shape[1]]), lo, hi)
        # warm start from the fit to the posterior-mean targets, then draw by draw
        start, _, _ = fit_many(X, M.mean(axis=0, keepdims=True), lo, hi, x0)
        theta, loss, conv = fit_many(X, M, lo, hi, start[0])
        self.bin_edges_ = None
        self.converged_ = bool(conv.all())
        if self.family == "temperature":
            data_vars = {
                "temperature": ((DRAW,), 1.0 / theta[:, 0]),
                "inverse_temperature": ((DRAW,), theta[:, 0]),
            }
        else:
            data_vars = {"slope": ((DRAW,), theta[:, 0]), "intercept": ((DRAW,), theta[:, 1])}
        data_vars.update(loss=((DRAW,), loss), converged=((DRAW,), conv))
        self.params_ = xr.Dataset(data_vars, coords={DRAW: np.arange(theta.shape[0])})
        if not self.converged_:
            import warnings

            warnings.warn(
                f"{int((~conv).sum())} of {conv.size} per-draw fits did not converge.",
                ConvergenceWarning,
                stacklevel=3,
            )

    # ----------------------------------------------------------- predict
    def _table(self):
        """(S, J) values per cell for the binned families."""
        name = "bin_value" if self.family == "histogram" else "group_value"
        return self.params_[name].values

    def predict_draws(self, score: ArrayLike) -> np.ndarray:
        """Per-draw predictions of shape (n_draws, n_items)."""
        check_is_fitted(self, _FIT_HINT)
        z = check_scores(score, name="score")
        if self.bin_edges_ is not None:
            return self._table()[:, assign(z, self.bin_edges_)]
        s = self.template_.features(z)
        if self.family == "temperature":
            t = self.params_["inverse_temperature"].values[:, None] * s[None, :, 0]
        else:
            t = (
                self.params_["slope"].values[:, None] * s[None, :, 0]
                + self.params_["intercept"].values[:, None]
            )
        from scipy import special

        return special.expit(t)

    def _reduce(self, score, fn):
        check_is_fitted(self, _FIT_HINT)
        z = check_scores(score, name="score")
        if self.bin_edges_ is not None:
            per_cell = fn(self._table())  # reduce over draws once per cell
            return per_cell[..., assign(z, self.bin_edges_)]
        parts = [fn(self.predict_draws(z[i : i + _CHUNK])) for i in range(0, z.size, _CHUNK)]
        return np.concatenate(parts, axis=-1)

    def predict(self, score: ArrayLike) -> np.ndarray:
        """Posterior mean prediction ``E_d[g_d(z)]`` of shape (n_items,)."""
        return self._reduce(score, lambda a: a.mean(axis=0))

    def predict_interval(
        self, score: ArrayLike, prob: float = 0.9
    ) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed credible band ``(lower, upper)``, each of shape (n_items,).

        Parameters
        ----------
        score : array-like of shape (n_items,)
        prob : float in (0, 1), default 0.9
        """
        if not 0 < prob < 1:
            raise ConfigError(f"prob must be in (0, 1); got {prob}.")
        q = [(1 - prob) / 2, 1 - (1 - prob) / 2]
        out = self._reduce(score, lambda a: np.quantile(a, q, axis=0))
        return out[0], out[1]

    def draw_map(self, i: int) -> RecalibrationMap:
        """The fitted single map of the i-th stored draw (position, not channel index)."""
        check_is_fitted(self, _FIT_HINT)
        m = _MAP_CLASSES[self.family](**dict(self.map_params or {}))
        p = self.params_.isel({DRAW: int(i)})
        if self.family == "temperature":
            lo, hi = m._box()
            m._set(
                p["inverse_temperature"].values[None],
                float(p["loss"]),
                bool(p["converged"]),
                lo,
                hi,
            )
        elif self.family == "platt":
            lo, hi = m._box()
            m._set(
                np.array([float(p["slope"]), float(p["intercept"])]),
                float(p["loss"]),
                bool(p["converged"]),
                lo,
                hi,
            )
        elif self.family == "histogram":
            m._set(
                self.bin_edges_,
                p["bin_value"].values,
                p["bin_mean"].values,
                self.params_["bin_count"].values,
            )
        else:
            m.group_edges_, m.group_values_ = self.bin_edges_, p["group_value"].values
        if self.family != "score_bin":
            m.n_items_ = int(self.params_.attrs["n_items"])
        return m


def fit_posterior_map(
    family: str,
    data: Annotations | None,
    channels: ChannelFit | None = None,
    *,
    target: str = "corrected",
    weights: Weights = DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
    max_draws: int | None = DEFAULT_MAX_DRAWS,
    map_params: dict | None = None,
) -> PosteriorMap:
    """Fit a recalibration map under every channel draw (function twin of :class:`PosteriorMap`).

    Hanada & Futami, Sec. 5 maps under each channel draw (SPEC §1).

    Parameters
    ----------
    family : {"temperature", "platt", "histogram", "score_bin"}
    data : Annotations
        Recalibration items.
    channels : ChannelFit
        Point fit or posterior (for example from :func:`bayescal.bayes.fit_channels_bayes`).
    target, weights, lam, max_draws, map_params
        See :class:`PosteriorMap`.

    Returns
    -------
    PosteriorMap

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_gaussian
    >>> data = simulate_gaussian(2000, random_state=0)
    >>> ch = ChannelFit.known([0.05, 0.05], [0.75, 0.95])
    >>> pm = fit_posterior_map("platt", data, ch)
    >>> pm.n_draws_, bool(1.5 < float(pm.params_["slope"][0]) < 2.5)
    (1, True)
    """
    return PosteriorMap(
        family=family,
        target=target,
        weights=weights,
        lam=lam,
        max_draws=max_draws,
        map_params=map_params,
    ).fit(data, channels)


# ---------------------------------------------------------------- maps on C-class logits
class MulticlassMapEnsemble:
    """One fitted map per channel draw; predictions per draw and their mean.

    Attributes
    ----------
    maps_ : list of MulticlassRecalibrator
    draws_ : ndarray of the channel draws used
    """

    def __init__(self, maps, draws, eps):
        self.maps_ = list(maps)
        self.draws_ = np.asarray(draws)
        self.eps_ = float(eps)

    def predict_proba_draws(self, logits) -> np.ndarray:
        """Probabilities under every draw's map, shape (S, n_items, n_classes)."""
        return np.stack([m.predict_proba(logits) for m in self.maps_])

    def predict_proba(self, logits) -> np.ndarray:
        """The posterior-mean map: probabilities averaged over draws, (n_items, n_classes)."""
        return self.predict_proba_draws(logits).mean(axis=0)

    def __repr__(self) -> str:
        return f"<MulticlassMapEnsemble of {len(self.maps_)} {type(self.maps_[0]).__name__} maps>"


def fit_multiclass_posterior_map(
    estimator,
    data,
    channels,
    *,
    weights=DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
    draws=None,
    eps: float = DEFAULT_PROB_CLIP,
) -> MulticlassMapEnsemble:
    """Fit one corrected map per channel draw (a map ensemble).

    Parameters
    ----------
    estimator : MulticlassRecalibrator
        A template; each draw gets a fresh copy with the same parameters.
    data : MulticlassAnnotations
    channels : ChannelFit
    weights, lam
        Annotator weights of the corrected targets.
    draws : array-like of int, optional
        Which draws to use (default all).
    eps : float

    Returns
    -------
    MulticlassMapEnsemble

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.recal import CorrectedTemperatureScaling
    >>> from bayescal.simulate import multiclass_population, simulate_multiclass
    >>> pop = multiclass_population(3, temperature=2.0)
    >>> d = simulate_multiclass(3000, population=pop, random_state=0)
    >>> ens = fit_multiclass_posterior_map(CorrectedTemperatureScaling(), d,
    ...                                    ChannelFit.known_confusion(pop.confusion))
    >>> len(ens.maps_), bool(ens.maps_[0].temperature_ > 1)
    (1, True)
    """
    if not isinstance(estimator, MulticlassRecalibrator):
        raise ConfigError(
            f"estimator must be a MulticlassRecalibrator; got {type(estimator).__name__}."
        )
    idx = np.arange(channels.n_draws) if draws is None else check_draws(draws, channels)
    z, m, n_k = corrected_target_stats(
        data, channels.select_draws(idx), weights=weights, lam=lam, eps=eps
    )
    maps = [
        type(estimator)(**estimator.get_params())._fit_stats(z, m[d], n_k[d], eps=eps)
        for d in range(idx.size)
    ]
    return MulticlassMapEnsemble(maps, idx, eps)


# ---------------------------------------------------------------- the band of a chosen map
#: Corrected maps of C-class logits by family name (the recalibration choice's families).
CLASS_MAP_MAKERS: dict[str, type[MulticlassRecalibrator]] = {
    "temperature": CorrectedTemperatureScaling,
    "vector": CorrectedVectorScaling,
}


def _param_band(values: np.ndarray, prob: float) -> dict:
    """Posterior mean and equal-tailed ``prob`` band over the first axis (draws), with the
    Monte Carlo standard error of each (``mcse``: the error of using these draws only,
    :mod:`bayescal.channels.mcse`; 0 for one draw)."""
    q = [(1 - prob) / 2, 1 - (1 - prob) / 2]
    v = np.asarray(values, dtype=np.float64)
    mean, (lo, hi) = v.mean(axis=0), np.quantile(v, q, axis=0)
    # keys "of_*": an object with "lo" and "hi" reads as an interval in summary.json
    err = {
        "of_mean": mean_mcse(v),
        "of_lo": quantile_mcse(v, q[0]),
        "of_hi": quantile_mcse(v, q[1]),
    }
    if v.ndim == 1:
        return {
            "mean": float(mean),
            "lo": float(lo),
            "hi": float(hi),
            "mcse": {k: float(e) for k, e in err.items()},
        }
    return {
        "mean": mean.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "mcse": {k: np.asarray(e).tolist() for k, e in err.items()},
    }


@dataclass(eq=False)
class MapBand:
    """A corrected map of one family refitted under every channel draw, with its band.

    Attributes
    ----------
    family : str
        ``temperature``, ``platt`` or ``histogram`` (two classes); ``temperature`` or
        ``vector`` (C > 2).
    maps : PosteriorMap or MulticlassMapEnsemble
        The per-draw maps.
    n_items : int
        Items the maps were fitted on.
    prob : float
        Mass of the band.
    role : str, optional
        Why it was fitted (the recalibration choice: ``"recommended"`` or ``"best
        corrected candidate"``).
    """

    family: str
    maps: PosteriorMap | MulticlassMapEnsemble
    n_items: int
    prob: float = 0.9
    role: str | None = None

    @property
    def n_draws(self) -> int:
        if isinstance(self.maps, PosteriorMap):
            return int(self.maps.n_draws_)
        return len(self.maps.maps_)

    def parameters(self) -> dict[str, dict]:
        """Per map parameter: posterior mean, ``lo`` and ``hi`` of the ``prob`` band over
        the draws (lists per bin or class for the histogram and vector maps)."""
        if isinstance(self.maps, PosteriorMap):
            names = {
                "temperature": ("temperature",),
                "platt": ("slope", "intercept"),
                "histogram": ("bin_value",),
            }[self.family]
            return {n: _param_band(self.maps.params_[n].values, self.prob) for n in names}
        if self.family == "temperature":
            return {
                "temperature": _param_band(
                    np.array([m.temperature_ for m in self.maps.maps_]), self.prob
                )
            }
        return {
            "scale": _param_band(np.stack([m.scales_ for m in self.maps.maps_]), self.prob),
            "bias": _param_band(np.stack([m.biases_ for m in self.maps.maps_]), self.prob),
        }

    def holds_identity(self, data: Annotations) -> bool:
        """Whether the original score (probabilities for C > 2) lies inside the band at
        every item of ``data`` (and every class)."""
        q = [(1 - self.prob) / 2, 1 - (1 - self.prob) / 2]
        if isinstance(self.maps, PosteriorMap):
            lo, hi = self.maps.predict_interval(data.score, self.prob)
            return bool(np.all((lo <= data.score) & (data.score <= hi)))
        draws = self.maps.predict_proba_draws(probs_to_logits(data.probs))
        lo, hi = np.quantile(draws, q, axis=0)
        return bool(np.all((lo <= data.probs) & (data.probs <= hi)))

    def to_dict(self) -> dict:
        """JSON-ready: ``role``, ``family``, ``draws`` (the draws used, at most ``max_draws``),
        ``items``, ``prob``, ``parameters`` (each with its ``mcse``)."""
        return {
            "role": self.role,
            "family": self.family,
            "draws": self.n_draws,
            "items": self.n_items,
            "prob": self.prob,
            "parameters": self.parameters(),
        }


def fit_map_band(
    family: str,
    data: Annotations,
    posterior: ChannelFit,
    *,
    histogram: dict | None = None,
    prob: float = 0.9,
    max_draws: int | None = DEFAULT_MAX_DRAWS,
) -> MapBand:
    """The corrected ``family`` map fitted on ``data`` under every channel draw.

    Two classes: :func:`fit_posterior_map` (histogram maps with ``histogram`` parameters,
    default Hanada & Futami's ``J = round(n^(1/3))`` bins; temperature and Platt maps on
    ``max_draws`` evenly spaced draws). More classes: :func:`fit_multiclass_posterior_map`
    of :data:`CLASS_MAP_MAKERS` on ``max_draws`` evenly spaced draws.

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.simulate import simulate_toy
    >>> d = simulate_toy(1000, "calibrated", random_state=0)
    >>> band = fit_map_band("platt", d, ChannelFit.known([0.1, 0.1, 0.1], [0.9, 0.9, 0.9]))
    >>> band.n_draws, sorted(band.parameters())
    (1, ['intercept', 'slope'])
    """
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    if data.n_classes > 2:
        if family not in CLASS_MAP_MAKERS:
            raise ConfigError(
                f"family for {data.n_classes} classes must be one of {tuple(CLASS_MAP_MAKERS)}; "
                f"got {family!r}."
            )
        draws = thin_draws(posterior.n_draws, max_draws)
        ens = fit_multiclass_posterior_map(CLASS_MAP_MAKERS[family](), data, posterior, draws=draws)
        return MapBand(family, ens, int(data.n_items), prob)
    if family not in ("temperature", "platt", "histogram"):
        raise ConfigError(
            f"family for two classes must be temperature, platt or histogram; got {family!r}."
        )
    j = max(2, int(round(data.n_items ** (1 / 3))))
    params = (histogram or {"bins": j}) if family == "histogram" else None
    pm = fit_posterior_map(family, data, posterior, max_draws=max_draws, map_params=params)
    return MapBand(family, pm, int(data.n_items), prob)
