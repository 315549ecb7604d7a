"""``fit_channels_bayes``: posterior of annotator channels for every number of classes,
wrapped as a :class:`ChannelFit`.

The prior family chooses the model: Beta priors the two-class model (``a``, ``b``
``draw x annotator``, ``prevalence`` ``draw x group``), Dirichlet rows the C-class
Dawid-Skene model (``confusion[draw, annotator, true_class, answered_class]``,
``class_prevalence[draw, group, class]``; SPEC §3). Chains and draws are stacked into
one ``draw`` dimension, so every consumer of point fits (weights, NC-ECE,
recalibration) runs unchanged over the posterior. The full
:class:`arviz.InferenceData` is in ``fit.idata``.
"""

from __future__ import annotations

import hashlib
import json
import warnings as _warnings

import numpy as np
import xarray as xr
from scipy.special import gammaln

from bayescal import __version__
from bayescal._random import check_random_state
from bayescal.bayes.dependence import (
    CLASS,
    LOADED,
    LOADING_SIGMA,
    build_pymc_dependence_model,
    build_pymc_multiclass_dependence_model,
    check_identified,
    check_multiclass_identified,
    group_loglik_dependent,
    implied_correlation,
    make_dependence_spec,
    multiclass_class_pattern_logp,
    multiclass_pattern_logp_dependent,
    pair_labels,
    sample_counts_dependent,
    sample_multiclass_counts_dependent,
)
from bayescal.bayes.dependence_density import DependenceLogDensity, MulticlassDependenceLogDensity
from bayescal.bayes.dependence_fit import METHOD as DEPENDENCE_METHOD
from bayescal.bayes.dependence_fit import (
    _add_loading,
    _draw_arrays,
    dependence_posterior,
    dependence_ppc,
)
from bayescal.bayes.diagnostics import pattern_ppc, sampling_checks
from bayescal.bayes.logdensity import ChannelLogDensity, MulticlassLogDensity, cell_loglik
from bayescal.bayes.models import (
    MODELS,
    build_pymc_model,
    group_loglik,
    make_spec,
    predictive_fits,
    sample_counts,
    sample_prior,
)
from bayescal.bayes.multiclass import (
    _log_pattern_class,
    build_multiclass_pymc_model,
    make_multiclass_spec,
    orient_draws,
)
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import (
    MIN_CHECK_DRAWS,
    NUTSSettings,
    check_settings,
    sample_nutpie,
    sample_pymc,
)
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.identification import SINGULAR_WARNING, check_multiclass_design
from bayescal.channels.orientation import (
    diagonal_dominance_failures,
    dominant_diagonal_permutation,
)
from bayescal.channels.result import ANSWERED_CLASS, TRUE_CLASS, ChannelFit
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP, PATTERN
from bayescal.display import name_list
from bayescal.errors import ConfigError, FitError
from bayescal.summaries.summary import GOLD_CLASS, Summary, as_summary

__all__ = [
    "fit_channels_bayes",
    "fit_channels_dependence",
    "prior_predictive",
    "resolve_summary",
    "MIN_CHECK_DRAWS",
]

#: Most (draw x cell) log-likelihoods held at once when the multiclass fit's pointwise
#: log-likelihood (for LOO) is summed per group (16 M numbers, 128 MB).
LOGLIK_BLOCK_ELEMENTS = 1 << 24


def resolve_summary(data, groups, default=None):
    """:func:`~bayescal.summaries.summary.as_summary` with ``groups`` (``default`` when None
    for a container)."""
    if groups is None and not isinstance(data, Summary):
        groups = default
    return as_summary(data, groups=groups, caller="the Bayesian channel fit")


def _check(summary, model):
    from bayescal.channels.identification import check_design

    if model not in MODELS:
        raise ConfigError(f"unknown model {model!r}; choose one of {sorted(MODELS)}.")
    return check_design(summary, MODELS[model][0])


