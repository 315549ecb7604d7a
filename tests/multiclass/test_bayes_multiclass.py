"""The Bayesian multiclass Dawid–Skene model: density, likelihood, labelling, fit."""

import numpy as np
import pytest

from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.logdensity import (
    MulticlassLogDensity,
    cell_loglik,
    ratio_backward,
    ratio_forward,
)
from bayescal.bayes.multiclass import (
    build_multiclass_pymc_model,
    make_multiclass_spec,
    multiclass_pattern_loglik,
    orient_draws,
    reference_ratio_transform,
)
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.em import dawid_skene_em
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, IdentificationError
from bayescal.simulate import simulate_multiclass
from bayescal.summaries import summarize_multiclass


def _designs():
    """Every coordinate layout: grouped and pooled, missing answers, C = 2 and C = 4,
    a non-diagonal reference, unequal priors."""
    four = simulate_multiclass(400, 4, random_state=1, missing=0.2)
    two = simulate_multiclass(300, 2, random_state=2, missing=0.3, n_annotators=4)
    out = []
    for data, pooled in ((four, False), (four, True), (two, False)):
        s = summarize_multiclass(data)
        spec = make_multiclass_spec(
            s,
            pooled=pooled,
            priors={"diagonal": 2.5, "off_diagonal": 1.2, "prevalence": 1.3},
            start=dawid_skene_em(s, prevalence="pooled" if pooled else "grouped"),
        )
        out.append(spec)
    out[0].confusion_reference[0, 1] = 3  # coordinates against an off-diagonal class
    return out


@pytest.fixture(scope="module", params=range(3), ids=["grouped-C4", "pooled-C4", "grouped-C2"])
def spec(request):
    return _designs()[request.param]


def _pymc_point(spec, x):
    k, c = spec.n_annotators, spec.n_classes
    nc = k * c * (c - 1)
    return {
        "confusion_reference_ratio__": x[:nc].reshape(k, c, c - 1),
        "prevalence_reference_ratio__": x[nc:].reshape(-1, c - 1),
    }


def test_density_equals_pymc_logp_and_gradient(spec):
    """The hand-written density is PyMC's model.logp() term for term (1e-9)."""
    density = MulticlassLogDensity(spec)
    model = build_multiclass_pymc_model(spec).model
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    rng = np.random.default_rng(0)
    points = [density.initial_point()] + [rng.normal(0, 2, density.n_dim) for _ in range(6)]
    for x in points:
        lp, grad = density(x)
        ref = float(logp(_pymc_point(spec, x)))
        # relative 1e-12 of a log density in the thousands is ~1e-9 absolute
        assert lp == pytest.approx(ref, rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(_pymc_point(spec, x)), rtol=1e-9, atol=1e-9)


def test_initial_point_is_pymc_initial_point(spec):
    model = build_multiclass_pymc_model(spec).model
    ip = model.initial_point()
    density = MulticlassLogDensity(spec)
    got = np.concatenate(
        [ip["confusion_reference_ratio__"].ravel(), ip["prevalence_reference_ratio__"].ravel()]
    )
    np.testing.assert_allclose(got, density.initial_point(), atol=1e-12)


def test_transform_round_trip_and_pymc_transform():
    rng = np.random.default_rng(3)
    x = rng.dirichlet(np.ones(5), size=(2, 3))
    ref = np.array([[0, 4, 2], [1, 1, 3]])
    v = ratio_forward(x, ref)
    np.testing.assert_allclose(ratio_backward(v, ref), x, atol=1e-14)
    tr = reference_ratio_transform(ref, 5)
    np.testing.assert_allclose(tr.forward(x).eval(), v, atol=1e-12)
    np.testing.assert_allclose(tr.backward(v).eval(), x, atol=1e-12)
    # log-Jacobian of the reference log-ratio map: sum_k log x_k
    np.testing.assert_allclose(tr.log_jac_det(v).eval(), np.log(x).sum(-1), atol=1e-12)


