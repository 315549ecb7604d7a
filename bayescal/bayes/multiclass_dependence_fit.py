"""LOO, model comparison and the pair-agreement predictive check of multiclass Bayesian fits.

For :func:`~bayescal.bayes.multiclass_fit.fit_multiclass_channels_bayes` fits with
and without ``dependence=`` (``models/dependence.md``, "Multiclass"): the binary
track's pattern-cell PSIS-LOO (:func:`~bayescal.bayes.dependence_fit.cell_loo`),
:func:`arviz.compare` (:func:`~bayescal.bayes.dependence_fit.compare_channel_models`)
and the pattern-count check (:func:`~bayescal.bayes.diagnostics.pattern_ppc`:
chi-square per channel group and agreement of every annotator pair), reused, on
the multiclass pattern states (missing = ``C``).

The multiclass summary keeps the *observed* patterns only. The predictive check
therefore replicates each channel group's counts per missingness mask over the
observed patterns, with the model's probabilities renormalised to them (the same
for both models, so before/after is compared on one footing); with many items
the unobserved patterns carry little probability, with few items the check is
conditional on which patterns occurred.
"""

from __future__ import annotations

import json

import arviz as az
import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.bayes.dependence_fit import cell_loo, compare_channel_models
from bayescal.bayes.diagnostics import pattern_ppc
from bayescal.bayes.logdensity import cell_loglik
from bayescal.bayes.multiclass import MulticlassModelSpec
from bayescal.bayes.multiclass_dependence import (
    LOADED,
    LOADING_SIGMA,
    N_NODES,
    MulticlassDependenceSpec,
    multiclass_pattern_logp_dependent,
    sample_multiclass_counts_dependent,
)
from bayescal.bayes.priors import ChannelPriors
from bayescal.dims import ANNOTATOR, CHAIN, CLASS, DRAW, GROUP, PATTERN
from bayescal.errors import ConfigError

__all__ = [
    "multiclass_dspec_from_idata",
    "multiclass_pattern_loo",
    "compare_multiclass_channel_models",
    "multiclass_dependence_ppc",
]


def multiclass_dspec_from_idata(idata) -> MulticlassDependenceSpec:
    """The likelihood part of the model a multiclass Bayesian fit was made with.

    A fit without ``dependence`` gives the dependence spec with no groups (its
    likelihood is the independence model's).
    """
    const, obs, post = idata.constant_data, idata.observed_data, idata.posterior
    if "prevalence_index" not in const or "confusion" not in post:
        raise ConfigError("this InferenceData is not from fit_multiclass_channels_bayes; refit.")
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
    attrs = post.attrs  # fit_multiclass_channels_bayes keeps its attributes there
    groups = [tuple(g) for g in json.loads(attrs.get("dependence_groups_index", "[]"))]
    return MulticlassDependenceSpec(
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
    to items (:func:`~bayescal.bayes.dependence_fit.cell_loo`). Gold items are not
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


def compare_multiclass_channel_models(fits: dict):
    """:func:`arviz.compare` of multiclass Bayesian fits on the same pattern counts (LOO).

    Examples
    --------
    >>> # compare_multiclass_channel_models({"independent": fit0, "dependent": fit1})
    """
    return compare_channel_models(fits, loo=multiclass_pattern_loo)


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
