"""Dirichlet priors from an earlier multiclass audit, their conflict check and the
sequential-update check (issue 15 item 2, multiclass)."""

import arviz as az
import numpy as np
import pytest

from bayescal.bayes.conflict import prior_conflict
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.logdensity import MulticlassLogDensity
from bayescal.bayes.multiclass import build_multiclass_pymc_model, make_multiclass_spec
from bayescal.bayes.posterior_file import load_multiclass_posterior
from bayescal.bayes.priors import ChannelPriors, dirichlet_from_moments
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.errors import BayescalWarning, ConfigError
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.multiclass import default_confusions
from bayescal.summaries import summarize_multiclass

FIT = {"draws": 1000, "tune": 500, "chains": 2}


@pytest.fixture(scope="module")
def halves():
    """4,000 items (C = 3, K = 3): full-data posterior, first-half posterior, second half."""
    data = simulate_multiclass(4000, 3, random_state=21)
    first = np.arange(data.n_items) < 2000
    full = fit_channels_bayes(data, random_state=1, **FIT)
    earlier = fit_channels_bayes(data.subset(first), random_state=2, **FIT)
    return data, first, full, earlier


def _mc_se(fit):
    """Monte Carlo standard error of each confusion entry's posterior mean: sd / sqrt(ESS)."""
    ess = az.ess(fit.idata, var_names=["confusion"])["confusion"].values
    return fit.confusion.values.std(axis=0) / np.sqrt(ess)


