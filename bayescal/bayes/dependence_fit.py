"""Fit the conditional-dependence channel model; LOO on pattern counts for ``az.compare``.

``fit_channels_dependence`` returns a :class:`~bayescal.channels.result.ChannelFit`
(method ``"bayes_dependence"``) whose ``a``, ``b``, ``prevalence`` are the
*marginal* channels (Qu, Tan & Kutner 1996 random-effects model, see
:mod:`bayescal.bayes.dependence`), so NC-ECE and its interval (Hanada & Futami,
Eq. 7) consume the draws unchanged. ``fit.idata.posterior`` also holds the
loadings ``loading[dependent_annotator, class]`` and the implied latent
within-class correlations ``correlation[pair, class]``.

LOO on pattern counts
---------------------
All items of one cell (score group, pattern) share one log-likelihood,
``log p_g(s)``. PSIS-LOO of one item therefore depends only on its cell, and
``elpd_loo = sum_cells n_c loo_c`` (Vehtari, Gelman & Gabry 2017, Eq. 4 summed over
identical items). :func:`pattern_loo` computes PSIS once per cell and expands the
pointwise values to items, so :func:`arviz.compare` sees the same ``ELPDData`` as
:func:`arviz.loo` on the item-expanded log-likelihood (tested) at the cost of the
cells.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.bayes import fit as base_fit
from bayescal.bayes.dependence import (
    CLASS,
    LOADED,
    LOADING_SIGMA,
    DependenceSpec,
    build_pymc_dependence_model,
    check_identified,
    group_loglik_dependent,
    implied_correlation,
    make_dependence_spec,
    pattern_logp_dependent,
    sample_counts_dependent,
)
from bayescal.bayes.dependence_density import DependenceLogDensity
from bayescal.bayes.diagnostics import _expected_counts, pattern_ppc
from bayescal.bayes.models import ChannelModelSpec, make_spec
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import (
    NUTSSettings,
    _posterior_from_unconstrained,
    check_settings,
    sample_nutpie,
    sample_pymc,
)
from bayescal.channels.result import ChannelFit
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP, PATTERN
from bayescal.errors import ConfigError

__all__ = [
    "fit_channels_dependence",
    "dependence_posterior",
    "dependence_ppc",
    "pattern_loo",
    "compare_channel_models",
    "cell_loo",
]

METHOD = "bayes_dependence"


def dependence_posterior(dspec, density, x, attrs) -> xr.Dataset:
    """Posterior variables (``ab``, ``a``, ``b``, ``prevalence``, ``loading``,
    ``correlation``) from the density's unconstrained draws ``x`` of shape (chain, draw, n_dim),
    for :func:`bayescal.bayes.sampling.sample_nutpie`'s ``to_posterior``."""
    post = _posterior_from_unconstrained(density.prior, x[..., : density.n_base], attrs)
    loading = density.constrain(x)["loading"]
    return _add_loading(dspec, post, loading)


def _add_loading(dspec, post, loading) -> xr.Dataset:
    rho, labels = implied_correlation(dspec, loading)
    post = post.assign(
        loading=((CHAIN, DRAW, LOADED, CLASS), loading),
        correlation=((CHAIN, DRAW, "pair", CLASS), rho),
    )
    return post.assign_coords(
        {LOADED: [dspec.annotators[j] for j in dspec.loaded], CLASS: ["0", "1"], "pair": labels}
    )


def _draw_arrays(post):
    a = post["a"].transpose(CHAIN, DRAW, ANNOTATOR).values
    b = post["b"].transpose(CHAIN, DRAW, ANNOTATOR).values
    prev = post["prevalence"].transpose(CHAIN, DRAW, GROUP).values
    loading = post["loading"].transpose(CHAIN, DRAW, LOADED, CLASS).values
    return a, b, prev, loading