def _empty_groups(spec, pooled: bool) -> list[str]:
    """A warning when some channel group has no annotated item (its prevalence is the prior)."""
    empty = [g for g, n in zip(spec.groups, spec.group_counts) if n == 0]
    if not empty or pooled:
        return []
    return [
        f"channel group(s) {name_list(empty)} contain no annotated item: their prevalence "
        "posterior is "
        "the prior, which no annotated item's estimate uses. Fewer or wider groups (groups=, "
        "--groups) leave them out."
    ]


def _data_hash(names: list, *arrays) -> str:
    """The first 16 hex digits of the SHA-256 of ``arrays`` (bytes as given) and ``names``."""
    h = hashlib.sha256()
    for arr in arrays:
        h.update(arr if isinstance(arr, bytes) else np.ascontiguousarray(arr).tobytes())
    h.update(json.dumps(names).encode())
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
        "data_hash": _data_hash(
            [spec.annotators, spec.groups],
            spec.counts,
            *([b"gold" + np.ascontiguousarray(spec.gold).tobytes()] if spec.gold.sum() > 0 else []),
        ),
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
    sigma: float = LOADING_SIGMA,
    reference: str = "largest",
    start: ChannelFit | None = None,
) -> ChannelFit:
    """Sample the posterior of annotator channels from response-pattern counts.

    One function for every number of classes; the prior family chooses the model.
    Dirichlet rows (the default for C > 2, and for any C when given) fit the C-class
    Dawid-Skene model (SPEC §3, ``models/multiclass.md``): the result holds
    ``confusion[draw, annotator, true_class, answered_class]`` and
    ``class_prevalence[draw, group, class]`` (method ``"bayes_multiclass"``,
    ``"bayes_multiclass_pooled"`` or ``..._dependence``); ``model="grouped"`` keeps one
    class prevalence per group, ``"marginal"`` pools them; ``orientation`` must stay
    ``"all"``: each draw is relabelled by the designated annotator's diagonal dominance
    (not with gold items), counted in ``diagnostics["relabelled_draws"]``. Without
    ``dependence`` its posterior predictive replicates are drawn by the
    noise-or-ambiguity check (:mod:`bayescal.metrics.noise_or_ambiguity`), not here.
    Beta priors (the two-class default) fit the binary model with its orientation
    constraint.

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
        for the C-class model (at 10,000 items, C = 10, no divergences at 0.8,
        and 0.9 gave 892 instead of 1,536 as the smallest bulk ESS of a confusion
        entry for the same gradient evaluations:
        ``docs/results/multiclass_bayes_speed.json``).
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
        Fit the conditional-dependence model instead (latent item difficulty shared
        within each group, Qu, Tan & Kutner 1996; ``models/dependence.md``). Beta
        priors: :func:`bayescal.bayes.fit.fit_channels_dependence`, method
        ``"bayes_dependence"``; Dirichlet rows: the confusions stay the marginal
        channels, ``idata`` adds ``loading[dependent_annotator, class]``,
        ``correlation[pair, class]`` and ``posterior_predictive``; the groups used are
        in ``diagnostics["dependence_groups"]``.
    sigma : float, default 1.0
        Scale of the loadings' HalfNormal prior (with ``dependence`` only).
    reference : {"largest", "last"}, default "largest"
        C-class model: its unconstrained coordinates are log-ratios against each
        simplex's largest starting entry, or against the last class (same model;
        ``bayescal bench multiclass-bayes-speed`` compares them).
    start : ChannelFit, optional
        C-class model: the EM fit of the same summary (``dawid_skene_em`` with the
        same ``prevalence`` and ``orient``, ``empty_groups="drop"``) where the chains
        start; by default that EM runs here. An audit that has its point fit already
        passes it, so EM runs once.

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
    IdentificationError, DataError
        Designs that cannot identify the channels (the point estimators' checks).
    FitError
        When the sampler returns fewer chains or draws than requested.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> rows = fit_channels_bayes(simulate_multiclass(1500, 3, random_state=0), draws=100,
    ...                           tune=200, chains=2)
    >>> rows.confusion.shape, rows.layout
    ((200, 3, 3, 3), 'multiclass')
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
            reference=reference,
            random_state=random_state,
            progress=progress,
            check=check,
            dependence=dependence,
            sigma=sigma,
            posterior_predictive=posterior_predictive,
            start=start,
        )
    if start is not None:
        raise ConfigError(
            "start= sets the C-class model's starting point; the two-class model with Beta "
            "priors starts from its priors. Drop start= or give Dirichlet-row priors."
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
            sigma=sigma,
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
    warnings.extend(_empty_groups(spec, model == "marginal"))
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


def _gradient_counts(stats, timings) -> dict[str, int | None]:
    """Leapfrog steps (one gradient each) of the kept draws and of tuning, all chains: where
    a fit's time goes (at 2x10^4 items, C = 10, K = 5, tuning takes two thirds: 61,301 of
    91,301 with 1,000 + 1,000 per chain)."""
    return {
        "gradient_evaluations": int(stats["n_steps"].sum()) if "n_steps" in stats else None,
        "tuning_gradient_evaluations": timings.get("tuning_gradient_evaluations"),
    }


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
        **_gradient_counts(idata.sample_stats, timings),
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
    warnings.extend(_empty_groups(spec, model == "marginal"))
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


# --------------------------------------------------------------------------- C-class rows
def _em_start(summary, pooled, orient, seed, warnings):
    """The EM fit chains start from (None, with a warning, when EM finds no acceptable start)."""
    try:
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            return dawid_skene_em(
                summary,
                prevalence="pooled" if pooled else "grouped",
                orient=orient,
                empty_groups="drop",
                random_state=seed,
            )
    except FitError as exc:
        warnings.append(
            f"the EM fit used as the chains' starting point failed ({exc}); chains start from "
            "the prior means instead, which can leave them in different labellings or local "
            "modes. Check R-hat."
        )
        return None


# --------------------------------------------------------------------------- samplers
def _constrained_posterior(density, x, attrs) -> xr.Dataset:
    """The multiclass model's variables from nutpie's unconstrained draws (chain, draw, n_dim),
    named and laid out as PyMC's posterior of the same model."""
    conf, prev = density.constrain(x)
    return xr.Dataset(
        {
            "confusion": ((CHAIN, DRAW, ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS), conf),
            "prevalence": ((CHAIN, DRAW, GROUP, CLASS), prev),
        },
        attrs=attrs,
    )


