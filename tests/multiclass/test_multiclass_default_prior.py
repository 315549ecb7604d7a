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
    rng = np.random.default_rng(7)
    truth = true_confusions(6, np.array([0.95, 0.8, 0.65]), rng)
    summary = summarize_multiclass(simulate_answers(truth, 60, rng), groups="all")
    em = dawid_skene_em(summary, prevalence="grouped", random_state=0)
    fit = fit_channels_bayes(
        summary, "marginal", draws=200, tune=300, chains=2, random_state=0, check=False
    )
    diag = np.diagonal(fit.confusion.values, axis1=-2, axis2=-1)  # (draw, K, C)
    em_diag = np.diagonal(em.confusion.values[0], axis1=-2, axis2=-1)
    z = np.abs(diag.mean(0) - em_diag) / diag.std(0, ddof=1)
    assert z.max() < 1.5, z.round(2)
