"""Multiclass Dawid–Skene EM: exact populations, brute force, the binary case, refusals."""

import warnings

import numpy as np
import pytest

import bayescal.channels.em as mem
from bayescal import Annotations, summarize
from bayescal.channels import dawid_skene_em, score_bin_em
from bayescal.channels.em import em_fit_counts, em_run, pattern_log_probs
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, FitError, IdentificationError, IdentificationWarning
from bayescal.simulate import multiclass_population, simulate_flip_data, simulate_multiclass
from bayescal.summaries import summarize_multiclass
from bayescal.summaries.patterns import item_states

# ------------------------------------------------------------------ exact populations
# With counts equal to their expectations the maximum-likelihood estimate is the truth;
# EM run to tol = 1e-14 stops within about 1e-7 of it (measured: 1e-7 at C = 4), so 1e-6.
EXACT = 1e-6


@pytest.mark.parametrize(
    "classes, k, missing, groups",
    [
        (3, 3, 0.0, "predicted"),
        (4, 3, [0.1, 0.3, 0.0], "predicted"),
        (4, 4, 0.2, "all"),
        (5, 3, 0.1, [0, 0.5, 0.7, 1]),
    ],
)
def test_em_recovers_confusions_from_exact_expected_counts(classes, k, missing, groups):
    pop = multiclass_population(classes, n_annotators=k, missing=missing, random_state=classes)
    states, counts = pop.expected_pattern_counts(1e5, groups=groups)
    rho, weight = pop.class_prevalence(groups)
    keep = weight > 0
    res = em_fit_counts(counts[keep], states, classes, tol=1e-14, max_iter=50_000)
    np.testing.assert_allclose(res["confusion"], pop.confusion, atol=EXACT)
    np.testing.assert_allclose(res["prevalence"], rho[keep], atol=EXACT)
    assert res["dominance_failures"] == []


def test_every_start_lands_on_the_truth_after_relabelling():
    pop = multiclass_population(4, random_state=7)
    states, counts = pop.expected_pattern_counts(1e5, groups="all")
    res = em_fit_counts(counts, states, 4, tol=1e-14, max_iter=50_000, n_starts=12)
    lls = np.array(res["diagnostics"]["start_logliks"])
    assert res["n_accepted"] == 12 and np.ptp(lls) < 1e-6 * abs(lls.max())


# ------------------------------------------------------------------ brute force
def brute_force_loglik(labels, n_classes, group, confusion, prevalence):
    """Per item, per class: log sum_y rho[g_i, y] prod_{j answered} T_j[y, A_ij]."""
    total = 0.0
    for i in range(labels.shape[0]):
        if np.isnan(labels[i]).all():
            continue
        lik = 0.0
        for y in range(n_classes):
            term = prevalence[group[i], y]
            for j in range(labels.shape[1]):
                if not np.isnan(labels[i, j]):
                    term *= confusion[j, y, int(labels[i, j])]
            lik += term
        total += np.log(lik)
    return total


def items_em(labels, n_classes, group, t, rho, *, iterations, clip=1e-6):
    """The slow, obvious per-item EM from one start, a fixed number of iterations."""
    keep = ~np.isnan(labels).all(axis=1)
    lab, g = labels[keep], group[keep]
    k = lab.shape[1]
    t, rho = t.copy(), rho.copy()
    for _ in range(iterations):
        post = np.empty((lab.shape[0], n_classes))
        for i in range(lab.shape[0]):
            for y in range(n_classes):
                lp = np.log(rho[g[i], y])
                for j in range(k):
                    if not np.isnan(lab[i, j]):
                        lp += np.log(t[j, y, int(lab[i, j])])
                post[i, y] = lp
            post[i] = np.exp(post[i] - np.logaddexp.reduce(post[i]))
        for gg in range(rho.shape[0]):
            rho[gg] = post[g == gg].mean(axis=0)
        for j in range(k):
            num = np.zeros((n_classes, n_classes))
            for i in range(lab.shape[0]):
                if not np.isnan(lab[i, j]):
                    num[:, int(lab[i, j])] += post[i]
            t[j] = num / num.sum(axis=1, keepdims=True)
        t = np.maximum(t, clip)
        t /= t.sum(axis=2, keepdims=True)
        rho = np.maximum(rho, clip)
        rho /= rho.sum(axis=1, keepdims=True)
    return t, rho


@pytest.fixture(scope="module")
def small():
    d = simulate_multiclass(400, 3, random_state=5, missing=[0.2, 0.0, 0.4], n_profiles=40)
    return d, summarize_multiclass(d)


