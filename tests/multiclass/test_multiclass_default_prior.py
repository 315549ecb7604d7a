"""The default confusion prior's pull does not grow with C (issue 22 item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.priors import ChannelPriors
from bayescal.bench.channels import simulate_answers, true_confusions
from bayescal.channels.em import dawid_skene_em
from bayescal.summaries import summarize_multiclass


@pytest.mark.parametrize("n_classes", [2, 3, 5, 10, 20, 50])
def test_default_row_total_does_not_grow_with_classes(n_classes):
    alpha = ChannelPriors(family="dirichlet").confusion_alpha(4, n_classes)
    # 2 pseudo-answers on the own class + 1 spread over the C - 1 others, for every C
    np.testing.assert_allclose(alpha.sum(axis=-1), 3.0, rtol=1e-12)
    np.testing.assert_allclose(np.diagonal(alpha, axis1=-2, axis2=-1), 2.0)
    # the prior mean diagonal is 2/3 whatever C (the old default's was 2 / (C + 1))
    mean = ChannelPriors(family="dirichlet").confusion_mean(4, n_classes)
    np.testing.assert_allclose(np.diagonal(mean, axis1=-2, axis2=-1), 2.0 / 3.0)


def test_two_class_rows_and_explicit_values_unchanged():
    # C = 2: the row (2, 1) of the earlier default; the binary default stays the Beta family
    alpha = ChannelPriors(family="dirichlet").confusion_alpha(1, 2)
    assert alpha[0].tolist() == [[2.0, 1.0], [1.0, 2.0]]
    assert ChannelPriors().family == "beta" and ChannelPriors().a.alpha == 2.0
    # an explicit off_diagonal is a per-entry concentration, as before
    p = ChannelPriors(diagonal=4.0, off_diagonal=1.0)
    assert p.confusion_alpha(1, 5)[0].sum(axis=-1).tolist() == [8.0] * 5
    assert ChannelPriors(diagonal=5).to_dict()["off_diagonal"] == "1/(C-1)"


def test_posterior_mean_within_posterior_sd_of_em():
    # C = 6, 60 items per class, accuracies 0.95 / 0.8 / 0.65, errors spread unevenly
    # (not the prior's shape). Tolerance: the default's 3 pseudo-answers move a row's
    # mean by at most 3 / 63 * |acc - 2/3| <= 0.014, while the posterior sd of a diagonal
    # entry is about sqrt(acc (1 - acc) / 60) >= 0.028 (acc <= 0.95): <= 0.5 sd, plus the
    # Monte Carlo error of the mean (<= 0.15 sd at ESS >= 50) and the gap between a
    # posterior mean and the mode EM finds (skew, ~ 1 / sqrt(n) sd): 1.5 sd holds. The old
    # default (7 pseudo-answers, prior mean diagonal 2/7) moved a 0.95 row by
    # 7 / 67 * 0.66 = 0.069, about 2.5 sd: it fails this check.
    _, z = _fit_against_em(6, seed=7)
    assert z.max() < 1.5, z.round(2)


def _fit_against_em(n_classes: int, seed: int):
    """60 items per class, accuracies 0.95 / 0.8 / 0.65, Dirichlet(1)-split errors: the
    default-prior fit (2 x 200 draws) and each diagonal's |posterior mean - EM| in posterior
    sds."""
    rng = np.random.default_rng(seed)
    truth = true_confusions(n_classes, np.array([0.95, 0.8, 0.65]), rng)
    summary = summarize_multiclass(simulate_answers(truth, 60, rng), groups="all")
    em = dawid_skene_em(summary, prevalence="grouped", random_state=0)
    fit = fit_channels_bayes(
        summary, "marginal", draws=200, tune=300, chains=2, random_state=0, check=False
    )
    diag = np.diagonal(fit.confusion.values, axis1=-2, axis2=-1)  # (draw, K, C)
    em_diag = np.diagonal(em.confusion.values[0], axis1=-2, axis2=-1)
    return fit, np.abs(diag.mean(0) - em_diag) / diag.std(0, ddof=1)


def _nested_density(x, d, mass, s):
    """Independent formula of a nested row: Beta(d, M) on x[0] (the own class), Dirichlet(s)
    on the wrong answers' shares, and the Jacobian (1 - x0)^-(C - 2) of x -> (x0, shares)."""
    from scipy import stats

    c = x.size
    rest = x[1:] / (1.0 - x[0])
    return (
        stats.beta(d, mass).pdf(x[0])
        * stats.dirichlet(np.full(c - 1, s)).pdf(rest)
        / (1.0 - x[0]) ** (c - 2)
    )