def _dependent_posterior(density, x, attrs) -> xr.Dataset:
    """:func:`_constrained_posterior` plus the loadings of the dependence model."""
    conf, prev, loading = density.constrain(x)
    post = _constrained_posterior(density.prior, x[..., : density.n_base], attrs)
    return post.assign(loading=((CHAIN, DRAW, LOADED, CLASS), loading))


def _sample_rows(spec, sampler: str, settings: NUTSSettings, dspec=None):
    """Confusion, prevalence (and, with ``dspec``, loading) draws (chain, draw, ...), sampler
    statistics and timings, through the samplers the binary model uses (one interrupt and
    completeness guarantee)."""
    if dspec is not None and sampler == "nutpie":
        posterior, stats, timings = sample_nutpie(
            MulticlassDependenceLogDensity(dspec), settings, to_posterior=_dependent_posterior
        )
    elif dspec is not None:
        posterior, stats, timings = sample_pymc(
            build_pymc_multiclass_dependence_model(dspec), settings
        )
    elif sampler == "nutpie":
        posterior, stats, timings = sample_nutpie(
            MulticlassLogDensity(spec), settings, to_posterior=_constrained_posterior
        )
    else:
        posterior, stats, timings = sample_pymc(build_multiclass_pymc_model(spec), settings)
    conf = posterior["confusion"].transpose(CHAIN, DRAW, ...).values
    prev = posterior["prevalence"].transpose(CHAIN, DRAW, ...).values
    loading = None
    if dspec is not None:
        loading = posterior["loading"].transpose(CHAIN, DRAW, ...).values
    return conf, prev, loading, stats, posterior.attrs, timings