def test_pattern_likelihood_equals_per_item_brute_force(small):
    d, s = small
    rng = np.random.default_rng(0)
    t = rng.dirichlet(np.ones(3), size=(3, 3))
    rho = rng.dirichlet(np.ones(3), size=3)
    fast = (s.pattern_counts.values * pattern_log_probs(s.states, t, rho)).sum()
    slow = brute_force_loglik(d.labels, 3, d.predicted, t, rho)
    assert fast == pytest.approx(slow, rel=1e-12, abs=1e-9)
    fit = dawid_skene_em(s)
    at_fit = brute_force_loglik(
        d.labels, 3, d.predicted, fit.confusion.values[0], fit.class_prevalence.values[0]
    )
    assert fit.loglik == pytest.approx(at_fit, rel=1e-12, abs=1e-9)


def test_pattern_em_equals_per_item_em_from_the_same_start(small):
    d, s = small
    rng = np.random.default_rng(1)
    t0 = 0.5 * np.eye(3) + 0.5 * rng.dirichlet(np.ones(3), size=(3, 3))
    rho0 = rng.dirichlet(np.ones(3), size=3)
    fast = em_run(s.pattern_counts.values, s.states, t0[None], rho0[None], tol=1e-300, max_iter=7)
    t_slow, rho_slow = items_em(d.labels, 3, d.predicted, t0, rho0, iterations=7)
    np.testing.assert_allclose(fast["confusion"][0], t_slow, atol=1e-12)
    np.testing.assert_allclose(fast["prevalence"][0], rho_slow, atol=1e-12)


# ------------------------------------------------------------------ the binary case (C = 2)
@pytest.fixture(scope="module")
def binary_pair():
    rng = np.random.default_rng(4)
    n = 6000
    z = rng.random(n)
    y = (rng.random(n) < z).astype(int)
    b = simulate_flip_data(
        z, y, [0.1, 0.2, 0.15], [0.85, 0.9, 0.7], random_state=rng, missing=[0.0, 0.2, 0.1]
    )
    group = np.minimum((z * 4).astype(int), 3)
    binary = Annotations.from_arrays(b.score, b.labels, group=group)
    multi = MulticlassAnnotations.from_arrays(
        np.column_stack([1 - b.score, b.score]), b.labels, group=group
    )
    return binary, multi


def test_c2_pooled_em_reproduces_binary_dawid_skene(binary_pair):
    binary, multi = binary_pair
    ref = dawid_skene_em(summarize(binary, groups=1), tol=1e-13, max_iter=20_000)
    fit = dawid_skene_em(
        summarize_multiclass(multi, groups="all"), tol=1e-13, max_iter=20_000
    ).as_binary()
    np.testing.assert_allclose(fit.a.values, ref.a.values, atol=1e-6)
    np.testing.assert_allclose(fit.b.values, ref.b.values, atol=1e-6)
    np.testing.assert_allclose(fit.prevalence.values, ref.prevalence.values, atol=1e-6)
    assert fit.loglik == pytest.approx(ref.loglik, rel=1e-10)


def test_c2_grouped_em_reproduces_binary_score_bin_em(binary_pair):
    binary, multi = binary_pair
    ref = score_bin_em(summarize(binary, groups="data"), tol=1e-13, max_iter=20_000)
    fit = dawid_skene_em(
        summarize_multiclass(multi, groups="data"), prevalence="grouped", tol=1e-13, max_iter=20_000
    ).as_binary()
    np.testing.assert_allclose(fit.a.values, ref.a.values, atol=1e-6)
    np.testing.assert_allclose(fit.b.values, ref.b.values, atol=1e-6)
    np.testing.assert_allclose(fit.prevalence.values, ref.prevalence.values, atol=1e-6)


# ------------------------------------------------------------------ recovery at large n
def test_recovery_at_large_n():
    pop = multiclass_population(4, missing=0.15, random_state=3)
    d = simulate_multiclass(200_000, population=pop, random_state=9)
    fit = dawid_skene_em(summarize_multiclass(d))
    rho, _ = pop.class_prevalence()
    # Complete-data standard error of an entry is at most sqrt(0.25 / m) with m the answers
    # from the rarest class; 6x that covers the information lost to the latent class at
    # these accuracies (0.6-0.9) and leaves P(any of ~60 entries outside) negligible.
    m = 200_000 * pop.prevalence.min() * 0.85
    tol = 6 * np.sqrt(0.25 / m)
    assert np.abs(fit.confusion.values[0] - pop.confusion).max() < tol
    counts = fit.group_counts.values[:, None]
    assert np.abs(fit.class_prevalence.values[0] - rho).max() < 6 * np.sqrt(0.25 / counts.min())


# ------------------------------------------------------------------ orientation
def _swapped(pop, j):
    """Population where annotator j swaps classes 0 and 1 (still informative)."""
    t = pop.confusion.copy()
    t[j] = t[j][:, [1, 0, 2]]
    return multiclass_population(3, t, random_state=2)