@pytest.mark.parametrize(
    ("priors", "c"),
    [
        ({}, 3),
        ({}, 6),
        ({"diagonal": 3.0, "split": 0.4}, 4),
        ({"off_diagonal": 0.2, "split": 2}, 5),
    ],
)
def test_nested_kernel_is_the_beta_diagonal_with_dirichlet_shares(priors, c):
    """The kernel the density uses equals the nested construction at random simplex points,
    normaliser included, for the default (split 1) and explicit splits."""
    p = ChannelPriors(priors, family="dirichlet")
    kernel = p.confusion_kernel(2, c)
    d = p.confusion_alpha(2, c)[0, 0, 0]
    mass = p.off_diagonal_alpha(2, c)[0] * (c - 1)
    s = p.split_alpha(2, c)[0]
    assert kernel.kappa[0, 0] == pytest.approx(mass - (c - 1) * s)
    rng = np.random.default_rng(c)
    for x in rng.dirichlet(np.ones(c), size=20):
        got = np.exp(
            kernel.log_norm[0, 0]
            + ((kernel.alpha[0, 0] - 1) * np.log(x)).sum()
            + kernel.kappa[0, 0] * np.log(1.0 - x[0])
        )
        assert got == pytest.approx(_nested_density(x, d, mass, s), rel=1e-10)


def test_a_nested_row_integrates_to_one():
    """C = 3 with split 1 (kappa = 1 - 2 = -1; the default split 0.5 is the Dirichlet row)."""
    from scipy import integrate

    k = ChannelPriors(split=1.0, family="dirichlet").confusion_kernel(1, 3)
    assert k.kappa[0, 0] == -1.0
    a, kappa, norm = k.alpha[0, 0], k.kappa[0, 0], k.log_norm[0, 0]

    def f(x1, x0):
        x2 = 1.0 - x0 - x1
        return (
            np.exp(norm)
            * x0 ** (a[0] - 1)
            * x1 ** (a[1] - 1)
            * x2 ** (a[2] - 1)
            * (1 - x0) ** kappa
        )

    value, err = integrate.dblquad(f, 0, 1, 0, lambda x0: 1 - x0)
    assert value == pytest.approx(1.0, abs=10 * err + 1e-9)


def test_explicit_off_diagonal_rows_stay_dirichlet_and_two_classes_are_not_nested():
    for priors, c in [({"off_diagonal": 1.0}, 5), ({}, 2), ({"split": 3.0}, 2)]:
        kernel = ChannelPriors(priors, family="dirichlet").confusion_kernel(3, c)
        assert np.all(kernel.kappa == 0), (priors, c)
        np.testing.assert_array_equal(
            kernel.alpha, ChannelPriors(priors, family="dirichlet").confusion_alpha(3, c)
        )