# --------------------------------------------------------------------------- InferenceData
def _masks(states, n_classes):
    answered = states < n_classes
    code = answered.astype(np.int64) @ (1 << np.arange(states.shape[1], dtype=np.int64))
    _, mask_id = np.unique(code, return_inverse=True)
    return mask_id.reshape(-1)


def _multinomial_constant(counts, mask_id) -> np.ndarray:
    """``sum_m log N_gm! - sum_s log n_gs!`` per group (unobserved patterns add 0)."""
    counts = np.asarray(counts, dtype=np.float64)
    per_mask = np.stack(
        [counts[:, mask_id == m].sum(axis=1) for m in range(int(mask_id.max()) + 1)], axis=1
    )
    return gammaln(per_mask + 1).sum(axis=1) - gammaln(counts + 1).sum(axis=1)


def _rows_inference_data(spec, conf, prev, stats, attrs):
    import arviz as az

    chains, draws = conf.shape[:2]
    cd = {CHAIN: np.arange(chains), DRAW: np.arange(draws)}
    posterior = xr.Dataset(
        {
            "confusion": ((CHAIN, DRAW, ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS), conf),
            "prevalence": ((CHAIN, DRAW, GROUP, CLASS), prev),
        },
        coords={
            **cd,
            ANNOTATOR: spec.annotators,
            TRUE_CLASS: spec.classes,
            ANSWERED_CLASS: spec.classes,
            GROUP: spec.prevalence_groups,
            CLASS: spec.classes,
        },
        attrs=attrs,
    )
    mask_id = _masks(spec.states, spec.n_classes)
    flat_conf = conf.reshape(-1, *conf.shape[2:])
    flat_prev = prev.reshape(-1, *prev.shape[2:])
    per_group = np.zeros((flat_conf.shape[0], len(spec.groups)))
    # in blocks of draws: the (draws x cells) table of a 10^5-item C = 10 fit is 0.6 GB,
    # twice over with its weighted copy (each draw's row is computed alone: same sums)
    step = max(1, LOGLIK_BLOCK_ELEMENTS // max(1, int(np.count_nonzero(spec.counts))))
    for lo in range(0, flat_conf.shape[0], step):
        block = slice(lo, lo + step)
        cell_ll, g, s = cell_loglik(spec, flat_conf[block], flat_prev[block])
        np.add.at(per_group[block].T, g, (cell_ll * spec.counts[g, s]).T)
    ll = per_group.reshape(chains, draws, -1) + _multinomial_constant(spec.counts, mask_id)
    data_coords = {GROUP: spec.groups, PATTERN: list(spec.patterns), ANNOTATOR: spec.annotators}
    log_lik = {"counts": ((CHAIN, DRAW, GROUP), ll)}
    observed = {"counts": ((GROUP, PATTERN), spec.counts)}
    if spec.has_gold:
        log_lik["gold"] = ((CHAIN, DRAW, GOLD_CLASS), _gold_loglik(spec, conf, mask_id))
        observed["gold_counts"] = ((GOLD_CLASS, PATTERN), spec.gold)
        data_coords[GOLD_CLASS] = spec.classes
    return az.InferenceData(
        posterior=posterior,
        sample_stats=stats.assign_attrs(attrs),
        log_likelihood=xr.Dataset(
            log_lik,
            coords={
                **cd,
                GROUP: spec.groups,
                **({GOLD_CLASS: spec.classes} if spec.has_gold else {}),
            },
        ),
        observed_data=xr.Dataset(observed, coords=data_coords),
        constant_data=xr.Dataset(
            {
                "pattern_states": ((PATTERN, ANNOTATOR), spec.states),
                "prevalence_index": ((GROUP,), spec.prevalence_index),
                "mask_id": ((PATTERN,), mask_id),
            },
            coords=data_coords,
        ),
    )


def _gold_loglik(spec, conf, mask_id) -> np.ndarray:
    """Gold items' log-likelihood per known class: multinomial per missingness mask given
    ``Y = y``, with its constant, shape (chain, draw, C)."""
    used = spec.gold.sum(axis=0) > 0  # gold patterns only: memory O(draws x gold patterns x C)
    lpc = _log_pattern_class(spec.states[used], conf)  # (chain, draw, P_gold, C)
    ll = np.einsum("yp,cdpy->cdy", spec.gold[:, used].astype(np.float64), lpc)
    return ll + _multinomial_constant(spec.gold, mask_id)


#: How far, in posterior sds, a confusion diagonal's posterior mean may sit from the EM fit
#: of the same data beyond the default diagonal prior's own pull before the fit warns: the
#: Monte Carlo error of the mean and the posterior's skew (tests/multiclass/
#: test_multiclass_default_prior.py derives 1.5 sd for the whole gap at 60 items per class).
PULL_SLACK_SD = 1.5


def prior_pull_excess(draws, em_confusion, n_rows, diagonal, off_mass) -> np.ndarray:
    """Per annotator and true class (K, C): how far the posterior mean diagonal lies from EM's,
    beyond the Beta(diagonal, off_mass) prior's own pull, in posterior sds.

    With ``n`` items of class ``y`` answered by annotator ``j`` the diagonal's Beta prior
    moves the mean by about ``(d + M) / (n + d + M)`` of its distance from the prior mean
    ``d / (d + M)`` (the conjugate update with the classes known); a larger gap is the rest of
    the prior (the shares of the wrong answers) disagreeing with the data.

    Parameters
    ----------
    draws : array (S, K, C, C)
    em_confusion : array (K, C, C)
    n_rows : array (K, C)
        Expected items of each true class answered by each annotator.
    diagonal, off_mass : array (K,)

    Examples
    --------
    >>> t = np.array([[[0.8, 0.2], [0.1, 0.9]]])
    >>> rng = np.random.default_rng(0)
    >>> draws = t + rng.normal(0, 0.01, (400, 1, 2, 2))
    >>> bool(prior_pull_excess(draws, t, np.full((1, 2), 100.0), np.array([2.0]),
    ...                        np.array([1.0])).max() < 0)
    True
    """
    d = np.asarray(diagonal, dtype=np.float64)[:, None]
    m = np.asarray(off_mass, dtype=np.float64)[:, None]
    diag = np.diagonal(np.asarray(draws), axis1=-2, axis2=-1)  # (S, K, C)
    em = np.diagonal(np.asarray(em_confusion), axis1=-2, axis2=-1)  # (K, C)
    own = (d + m) / (np.asarray(n_rows) + d + m) * np.abs(em - d / (d + m))
    sd = np.maximum(diag.std(axis=0, ddof=1), np.finfo(float).tiny)
    return (np.abs(diag.mean(axis=0) - em) - own) / sd


def _prior_pull_warnings(conf, start, spec) -> tuple[dict, list[str]]:
    """The default prior fighting the data (``prior_pull_excess`` above ``PULL_SLACK_SD``):
    checked when the chains started at the EM fit of these data and the priors are the
    defaults, with either centre of the wrong answers' shares (a prior from an earlier
    audit is meant to move the fit)."""
    default = ChannelPriors(family="dirichlet", shares=spec.priors.shares)
    if start is None or spec.priors != default:
        return {}, []
    k, c = spec.n_annotators, spec.n_classes
    em = np.asarray(start.confusion.values)
    em = em.reshape(-1, k, c, c)[0]
    shares = np.asarray(start.class_prevalence.values)
    shares = shares.reshape(-1, *shares.shape[-2:])[0]  # (group, class) of the EM fit
    groups = np.asarray(start.group_counts.values, dtype=np.float64)
    prevalence = (groups[:, None] * shares).sum(axis=0) / max(groups.sum(), 1.0)
    answered = (spec.states[:, :] < c).T.astype(np.float64) @ spec.counts.sum(axis=0)  # (K,)
    n_rows = answered[:, None] * prevalence[None, :]
    diagonal = np.diagonal(spec.priors.confusion_alpha(k, c), axis1=-2, axis2=-1)[:, 0]
    off_mass = spec.priors.off_diagonal_alpha(k, c) * (c - 1)
    excess = prior_pull_excess(conf.reshape(-1, k, c, c), em, n_rows, diagonal, off_mass)
    far = excess > PULL_SLACK_SD
    out = {"prior_pull_max_excess_sd": float(excess.max()), "prior_pull_entries": int(far.sum())}
    if not far.any():
        return out, []
    j, y = np.unravel_index(int(np.argmax(excess)), excess.shape)
    mean = float(np.diagonal(conf.reshape(-1, k, c, c), axis1=-2, axis2=-1).mean(0)[j, y])
    return out, [
        f"the default prior moves {int(far.sum())} of {far.size} posterior-mean confusion "
        f"diagonals further from the EM fit of the same data than its own Beta pull explains "
        f"(by more than {PULL_SLACK_SD} posterior sd; most at annotator "
        f"{spec.annotators[j]!r}, true class {spec.classes[y]!r}: {mean:.3f} vs EM "
        f"{em[j, y, y]:.3f}). The prior on how errors spread over the wrong answers does not "
        "fit these confusions (typical: errors concentrated on a few of many classes, "
        "models/multiclass.md); the posterior intervals may under-cover. Compare with the "
        "EM channels (--channels dawid-skene-em)."
    ]


def _fitted_warnings(mean_confusion, spec) -> list[str]:
    """Near-singular confusions and a designated annotator that is not diagonally dominant,
    at the posterior mean (the checks multiclass EM runs on its fit)."""
    out = []
    sv = np.linalg.svd(mean_confusion, compute_uv=False).min(axis=1)
    for name, v in zip(spec.annotators, sv):
        if v < SINGULAR_WARNING:
            out.append(
                f"annotator {name!r} has a nearly singular posterior-mean confusion matrix "
                f"(smallest singular value {v:.4f}, below {SINGULAR_WARNING}); corrected one-hot "
                "targets multiply by its inverse, so NC-ECE becomes very noisy. Consider "
                "dropping this annotator."
            )
    name = spec.annotators[spec.orient]
    for y, a, tyy, tya in diagonal_dominance_failures(mean_confusion[spec.orient]):
        out.append(
            f"the designated annotator {name!r} is not diagonally dominant at the posterior "
            f"mean: for true class {spec.classes[y]!r} it answers {spec.classes[a]!r} with "
            f"probability {tya:.4f} >= {tyy:.4f}. Designate an annotator you trust (orient=...)."
        )
    return out


def _relabel_loading(conf, loading, moved, orient):
    """Loadings (chain, draw, n_loaded, C) with the classes of the ``moved`` draws permuted as
    :func:`~bayescal.bayes.multiclass.orient_draws` permuted their confusion rows."""
    flat_conf = conf.reshape(-1, *conf.shape[2:])
    flat = loading.reshape(-1, *loading.shape[2:]).copy()
    for i in np.flatnonzero(moved):
        inv = np.argsort(dominant_diagonal_permutation(flat_conf[i, orient]))
        flat[i] = flat[i][:, inv]
    return flat.reshape(loading.shape)


def _add_dependence(idata, dspec, loading, rng) -> None:
    """Loadings, latent correlations, the dependence model's log-likelihood (replacing the
    independence model's) and, with ``rng``, replicated counts under it."""
    spec = dspec.base
    post = idata.posterior
    conf = post["confusion"].values
    prev = post["prevalence"].values
    rho = implied_correlation(dspec, loading)[0]
    idata.posterior = post.assign(
        loading=((CHAIN, DRAW, LOADED, CLASS), loading),
        correlation=((CHAIN, DRAW, "pair", CLASS), rho),
    ).assign_coords(
        {LOADED: [spec.annotators[j] for j in dspec.loaded], "pair": pair_labels(dspec)}
    )
    mask_id = _masks(spec.states, spec.n_classes)
    lp = multiclass_pattern_logp_dependent(dspec, conf, prev, loading)  # (chain, draw, L, P)
    ll = (spec.counts * lp).sum(-1) + _multinomial_constant(spec.counts, mask_id)
    idata.log_likelihood["counts"] = ((CHAIN, DRAW, GROUP), ll)
    if spec.has_gold:
        lpc = multiclass_class_pattern_logp(dspec, conf, loading)  # (chain, draw, P, C)
        gold = np.einsum("yp,cdpy->cdy", spec.gold.astype(np.float64), lpc)
        idata.log_likelihood["gold"] = (
            (CHAIN, DRAW, GOLD_CLASS),
            gold + _multinomial_constant(spec.gold, mask_id),
        )
    if rng is not None:
        rep = sample_multiclass_counts_dependent(dspec, conf, prev, loading, rng)
        idata.add_groups(
            posterior_predictive=xr.Dataset(
                {
                    "counts": (
                        (CHAIN, DRAW, GROUP, PATTERN),
                        rep.reshape(*conf.shape[:2], *rep.shape[1:]).astype(np.int32),
                    )
                },
                coords={GROUP: spec.groups, PATTERN: list(spec.patterns)},
            )
        )


def _fit_multiclass(
    data,
    model,
    orientation,
    *,
    groups,
    priors,
    orient,
    draws,
    tune,
    chains,
    cores,
    target_accept,
    sampler,
    reference,
    random_state,
    progress,
    check,
    dependence,
    sigma,
    posterior_predictive,
    start,
) -> ChannelFit:
    """The C-class Dawid-Skene posterior (Dirichlet rows, any C) behind
    :func:`fit_channels_bayes` (SPEC §3; the model and its label handling are in
    :mod:`bayescal.bayes.multiclass`, the model card in ``models/multiclass.md``)."""
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
    check_settings(draws, tune, chains, cores, target_accept, sampler, check)
    summary = resolve_summary(data, groups, default="predicted")
    warnings = check_multiclass_design(summary, pooled=pooled)
    rng = check_random_state(random_state)
    em_seed = int(rng.integers(2**31 - 1))  # drawn either way: the chain seeds stay the same
    em_start = start is None  # the EM fit of these very data (prior-pull check)
    if start is None:
        start = _em_start(summary, pooled, orient, em_seed, warnings)
    elif not isinstance(start, ChannelFit) or start.layout != "multiclass":
        raise ConfigError(
            f"start must be a multiclass ChannelFit (the EM fit of these data); got "
            f"{type(start).__name__}."
        )
    spec = make_multiclass_spec(
        summary, pooled=pooled, priors=priors, orient=orient, start=start, reference=reference
    )
    dspec = None
    if dependence is not None:
        dspec = make_dependence_spec(spec, dependence, sigma=sigma)
        ident = check_multiclass_identified(dspec)
    warnings.extend(_empty_groups(spec, pooled))
    settings = NUTSSettings.from_options(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        rng=rng,
        target_accept=target_accept,
        progress=progress,
    )
    conf, prev, loading, stats, lib, timings = _sample_rows(spec, sampler, settings, dspec)
    sampling_seconds, load_seconds = timings["sampling_seconds"], timings["load_seconds"]
    n_moved = 0
    if not spec.has_gold:  # gold items label the classes: relabelling would change the model
        flat_conf, flat_prev, moved = orient_draws(
            conf.reshape(-1, *conf.shape[2:]), prev.reshape(-1, *prev.shape[2:]), spec.orient
        )
        if loading is not None:  # a loading belongs to its true class: move it with the row
            loading = _relabel_loading(conf, loading, moved, spec.orient)
        conf, prev = flat_conf.reshape(conf.shape), flat_prev.reshape(prev.shape)
        n_moved = int(moved.sum())
    if n_moved:
        exact = "exact" if spec.priors.invariant else "approximate (the prior is not invariant)"
        warnings.append(
            f"{n_moved} of {moved.size} draws were in another labelling of the latent classes "
            f"(the designated annotator {spec.annotators[spec.orient]!r} had a larger diagonal "
            f"after relabelling) and were relabelled; the relabelling is {exact}. Chains that "
            "visit several labellings mean weakly separated classes: check R-hat, and "
            "designate an annotator you trust."
        )
    pooled_name = "_pooled" if pooled else ""
    dep_name = "_dependence" if dspec is not None else ""
    attrs = {
        "model": f"multiclass{pooled_name}",
        "bayescal_version": __version__,
        "sampler": sampler,
        "inference_library": lib["inference_library"],
        "inference_library_version": lib["inference_library_version"],
        "orient_annotator": spec.annotators[spec.orient],
        "priors": json.dumps(spec.priors.to_dict()),
        "data_hash": _data_hash(
            [spec.annotators, spec.classes, spec.groups],
            spec.counts,
            spec.states,
            *([spec.gold] if spec.has_gold else []),
        ),
        "sampling_time": sampling_seconds,
        "tuning_steps": int(tune),
    }
    if spec.share_mean is not None:  # the data-centred share prior (ChannelPriors.shares)
        attrs["prior_share_mean"] = json.dumps(np.round(spec.share_mean, 6).tolist())
    if spec.share_weight is not None:  # each row's weight of that centre
        attrs["prior_share_weight"] = json.dumps(np.round(spec.share_weight, 6).tolist())
    if dspec is not None:
        attrs.update(
            dependence_groups=str(dspec.group_names),
            dependence_groups_index=json.dumps([list(map(int, g)) for g in dspec.groups]),
            loading_sigma=dspec.sigma,
            quadrature_nodes=dspec.n_nodes,
        )
    idata = _rows_inference_data(spec, conf, prev, stats, attrs)
    if dspec is not None:
        _add_dependence(idata, dspec, loading, rng if posterior_predictive else None)
    assert spec.gold is not None  # __post_init__ fills it
    diagnostics: dict = {
        "sampler": sampler,
        "sampling_seconds": sampling_seconds,
        "load_seconds": load_seconds,
        "data_hash": attrs["data_hash"],
        "relabelled_draws": n_moved,
        "start": "em" if start is not None else "prior_mean",
        "reference": reference,
        **_gradient_counts(stats, timings),
        "gold_items": [int(x) for x in spec.gold.sum(axis=1)],
    }
    if dspec is not None:
        diagnostics.update(
            dependence_groups=dspec.group_names, identification=ident, loading_sigma=dspec.sigma
        )
    converged = True
    if check:
        diag, msgs = sampling_checks(idata)
        diagnostics.update(diag)
        converged = diag["converged"]
        warnings.extend(msgs)
    loglik = idata.log_likelihood["counts"].sum(GROUP)
    if spec.has_gold:
        loglik = loglik + idata.log_likelihood["gold"].sum(GOLD_CLASS)
    diagnostics["loglik_posterior_mean"] = float(loglik.mean())
    warnings.extend(_fitted_warnings(conf.mean(axis=(0, 1)), spec))
    if dspec is None:  # a dependence model is meant to differ from the independent EM
        pull, pull_warnings = _prior_pull_warnings(conf, start if em_start else None, spec)
        diagnostics.update(pull)
        warnings.extend(pull_warnings)
    s = conf.shape[0] * conf.shape[1]
    return ChannelFit.from_confusion(
        conf.reshape(s, *conf.shape[2:]),
        prev.reshape(s, *prev.shape[2:]),
        annotators=spec.annotators,
        classes=spec.classes,
        groups=spec.prevalence_groups,
        group_counts=spec.prevalence_group_counts(),
        method=f"bayes_multiclass{pooled_name}{dep_name}",
        warnings=warnings,
        converged=converged,
        diagnostics=diagnostics,
        group_edges=spec.group_edges,
        idata=idata,
    )
