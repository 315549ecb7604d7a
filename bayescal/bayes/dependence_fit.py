"""The dependence model's fits: posterior variables, LOO on pattern cells, ``az.compare``,
and the pattern / pair-agreement predictive check, for every number of classes.

The fits themselves are :func:`bayescal.bayes.fit.fit_channels_dependence` (two classes;
also ``fit_channels_bayes(..., dependence=...)``) and
:func:`bayescal.bayes.fit.fit_channels_bayes` (``dependence=``).
The two-class fit returns a :class:`~bayescal.channels.result.ChannelFit`
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

C classes
---------
For :func:`~bayescal.bayes.fit.fit_channels_bayes` fits with
and without ``dependence=`` (``models/dependence.md``, "Multiclass"): the same
pattern-cell PSIS-LOO (:func:`cell_loo`), :func:`arviz.compare`
(:func:`compare_channel_models`) and the pattern-count check
(:func:`~bayescal.bayes.diagnostics.pattern_ppc`: chi-square per channel group and
agreement of every annotator pair), reused, on the multiclass pattern states
(missing = ``C``).

The multiclass summary keeps the *observed* patterns only. The predictive check
therefore replicates each channel group's counts per missingness mask over the
observed patterns, with the model's probabilities renormalised to them (the same
for both models, so before/after is compared on one footing); with many items
the unobserved patterns carry little probability, with few items the check is
conditional on which patterns occurred.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.bayes.dependence import (
    CLASS,
    LOADED,
    LOADING_SIGMA,
    N_NODES,
    DependenceSpec,
    implied_correlation,
    multiclass_pattern_logp_dependent,
    pattern_logp_dependent,
    sample_multiclass_counts_dependent,
)
from bayescal.bayes.diagnostics import _expected_counts, pattern_ppc
from bayescal.bayes.logdensity import cell_loglik
from bayescal.bayes.models import ChannelModelSpec
from bayescal.bayes.multiclass import MulticlassModelSpec
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import _posterior_from_unconstrained
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP, PATTERN
from bayescal.errors import ConfigError

__all__ = [
    "dependence_posterior",
    "dependence_ppc",
    "pattern_loo",
    "compare_channel_models",
    "cell_loo",
    "multiclass_dspec_from_idata",
    "multiclass_pattern_loo",
    "compare_multiclass_channel_models",
    "multiclass_dependence_ppc",
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
    """PSIS-LOO of a Bayesian channel fit (any C, either model) on its pattern counts.

    ``elpd_loo = sum_cells n_c loo_c`` (see the module docstring); ``loo_i`` and
    ``pareto_k`` are expanded to one entry per item (cells in (group, pattern)
    order) so :func:`arviz.compare` computes the paired standard errors of two
    models fitted to the same data on items. A C-class fit (``confusion`` in its
    posterior) goes to :func:`multiclass_pattern_loo`.

    Parameters
    ----------
    fit : ChannelFit
        From :func:`bayescal.bayes.fit_channels_bayes` (grouped/marginal/hui_walter),
        :func:`bayescal.bayes.fit.fit_channels_dependence` or
        :func:`~bayescal.bayes.fit.fit_channels_bayes`.

    Returns
    -------
    arviz.ELPDData
    """
    if fit.idata is None or "posterior" not in fit.idata.groups():
        raise ConfigError("pattern_loo needs a Bayesian fit (fit.idata with a posterior).")
    if "confusion" in fit.idata.posterior:
        return multiclass_pattern_loo(fit)
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
    standard errors (module docstring). Shared by every C.
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
    """:func:`arviz.compare` of Bayesian channel fits (any C) on the same pattern counts.

    ``loo`` computes each fit's ``ELPDData`` (default :func:`pattern_loo`, which takes
    two-class and C-class fits alike).

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


#: the v0.2 name of :func:`compare_channel_models` for C-class fits
compare_multiclass_channel_models = compare_channel_models


def multiclass_dspec_from_idata(idata) -> DependenceSpec[MulticlassModelSpec]:
    """The likelihood part of the model a multiclass Bayesian fit was made with.

    A fit without ``dependence`` gives the dependence spec with no groups (its
    likelihood is the independence model's).
    """
    const, obs, post = idata.constant_data, idata.observed_data, idata.posterior
    if "prevalence_index" not in const or "confusion" not in post:
        raise ConfigError("this InferenceData is not from fit_channels_bayes; refit.")
    classes = [str(c) for c in post[CLASS].values]
    annotators = [str(a) for a in const[ANNOTATOR].values]
    k, c = len(annotators), len(classes)
    n_prev = post.sizes[GROUP]
    ones = np.ones((k, c, c))
    base = MulticlassModelSpec(
        annotators=annotators,
        classes=classes,
        groups=[str(g) for g in obs[GROUP].values],
        prevalence_groups=[str(g) for g in post[GROUP].values],
        prevalence_index=const["prevalence_index"].values,
        states=const["pattern_states"].transpose(PATTERN, ANNOTATOR).values,
        patterns=obs[PATTERN].values,
        counts=obs["counts"].transpose(GROUP, PATTERN).values,
        orient=0,
        priors=ChannelPriors(family="dirichlet"),
        confusion_alpha=ones,
        prevalence_alpha=np.ones((n_prev, c)),
        init_confusion=ones / c,
        init_prevalence=np.full((n_prev, c), 1.0 / c),
        confusion_reference=np.zeros((k, c), dtype=np.int64),
        prevalence_reference=np.zeros(n_prev, dtype=np.int64),
        gold=obs["gold_counts"].values if "gold_counts" in obs else None,
    )
    attrs = post.attrs  # fit_channels_bayes keeps its attributes there
    groups = [tuple(g) for g in json.loads(attrs.get("dependence_groups_index", "[]"))]
    return DependenceSpec(
        base,
        groups,
        float(attrs.get("loading_sigma", LOADING_SIGMA)),
        int(attrs.get("quadrature_nodes", N_NODES)),
    )