def test_prior_draws_have_the_beta_diagonal_and_dirichlet_shares():
    """sample_confusion at C = 10 (default): the diagonal is Beta(2, 1) (Kolmogorov-Smirnov
    at 20,000 draws: p > 0.001 fails a correct sampler 1 time in 1,000) and each wrong
    answer's share is Dirichlet(0.5, ..., 0.5): mean 1 / 9 (sd of the mean of 20,000 shares
    0.00095; 5 sd = 0.0048) and variance 0.5 * 4 / (4.5^2 * 5.5) = 0.0180 (sd of the sample
    variance about 0.0003 at this kurtosis; bound 0.002)."""
    from scipy import stats

    rng = np.random.default_rng(11)
    t = ChannelPriors(family="dirichlet").sample_confusion(rng, 20_000, 1, 10)
    np.testing.assert_allclose(t.sum(-1), 1.0, atol=1e-12)
    diag = t[:, 0, 3, 3]
    assert stats.kstest(diag, stats.beta(2, 1).cdf).pvalue > 1e-3
    shares = t[:, 0, 3, 4] / (1.0 - diag)
    assert abs(shares.mean() - 1 / 9) < 0.0048
    # the earlier default's Dirichlet(2, 1/9, ...) row has the same mean shares but variance
    # (1/9) (8/9) / 2 = 0.049: this bound tells the two apart
    assert abs(shares.var() - 0.5 * 4 / (4.5**2 * 5.5)) < 0.002


def test_twenty_classes_sample_without_hitting_the_tree_depth_cap():
    """C = 20, 60 items per class, accuracies 0.95 / 0.8 / 0.65 with errors spread unevenly:
    the default rows sample (mean tree depth well below nutpie's cap of 10: the Dirichlet row
    (2, 1/19, ...) of the earlier default sat at the cap on every draw, R-hat 3.8) and every
    posterior mean diagonal is within 1.5 posterior sd of EM (tolerance as in the C = 6 test
    above; at C = 20 the rows hold 60 items each, as there)."""
    fit, z = _fit_against_em(20, seed=20)
    assert fit.idata is not None
    depth = float(fit.idata["sample_stats"]["tree_depth"].mean())
    assert depth < 7.0, depth
    assert z.max() < 1.5, z.round(2)


def test_prior_pull_excess_is_zero_for_the_diagonal_priors_own_pull():
    """A posterior centred where the Beta(2, 1) diagonal alone would put it (EM moved by
    (d + M) / (n + d + M) of its distance to 2/3) has no excess; one moved 3 sd further does."""
    from bayescal.bayes.fit import prior_pull_excess

    rng = np.random.default_rng(1)
    em = np.array([[[0.9, 0.1], [0.2, 0.8]]])
    n = np.array([[50.0, 80.0]])
    own_mean = np.diagonal(em, axis1=-2, axis2=-1) + 3 / (n + 3) * (
        2 / 3 - np.diagonal(em, axis1=-2, axis2=-1)
    )
    sd = 0.02
    noise = rng.normal(0, sd, (4000, 1, 2))
    draws = np.zeros((4000, 1, 2, 2))
    draws[..., [0, 1], [0, 1]] = own_mean + noise
    excess = prior_pull_excess(draws, em, n, np.array([2.0]), np.array([1.0]))
    assert np.all(np.abs(excess) < 0.2), excess  # MC error of a mean of 4000 draws: 0.016 sd
    draws[..., [0, 1], [0, 1]] -= 3 * sd
    excess = prior_pull_excess(draws, em, n, np.array([2.0]), np.array([1.0]))
    np.testing.assert_allclose(excess, 3.0, atol=0.2)


def test_a_well_specified_fit_does_not_warn_about_the_prior():
    fit, _ = _fit_against_em(6, seed=7)
    assert fit.diagnostics["prior_pull_entries"] == 0
    assert fit.diagnostics["prior_pull_max_excess_sd"] < 1.5
    assert not [w for w in fit.warnings if "default prior moves" in w]