def _per_item_loglik(data, conf, rho_of_item):
    """The obvious per-item implementation: sum over items of log sum_y rho_y prod_j T_j."""
    out = 0.0
    for i in range(data.n_items):
        lab = data.labels[i]
        if np.isnan(lab).all():
            continue
        terms = np.log(rho_of_item[i]).copy()
        for j, a in enumerate(lab):
            if not np.isnan(a):
                terms += np.log(conf[j, :, int(a)])
        m = terms.max()
        out += m + np.log(np.exp(terms - m).sum())
    return out


def test_pattern_and_per_item_likelihoods_agree():
    """Pattern-count cells reproduce the per-item sum over latent classes to 1e-9."""
    data = simulate_multiclass(500, 4, random_state=5, missing=0.3)
    s = summarize_multiclass(data)
    spec = make_multiclass_spec(s, start=dawid_skene_em(s))
    rng = np.random.default_rng(1)
    conf = rng.dirichlet(np.ones(4) * 3, size=(2, 3, 4))
    rho = rng.dirichlet(np.ones(4), size=(2, 4))
    cell, g, p = cell_loglik(spec, conf, rho)
    dense = multiclass_pattern_loglik(spec, conf, rho)
    np.testing.assert_allclose(cell, dense[:, g, p], atol=1e-12)
    pred = data.probs.argmax(axis=1)
    for d in range(2):
        total = float((cell[d] * spec.counts[g, p]).sum())
        assert total == pytest.approx(_per_item_loglik(data, conf[d], rho[d][pred]), abs=1e-9)


def test_orient_draws_relabels_other_labellings():
    rng = np.random.default_rng(0)
    t = np.stack([np.eye(3) * 0.7 + 0.1] * 3)
    t = t / t.sum(-1, keepdims=True)
    rho = np.array([[0.5, 0.3, 0.2]])
    perms = [np.arange(3), np.array([1, 2, 0]), np.array([2, 1, 0])]
    conf = np.stack([t[:, p] for p in perms])  # the same model in three labellings
    prev = np.stack([rho[:, p] for p in perms])
    out_t, out_rho, moved = orient_draws(conf, prev, 0)
    assert moved.tolist() == [False, True, True]
    np.testing.assert_allclose(out_t, np.broadcast_to(t, out_t.shape))
    np.testing.assert_allclose(out_rho, np.broadcast_to(rho, out_rho.shape))
    # the fast identity check agrees with the assignment on random matrices
    conf = rng.dirichlet(np.ones(4), size=(200, 3, 4))
    prev = rng.dirichlet(np.ones(4), size=(200, 1))
    out_t, _, moved = orient_draws(conf, prev, 1)
    diag = np.einsum("syy->s", out_t[:, 1])
    for s in range(200):
        best = max(np.einsum("yy->", out_t[s, 1][:, p]) for p in _permutations(4))
        assert diag[s] == pytest.approx(best)


def _permutations(c):
    import itertools

    return [np.array(p) for p in itertools.permutations(range(c))]


def test_priors_are_validated():
    with pytest.raises(ConfigError, match="2 problems"):
        ChannelPriors(diag=1, prevalence=-1, family="dirichlet")
    p = ChannelPriors({"diagonal": [3, 2, 2]}, off_diagonal=0.5, family="dirichlet")
    alpha = p.confusion_alpha(3, 2)
    assert alpha[0].tolist() == [[3, 0.5], [0.5, 3]] and not p.invariant
    assert ChannelPriors(diagonal=1.5, off_diagonal=1.5, family="dirichlet").invariant
    with pytest.raises(ConfigError, match="has 2 values but the model has 3"):
        ChannelPriors(diagonal=[2, 2], family="dirichlet").confusion_alpha(3, 4)


# ----------------------------------------------------------------------------- fits
@pytest.fixture(scope="module")
def small_data():
    return simulate_multiclass(1500, 3, random_state=7, missing=0.1)


@pytest.fixture(scope="module")
def small_fit(small_data):
    return fit_channels_bayes(small_data, draws=300, tune=400, chains=2, random_state=1)


def test_fit_is_a_channel_fit_with_a_posterior(small_fit, small_data):
    fit = small_fit
    assert fit.layout == "multiclass" and fit.method == "bayes_multiclass"
    assert fit.confusion.shape == (600, 3, 3, 3)
    assert fit.class_prevalence.shape == (600, 3, 3)
    assert set(fit.idata.groups()) >= {
        "posterior",
        "sample_stats",
        "log_likelihood",
        "observed_data",
        "constant_data",
    }
    assert fit.diagnostics["relabelled_draws"] == 0
    assert fit.diagnostics["rhat_max"] < 1.05
    assert fit.diagnostics["divergences"] == 0


