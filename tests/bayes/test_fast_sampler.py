"""The fast sampler's hand-written density against PyMC's model, and its result object.

``ChannelLogDensity`` replaces PyMC's compiled ``logp``/``dlogp`` on the nutpie path,
so it is held to PyMC's values at random points (every model, both orientations,
missing answers, per-annotator priors) and, where PyMC itself loses digits (rates
within 1e-9 of 0 or 1), to an independent 60-digit ``decimal`` evaluation.
"""

import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy.special import logit

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import build_pymc_model, channel_hyper, make_spec
from bayescal.bayes.sampling import check_complete
from bayescal.dims import GROUP
from bayescal.errors import ConfigError, FitError
from bayescal.simulate import simulate_toy

PRIORS = {"a": ([1.5, 2.0, 3.0], [6.0, 2.0, 4.0]), "b": (3.0, 1.5), "prevalence": (1.2, 0.8)}
CASES = [
    # (model, orientation, K, priors); the designated cases have all three parameter blocks
    pytest.param("grouped", "all", 3, None, marks=pytest.mark.slow),
    ("grouped", "designated", 3, PRIORS),
    ("marginal", "all", 3, PRIORS),
    pytest.param("marginal", "designated", 3, None, marks=pytest.mark.slow),
    pytest.param("hui_walter", "all", 2, None, marks=pytest.mark.slow),
    ("hui_walter", "designated", 2, None),
]


def _summary(k, seed=3):
    kw = {} if k == 3 else {"fp": (0.08, 0.13), "fn": (0.16, 0.11)}
    # 20% missing answers: patterns with '.' (state 2) are in the likelihood
    return summarize(simulate_toy(1500, "shifted", random_state=seed, missing=0.2, **kw), groups=4)


def _spec(model, orientation, k, priors):
    return make_spec(_summary(k), model, priors=priors, orient=1, orientation=orientation)


def _unconstrained(spec, a, b, prevalence):
    """PyMC's value variables (ab_chain__, ab_free_logodds__, prevalence_logodds__), written
    from the transforms' definitions (log-odds, then ordered: y1 = log(logit b - logit a))."""
    o = spec.oriented
    ordered = np.stack([logit(a[o]), np.log(logit(b[o]) - logit(a[o]))], axis=1).ravel()
    free = np.stack([logit(a[~o]), logit(b[~o])], axis=1).ravel()
    return np.concatenate([ordered, free, logit(prevalence)])


def _point_dict(model, x, start):
    """``x`` split into ``model``'s value variables, shaped as in ``start`` (its initial
    point, computed once by the caller: each ``initial_point()`` call compiles a function)."""
    out, i = {}, 0
    for var in model.value_vars:
        shape = start[var.name].shape
        size = int(np.prod(shape))
        out[var.name] = x[i : i + size].reshape(shape)
        i += size
    return out


@pytest.mark.parametrize("model,orientation,k,priors", CASES)
def test_logp_and_gradient_equal_pymc(model, orientation, k, priors):
    spec = _spec(model, orientation, k, priors)
    pm_model = build_pymc_model(spec).model
    # one function for both; FAST_COMPILE: PyTensor's Python implementations, same
    # arithmetic, no C compilation
    logp_dlogp = pm_model.compile_fn(
        [pm_model.logp(), pm_model.dlogp()], mode="FAST_COMPILE", on_unused_input="ignore"
    )
    density = ChannelLogDensity(spec)
    start = pm_model.initial_point()
    assert density.n_dim == sum(v.size for v in start.values())
    np.testing.assert_allclose(
        density.initial_point(),
        np.concatenate([v.ravel() for v in start.values()]),
        rtol=1e-15,
    )
    rng = np.random.default_rng(0)
    for _ in range(40):
        # rates in [0.01, 0.99], where PyMC's log1p(-sigmoid) keeps all but ~2 digits: both
        # sides are then double-precision sums of a few hundred terms (relative rounding
        # ~1e-13), so 1e-9 relative leaves four orders of margin and still catches any
        # missing term (the smallest, a Jacobian, is >= 1e-2 of |logp| / n_terms).
        lo, hi = np.sort(rng.uniform(0.01, 0.99, (2, k)), axis=0)
        a = np.where(spec.oriented, lo, rng.uniform(0.01, 0.99, k))
        b = np.where(spec.oriented, hi, rng.uniform(0.01, 0.99, k))
        x = _unconstrained(spec, a, b, rng.uniform(0.01, 0.99, density.n_prevalence))
        ours, grad = density(x)
        ref, ref_grad = logp_dlogp(_point_dict(pm_model, x, start))
        assert abs(ours - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * np.abs(ref_grad).max())


