"""Slow checks of the Bayesian multiclass model: SBC and the two samplers' agreement."""

import numpy as np
import pytest

from bayescal.bayes.multiclass import MulticlassPriors
from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes
from bayescal.channels.orientation import dominant_diagonal_permutation
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass

#: SBC prior: informative enough that the sampler's one-labelling posterior is the model's
#: posterior restricted to the designated annotator's labelling (models/multiclass.md).
SBC_PRIORS = {"diagonal": 4.0, "off_diagonal": 1.0, "prevalence": 3.0}


def _prior_draw(rng, c, k, priors):
    """Confusions and prevalence from the prior restricted to the identity labelling of
    annotator 0 (rejection), the support the relabelled posterior lives on."""
    alpha = priors.confusion_alpha(k, c)
    while True:
        t = np.stack([[rng.dirichlet(alpha[j, y]) for y in range(c)] for j in range(k)])
        if np.array_equal(dominant_diagonal_permutation(t[0]), np.arange(c)):
            break
    rho = rng.dirichlet(priors.prevalence_alpha(1, c)[0])
    return t, rho


def _simulate(rng, t, rho, n):
    k, c, _ = t.shape
    y = rng.choice(c, size=n, p=rho)
    u = rng.random((n, k, 1))
    lab = np.minimum((u > np.cumsum(t[:, y].transpose(1, 0, 2), axis=2)).sum(axis=2), c - 1)
    return MulticlassAnnotations.from_arrays(np.full((n, c), 1.0 / c), lab.astype(float))


@pytest.mark.slow
def test_simulation_based_calibration():
    """Talts et al. (2018): the rank of the true value among posterior draws is uniform.

    100 replications of C = 3, K = 3, 200 items, one prevalence; ranks among 99 thinned
    draws (2 chains x 99) of four quantities, counted in 10 bins. Each count is
    Binomial(100, 0.1) under a correct sampler: a chi-square (9 df) above 27.9 has
    probability 0.001, and 0.004 for any of the four (Bonferroni)."""
    priors = MulticlassPriors(SBC_PRIORS)
    rng = np.random.default_rng(2024)
    n_rep, n_keep = 100, 99
    ranks = np.zeros((n_rep, 4), dtype=int)
    for r in range(n_rep):
        t, rho = _prior_draw(rng, 3, 3, priors)
        data = _simulate(rng, t, rho, 200)
        fit = fit_multiclass_channels_bayes(
            data,
            groups="all",
            priors=priors,
            draws=99,
            tune=300,
            chains=2,
            check=False,
            random_state=int(rng.integers(2**31)),
        )
        conf = fit.confusion.values
        prev = fit.class_prevalence.values[:, 0]
        draws = np.stack([conf[:, 0, 0, 0], conf[:, 1, 1, 2], conf[:, 2, 2, 2], prev[:, 0]], 1)
        truth = np.array([t[0, 0, 0], t[1, 1, 2], t[2, 2, 2], rho[0]])
        keep = draws[:: max(1, draws.shape[0] // n_keep)][:n_keep]
        ranks[r] = (keep < truth).sum(axis=0)
    for q in range(4):
        counts = np.bincount(ranks[:, q] * 10 // (n_keep + 1), minlength=10)
        chi2 = ((counts - n_rep / 10) ** 2 / (n_rep / 10)).sum()
        assert chi2 < 27.9, (q, counts.tolist())


@pytest.mark.slow
def test_nutpie_and_pymc_sample_the_same_posterior():
    """Both samplers draw the same posterior: the differences of the 27 confusion means,
    in combined Monte Carlo standard errors, z = (m_nutpie - m_pymc) / sqrt(se1^2 + se2^2),
    are centred at 0 and none is extreme. ArviZ's MCSE of 2 x 2,000 draws understates the
    Monte Carlo error somewhat (measured: sd of z 1.08 and 1.36 in two seeds), so the
    bounds allow an sd up to 1.4: |z| <= 4.5 for every entry (4.5 / 1.4 = 3.2 sd, two-sided
    0.0014 each, 0.04 for the worst of 27) and |mean z| <= 0.8 (the rows' entries are
    dependent, so the mean has at most about sd / sqrt(9) = 0.47). Posterior sds agree
    within 15% (their Monte Carlo error is a few percent at this ESS)."""
    import arviz as az

    data = simulate_multiclass(1500, 3, random_state=8, missing=0.1)
    fits = [
        fit_multiclass_channels_bayes(
            data, draws=2000, tune=1000, chains=2, cores=1, sampler=s, random_state=3
        )
        for s in ("nutpie", "pymc")
    ]
    means, mcses, sds = [], [], []
    for fit in fits:
        post = fit.idata.posterior["confusion"]
        means.append(post.mean(("chain", "draw")).values)
        sds.append(post.std(("chain", "draw")).values)
        mcses.append(az.mcse(fit.idata.posterior[["confusion"]])["confusion"].values)
    z = (means[0] - means[1]) / np.sqrt(mcses[0] ** 2 + mcses[1] ** 2)
    assert np.abs(z).max() <= 4.5, np.round(z, 2)
    assert abs(z.mean()) <= 0.8
    assert np.all(np.abs(sds[0] / sds[1] - 1) < 0.15)