def _draws(idata, dspec):
    post = idata.posterior
    conf = post["confusion"].transpose(CHAIN, DRAW, ...).values
    prev = post["prevalence"].transpose(CHAIN, DRAW, ...).values
    if "loading" in post:
        loading = post["loading"].transpose(CHAIN, DRAW, LOADED, CLASS).values
    else:
        loading = np.zeros((*conf.shape[:2], 0, dspec.n_classes))
    return conf, prev, loading


def multiclass_pattern_loo(fit):
    """PSIS-LOO of a multiclass Bayesian fit (either model) on its pattern cells.

    Every item of a (channel group, pattern) cell has the log-likelihood
    ``log P(s | g)``; PSIS runs once per cell and the pointwise values are expanded
    to items (:func:`cell_loo`). Gold items are not
    part of it (they inform the confusions only).

    Returns
    -------
    arviz.ELPDData
    """
    if fit.idata is None or "posterior" not in fit.idata.groups():
        raise ConfigError("multiclass_pattern_loo needs a Bayesian fit (fit.idata).")
    dspec = multiclass_dspec_from_idata(fit.idata)
    conf, prev, loading = _draws(fit.idata, dspec)
    spec = dspec.base
    if dspec.groups:
        lp = multiclass_pattern_logp_dependent(dspec, conf, prev, loading)
        g, s = np.nonzero(spec.counts)
        ll = lp[..., g, s]
    else:
        flat, g, s = cell_loglik(
            spec, conf.reshape(-1, *conf.shape[2:]), prev.reshape(-1, *prev.shape[2:])
        )
        ll = flat.reshape(*conf.shape[:2], -1)
    return cell_loo(ll, spec.counts[g, s])


def multiclass_dependence_ppc(fit, *, random_state=0, emit: bool = False):
    """Pattern-count and pair-agreement predictive check of a multiclass Bayesian fit.

    Replicated counts are drawn under the fit's own model (independence, or the
    dependence model's loadings) per channel group and missingness mask over the
    observed patterns (module docstring), and passed with the expected counts to
    :func:`~bayescal.bayes.diagnostics.pattern_ppc`.

    Returns
    -------
    (xarray.Dataset, warnings)
        As :func:`~bayescal.bayes.diagnostics.pattern_ppc`: ``tail_prob[group]``,
        ``pair_agreement_tail[pair]`` (two-sided), observed and replicated agreement.
    """
    import arviz as az

    idata = fit.idata
    dspec = multiclass_dspec_from_idata(idata)
    spec = dspec.base
    conf, prev, loading = _draws(idata, dspec)
    lp = multiclass_pattern_logp_dependent(dspec, conf, prev, loading)  # (chain, draw, L, P)
    c, k = spec.n_classes, spec.n_annotators
    code = (spec.states < c).astype(np.int64) @ (1 << np.arange(k, dtype=np.int64))
    expected = np.zeros_like(lp)
    for m in np.unique(code):
        cols = code == m
        p = np.exp(lp[..., cols])
        expected[..., cols] = p / p.sum(-1, keepdims=True) * spec.counts[:, cols].sum(1)[:, None]
    rep = sample_multiclass_counts_dependent(
        dspec, conf, prev, loading, check_random_state(random_state)
    ).reshape(expected.shape)
    sizes = np.array([bin(int(m)).count("1") for m in np.unique(code)])
    check = az.InferenceData(
        posterior=xr.Dataset(
            {"prevalence": ((CHAIN, DRAW, GROUP, CLASS), prev)},
            coords={GROUP: spec.prevalence_groups},
        ),
        posterior_predictive=xr.Dataset({"counts": ((CHAIN, DRAW, GROUP, PATTERN), rep)}),
        observed_data=xr.Dataset(
            {"counts": ((GROUP, PATTERN), spec.counts)}, coords={GROUP: spec.groups}
        ),
        constant_data=xr.Dataset(
            {
                "pattern_states": ((PATTERN, ANNOTATOR), spec.states),
                "mask_size": (("mask",), sizes),
            },
            coords={ANNOTATOR: spec.annotators},
        ),
    )
    check.attrs.update(
        {key: idata.attrs[key] for key in ("dependence_groups",) if key in idata.attrs}
    )
    n_params = k * c * (c - 1) + len(spec.prevalence_groups) * (c - 1) + dspec.n_loadings
    return pattern_ppc(check, expected=expected, n_params=n_params, emit=emit, n_classes=c)
