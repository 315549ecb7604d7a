"""``fit_multiclass_channels_bayes``: the posterior of multiclass confusion matrices.

The Bayesian twin of :func:`~bayescal.channels.em.dawid_skene_em`
(SPEC §3; the model and its label handling are in :mod:`bayescal.bayes.multiclass`,
the model card in ``models/multiclass.md``). The result is the one
:class:`~bayescal.channels.result.ChannelFit` type with
``confusion[draw, annotator, true_class, answered_class]`` and
``class_prevalence[draw, group, class]`` (chains and draws stacked into ``draw``),
so NC-ECE, its intervals and recalibration run unchanged over the posterior.
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
    LOADED,
    LOADING_SIGMA,
    build_pymc_multiclass_dependence_model,
    check_multiclass_identified,
    make_multiclass_dependence_spec,
    multiclass_class_pattern_logp,
    multiclass_implied_correlation,
    multiclass_pattern_logp_dependent,
    pair_labels,
    sample_multiclass_counts_dependent,
)
from bayescal.bayes.dependence_density import MulticlassDependenceLogDensity
from bayescal.bayes.diagnostics import sampling_checks
from bayescal.bayes.logdensity import MulticlassLogDensity, cell_loglik
from bayescal.bayes.multiclass import (
    _log_pattern_class,
    build_multiclass_pymc_model,
    make_multiclass_spec,
    orient_draws,
)
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
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.dims import ANNOTATOR, CHAIN, CLASS, DRAW, GROUP, PATTERN
from bayescal.errors import ConfigError, FitError
from bayescal.summaries.summary import GOLD_CLASS, Summary, summarize_multiclass

__all__ = ["fit_multiclass_channels_bayes", "MIN_CHECK_DRAWS"]


def _resolve(data, groups) -> Summary:
    if isinstance(data, MulticlassAnnotations):
        return summarize_multiclass(data, groups="predicted" if groups is None else groups)
    if isinstance(data, Summary):
        if groups is not None:
            raise ConfigError(
                "groups are fixed when the summary is built; pass groups to summarize_multiclass()."
            )
        return data
    raise ConfigError(f"expected MulticlassAnnotations or a Summary; got {type(data).__name__}.")


def _start(summary, pooled, orient, seed, warnings):
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


def _sample(spec, sampler: str, settings: NUTSSettings, dspec=None):
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


def _inference_data(spec, conf, prev, stats, attrs):
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
    cell_ll, g, s = cell_loglik(
        spec, conf.reshape(-1, *conf.shape[2:]), prev.reshape(-1, *prev.shape[2:])
    )
    per_group = np.zeros((cell_ll.shape[0], len(spec.groups)))
    np.add.at(per_group.T, g, (cell_ll * spec.counts[g, s]).T)
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


def _data_hash(spec) -> str:
    h = hashlib.sha256(np.ascontiguousarray(spec.counts).tobytes())
    h.update(np.ascontiguousarray(spec.states).tobytes())
    if spec.has_gold:
        h.update(np.ascontiguousarray(spec.gold).tobytes())
    h.update(json.dumps([spec.annotators, spec.classes, spec.groups]).encode())
    return h.hexdigest()[:16]


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
    rho = multiclass_implied_correlation(dspec, loading)[0]
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


# --------------------------------------------------------------------------- entry point
def fit_multiclass_channels_bayes(
    data,
    *,
    groups=None,
    pooled: bool = False,
    priors=None,
    orient=0,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    target_accept: float = 0.8,
    sampler: str = "nutpie",
    reference: str = "largest",
    random_state=0,
    progress: bool = False,
    check: bool = True,
    dependence=None,
    sigma: float = LOADING_SIGMA,
    posterior_predictive: bool = True,
    start: ChannelFit | None = None,
) -> ChannelFit:
    """Sample the posterior of multiclass confusion matrices from pattern counts (SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations or Summary
        The container (summarised here with ``groups``) or an existing summary.
    groups : channel groups, default "predicted"
        See :func:`~bayescal.summaries.summary.summarize`; only with
        a container.
    pooled : bool, default False
        One class prevalence for every group (group ``"all"``).
    priors : ChannelPriors, mapping or None
        Dirichlet concentrations (:class:`~bayescal.bayes.priors.ChannelPriors`).
    orient : int or str, default 0
        The designated annotator whose diagonal fixes the labelling of the classes.
    draws, tune, chains : int, default 1000, 1000, 4
        NUTS settings per chain; the result has ``chains * draws`` draws.
    cores : int or None
        Chains run in parallel (nutpie: threads, None = 1; PyMC: processes, None =
        PyMC's default).
    target_accept : float, default 0.8
        Measured (``docs/results/multiclass_bayes_speed.json``): at 10,000 items,
        C = 10, no divergences at 0.8, and 0.9 gave 892 instead of 1,536 as the
        smallest bulk ESS of a confusion entry for the same gradient evaluations.
    sampler : {"nutpie", "pymc"}, default "nutpie"
        ``"nutpie"`` samples the hand-written density
        (:class:`~bayescal.bayes.logdensity.MulticlassLogDensity`);
        ``"pymc"`` samples the PyMC model itself (the reference).
    reference : {"largest", "last"}, default "largest"
        Unconstrained coordinates: log-ratios against each simplex's largest
        starting entry, or against the last class (same model; the benchmark
        ``bayescal bench multiclass-bayes-speed`` compares them).
    random_state : None, int or numpy.random.Generator, default 0
        The only source of randomness (EM start, chain seeds and jitter).
    progress : bool, default False
    check : bool, default True
        Run R-hat / ESS / divergence / BFMI checks; their problems become
        ``warnings`` (also issued as Python warnings).
    dependence : None, "all", "r1:r2,r3:r4" or list of pairs, default None
        Fit the conditional-dependence model instead
        (:mod:`bayescal.bayes.dependence`, ``models/dependence.md``): a
        latent item difficulty shared by each group's annotators; the confusions stay
        the marginal channels. Method ``"bayes_multiclass_dependence"``; ``idata``
        adds ``loading[dependent_annotator, class]``, ``correlation[pair, class]``
        and ``posterior_predictive`` (replicated counts under the model); the
        groups used are in ``diagnostics["dependence_groups"]``.
    sigma : float, default 1.0
        Scale of the loadings' HalfNormal prior (with ``dependence`` only).
    posterior_predictive : bool, default True
        With ``dependence``: draw replicated pattern counts (the predictive check).
    start : ChannelFit, optional
        The multiclass EM fit of the same summary (``dawid_skene_em`` with the same
        ``prevalence`` and ``orient``, ``empty_groups="drop"``) where the chains start;
        by default that EM runs here. An audit that has its point fit already passes it,
        so EM runs once: at 10^5 items, C = 10, K = 5 one EM costs more CPU than the
        sampling (``docs/results/audit_large.json``).

    Returns
    -------
    ChannelFit
        ``confusion[draw, annotator, true_class, answered_class]``,
        ``class_prevalence[draw, group, class]`` (``layout="multiclass"``),
        ``method`` ``"bayes_multiclass"`` (or ``"bayes_multiclass_pooled"``) and
        ``idata`` with ``posterior``, ``sample_stats``, ``log_likelihood``
        (``counts[chain, draw, group]``, multinomial per group with its constant),
        ``observed_data`` and ``constant_data``. ``diagnostics`` holds the worst
        R-hat / ESS, divergences, BFMI, timings and ``relabelled_draws``.

    Raises
    ------
    KeyboardInterrupt
        When sampling is interrupted: a partial posterior is never returned.
    IdentificationError, DataError
        Designs that cannot identify the confusions (as multiclass EM).
    FitError
        When the sampler returns fewer chains or draws than requested.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> data = simulate_multiclass(1500, 3, random_state=0)
    >>> fit = fit_multiclass_channels_bayes(data, draws=100, tune=200, chains=2)
    >>> fit.confusion.shape, fit.layout
    ((200, 3, 3, 3), 'multiclass')
    """
    check_settings(draws, tune, chains, cores, target_accept, sampler, check)
    summary = _resolve(data, groups)
    warnings = check_multiclass_design(summary, pooled=pooled)
    rng = check_random_state(random_state)
    em_seed = int(rng.integers(2**31 - 1))  # drawn either way: the chain seeds stay the same
    if start is None:
        start = _start(summary, pooled, orient, em_seed, warnings)
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
        dspec = make_multiclass_dependence_spec(spec, dependence, sigma=sigma)
        ident = check_multiclass_identified(dspec)
    empty = [g for g, n in zip(spec.groups, spec.group_counts) if n == 0]
    if empty and not pooled:
        warnings.append(
            f"channel group(s) {empty} contain no annotated item: their prevalence posterior is "
            "the prior, which no annotated item's estimate uses. Fewer or wider groups (groups=, "
            "--groups) leave them out."
        )
    settings = NUTSSettings.from_options(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        rng=rng,
        target_accept=target_accept,
        progress=progress,
    )
    conf, prev, loading, stats, lib, timings = _sample(spec, sampler, settings, dspec)
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
        "data_hash": _data_hash(spec),
        "sampling_time": sampling_seconds,
        "tuning_steps": int(tune),
    }
    if dspec is not None:
        attrs.update(
            dependence_groups=str(dspec.group_names),
            dependence_groups_index=json.dumps([list(map(int, g)) for g in dspec.groups]),
            loading_sigma=dspec.sigma,
            quadrature_nodes=dspec.n_nodes,
        )
    idata = _inference_data(spec, conf, prev, stats, attrs)
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
        "gradient_evaluations": int(stats["n_steps"].sum()) if "n_steps" in stats else None,
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
