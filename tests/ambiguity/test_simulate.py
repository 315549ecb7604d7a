"""Simulators: the Gaussian example, the numpy MLP, Dawid-Skene annotators, the ISIC matrix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad

from bayescal.ambiguity.simulate import (
    MLP,
    dawid_skene_annotations,
    gaussian_three_class,
    isic2019_confusion,
    run_motivating_example,
)
from bayescal.errors import DataError, NotFittedError


def test_gaussian_example_moments():
    ex = gaussian_three_class(4000, random_state=0)
    for c, mean, var in [
        (0, (-3.2, 1.1), (0.60, 0.45)),
        (1, (0.0, 0.0), (1.15, 0.75)),
        (2, (3.2, -1.1), (0.60, 0.45)),
    ]:
        x = ex.X[ex.cluster == c]
        # sd of a mean over 4000 points is <= sqrt(1.15 / 4000) = 0.017; allow 5 sd.
        np.testing.assert_allclose(x.mean(axis=0), mean, atol=0.085)
        # sd of a sample variance ~ var * sqrt(2 / 4000) <= 0.026; allow 5 sd.
        np.testing.assert_allclose(x.var(axis=0), var, atol=0.13)
    assert np.all(ex.voted[ex.cluster == 1] == 1)
    np.testing.assert_allclose(ex.pi[ex.cluster == 1][0], [0.0, 0.7, 0.3])


def test_mlp_gradient_is_exact():
    ex = gaussian_three_class(10, random_state=1)
    net = MLP(hidden=5, l2=1e-3)
    shapes = net._shapes(2, 3)
    theta = np.random.default_rng(0).normal(size=sum(int(np.prod(s)) for s in shapes)) * 0.5
    T = np.eye(3)[ex.voted]
    fun = net._objective(ex.X, T, shapes)

    def loss(th):
        # Independent forward pass: cross-entropy through scipy's logsumexp.
        from scipy.special import logsumexp

        p = net._unpack(th, shapes)
        z = np.tanh(np.tanh(ex.X @ p[0] + p[1]) @ p[2] + p[3]) @ p[4] + p[5]
        ce = -(T * (z - logsumexp(z, axis=1, keepdims=True))).sum() / len(T)
        return ce + 1e-3 * sum((p[i] ** 2).sum() for i in (0, 2, 4))

    assert fun(theta)[0] == pytest.approx(loss(theta), rel=1e-12)
    assert check_grad(lambda t: fun(t)[0], lambda t: fun(t)[1], theta) < 1e-6


def test_mlp_errors():
    with pytest.raises(NotFittedError):
        MLP().logits([[0.0, 0.0]])
    with pytest.raises(DataError, match="single class"):
        MLP().fit([[0.0], [1.0]], [0, 0])


def test_isic_matrix():
    C = isic2019_confusion()
    assert C.shape == (8, 8)
    np.testing.assert_allclose(C.sum("annotated_class"), 1.0, atol=1e-12)
    assert float(np.diag(C.values).mean()) == pytest.approx(0.7525)
    assert C.sel({"class": "SCC", "annotated_class": "AK"}).item() == 0.18
    assert list(C["class"].values) == ["MEL", "NV", "BCC", "AK", "BKL", "DF", "VL", "SCC"]


def test_dawid_skene_frequencies_match_the_confusion_rows():
    C = isic2019_confusion()
    y = np.repeat([0, 3], 5000)
    counts = dawid_skene_annotations(y, C, 9, random_state=0)
    assert np.all(counts.sum(axis=1) == 9)
    for k in (0, 3):
        freq = counts[y == k].sum(axis=0) / (9 * 5000)
        # 45,000 annotations per row: binomial sd <= 0.0024; allow 5 sd.
        np.testing.assert_allclose(freq, C.values[k], atol=0.012)
    with pytest.raises(DataError, match="probability distributions"):
        dawid_skene_annotations([0], [[0.5, 0.6], [0.5, 0.5]], 3)
    with pytest.raises(DataError, match="out of range"):
        dawid_skene_annotations([2], np.eye(2), 3)


def test_motivating_example_voted_calibrators_miss_the_ambiguous_cluster():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run_motivating_example(
            n_per_cluster=200, hidden=16, max_iter=150, n_draws=50, random_state=0
        )
    m = out["methods"]
    for name in ("TS", "Platt", "HB-Hard"):
        # The ambiguous cluster has pi_1 = 0.7 while voted-label fits push p_1 towards 1:
        # its ECE_true stays far above the voted ECE.
        assert m[name]["ece_true_ambiguous"] > 15.0
        assert m[name]["ece_true"] > m[name]["ece_voted"]
    assert m["SLTS"]["T"] > m["TS"]["T"]