def test_orientation_follows_the_designated_annotator():
    pop = _swapped(multiclass_population(3, random_state=2), 0)
    states, counts = pop.expected_pattern_counts(1e5)
    rho, _ = pop.class_prevalence()
    honest = em_fit_counts(counts, states, 3, tol=1e-14, max_iter=50_000, orient=1)
    np.testing.assert_allclose(honest["confusion"], pop.confusion, atol=EXACT)
    swapper = em_fit_counts(counts, states, 3, tol=1e-14, max_iter=50_000, orient=0)
    # Latent classes follow the swapping annotator: true classes 0 and 1 exchange their rows
    # (and prevalences); the answered classes (columns) are observed and stay.
    perm = [1, 0, 2]
    np.testing.assert_allclose(swapper["confusion"], pop.confusion[:, perm, :], atol=EXACT)
    np.testing.assert_allclose(swapper["prevalence"], rho[:, perm], atol=EXACT)


def test_non_dominant_designated_annotator_is_reported():
    pop = multiclass_population(3, random_state=4)
    t = pop.confusion.copy()
    t[0, 2] = [0.1, 0.5, 0.4]  # true class 2 is mostly answered as class 1
    pop = multiclass_population(3, t, random_state=4)
    d = simulate_multiclass(30_000, population=pop, random_state=1)
    with pytest.warns(IdentificationWarning, match="not diagonally dominant"):
        fit = dawid_skene_em(summarize_multiclass(d), orient=0)
    assert any("not diagonally dominant" in w for w in fit.warnings)


# ------------------------------------------------------------------ refusals and options
def test_two_annotators_are_refused_for_three_classes(small):
    d, _ = small
    two = MulticlassAnnotations.from_arrays(d.probs, d.labels[:, :2])
    with pytest.raises(IdentificationError, match="K >= 3"):
        dawid_skene_em(summarize_multiclass(two))


def test_a_class_nobody_answers_is_refused():
    d = simulate_multiclass(500, 3, random_state=0)
    lab = d.labels.copy()
    lab[lab == 2] = 1
    with pytest.raises(IdentificationError, match=r"\['2'\] are never answered"):
        dawid_skene_em(summarize_multiclass(MulticlassAnnotations.from_arrays(d.probs, lab)))


def test_an_annotator_who_never_uses_a_class_is_named():
    d = simulate_multiclass(3000, 3, random_state=0)
    lab = d.labels.copy()
    lab[lab[:, 2] == 2, 2] = 1
    s = summarize_multiclass(MulticlassAnnotations.from_arrays(d.probs, lab))
    with pytest.warns(IdentificationWarning, match="'a3' never answered"):
        with pytest.raises(FitError, match="annotator 'a3' has smallest singular value") as e:
            dawid_skene_em(s)
    # every start converged, so more iterations are no fix and are not offered
    assert "max_iter" not in str(e.value) and "drop it from the annotators" in str(e.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentificationWarning)
        fit = dawid_skene_em(s, min_singular=0)
    assert fit.diagnostics["min_singular_values"][2] < 1e-3


def test_empty_channel_groups():
    d = simulate_multiclass(2000, 3, random_state=0)
    probs = d.probs.copy()
    never = probs.argmax(axis=1) == 2
    probs[never] = probs[never][:, [2, 1, 0]]  # class 2 is never predicted now
    s = summarize_multiclass(MulticlassAnnotations.from_arrays(probs, d.labels))
    with pytest.raises(FitError, match=r"\['2'\] contain no annotated item"):
        dawid_skene_em(s)
    fit = dawid_skene_em(s, empty_groups="drop")
    assert fit.prevalence["group"].values.tolist() == ["0", "1"]
    assert fit.group_counts.values.sum() == s.n_items


@pytest.mark.parametrize(
    "option, value",
    [
        ("tol", "x"),
        ("max_iter", 0),
        ("n_starts", 1.5),
        ("clip", 0.5),
        ("min_singular", -1),
        ("pooled", "yes"),
        ("empty_groups", "skip"),
        ("orient", "nobody"),
    ],
)
def test_options_are_one_line_config_errors(small, option, value):
    with pytest.raises(ConfigError) as err:
        dawid_skene_em(small[1], **{option: value})
    assert "\n" not in str(err.value)


def test_refuses_what_is_not_a_summary():
    # one summary for every C: a two-class summary is valid input (the C = 2 tests above)
    from bayescal.simulate import simulate_toy

    with pytest.raises(ConfigError, match="expects a Summary"):
        dawid_skene_em(simulate_toy(100, random_state=0))


