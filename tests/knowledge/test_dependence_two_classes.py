"""The binary dependence model is the two-class case of the C-class one (issue 21, item 2).

At C = 2 the C-class model couples the *correctness* of a group's answers, the binary
one the answer ``A = 1``; for class 0 correct is ``A = 0``, so the two differ by the sign
of the shared difficulty ``u``, which is symmetric (``N(0, 1)``, symmetric nodes and
weights): the pattern probabilities agree to rounding. Channels ``a, b`` are the confusion
``[[1 - a, a], [1 - b, b]]``, the prevalence ``mu`` the row ``[1 - mu, mu]``. The
tolerance 1e-10 is rounding of ``Phi^{-1}(1 - a)`` against ``-Phi^{-1}(a)`` (condition
number ``a / phi(Phi^{-1}(a))`` < 10 on the rates drawn, times 120-node sums).
"""

from __future__ import annotations

import numpy as np
from gold_data import gold_data

from bayescal import summarize
from bayescal.bayes.dependence import (
    class_pattern_logp,
    implied_correlation,
    make_dependence_spec,
    multiclass_class_pattern_logp,
    multiclass_implied_correlation,
    multiclass_pattern_logp_dependent,
    pair_labels,
    pattern_logp_dependent,
    sample_loadings_prior,
)
from bayescal.bayes.models import make_spec
from bayescal.bayes.multiclass import make_multiclass_spec

A4, B4 = np.array([0.08, 0.13, 0.18, 0.1]), np.array([0.84, 0.89, 0.94, 0.88])


def _both(dependence):
    data, _ = gold_data(600, A4, B4, missing=0.25, seed=5)
    summary = summarize(data, groups=1)
    binary = make_dependence_spec(make_spec(summary, "marginal"), dependence)
    multi = make_dependence_spec(make_multiclass_spec(summary, pooled=True), dependence)
    # the C-class summary keeps the observed patterns: their rows in the binary (dense) table
    rows = {tuple(st): i for i, st in enumerate(binary.base.states)}
    where = np.array([rows[tuple(st)] for st in multi.base.states])
    return binary, multi, where


def test_two_class_pattern_probabilities_equal_the_binary_model():
    binary, multi, where = _both("a1:a2,a2:a3")
    assert multi.n_classes == binary.n_classes == 2 and multi.groups == binary.groups == [(0, 1, 2)]
    rng = np.random.default_rng(7)
    for _ in range(5):
        a, b = rng.uniform(0.02, 0.4, 4), rng.uniform(0.6, 0.98, 4)
        mu = rng.uniform(0.05, 0.95, 1)
        s = rng.uniform(0.0, 3.0, (3, 2))
        confusion = np.stack([np.stack([1 - a, a], -1), np.stack([1 - b, b], -1)], axis=1)
        ours = multiclass_class_pattern_logp(multi, confusion, s)  # (P, C)
        theirs = class_pattern_logp(binary, a, b, s)[:, where].T
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
        prev = np.stack([1 - mu, mu], axis=-1)
        ours = multiclass_pattern_logp_dependent(multi, confusion, prev, s)
        theirs = pattern_logp_dependent(binary, a, b, mu, s)[:, where]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
        # a batch of draws gives the per-draw values
        batch = class_pattern_logp(binary, np.stack([a, a]), np.stack([b, b]), np.stack([s, s]))
        np.testing.assert_allclose(batch[1], class_pattern_logp(binary, a, b, s), atol=1e-12)


def test_two_class_correlations_and_pair_labels_equal_the_binary_model():
    binary, multi, _ = _both("a1:a2,a3:a4")
    s = np.random.default_rng(8).uniform(0.0, 3.0, (4, 2))
    rho, labels = implied_correlation(binary, s)
    rho_c, labels_c = multiclass_implied_correlation(multi, s)
    np.testing.assert_allclose(rho_c, rho, rtol=0, atol=1e-15)
    assert labels == labels_c == pair_labels(multi) == ["a1~a2", "a3~a4"]


def test_loadings_prior_draws_one_loading_per_class_of_the_spec():
    binary, multi, _ = _both("a1:a2,a3:a4")
    ours = sample_loadings_prior(multi, 50, np.random.default_rng(9))
    theirs = sample_loadings_prior(binary, 50, np.random.default_rng(9))
    assert ours.shape == (50, 4, multi.n_classes) and (ours >= 0).all()
    np.testing.assert_array_equal(ours, theirs)