def fit_channels_dependence(
    data,
    dependence="all",
    model: str = "grouped",
    *,
    groups=None,
    priors=None,
    sigma: float = LOADING_SIGMA,
    orient=0,
    orientation: str = "all",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    target_accept: float = 0.9,
    sampler: str = "nutpie",
    random_state=0,
    progress: bool = False,
    posterior_predictive: bool = True,
    check: bool = True,
) -> ChannelFit:
    """Posterior of the marginal channels under within-class dependence between annotators.

    The latent "hard item" random-effect model of Qu, Tan & Kutner (1996) on the
    pattern counts (:mod:`bayescal.bayes.dependence`); the independence model's
    spec, priors, gold items and orientation are reused.

    Parameters
    ----------
    data : Annotations or Summary (binary)
    dependence : "all", "r1:r2,r3:r4" or list of pairs, default "all"
        Which annotators share a latent difficulty. Overlapping pairs merge into one
        group (connected components); the groups used are in
        ``fit.diagnostics["dependence_groups"]``.
    model, groups, priors, orient, orientation, draws, tune, chains, cores, sampler,
    random_state, progress, posterior_predictive, check
        As :func:`bayescal.bayes.fit_channels_bayes`.
    sigma : float, default 1.0
        Scale of the HalfNormal prior of every loading.
    target_accept : float, default 0.9

    Returns
    -------
    ChannelFit
        Method ``"bayes_dependence"``; ``idata`` with ``posterior`` (``a``, ``b``,
        ``prevalence``, ``loading``, ``correlation``), ``sample_stats``,
        ``log_likelihood`` (``counts[chain, draw, group]``), ``observed_data``,
        ``constant_data`` and ``posterior_predictive`` (replicated under this model).

    Raises
    ------
    IdentificationError
        When the design leaves no degree of freedom (see
        :func:`~bayescal.bayes.dependence.check_identified`), or when the
        independence model's own design check refuses it.
    ConfigError
        For an unknown, duplicate or self-paired annotator in ``dependence``.

    Examples
    --------
    >>> from bayescal.simulate.dependent import simulate_dependent
    >>> data, truth = simulate_dependent(1000, loading=0.8, random_state=0)
    >>> fit = fit_channels_dependence(data, "all", groups=5, draws=30, tune=30, chains=1,
    ...                               check=False)  # a real fit uses the defaults
    >>> fit.method, fit.diagnostics["dependence_groups"]
    ('bayes_dependence', [['a1', 'a2', 'a3']])
    """
    check_settings(draws, tune, chains, cores, target_accept, sampler, check)
    summary = base_fit.resolve_summary(data, groups)
    if summary.n_classes != 2:
        raise ConfigError("the dependence model is binary; multiclass data are not supported.")
    warnings = list(base_fit._check(summary, model))
    spec = make_spec(summary, model, priors=priors, orient=orient, orientation=orientation)
    dspec = make_dependence_spec(spec, dependence, sigma=sigma)
    ident = check_identified(dspec)
    warnings.extend(base_fit._empty_groups(spec, model))
    rng = check_random_state(random_state)
    settings = NUTSSettings(
        draws=int(draws),
        tune=int(tune),
        chains=int(chains),
        cores=cores,
        seed=base_fit._seed(rng),
        target_accept=float(target_accept),
        progress=bool(progress),
    )
    if sampler == "nutpie":
        density = DependenceLogDensity(dspec)
        posterior, stats, timings = sample_nutpie(
            density, settings, to_posterior=lambda d, x, at: dependence_posterior(dspec, d, x, at)
        )
    else:
        posterior, stats, timings = sample_pymc(build_pymc_dependence_model(dspec), settings)
        loading = posterior["loading"].transpose(CHAIN, DRAW, LOADED, CLASS).values
        posterior = _add_loading(dspec, posterior.drop_vars("loading"), loading)
    idata = base_fit._inference_data(posterior, stats)
    a, b, prev, loading = _draw_arrays(idata.posterior)
    cd = {CHAIN: idata.posterior[CHAIN].values, DRAW: idata.posterior[DRAW].values}
    observed, constant = base_fit._design_groups(spec)
    extra = {
        "log_likelihood": xr.Dataset(
            {
                "counts": (
                    (CHAIN, DRAW, GROUP),
                    group_loglik_dependent(dspec, a, b, prev, loading),
                )
            },
            coords={**cd, GROUP: spec.groups},
        ),
        "observed_data": observed,
        "constant_data": constant,
    }
    if posterior_predictive:
        rep = sample_counts_dependent(dspec, a, b, prev, loading, rng).astype(np.int32)
        extra["posterior_predictive"] = xr.Dataset(
            {"counts": ((CHAIN, DRAW, GROUP, PATTERN), rep)},
            coords={**cd, GROUP: spec.groups, PATTERN: list(spec.patterns)},
        )
    idata.add_groups(extra)
    names = dspec.group_names
    base_fit._set_attrs(
        idata,
        base_fit._attrs(
            spec,
            {
                "sampler": sampler,
                "dependence_groups": str(names),
                "dependence_groups_index": json.dumps([list(map(int, g)) for g in dspec.groups]),
                "loading_sigma": dspec.sigma,
                "quadrature_nodes": dspec.n_nodes,
            },
        ),
    )
    return base_fit._finish(
        idata,
        spec,
        method=METHOD,
        sampler=sampler,
        timings=timings,
        warnings=warnings,
        check=check,
        posterior_predictive=posterior_predictive,
        ppc=lambda idata: dependence_ppc(idata, dspec),
        extra_diagnostics={
            "dependence_groups": names,
            "identification": ident,
            "loading_sigma": dspec.sigma,
        },
    )