def test_seeded_and_batch_size_independent(small, monkeypatch):
    s = small[1]
    a, b = (
        dawid_skene_em(s, random_state=3),
        dawid_skene_em(s, random_state=3),
    )
    np.testing.assert_array_equal(a.confusion.values, b.confusion.values)
    monkeypatch.setattr(mem, "_BATCH_ELEMENTS", 1)  # one start per batch
    c = dawid_skene_em(s, random_state=3)
    # Same starts and iterations; only the matrix products' shapes change (BLAS sums a
    # one-row product in another order), so values agree to rounding: a few ulps per
    # iteration, damped by EM's contraction (measured 6e-15 relative), bounded by 1e-12.
    np.testing.assert_allclose(a.confusion.values, c.confusion.values, rtol=1e-12, atol=0)
    np.testing.assert_allclose(
        a.diagnostics["start_logliks"], c.diagnostics["start_logliks"], rtol=1e-12
    )
    assert a.diagnostics["iterations"] == c.diagnostics["iterations"]


def test_item_states_are_the_pattern_rows(small):
    d, s = small
    rows = {tuple(r) for r in item_states(d.labels, 3).tolist() if min(r) < 3}
    assert rows == {tuple(r) for r in s.states.tolist()}


def test_c2_two_annotators_with_groups_reproduce_binary_score_bin_em(binary_pair):
    binary, multi = binary_pair
    b2 = Annotations.from_arrays(binary.score, binary.labels[:, :2], group=binary.group)
    m2 = MulticlassAnnotations.from_arrays(multi.probs, multi.labels[:, :2], group=multi.group)
    ref = score_bin_em(summarize(b2, groups="data"), tol=1e-13, max_iter=20_000)
    fit = dawid_skene_em(
        summarize_multiclass(m2, groups="data"), prevalence="grouped", tol=1e-13, max_iter=20_000
    ).as_binary()
    # Two annotators identify the channels only through the group differences, so the
    # likelihood is flat along one direction: both EMs stop (relative change 1e-13) with
    # log-likelihoods equal to 1e-12 but parameters up to ~1e-5 apart (measured 2e-6).
    assert fit.loglik == pytest.approx(ref.loglik, rel=1e-12)
    np.testing.assert_allclose(fit.a.values, ref.a.values, atol=2e-5)
    np.testing.assert_allclose(fit.b.values, ref.b.values, atol=2e-5)
    with pytest.raises(IdentificationError, match="at least three annotators"):
        dawid_skene_em(summarize_multiclass(m2, groups="all"))


@pytest.mark.parametrize("classes", [2, 4])
def test_non_empty_cells_give_the_whole_table_fit(monkeypatch, classes):
    # Large tables (and every table of more than two classes) are worked on their
    # non-empty (group, pattern) cells; empty cells add zero to every sum, so the fit is
    # the same up to the order of summation (rounding: a few ulps per iteration, damped by
    # EM's contraction; bounded by 1e-12 relative).
    d = simulate_multiclass(2000, classes, random_state=6, n_annotators=5, missing=0.2)
    s = summarize_multiclass(d, groups="predicted")
    monkeypatch.setattr(mem, "_whole_table", lambda n_classes, n_cells: True)
    whole = dawid_skene_em(s, prevalence="grouped")
    monkeypatch.setattr(mem, "_whole_table", lambda n_classes, n_cells: False)
    cells = dawid_skene_em(s, prevalence="grouped")
    assert (s.pattern_counts.values == 0).any()  # the two layouts differ
    np.testing.assert_allclose(cells.confusion.values, whole.confusion.values, rtol=1e-12)
    np.testing.assert_allclose(
        cells.class_prevalence.values, whole.class_prevalence.values, rtol=1e-12
    )
    assert cells.loglik == pytest.approx(whole.loglik, rel=1e-12)


def test_confusion_rows_are_the_indicator_sums_with_gold_and_prior():
    # The C > 2 M step sums each annotator's answers with one bincount; it must equal the
    # products with the answer indicators, gold items and Dirichlet pseudo-counts included.
    rng = np.random.default_rng(3)
    c, k, n_pat, r = 4, 3, 30, 2
    states = rng.integers(0, c + 1, size=(n_pat, k))  # c = not answered
    w = rng.random((r, c, n_pat))
    gold = rng.random((c, n_pat)) * (rng.random((c, n_pat)) < 0.3)
    prior = rng.random((r, k, c, c))
    onehot = np.stack([states == a for a in range(c)]).astype(float)  # (C, P, K)
    total = w + gold
    num = np.einsum("ryp,apj->rjya", total, onehot) + prior
    expected = num[..., 1:] / num.sum(axis=-1, keepdims=True)
    got = mem._confusion_rows(total, states, prior)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert got.shape == (r, k, c, c - 1)