def _decimal_logp(spec, x, al, be, p_al, p_be):
    """log density up to its constant, from the model's definition, in 60-digit decimals."""
    one = Decimal(1)

    def sig(t):
        return one / (one + (-t).exp())

    o = spec.oriented
    n_ord, n_free = int(o.sum()), int((~o).sum())
    u, v, lp = [None] * len(o), [None] * len(o), Decimal(0)
    for i, j in enumerate(np.flatnonzero(o)):
        u[j], v[j] = x[2 * i], x[2 * i] + x[2 * i + 1].exp()
        lp += x[2 * i + 1]
    for i, j in enumerate(np.flatnonzero(~o)):
        u[j], v[j] = x[2 * (n_ord + i)], x[2 * (n_ord + i) + 1]
    a, b = [sig(t) for t in u], [sig(t) for t in v]
    mu = [sig(t) for t in x[2 * (n_ord + n_free) :]]

    def beta_term(p, alpha, beta):  # Beta density x log-odds Jacobian p (1 - p), no constant
        return Decimal(float(alpha)) * p.ln() + Decimal(float(beta)) * (one - p).ln()

    for j in range(len(o)):
        lp += beta_term(a[j], al[j, 0], be[j, 0]) + beta_term(b[j], al[j, 1], be[j, 1])
    for q, m in enumerate(mu):
        lp += beta_term(m, p_al[q], p_be[q])
    for g in range(spec.counts.shape[0]):
        m = mu[spec.prevalence_index[g]]
        for s, n in enumerate(spec.counts[g]):
            if n == 0:
                continue
            p0, p1 = one, one
            for j, state in enumerate(spec.states[s]):
                if state == 1:
                    p0, p1 = p0 * a[j], p1 * b[j]
                elif state == 0:
                    p0, p1 = p0 * (one - a[j]), p1 * (one - b[j])
            lp += Decimal(int(n)) * ((one - m) * p0 + m * p1).ln()
    return lp