def test_errors_on_two_of_twenty_classes_warn_when_the_prior_does_not_fit():
    """The design even shares do not cover (every row's errors on its two neighbouring
    classes, C = 20, 200 items per class: diagonal coverage 0.62 with shares="even",
    models/multiclass.md): the fit says so. Measured with even shares: 12-13 of 60 diagonals
    beyond 1.5 sd, largest excess 4.4-4.6 sd (seeds 0, 1); the grid cells with
    Dirichlet-spread errors stay below 0.9. (The default pooled shares cover this design:
    test_sparse_errors_do_not_inflate_the_best_annotator, bench channels --priors.)"""
    rng = np.random.default_rng(20_000)
    truth = true_confusions(20, np.linspace(0.95, 0.6, 3), rng, "neighbours")
    summary = summarize_multiclass(simulate_answers(truth, 200, rng), groups="all")
    even = ChannelPriors(shares="even", family="dirichlet")
    fit = fit_channels_bayes(
        summary, "marginal", priors=even, draws=300, tune=600, chains=2, random_state=0
    )
    assert fit.diagnostics["prior_pull_entries"] >= 5
    assert any("default prior moves" in w for w in fit.warnings)


def test_pymc_model_of_nested_rows_equals_the_hand_written_density():
    """C = 5, default rows (kappa = -1): PyMC's logp (pm.Dirichlet plus the potential
    confusion_split_prior) and the numba density agree, normaliser included, at random points."""
    from bayescal.bayes.logdensity import MulticlassLogDensity
    from bayescal.bayes.multiclass import build_multiclass_pymc_model, make_multiclass_spec
    from bayescal.simulate import simulate_multiclass

    spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(300, 5, random_state=0)))
    assert np.all(spec.kernel.kappa == -1.0)
    density = MulticlassLogDensity(spec)
    model = build_multiclass_pymc_model(spec).model
    logp = model.compile_logp(jacobian=True)
    names = [v.name for v in model.value_vars]
    shapes = [model.initial_point()[n].shape for n in names]
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = density.initial_point() + rng.normal(0.0, 0.5, density.n_dim)
        split = np.split(x, [density.n_confusion])
        point = {n: v.reshape(shape) for n, v, shape in zip(names, split, shapes)}
        assert float(logp(point)) == pytest.approx(density(x)[0], rel=1e-10, abs=1e-8)


def _pooled_density(x, d, mass, alpha_shares):
    """As _nested_density, with a Dirichlet of uneven concentrations on the shares."""
    from scipy import stats

    rest = x[1:] / (1.0 - x[0])
    return (
        stats.beta(d, mass).pdf(x[0])
        * stats.dirichlet(alpha_shares).pdf(rest)
        / (1.0 - x[0]) ** (x.size - 2)
    )


@pytest.mark.parametrize(("priors", "c"), [({}, 4), ({}, 7), ({"split": 2.0}, 5)])
def test_pooled_shares_kernel_is_the_beta_diagonal_with_centred_dirichlet_shares(priors, c):
    """shares="pooled": the wrong answers' concentrations follow the share mean (half even,
    half pooled), keep the even total (so kappa and the diagonal's Beta are unchanged), and
    the kernel equals the nested construction with those concentrations, normaliser
    included."""
    from bayescal.bayes.priors import SHARE_POOLING

    rng = np.random.default_rng(c)
    mean = rng.dirichlet(np.full(c - 1, 0.3), size=c)
    mean = np.stack([np.insert(row, y, 0.0) for y, row in enumerate(mean)])
    p = ChannelPriors(priors, family="dirichlet")
    even, kernel = p.confusion_kernel(2, c), p.confusion_kernel(2, c, mean)
    np.testing.assert_allclose(kernel.kappa, even.kappa)
    np.testing.assert_allclose(kernel.alpha.sum(-1), even.alpha.sum(-1))
    s = p.split_alpha(2, c)[0]
    want = s * (1 - SHARE_POOLING) + s * (c - 1) * SHARE_POOLING * mean[0, 1:]
    np.testing.assert_allclose(kernel.alpha[0, 0, 1:], want)
    d = p.confusion_alpha(2, c)[0, 0, 0]
    mass = p.off_diagonal_alpha(2, c)[0] * (c - 1)
    for x in rng.dirichlet(np.ones(c), size=20):
        got = np.exp(
            kernel.log_norm[0, 0]
            + ((kernel.alpha[0, 0] - 1) * np.log(x)).sum()
            + kernel.kappa[0, 0] * np.log(1.0 - x[0])
        )
        assert got == pytest.approx(_pooled_density(x, d, mass, kernel.alpha[0, 0, 1:]), rel=1e-10)
    # even shares as the mean give the even kernel; Dirichlet rows ignore the mean
    flat = np.where(np.eye(c, dtype=bool), 0.0, 1.0 / (c - 1))
    np.testing.assert_allclose(p.confusion_kernel(2, c, flat).alpha, even.alpha)
    rows = ChannelPriors(off_diagonal=1.0).confusion_kernel(2, c, mean)
    np.testing.assert_array_equal(rows.alpha, ChannelPriors(off_diagonal=1.0).confusion_alpha(2, c))