def test_moment_matching_recovers_a_dirichlet():
    rng = np.random.default_rng(3)
    alpha = np.array([[40.0, 6.0, 4.0], [3.0, 30.0, 7.0]])
    draws = rng.dirichlet(alpha[0], 20_000), rng.dirichlet(alpha[1], 20_000)
    mean = np.stack([d.mean(0) for d in draws])
    var = np.stack([d.var(0, ddof=1) for d in draws])
    matched, errors = dirichlet_from_moments(mean, var)
    # the total variance of 20,000 draws has a relative sampling error of about
    # sqrt(2 / 20000) = 1%; the concentration inherits it: 5% is 5 se
    assert errors == [] and np.allclose(matched, alpha, rtol=0.05)
    halved, _ = dirichlet_from_moments(mean, var, inflate=2.0)
    assert np.allclose(halved, matched / 2)
    _, errors = dirichlet_from_moments(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
    assert "a Dirichlet needs every mean entry > 0" in errors[0]


def test_from_fit_by_name_inflate_and_refusals(halves):
    data, _, _, earlier = halves
    p1 = ChannelPriors.from_fit(earlier, inflate=1.0)
    p2 = ChannelPriors.from_fit(earlier)
    assert p1.confusion.shape == (3, 3, 3) and np.allclose(p2.confusion, p1.confusion / 2)
    mean = earlier.confusion.values.mean(axis=0)
    assert np.allclose(p1.confusion / p1.confusion.sum(-1, keepdims=True), mean)
    # the new data's annotators by name: an unknown one keeps the default rows
    with pytest.warns(BayescalWarning, match=r"\['new'\] are not in it"):
        p = ChannelPriors.from_fit(earlier, annotators=["a3", "new", "a1"], inflate=1.0)
    assert np.allclose(p.confusion[0], p1.confusion[2]) and np.allclose(
        p.confusion[2], p1.confusion[0]
    )
    assert np.allclose(p.confusion[1], ChannelPriors(family="dirichlet").confusion_alpha(1, 3)[0])
    assert p.origin["default"] == ["new"] and p.origin["from_fit"] == ["a3", "a1"]
    assert not p.invariant
    with pytest.raises(ConfigError, match="inflate must be a finite number >= 1"):
        ChannelPriors.from_fit(earlier, inflate=0.5)
    with pytest.raises(ConfigError, match="same classes in the same order"):
        ChannelPriors.from_fit(earlier, classes=["x", "y", "z"])
    point = dawid_skene_em(summarize_multiclass(data))
    with pytest.raises(ConfigError, match="one draw"):
        ChannelPriors.from_fit(point)
    se = np.full((3, 3, 3), 0.02)
    from_point = ChannelPriors.from_fit(point, se={"confusion": se}, inflate=1.0)
    # s + 1 = sum m (1 - m) / sum v for each row
    t = point.confusion.values[0]
    s = (t * (1 - t)).sum(-1) / (3 * 0.02**2) - 1
    assert np.allclose(from_point.confusion, t * s[..., None])
    with pytest.raises(ConfigError, match="prior 'confusion' has shape"):
        p1.confusion_alpha(2, 3)


def test_posterior_file_round_trip(halves, tmp_path):
    _, _, _, earlier = halves
    path = tmp_path / "posterior.nc"
    earlier.idata.to_netcdf(path)
    loaded = load_multiclass_posterior(path)
    assert loaded.annotators == earlier.annotators and loaded.classes == earlier.classes
    assert np.allclose(loaded.confusion.values, earlier.confusion.values)
    rng = np.random.default_rng(0)
    binary = ChannelFit.from_draws(
        rng.beta(10, 90, (400, 1)),
        rng.beta(90, 10, (400, 1)),
        rng.beta(50, 50, (400, 1)),
        annotators=["x"],
        groups=["all"],
        group_counts=[1],
        method="bayes_marginal",
    )
    assert binary.layout != "multiclass"
    # a binary fit gives the two-class Beta family, which the C-class model refuses
    beta_priors = ChannelPriors.from_fit(binary)
    assert beta_priors.family == "beta"
    with pytest.raises(ConfigError, match="takes priors of the 'dirichlet' family"):
        make_multiclass_spec(summarize_multiclass(halves[0]), priors=beta_priors)
    bad = tmp_path / "x.nc"
    bad.write_text("hello")
    with pytest.raises(ConfigError, match="not a netCDF file"):
        load_multiclass_posterior(bad)


def test_joint_prior_density_equals_pymc(halves):
    _, _, _, earlier = halves
    with pytest.warns(BayescalWarning, match="keep the default prior"):
        priors = ChannelPriors.from_fit(
            earlier, inflate=1.5, prevalence=True, joint=True, annotators=["a2", "new", "a1"]
        )
    assert priors.joint is not None and not priors.invariant
    assert np.all(priors.confusion[[0, 2]] == 1.0)  # carried rows: flat Dirichlet + the normal
    new = simulate_multiclass(500, 3, random_state=4, annotators=["a2", "new", "a1"])
    spec = make_multiclass_spec(summarize_multiclass(new), priors=priors)
    density = MulticlassLogDensity(spec)
    model = build_multiclass_pymc_model(spec).model
    assert "joint_prior" in model.named_vars
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = density.initial_point() + rng.normal(0, 0.3, density.n_dim)
        point = {
            "confusion_reference_ratio__": x[: density.n_confusion].reshape(3, 3, 2),
            "prevalence_reference_ratio__": x[density.n_confusion :].reshape(-1, 2),
        }
        lp, grad = density(x)
        # sums of a few hundred O(1) terms in double precision: 1e-9 absolute
        assert lp == pytest.approx(float(logp(point)), abs=1e-9)
        assert np.abs(grad - dlogp(point)).max() < 1e-9
    # the normal's own draws reproduce its mean (the conflict check samples them)
    rows = priors.joint.sample_rows(np.random.default_rng(1), 4000)["confusion"][(0, 1)]
    z = np.log(rows[:, [0, 2]]) - np.log(rows[:, [1]])
    coords = (priors.joint.kind == 0) & (priors.joint.row == 1)
    sd = np.sqrt(np.diag(priors.joint.cov))[coords]
    assert np.all(np.abs(z.mean(0) - priors.joint.mean[coords]) < 4 * sd / np.sqrt(4000))


def test_independent_dirichlet_rows_miss_the_full_posterior(halves):
    """Priors from the first half (inflate 1, prevalences too), then the second half, against
    the full-data posterior: independent Dirichlet rows drop the correlations between rows
    (and with the prevalences), so the update misses by far more than Monte Carlo error. The
    joint form passes the check within it: test_multiclass_sequential.py."""
    data, first, full, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.0, prevalence=True)
    update = fit_channels_bayes(data.subset(~first), priors=priors, random_state=3, **FIT)
    m_full, m_upd = (f.confusion.values.mean(axis=0) for f in (full, update))
    sd_full = full.confusion.values.std(axis=0)
    mc = np.sqrt(_mc_se(full) ** 2 + _mc_se(update) ** 2)
    shift_sd = np.abs(m_upd - m_full) / sd_full
    # measured: largest 0.45 sd (20 MC se of the two runs; Monte Carlo error is ~0.02 sd, so
    # this is the moment-matching error), median 0.15 sd; the second half alone is 1.38 sd away
    assert np.max(np.abs(m_upd - m_full) / mc) > 8
    assert shift_sd.max() < 0.6 and np.median(shift_sd) < 0.25
    alone = fit_channels_bayes(data.subset(~first), random_state=4, **FIT)
    far = np.abs(alone.confusion.values.mean(axis=0) - m_full) / sd_full
    assert shift_sd.max() < 0.5 * far.max()
    # widths: the update's posterior sd is the full-data one within 15%
    ratio = update.confusion.values.std(axis=0) / sd_full
    assert 0.85 < np.median(ratio) < 1.15


def test_conflict_flags_the_drifted_annotator_only(halves):
    data, first, _, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.0)
    same = summarize_multiclass(data.subset(~first))
    calm = prior_conflict(same, priors, draws=500)
    assert not any(v["conflict"] for v in calm.values()), calm
    # a1 drifts: its accuracy drops from the default (~0.8) to about 0.55
    t = default_confusions(3, 3)
    t[0] = 0.55 * np.eye(3) + 0.45 * (1 - np.eye(3)) / 2
    drifted = summarize_multiclass(simulate_multiclass(2000, 3, t, random_state=22))
    flagged = prior_conflict(drifted, priors, draws=500)
    assert flagged["a1"]["conflict"] and flagged["a1"]["p"] < 0.01
    assert not flagged["a2"]["conflict"] and not flagged["a3"]["conflict"]