@pytest.mark.parametrize("orientation", ["all", "designated"])
def test_gradient_exact_where_rates_touch_zero_and_one(orientation):
    """Rates within 1e-9 of 0 or 1 (PyMC's own gradient is off by ~1e-6 there): against a
    60-digit central difference (step 1e-20: truncation and rounding errors ~1e-40)."""
    spec = _spec("grouped", orientation, 3, PRIORS)
    density = ChannelLogDensity(spec)
    al, be = channel_hyper(spec)
    p_al, p_be = spec.priors.prevalence.expand(density.n_prevalence, GROUP)
    x = density.initial_point()
    x[:2] = (-21.0, 3.2)  # a = 8e-10 and, for an ordered pair, logit b = -21 + e^3.2 = 3.5
    x[2:4] = (2.0, 3.0) if orientation == "all" else (2.0, 21.0)  # b within 1e-9 of 1
    x[-density.n_prevalence :] = (-20.0, 0.3, 1.0, 20.0)
    _, grad = density(x)
    h = Decimal("1e-20")
    with localcontext() as ctx:
        ctx.prec = 60
        xd = [Decimal(float(t)) for t in x]
        ref = []
        for i in range(len(xd)):
            up, down = list(xd), list(xd)
            up[i] += h
            down[i] -= h
            diff = _decimal_logp(spec, up, al, be, p_al, p_be)
            diff -= _decimal_logp(spec, down, al, be, p_al, p_be)
            ref.append(float(diff / (2 * h)))
    np.testing.assert_allclose(grad, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


def test_density_input_checks_and_counts_swap():
    spec = _spec("grouped", "all", 3, None)
    density = ChannelLogDensity(spec)
    with pytest.raises(ConfigError, match="shape"):
        density(np.zeros(density.n_dim + 1))
    with pytest.raises(ConfigError, match="counts must have shape"):
        density.with_counts(spec.counts[:, :-1])
    other = _spec("grouped", "all", 3, None).with_counts(np.ones_like(spec.counts))
    x = density.initial_point() + 0.3
    assert density.with_counts(other.counts)(x)[0] == ChannelLogDensity(other)(x)[0]
    assert density(x)[0] != density.with_counts(other.counts)(x)[0]


def test_constrain_matches_transforms():
    spec = _spec("grouped", "designated", 3, None)
    density = ChannelLogDensity(spec)
    rng = np.random.default_rng(1)
    a, b, prev = rng.uniform(0.05, 0.45, 3), rng.uniform(0.55, 0.95, 3), rng.uniform(0.1, 0.9, 4)
    x = _unconstrained(spec, a, b, prev)
    out = density.constrain(np.stack([x, x]))
    np.testing.assert_allclose(out["a"], [a, a], rtol=1e-12)
    np.testing.assert_allclose(out["b"], [b, b], rtol=1e-12)
    np.testing.assert_allclose(out["prevalence"], [prev, prev], rtol=1e-12)
    assert out["ab"].shape == (2, 1, 2) and out["ab_free"].shape == (2, 2, 2)


@pytest.fixture(scope="module")
def small_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_channels_bayes(
            _summary(3), orientation="designated", orient=1, draws=200, tune=200, chains=2
        )


def test_result_has_pymc_groups_names_and_dims(small_fit, tmp_path):
    spec = make_spec(_summary(3), orientation="designated", orient=1)
    pm_model = build_pymc_model(spec).model
    post = small_fit.idata.posterior
    for name in ("ab", "ab_free", "a", "b", "prevalence"):
        assert post[name].dims == ("chain", "draw", *pm_model.named_vars_to_dims[name]), name
        for dim in pm_model.named_vars_to_dims[name]:
            assert list(post[dim].values) == list(pm_model.coords[dim]), dim
    stats = small_fit.idata.sample_stats
    for name in ("diverging", "energy", "lp", "tree_depth", "acceptance_rate", "n_steps"):
        assert stats[name].dims == ("chain", "draw"), name
    assert small_fit.diagnostics["sampler"] == "nutpie"
    assert small_fit.idata.attrs["sampler"] == "nutpie"
    assert post.attrs["inference_library"] == "nutpie"
    # orientation holds where it is imposed (annotator 1), not necessarily elsewhere
    assert (small_fit.delta.values[:, 1] > 0).all()
    path = tmp_path / "posterior.nc"
    small_fit.idata.to_netcdf(str(path))
    assert path.stat().st_size > 0


def test_same_seed_same_draws(small_fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = fit_channels_bayes(
            _summary(3), orientation="designated", orient=1, draws=200, tune=200, chains=2
        )
    np.testing.assert_array_equal(again.a.values, small_fit.a.values)


def test_chains_in_parallel_threads_give_the_same_draws(small_fit):
    """The default (``cores=None``) samples the chains in parallel threads; one thread gives
    the same draws (nutpie seeds each chain from the seed and its index), so the number of
    CPUs changes the wall time only, never the audit's numbers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"orientation": "designated", "orient": 1, "draws": 200, "tune": 200, "chains": 2}
        one, two = (fit_channels_bayes(_summary(3), cores=c, **kw) for c in (1, 2))
    np.testing.assert_array_equal(one.a.values, small_fit.a.values)
    np.testing.assert_array_equal(two.a.values, small_fit.a.values)
    np.testing.assert_array_equal(two.prevalence.values, one.prevalence.values)


def test_tiny_draws_refused_when_checking_and_unchecked_otherwise():
    s = _summary(3)
    with pytest.raises(ConfigError, match="too few to check convergence"):
        fit_channels_bayes(s, draws=1, tune=10, chains=2)
    with pytest.raises(ConfigError, match="draws must be an integer >= 1"):
        fit_channels_bayes(s, draws=0, check=False)
    with pytest.raises(ConfigError, match="sampler must be one of"):
        fit_channels_bayes(s, sampler="stan")
    fit = fit_channels_bayes(s, draws=1, tune=10, chains=2, check=False)
    assert fit.n_draws == 2 and "rhat_max" not in fit.diagnostics


@pytest.mark.parametrize(
    ("setting", "value"), [("chains", 65), ("chains", 10**9), ("draws", 10**6 + 1), ("tune", 10**8)]
)
def test_settings_beyond_the_cli_limits_are_refused_before_sampling(setting, value):
    """10^9 chains made nutpie abort the whole process on a 32 GB allocation (no Python
    error); the library now holds the CLI's limits (bayescal.options)."""
    with pytest.raises(ConfigError, match=f"{setting} must be at most"):
        fit_channels_bayes(_summary(3), **{setting: value})
    from bayescal.data.multiclass import MulticlassAnnotations
    from bayescal.summaries import summarize_multiclass

    rng = np.random.default_rng(0)
    d = MulticlassAnnotations.from_arrays(
        rng.dirichlet(np.ones(3), 30), rng.integers(0, 3, (30, 3)).astype(float)
    )
    with pytest.raises(ConfigError, match=f"{setting} must be at most"):
        fit_channels_bayes(summarize_multiclass(d), **{setting: value})


@pytest.mark.parametrize("draws", [1, 2, 3])
def test_sampling_checks_report_unavailable_not_divide_by_zero(draws):
    import arviz as az
    import xarray as xr

    from bayescal.bayes.diagnostics import sampling_checks

    rng = np.random.default_rng(0)
    post = xr.Dataset(
        {"a": (("chain", "draw", "annotator"), rng.uniform(size=(2, draws, 3)))},
        coords={"chain": [0, 1], "draw": np.arange(draws), "annotator": ["x", "y", "z"]},
    )
    energy = np.full((2, draws), 5.0)  # constant energy: E-BFMI's variance is zero
    stats = xr.Dataset(
        {"energy": (("chain", "draw"), energy), "diverging": (("chain", "draw"), energy < 0)},
        coords={"chain": [0, 1], "draw": np.arange(draws)},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from a division either
        diag, msgs = sampling_checks(
            az.InferenceData(posterior=post, sample_stats=stats), emit=False
        )
    assert diag["rhat_max"] is None and diag["ess_bulk_min"] is None
    assert diag["bfmi_min"] is None and diag["converged"] is False
    assert any("R-hat and ESS unavailable" in m for m in msgs)
    assert any("E-BFMI unavailable" in m for m in msgs)


def test_short_trace_is_a_fit_error():
    import xarray as xr

    post = xr.Dataset({"a": (("chain", "draw"), np.zeros((2, 917)))})
    with pytest.raises(FitError, match="2 chain\\(s\\) x 917 draw\\(s\\) but 2 x 1000"):
        check_complete(post, draws=1000, chains=2)
    check_complete(post, draws=917, chains=2)


@pytest.mark.slow
@pytest.mark.parametrize("orientation", ["all", "designated"])
def test_posterior_moments_match_pymc_nuts(orientation):
    """Same data and model, both samplers: every mean within 4 combined MCSE, every sd
    within 20% (the sd of a posterior sd estimate from ~1000 effective draws is ~2-3%)."""
    import arviz as az

    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sampler in ("nutpie", "pymc"):
            fits[sampler] = fit_channels_bayes(
                _summary(3, seed=5),
                orientation=orientation,
                orient=1,
                draws=600,
                tune=600,
                chains=2,
                cores=1,
                sampler=sampler,
                random_state=2,
            )
    names = ["a", "b", "prevalence"]
    post = {k: f.idata.posterior[names] for k, f in fits.items()}
    mcse = {k: az.mcse(p, method="mean") for k, p in post.items()}
    for name in names:
        m1, m2 = (post[k][name].mean(("chain", "draw")).values for k in post)
        s1, s2 = (post[k][name].std(("chain", "draw")).values for k in post)
        tol = 4 * np.hypot(mcse["nutpie"][name].values, mcse["pymc"][name].values)
        assert np.all(np.abs(m1 - m2) < tol), (name, m1, m2, tol)
        assert np.all(np.abs(s1 - s2) < 0.2 * s2), (name, s1, s2)


def test_fit_counts_the_gradient_evaluations_of_tuning_and_of_the_draws(small_fit):
    """Each NUTS iteration takes at least one leapfrog step (one gradient): 200 tuning and 200
    kept iterations in each of 2 chains give at least 400 of each; the draws' count is the sum
    of ``n_steps``."""
    diag = small_fit.diagnostics
    assert diag["gradient_evaluations"] == int(small_fit.idata.sample_stats["n_steps"].sum())
    assert diag["gradient_evaluations"] >= 400
    assert isinstance(diag["tuning_gradient_evaluations"], int)
    assert diag["tuning_gradient_evaluations"] >= 400


def test_keeping_the_warmup_statistics_leaves_the_draws_unchanged(small_fit, monkeypatch):
    """The statistics of tuning are kept to count its gradients; the draws are those of a run
    that discards them."""
    import nutpie

    real = nutpie.sample

    def discarding(*args, **kwargs):
        kwargs["save_warmup"] = False
        return real(*args, **kwargs)

    monkeypatch.setattr(nutpie, "sample", discarding)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = fit_channels_bayes(
            _summary(3), orientation="designated", orient=1, draws=200, tune=200, chains=2
        )
    np.testing.assert_array_equal(again.a.values, small_fit.a.values)
    np.testing.assert_array_equal(again.prevalence.values, small_fit.prevalence.values)
    assert again.diagnostics["tuning_gradient_evaluations"] is None