def test_pooled_error_shares_and_bad_share_means():
    from bayescal.bayes.priors import pooled_error_shares
    from bayescal.errors import ConfigError

    t = np.array(
        [
            [[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.0, 0.0, 1.0]],
            [[0.7, 0.1, 0.2], [0.3, 0.7, 0.0], [0.0, 0.0, 1.0]],
            [[0.8, 0.0, 0.2], [0.1, 0.9, 0.0], [0.0, 0.5, 0.5]],
        ]
    )
    got = pooled_error_shares(t)
    assert got.shape == (3, 3, 3)
    # annotator 0 is centred on annotators 1 and 2 only: in row 0 they err 0.1 + 0.0 to
    # class 1 and 0.2 + 0.2 to class 2
    np.testing.assert_allclose(got[0, 0], [0.0, 0.2, 0.8])
    np.testing.assert_allclose(got[0, 1], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(got[0, 2], [0.0, 1.0, 0.0])  # only annotator 2 errs in row 2
    np.testing.assert_allclose(got[2, 2], [0.5, 0.5, 0.0])  # the others never err there: even
    # an independent slow computation: for each annotator, sum the others' rows
    for j in range(3):
        others = sum(np.where(np.eye(3, dtype=bool), 0.0, t[i]) for i in range(3) if i != j)
        for y in range(3):
            if others[y].sum() > 0:
                np.testing.assert_allclose(got[j, y], others[y] / others[y].sum())
    np.testing.assert_allclose(pooled_error_shares(t[:1])[0], np.where(np.eye(3), 0, 0.5))
    p = ChannelPriors(family="dirichlet")
    for bad in [np.ones((3, 3)), np.full((3, 3), np.nan), got[:2], got[:, :2]]:
        with pytest.raises(ConfigError, match="share_mean"):
            p.confusion_kernel(1, 3, bad)
    with pytest.raises(ConfigError, match="'shares' must be one of"):
        ChannelPriors(shares="spread", family="dirichlet")
    with pytest.raises(ConfigError, match="Beta family"):
        ChannelPriors(shares="even", family="beta")
    assert ChannelPriors(shares="even", family="dirichlet").to_dict()["shares"] == "even"
    assert "shares='even'" in repr(ChannelPriors(shares="even", family="dirichlet"))


def test_sparse_errors_do_not_inflate_the_best_annotator():
    """Errors only to the two neighbouring classes (C = 10, 150 items per class, accuracies
    0.95 / 0.775 / 0.6). Even shares charge an accurate annotator's first error to a row
    about 1 / (C - 1) of prior probability, so the posterior explained its few errors as the
    others' and put its diagonal above the truth (mean z of its ten diagonals +1.5 over six
    seeds at 200 items per class, models/multiclass.md); the shares pooled over the other
    annotators put the neighbours' shares where the data have them. With independent
    z-scores the mean of ten has sd 0.32, so |mean z| < 1 is a 3-sd bound for a calibrated
    posterior."""
    rng = np.random.default_rng(3)
    truth = true_confusions(10, np.array([0.95, 0.775, 0.6]), rng, "neighbours")
    summary = summarize_multiclass(simulate_answers(truth, 150, rng), groups="all")
    fit = fit_channels_bayes(
        summary, "marginal", draws=300, tune=500, chains=2, random_state=0, check=False
    )
    assert fit.idata is not None and "prior_share_mean" in fit.idata["posterior"].attrs
    diag = np.diagonal(fit.confusion.values, axis1=-2, axis2=-1)  # (draw, K, C)
    z = (diag.mean(0) - np.diagonal(truth, axis1=-2, axis2=-1)) / diag.std(0, ddof=1)
    assert np.all(np.abs(z.mean(axis=1)) < 1.0), z.mean(axis=1).round(2)


def test_bench_shares_option_lists_the_priors_shares():
    """`bench channels --shares` spells the names out (the bench parser does not import the
    priors module); they must be ChannelPriors' own."""
    import argparse

    from bayescal.bayes.priors import SHARES
    from bayescal.bench import channels

    parser = argparse.ArgumentParser()
    channels.add_arguments(parser)
    action = next(a for a in parser._actions if a.dest == "shares")
    assert tuple(action.choices) == SHARES and action.default == SHARES[0]


def test_share_pooling_weight_counts_the_others_errors_against_the_wrong_answers():
    """Each row's weight is SHARE_POOLING * N / (N + C - 1), N the *other* annotators'
    expected wrong answers in that row (checked against a slow loop); rows without errors
    elsewhere get 0 (even shares), many errors approach SHARE_POOLING; the kernel uses the
    weights row by row."""
    from bayescal.bayes.priors import SHARE_POOLING, share_pooling_weight
    from bayescal.errors import ConfigError

    rng = np.random.default_rng(3)
    k, c = 4, 6
    t = rng.dirichlet(np.ones(c), size=(k, c))
    t[0, 2] = np.eye(c)[2]  # annotator 0 never errs in row 2
    counts = rng.uniform(0, 80, size=(k, c))
    got = share_pooling_weight(t, counts)
    for j in range(k):
        for y in range(c):
            n = sum(counts[i, y] * (1 - t[i, y, y]) for i in range(k) if i != j)
            assert got[j, y] == pytest.approx(SHARE_POOLING * n / (n + c - 1), rel=1e-12)
    # no one else errs: weight 0; huge counts: the cap
    perfect = np.broadcast_to(np.eye(c), (k, c, c))
    np.testing.assert_array_equal(share_pooling_weight(perfect, counts), 0.0)
    big = share_pooling_weight(t, np.full((k, c), 1e12))
    np.testing.assert_allclose(big, SHARE_POOLING, rtol=1e-9)
    # the kernel applies each row's own weight; weight 0 is the even row
    mean = np.where(np.eye(c, dtype=bool), 0.0, rng.dirichlet(np.ones(c), size=c))
    mean /= mean.sum(-1, keepdims=True)
    p = ChannelPriors(family="dirichlet")
    kernel = p.confusion_kernel(k, c, mean, got)
    s = p.split_alpha(k, c)[0]
    j, y = 1, 3
    off = [a for a in range(c) if a != y]
    want = s * (1 - got[j, y]) + s * (c - 1) * got[j, y] * mean[y, off]
    np.testing.assert_allclose(kernel.alpha[j, y, off], want)
    zero = p.confusion_kernel(k, c, mean, np.zeros((k, c)))
    np.testing.assert_allclose(zero.alpha, p.confusion_kernel(k, c).alpha)
    for bad in [np.full((k, c), SHARE_POOLING + 0.01), -np.ones((k, c)), np.ones((k, c - 1))]:
        with pytest.raises(ConfigError, match="share_weight"):
            p.confusion_kernel(k, c, mean, bad)
    with pytest.raises(ConfigError, match="class_counts"):
        share_pooling_weight(t, counts[:, :-1])
    with pytest.raises(ConfigError, match="class_counts"):
        share_pooling_weight(t, -counts)