def dependence_ppc(idata, dspec, *, emit: bool = True):
    """:func:`~bayescal.bayes.diagnostics.pattern_ppc` with the dependence model's expected
    counts and parameter count (loadings included)."""
    a, b, prev, loading = _draw_arrays(idata.posterior)
    expected = np.exp(pattern_logp_dependent(dspec, a, b, prev, loading)) * dspec.base.mask_total
    n_params = 2 * dspec.base.n_annotators + len(dspec.base.prevalence_groups) + dspec.n_loadings
    return pattern_ppc(idata, expected=expected, n_params=n_params, emit=emit)


def _cell_loglik(fit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-item log-likelihood of every non-empty cell, (chain, draw, cells), with the cells'
    item counts and (group, pattern) indices."""
    idata = fit.idata
    counts = idata.observed_data["counts"].transpose(GROUP, PATTERN).values
    g, p = np.nonzero(counts)
    if fit.method == METHOD:
        dspec = _dspec_from_idata(idata)
        a, b, prev, loading = _draw_arrays(idata.posterior)
        lp = pattern_logp_dependent(dspec, a, b, prev, loading)
    else:
        total = idata.constant_data["mask_total"].transpose(GROUP, PATTERN).values
        with np.errstate(divide="ignore"):
            lp = np.log(_expected_counts(idata)) - np.log(np.where(total > 0, total, 1))
    return lp[..., g, p], counts[g, p], np.stack([g, p])


def _dspec_from_idata(idata):
    """The likelihood part of the DependenceSpec a fit was made with, from its idata."""
    if "dependence_groups_index" not in idata.attrs:
        raise ConfigError("this InferenceData is not from fit_channels_dependence; refit.")
    const, obs = idata.constant_data, idata.observed_data
    posterior = idata.posterior
    gold = obs["gold_counts"].values if "gold_counts" in obs else None
    base = ChannelModelSpec(
        kind=idata.attrs["model"],
        annotators=[str(a) for a in const[ANNOTATOR].values],
        groups=[str(g) for g in const[GROUP].values],
        prevalence_groups=[str(g) for g in posterior[GROUP].values],
        prevalence_index=const["prevalence_index"].values,
        patterns=const[PATTERN].values,
        states=const["pattern_states"].transpose(PATTERN, ANNOTATOR).values,
        counts=obs["counts"].transpose(GROUP, PATTERN).values,
        mask_id=const["mask_id"].values,
        mask_total=const["mask_total"].transpose(GROUP, PATTERN).values,
        orient=0,
        orientation=idata.attrs["orientation"],
        priors=ChannelPriors.coerce(None),
        gold=gold,
    )
    groups = [tuple(g) for g in json.loads(idata.attrs["dependence_groups_index"])]
    return DependenceSpec(
        base, groups, float(idata.attrs["loading_sigma"]), int(idata.attrs["quadrature_nodes"])
    )


def pattern_loo(fit):
    """PSIS-LOO of a Bayesian binary channel fit on its pattern counts, as ``ELPDData``.

    ``elpd_loo = sum_cells n_c loo_c`` (see the module docstring); ``loo_i`` and
    ``pareto_k`` are expanded to one entry per item (cells in (group, pattern)
    order) so :func:`arviz.compare` computes the paired standard errors of two
    models fitted to the same data on items.

    Parameters
    ----------
    fit : ChannelFit
        From :func:`bayescal.bayes.fit_channels_bayes` (grouped/marginal/hui_walter)
        or :func:`fit_channels_dependence`.

    Returns
    -------
    arviz.ELPDData
    """
    if fit.idata is None or "posterior" not in fit.idata.groups():
        raise ConfigError("pattern_loo needs a Bayesian fit (fit.idata with a posterior).")
    ll, n, _ = _cell_loglik(fit)
    return cell_loo(ll, n)


def cell_loo(ll, n):
    """PSIS-LOO from per-item log-likelihoods of cells of identical items, as ``ELPDData``.

    Parameters
    ----------
    ll : ndarray of shape (chain, draw, cells)
        The log-likelihood of one item of each cell (every item of a cell has it).
    n : ndarray of shape (cells,)
        Items per cell.

    ``elpd_loo = sum_c n_c loo_c``; ``loo_i`` and ``pareto_k`` are expanded to items
    (cells in the given order), so :func:`arviz.compare` computes item-level paired
    standard errors (module docstring). Shared by both tracks
    (:mod:`bayescal.bayes.multiclass_dependence_fit`).
    """
    import arviz as az

    cells = az.InferenceData(
        posterior=xr.Dataset({"x": ((CHAIN, DRAW), np.zeros(ll.shape[:2]))}),
        log_likelihood=xr.Dataset({"item": ((CHAIN, DRAW, "cell"), ll)}),
    )
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("ignore")  # the Pareto-k warning is judged below on the expanded items
        res = az.loo(cells, pointwise=True)
    loo_c = res["loo_i"].values
    k_c = res["pareto_k"].values
    loo_i = np.repeat(loo_c, n)
    k_i = np.repeat(k_c, n)
    total = int(n.sum())
    lppd_c = _logmeanexp(ll.reshape(-1, ll.shape[-1]))
    out = res.copy()
    out["elpd_loo"] = float((n * loo_c).sum())
    out["se"] = float(np.sqrt(total * np.var(loo_i)))
    out["p_loo"] = float((n * (lppd_c - loo_c)).sum())
    out["n_data_points"] = total
    out["loo_i"] = xr.DataArray(loo_i, dims=["item"])
    out["pareto_k"] = xr.DataArray(k_i, dims=["item"])
    out["warning"] = bool((k_c > res["good_k"]).any())
    return out


def _logmeanexp(x):
    m = x.max(axis=0)
    return m + np.log(np.exp(x - m).mean(axis=0))


def compare_channel_models(fits: dict, *, loo=None):
    """:func:`arviz.compare` of Bayesian channel fits on the same pattern counts.

    ``loo`` computes each fit's ``ELPDData`` (default :func:`pattern_loo`, binary;
    the multiclass track passes
    :func:`~bayescal.bayes.multiclass_dependence_fit.multiclass_pattern_loo`).

    Examples
    --------
    >>> # compare_channel_models({"independent": fit0, "dependent": fit1})
    """
    import arviz as az

    # binary fits keep the hash in idata.attrs, multiclass fits in the posterior's attrs
    hashes = {
        name: f.idata.attrs.get("data_hash", f.idata.posterior.attrs.get("data_hash"))
        for name, f in fits.items()
    }
    if len(set(hashes.values())) != 1:
        raise ConfigError(f"the fits were made on different data (data hashes {hashes}).")
    loo = pattern_loo if loo is None else loo
    return az.compare({name: loo(f) for name, f in fits.items()}, ic="loo")