def test_posterior_centres_on_the_em_fit(small_fit, small_data):
    """With 1,500 items the posterior mean and the EM maximum differ by much less than
    the posterior sd (prior pseudo-counts of 1 against hundreds of items per row)."""
    em = dawid_skene_em(summarize_multiclass(small_data))
    post = small_fit.confusion.values
    diff = np.abs(post.mean(axis=0) - em.confusion.values[0])
    assert (diff < 0.5 * post.std(axis=0) + 0.01).all()


def test_group_loglik_matches_density(small_fit, small_data):
    """log_likelihood[counts] is the multinomial log-pmf: the Potential plus the constants."""
    from scipy.stats import multinomial

    fit = small_fit
    s = summarize_multiclass(small_data)
    ll = fit.idata.log_likelihood["counts"].values.reshape(-1, s.n_groups)
    d = 5
    t = fit.idata.posterior["confusion"].values.reshape(-1, 3, 3, 3)[d]
    rho = fit.idata.posterior["prevalence"].values.reshape(-1, 3, 3)[d]
    spec = make_multiclass_spec(s)
    lp = multiclass_pattern_loglik(spec, t, rho)
    mask = (spec.states < 3) @ (1 << np.arange(3))
    for g in range(s.n_groups):
        ref = 0.0
        for m in np.unique(mask):
            cells = mask == m
            counts = spec.counts[g, cells]
            if counts.sum() == 0:
                continue
            # the full multinomial over every pattern of this mask (unobserved ones count 0)
            ref += _mask_log_pmf(spec, g, m, counts, cells, t, rho, multinomial)
        assert ll[d, g] == pytest.approx(ref, abs=1e-8)
    assert np.all(np.isfinite(lp))


def _mask_log_pmf(spec, g, m, counts, cells, t, rho, multinomial):
    import itertools

    k, c = spec.n_annotators, spec.n_classes
    answered = [j for j in range(k) if m >> j & 1]
    probs, observed = [], []
    index = {tuple(row): n for row, n in zip(spec.states[cells], counts)}
    for combo in itertools.product(range(c), repeat=len(answered)):
        row = np.full(k, c)
        row[answered] = combo
        p = sum(rho[g, y] * np.prod([t[j, y, row[j]] for j in answered]) for y in range(c))
        probs.append(p)
        observed.append(index.get(tuple(row), 0))
    return multinomial.logpmf(observed, n=int(sum(observed)), p=np.array(probs))


def test_settings_and_designs_are_refused_by_name(small_data):
    with pytest.raises(ConfigError, match="draws must be an integer"):
        fit_channels_bayes(small_data, draws=0)
    with pytest.raises(ConfigError, match="sampler must be one of"):
        fit_channels_bayes(small_data, sampler="stan")
    with pytest.raises(ConfigError, match="groups are fixed when the summary is built"):
        fit_channels_bayes(summarize_multiclass(small_data), groups="all")
    two = MulticlassAnnotations.from_arrays(small_data.probs, small_data.labels[:, :2])
    with pytest.raises(IdentificationError, match="2 annotator"):
        fit_channels_bayes(two)


def test_fit_channels_bayes_dispatches_multiclass_data(small_fit, small_data):
    """The one public entry point: a C-class container is summarised with channel groups by
    predicted class (the summary's default for C > 2), so its draws are the very numbers of
    the summary's fit; binary-only options are refused."""
    from bayescal.bayes import fit_channels_bayes

    summary = summarize_multiclass(small_data, groups="predicted")
    via = fit_channels_bayes(summary, draws=300, tune=400, chains=2, random_state=1)
    np.testing.assert_array_equal(via.confusion.values, small_fit.confusion.values)
    assert via.method == "bayes_multiclass" and small_fit.method == "bayes_multiclass"
    with pytest.raises(ConfigError, match="binary channel model"):
        fit_channels_bayes(small_data, "hui_walter", draws=10, tune=10, chains=1)
    with pytest.raises(ConfigError, match="binary channels only"):
        fit_channels_bayes(small_data, orientation="designated", draws=10, tune=10, chains=1)


