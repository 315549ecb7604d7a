"""``fit_channels_bayes``: posterior of annotator channels, wrapped as a :class:`ChannelFit`.

The result's ``a``, ``b`` (``draw x annotator``) and ``prevalence``
(``draw x group``) stack chains and draws into one ``draw`` dimension, so every
consumer of point fits (weights, NC-ECE, recalibration) runs unchanged over the
posterior. The full :class:`arviz.InferenceData` is in ``fit.idata``.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import xarray as xr

from bayescal import __version__
from bayescal._random import check_random_state
from bayescal.bayes.dependence import (
    CLASS,
    LOADED,
    LOADING_SIGMA,
    build_pymc_dependence_model,
    check_identified,
    group_loglik_dependent,
    make_dependence_spec,
    sample_counts_dependent,
)
from bayescal.bayes.dependence_density import DependenceLogDensity
from bayescal.bayes.dependence_fit import METHOD as DEPENDENCE_METHOD
from bayescal.bayes.dependence_fit import (
    _add_loading,
    _draw_arrays,
    dependence_posterior,
    dependence_ppc,
)
from bayescal.bayes.diagnostics import pattern_ppc, sampling_checks
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import (
    MODELS,
    build_pymc_model,
    group_loglik,
    make_spec,
    predictive_fits,
    sample_counts,
    sample_prior,
)
from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import (
    MIN_CHECK_DRAWS,
    NUTSSettings,
    check_settings,
    sample_nutpie,
    sample_pymc,
)
from bayescal.channels.result import ChannelFit
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP, PATTERN
from bayescal.errors import ConfigError
from bayescal.summaries.summary import Summary, summarize

__all__ = [
    "fit_channels_bayes",
    "fit_channels_dependence",
    "prior_predictive",
    "resolve_summary",
    "MIN_CHECK_DRAWS",
]


def resolve_summary(data, groups):
    """An :class:`Annotations` is summarised with ``groups``; a Summary is used as is."""
    from bayescal.data.container import Annotations

    if isinstance(data, Annotations):
        return summarize(data, groups=groups)
    if isinstance(data, Summary):
        if groups is not None:
            raise ConfigError(
                "groups are fixed when the summary is built; pass groups to summarize()."
            )
        return data
    raise ConfigError(f"expected Annotations or a Summary; got {type(data).__name__}.")


def _check(summary, model):
    from bayescal.channels.identification import check_design

    if model not in MODELS:
        raise ConfigError(f"unknown model {model!r}; choose one of {sorted(MODELS)}.")
    return check_design(summary, MODELS[model][0])


def _empty_groups(spec, model) -> list[str]:
    """A warning when some score group has no annotated item (its prevalence is the prior)."""
    empty = [g for g, n in zip(spec.groups, spec.group_counts) if n == 0]
    if not empty or model == "marginal":
        return []
    return [
        f"score group(s) {empty} contain no annotated item: their prevalence posterior is "
        "the prior, which no annotated item's estimate uses. Fewer or wider groups (groups=, "
        "--groups) leave them out."
    ]


def _data_hash(spec) -> str:
    h = hashlib.sha256(np.ascontiguousarray(spec.counts).tobytes())
    if spec.gold.sum() > 0:
        h.update(b"gold" + np.ascontiguousarray(spec.gold).tobytes())
    h.update(json.dumps([spec.annotators, spec.groups]).encode())
    return h.hexdigest()[:16]


def _design_groups(spec):
    """observed_data and constant_data as xarray Datasets (dims named, coords set)."""
    n_masks = int(spec.mask_id.max()) + 1
    mask_size = np.array([(spec.states[spec.mask_id == m][0] != 2).sum() for m in range(n_masks)])
    coords = {GROUP: spec.groups, PATTERN: list(spec.patterns), ANNOTATOR: spec.annotators}
    observed = xr.Dataset({"counts": ((GROUP, PATTERN), spec.counts)}, coords=coords)
    if spec.gold.sum() > 0:
        observed["gold_counts"] = xr.DataArray(
            spec.gold, dims=("gold_class", PATTERN), coords={"gold_class": ["0", "1"]}
        )
    constant = xr.Dataset(
        {
            "pattern_states": ((PATTERN, ANNOTATOR), spec.states),
            "prevalence_index": ((GROUP,), spec.prevalence_index),
            "mask_total": ((GROUP, PATTERN), spec.mask_total),
            "mask_id": ((PATTERN,), spec.mask_id),
            "mask_size": (("mask",), mask_size),
            "group_counts": ((GROUP,), spec.group_counts),
        },
        coords=coords,
    )
    return observed, constant


def _attach(idata, spec, rng, *, posterior_predictive: bool):
    """Add log_likelihood, observed/constant data and posterior predictive to ``idata``."""
    post = idata.posterior
    a = post["a"].transpose(CHAIN, DRAW, ANNOTATOR).values
    b = post["b"].transpose(CHAIN, DRAW, ANNOTATOR).values
    prev = post["prevalence"].transpose(CHAIN, DRAW, GROUP).values
    cd = {CHAIN: post[CHAIN].values, DRAW: post[DRAW].values}
    ll = group_loglik(spec, a, b, prev)
    observed, constant = _design_groups(spec)
    groups = {
        "log_likelihood": xr.Dataset(
            {"counts": ((CHAIN, DRAW, GROUP), ll)}, coords={**cd, GROUP: spec.groups}
        ),
        "observed_data": observed,
        "constant_data": constant,
    }
    if posterior_predictive:
        rep = sample_counts(spec, a, b, prev, rng).astype(np.int32)
        groups["posterior_predictive"] = xr.Dataset(
            {"counts": ((CHAIN, DRAW, GROUP, PATTERN), rep)},
            coords={**cd, GROUP: spec.groups, PATTERN: list(spec.patterns)},
        )
    idata.add_groups(groups)
    return idata


def _attrs(spec, extra=None):
    attrs = {
        "model": spec.kind,
        "orientation": spec.orientation,
        "orient_annotator": spec.annotators[spec.orient],
        "priors": json.dumps(spec.priors.to_dict()),
        "bayescal_version": __version__,
        "data_hash": _data_hash(spec),
    }
    attrs.update(extra or {})
    return attrs


def _set_attrs(idata, attrs):
    idata.attrs = {**getattr(idata, "attrs", {}), **attrs}
    for name in idata.groups():
        idata[name].attrs.update(attrs)


def _inference_data(posterior, sample_stats):
    import arviz as az

    return az.InferenceData(posterior=posterior, sample_stats=sample_stats)


def _fit_multiclass(data, model, orientation, **options) -> ChannelFit:
    """The multiclass Dawid-Skene posterior behind :func:`fit_channels_bayes`."""
    pooled = {"grouped": False, "marginal": True}.get(model)
    if pooled is None:
        raise ConfigError(
            f"model={model!r} is a binary channel model; multiclass data take "
            "'grouped' (one class prevalence per group) or 'marginal' (pooled)."
        )
    if orientation != "all":
        raise ConfigError(
            f"orientation={orientation!r} applies to binary channels only; the multiclass "
            "model orients every draw by the designated annotator's diagonal dominance."
        )
    return fit_multiclass_channels_bayes(data, pooled=pooled, **options)


def fit_channels_bayes(
    data,
    model: str = "grouped",
    *,
    groups=None,
    priors=None,
    orient=0,
    orientation: str = "all",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    target_accept: float | None = None,
    sampler: str = "nutpie",
    random_state=0,
    progress: bool = False,
    posterior_predictive: bool = True,
    check: bool = True,
    dependence=None,
) -> ChannelFit:
    """Sample the posterior of annotator channels from response-pattern counts.

    Multiclass data (``MulticlassAnnotations`` or a summary of C > 2 classes) go to
    :func:`~bayescal.bayes.multiclass_fit.fit_multiclass_channels_bayes` (SPEC §3,
    multiclass Dawid-Skene): ``model="grouped"`` keeps one class prevalence per
    group, ``"marginal"`` pools them; ``orientation`` must stay ``"all"`` and the
    posterior predictive replicates are drawn by the noise-or-ambiguity check
    (:mod:`bayescal.metrics.noise_or_ambiguity`), not here.

    Parameters
    ----------
    data : Annotations, MulticlassAnnotations or Summary
        The container (summarised here with ``groups``) or an existing summary.
    model : {"grouped", "marginal", "hui_walter"}, default "grouped"
        ``"grouped"``: score-bin Dawid-Skene, shared channels and one prevalence
        per score group (K >= 2 with >= 2 non-empty groups when K = 2).
        ``"marginal"``: Dawid-Skene with one prevalence (K >= 3).
        ``"hui_walter"``: two annotators, L >= 2 score groups. Designs that
        cannot identify the channels are refused with the point estimators'
        checks (:func:`bayescal.channels.identification.check_design`).
    groups : None, int, edges or "data"
        Score groups when ``data`` is a container (see :func:`bayescal.summarize`).
    priors : ChannelPriors, mapping or None
        The prior family chooses the model (defaults in :mod:`bayescal.bayes.priors`):
        Beta priors for ``a``, ``b``, ``prevalence`` (the two-class default) fit the
        binary model with its orientation constraint; Dirichlet rows (``diagonal``,
        ``off_diagonal``, ``prevalence``, ``confusion``, ...; the default for C > 2)
        fit the C-class model for any C, two classes included. Unknown keys raise
        ``ConfigError``.
    orient : int or str, default 0
        The designated annotator whose ``a < b`` fixes the label orientation.
    orientation : {"all", "designated"}, default "all"
        ``"all"`` constrains every annotator to ``a_j < b_j`` (better than chance);
        ``"designated"`` constrains only ``orient``.
    draws, tune, chains : int, default 1000, 1000, 4
        NUTS settings per chain; the result has ``chains * draws`` draws. With
        ``check=True`` draws must be at least ``MIN_CHECK_DRAWS`` (4), the fewest
        for which R-hat and ESS exist (ConfigError otherwise).
    cores : int or None
        Chains run in parallel. nutpie: threads (None = 1); PyMC: processes
        (None = PyMC's default).
    target_accept : float or None, default None
        NUTS target acceptance; None means 0.9 for the binary models and 0.8
        for the multiclass model (where 0.9 halved the ESS per second, see
        ``models/multiclass.md``).
    sampler : {"nutpie", "pymc"}, default "nutpie"
        NUTS implementation; both sample the same posterior (see
        :mod:`bayescal.bayes.sampling` and the model cards). ``"nutpie"`` runs
        the hand-written density (:class:`~bayescal.bayes.logdensity.ChannelLogDensity`)
        without importing PyMC, about ten times faster per fit; ``"pymc"`` is the
        reference.
    random_state : None, int or numpy.random.Generator, default 0
        The only source of randomness (chain seeds, initial jitter and posterior
        predictive draws).
    progress : bool, default False
        Show the sampler's progress bar.
    posterior_predictive : bool, default True
        Replicate the pattern counts per draw (needed by the predictive check).
    check : bool, default True
        Run the sampler checks and the predictive check; their problems become
        ``warnings`` on the result (and are issued as Python warnings).
    dependence : None, "all", "r1:r2,..." or list of pairs, default None
        Binary only: fit the conditional-dependence model instead (latent item
        difficulty shared within each group, Qu, Tan & Kutner 1996), see
        :func:`bayescal.bayes.fit.fit_channels_dependence`; method
        ``"bayes_dependence"``.

    Returns
    -------
    ChannelFit
        ``a``, ``b`` of shape (draw, annotator) and ``prevalence`` of shape
        (draw, group) (group ``"all"`` for the marginal model), ``idata`` with
        ``posterior``, ``sample_stats``, ``log_likelihood`` (``counts[chain, draw,
        group]``: multinomial log-likelihood of each score group's counts, for
        :func:`arviz.loo` / :func:`arviz.compare`), ``observed_data``,
        ``constant_data`` and ``posterior_predictive``. ``diagnostics`` holds the
        worst R-hat / ESS, divergences, BFMI, predictive tail probabilities and
        the sampling time; ``converged`` is False when a sampler check failed.

    Raises
    ------
    KeyboardInterrupt
        When sampling is interrupted: a partial posterior is never returned.
    FitError
        When the sampler returns fewer chains or draws than requested.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.bayes import fit_channels_bayes
    >>> data = simulate_toy(1000, random_state=0)
    >>> fit = fit_channels_bayes(data, groups=4, draws=50, tune=50, chains=1,
    ...                          cores=1, check=False)  # a real fit uses the defaults
    >>> fit.method, fit.a.dims, fit.a.sizes["draw"]
    ('bayes_grouped', ('draw', 'annotator'), 50)
    """
    n_classes = getattr(data, "n_classes", 2)
    family = ChannelPriors.coerce(priors, default="beta" if n_classes == 2 else "dirichlet").family
    if family == "dirichlet" or n_classes > 2:
        if dependence is not None:
            raise ConfigError(
                "dependence applies to binary channels only (the two-class model with Beta "
                "priors) in this version; drop it for multiclass data or Dirichlet-row priors."
            )
        return _fit_multiclass(
            data,
            model,
            orientation,
            groups=groups,
            priors=priors,
            orient=orient,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            target_accept=0.8 if target_accept is None else target_accept,
            sampler=sampler,
            random_state=random_state,
            progress=progress,
            check=check,
        )
    if target_accept is None:
        target_accept = 0.9
    if dependence is not None:
        return fit_channels_dependence(
            data,
            dependence,
            model,
            groups=groups,
            priors=priors,
            orient=orient,
            orientation=orientation,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            target_accept=target_accept,
            sampler=sampler,
            random_state=random_state,
            progress=progress,
            posterior_predictive=posterior_predictive,
            check=check,
        )
    check_settings(draws, tune, chains, cores, target_accept, sampler, check)
    summary = resolve_summary(data, groups)
    warnings = list(_check(summary, model))
    spec = make_spec(summary, model, priors=priors, orient=orient, orientation=orientation)
    warnings.extend(_empty_groups(spec, model))
    too_big = predictive_fits(spec, int(draws) * int(chains)) if posterior_predictive else None
    if too_big is not None:
        warnings.append(too_big)
        posterior_predictive = False
    rng = check_random_state(random_state)
    settings = NUTSSettings.from_options(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        rng=rng,
        target_accept=target_accept,
        progress=progress,
    )
    if sampler == "nutpie":
        posterior, stats, timings = sample_nutpie(ChannelLogDensity(spec), settings)
    else:
        posterior, stats, timings = sample_pymc(build_pymc_model(spec), settings)
    idata = _inference_data(posterior, stats)
    _attach(idata, spec, rng, posterior_predictive=posterior_predictive)
    _set_attrs(idata, _attrs(spec, {"sampler": sampler}))
    return _finish(
        idata,
        spec,
        method=MODELS[model][1],
        sampler=sampler,
        timings=timings,
        warnings=warnings,
        check=check,
        posterior_predictive=posterior_predictive,
    )


def _finish(
    idata,
    spec,
    *,
    method,
    sampler,
    timings,
    warnings,
    check,
    posterior_predictive,
    ppc=pattern_ppc,
    extra_diagnostics=None,
) -> ChannelFit:
    """Sampler and predictive checks, diagnostics, and the ChannelFit of a binary posterior
    (shared by the independence and the dependence models; ``ppc(idata)`` is the model's
    predictive check)."""
    diagnostics: dict = {
        "sampler": sampler,
        "sampling_seconds": timings["sampling_seconds"],
        "load_seconds": timings["load_seconds"],
        "data_hash": idata.attrs["data_hash"],
        "gold_items": list(spec.n_gold),
        **(extra_diagnostics or {}),
    }
    converged = True
    if check:
        diag, msgs = sampling_checks(idata)
        diagnostics.update(diag)
        converged = diag["converged"]
        warnings.extend(msgs)
        if posterior_predictive:
            ppc_ds, msgs = ppc(idata)
            tails = ppc_ds["tail_prob"].values.tolist()
            pair_tails = ppc_ds["pair_agreement_tail"].values.tolist()
            diagnostics["ppc_tail_prob"] = dict(zip(spec.groups, tails))
            diagnostics["ppc_pair_tail_prob"] = dict(
                zip([str(p) for p in ppc_ds["pair"].values], pair_tails)
            )
            diagnostics["ppc_saturated"] = ppc_ds.attrs["saturated"]
            warnings.extend(msgs)
    diagnostics["loglik_posterior_mean"] = float(idata.log_likelihood["counts"].sum(GROUP).mean())
    post = idata.posterior
    s = post.sizes[CHAIN] * post.sizes[DRAW]
    fit = ChannelFit.from_draws(
        post["a"].transpose(CHAIN, DRAW, ANNOTATOR).values.reshape(s, -1),
        post["b"].transpose(CHAIN, DRAW, ANNOTATOR).values.reshape(s, -1),
        post["prevalence"].transpose(CHAIN, DRAW, GROUP).values.reshape(s, -1),
        annotators=spec.annotators,
        groups=spec.prevalence_groups,
        group_counts=spec.prevalence_group_counts(),
        method=method,
        warnings=warnings,
        converged=converged,
        diagnostics=diagnostics,
        group_edges=spec.group_edges,
        idata=idata,
    )
    from bayescal.channels.identification import check_fitted

    fit.warnings.extend(check_fitted(fit))
    return fit


def prior_predictive(
    data,
    model: str = "grouped",
    *,
    groups=None,
    priors=None,
    orient=0,
    orientation: str = "all",
    draws: int = 500,
    random_state=0,
):
    """Draws of the parameters and the pattern counts from the prior.

    The design (groups, annotators, how many items of each group show each
    missingness mask) is taken from ``data``; the answers are replicated. Use it
    to see what the priors imply before sampling (for example how often the
    prior predicts near-unanimous patterns).

    Returns
    -------
    arviz.InferenceData
        ``prior`` (``a``, ``b``, ``prevalence``; one chain), ``prior_predictive``
        (``counts[chain, draw, group, pattern]``), ``observed_data`` and
        ``constant_data``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> idata = prior_predictive(simulate_toy(500, random_state=0), groups=3, draws=50)
    >>> idata.prior_predictive["counts"].shape
    (1, 50, 3, 8)
    """
    import arviz as az

    if int(draws) != draws or draws < 1:
        raise ConfigError(f"draws must be a positive integer; got {draws!r}.")
    summary = resolve_summary(data, groups)
    _check(summary, model)
    spec = make_spec(summary, model, priors=priors, orient=orient, orientation=orientation)
    rng = check_random_state(random_state)
    prior = sample_prior(spec, int(draws), rng)
    counts = sample_counts(spec, prior["a"], prior["b"], prior["prevalence"], rng)
    cd = {CHAIN: [0], DRAW: np.arange(draws)}
    prior_ds = xr.Dataset(
        {
            "a": ((CHAIN, DRAW, ANNOTATOR), prior["a"][None]),
            "b": ((CHAIN, DRAW, ANNOTATOR), prior["b"][None]),
            "prevalence": ((CHAIN, DRAW, GROUP), prior["prevalence"][None]),
        },
        coords={**cd, ANNOTATOR: spec.annotators, GROUP: spec.prevalence_groups},
    )
    pp = xr.Dataset(
        {"counts": ((CHAIN, DRAW, GROUP, PATTERN), counts[None])},
        coords={**cd, GROUP: spec.groups, PATTERN: list(spec.patterns)},
    )
    observed, constant = _design_groups(spec)
    idata = az.InferenceData(
        prior=prior_ds, prior_predictive=pp, observed_data=observed, constant_data=constant
    )
    _set_attrs(idata, _attrs(spec))
    return idata


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
    summary = resolve_summary(data, groups)
    if summary.n_classes != 2:
        raise ConfigError("the dependence model is binary; multiclass data are not supported.")
    warnings = list(_check(summary, model))
    spec = make_spec(summary, model, priors=priors, orient=orient, orientation=orientation)
    dspec = make_dependence_spec(spec, dependence, sigma=sigma)
    ident = check_identified(dspec)
    warnings.extend(_empty_groups(spec, model))
    rng = check_random_state(random_state)
    settings = NUTSSettings.from_options(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        rng=rng,
        target_accept=target_accept,
        progress=progress,
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
    idata = _inference_data(posterior, stats)
    a, b, prev, loading = _draw_arrays(idata.posterior)
    cd = {CHAIN: idata.posterior[CHAIN].values, DRAW: idata.posterior[DRAW].values}
    observed, constant = _design_groups(spec)
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
    _set_attrs(
        idata,
        _attrs(
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
    return _finish(
        idata,
        spec,
        method=DEPENDENCE_METHOD,
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