def test_a_given_em_start_is_the_fit_the_sampler_would_compute(small_fit, small_data):
    """``start=`` (the audit's EM fit, so EM runs once) replaces only the EM run: given the
    very EM fit the function computes itself (its seed is the first draw of the generator),
    the posterior is the same draw for draw; a wrong type is refused by name."""
    seed = int(np.random.default_rng(1).integers(2**31 - 1))
    summary = summarize_multiclass(small_data)
    em = dawid_skene_em(summary, prevalence="grouped", empty_groups="drop", random_state=seed)
    fit = fit_channels_bayes(summary, draws=300, tune=400, chains=2, random_state=1, start=em)
    np.testing.assert_array_equal(fit.confusion.values, small_fit.confusion.values)
    # and it is used: another EM optimum (a different seed) moves the chains
    other = dawid_skene_em(summary, empty_groups="drop", random_state=seed + 1)
    short = {"draws": 20, "tune": 30, "chains": 1, "random_state": 1, "check": False}
    a = fit_channels_bayes(summary, start=em, **short).confusion.values
    b = fit_channels_bayes(summary, start=other, **short).confusion.values
    assert not np.array_equal(a, b)
    with pytest.raises(ConfigError, match="start must be a multiclass ChannelFit"):
        fit_channels_bayes(summary, start=em.confusion)


def test_the_likelihood_kernel_underflow_path_and_cell_order():
    """The one-pass kernel (products of probabilities per pattern, cells ordered by pattern):
    a shift of one annotator's log probabilities of one answer by -800 for every class
    (each product then underflows to 0, so the log-space path must run) moves the log
    likelihood by exactly -800 times that answer's count and leaves the expected counts (the
    gradient) unchanged; the cells in a shuffled order give the same value and gradient."""
    from bayescal.bayes.logdensity import _likelihood

    data = simulate_multiclass(2000, 4, random_state=11, missing=0.2, n_annotators=4)
    spec = make_multiclass_spec(summarize_multiclass(data))
    states, cell_g, cell_s, cell_n, pidx, gold = MulticlassLogDensity(spec)._args[:6]
    k, c = spec.n_annotators, spec.n_classes
    rng = np.random.default_rng(12)
    conf = rng.dirichlet(np.full(c, 2.0), (k, c)) * 0.5 + np.eye(c) * 0.5  # [j, y, a]
    prev = rng.dirichlet(np.full(c, 3.0), spec.prevalence_alpha.shape[0])
    log_t = np.zeros((k, c + 1, c))
    log_t[:, :c, :] = np.log(conf).transpose(0, 2, 1)
    log_r = np.log(prev)

    def run(lt, order=None):
        g_t, g_r = np.zeros((k, c, c)), np.zeros_like(prev)
        cg, cs, cn = (
            (cell_g, cell_s, cell_n)
            if order is None
            else (cell_g[order], cell_s[order], cell_n[order])
        )
        lp = _likelihood(lt, np.exp(lt), log_r, prev, states, cg, cs, cn, pidx, gold, g_t, g_r)
        return lp, g_t, g_r

    lp, g_t, g_r = run(log_t)
    shifted = log_t.copy()
    shifted[1, 2, :] -= 800.0  # exp(-800) is 0 in float64: only the log path is exact
    answered = (states[cell_s, 1] == 2) * cell_n
    lp2, g_t2, g_r2 = run(shifted)
    assert lp2 == pytest.approx(lp - 800.0 * answered.sum(), rel=1e-13)
    np.testing.assert_allclose(g_t2, g_t, rtol=1e-12)
    np.testing.assert_allclose(g_r2, g_r, rtol=1e-12)
    lp3, g_t3, g_r3 = run(log_t, rng.permutation(cell_n.size))
    assert lp3 == pytest.approx(lp, rel=1e-13)
    np.testing.assert_allclose(g_t3, g_t, rtol=1e-12)
    np.testing.assert_allclose(g_r3, g_r, rtol=1e-12)
