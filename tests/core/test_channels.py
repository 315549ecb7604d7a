import numpy as np
import pytest
from core_helpers import delta_method_se, population_summary
from em_reference import binary_em_run, dawid_skene_em_items
from scipy.optimize import minimize
from scipy.special import expit, logit

import bayescal as bc
from bayescal.channels import (
    constrained_gmm,
    dawid_skene_em,
    hui_walter,
    moment_inverse,
    score_bin_em,
)
from bayescal.channels.hui_walter import hui_walter_moments
from bayescal.errors import ConfigError, FitError, IdentificationError, IdentificationWarning
from bayescal.simulate import simulate_flip_data

A3, B3 = np.array([0.08, 0.13, 0.18]), np.array([0.84, 0.89, 0.94])
MUS5 = np.array([0.1, 0.3, 0.5, 0.7, 0.9])


def params(fit):
    return np.concatenate([fit.a.values[0], fit.b.values[0], fit.prevalence.values[0]])


# ------------------------------------------------------------------ exact population values
def test_hui_walter_exact_on_population_moments():
    a1, b1, a2, b2 = 0.07, 0.83, 0.21, 0.95
    mu = np.array([0.23, 0.71])
    q1, q2 = a1 + (b1 - a1) * mu, a2 + (b2 - a2) * mu
    q12 = (1 - mu) * a1 * a2 + mu * b1 * b2
    r = hui_walter_moments(q1, q2, q12)
    np.testing.assert_allclose(r["a"], [a1, a2], atol=1e-10)
    np.testing.assert_allclose(r["b"], [b1, b2], atol=1e-10)
    np.testing.assert_allclose(r["mu"], mu, atol=1e-10)


def test_hui_walter_exact_through_summary_with_missing():
    s = population_summary([0.1, 0.2], [0.8, 0.9], [0.25, 0.75], [5e4, 5e4], missing=[0.2, 0.4])
    fit = hui_walter(s)
    np.testing.assert_allclose(params(fit), [0.1, 0.2, 0.8, 0.9, 0.25, 0.75], atol=1e-10)


@pytest.mark.parametrize("mu", [0.5, 0.3, 0.8])
def test_moment_inverse_exact_including_half(mu):
    a, b = np.array([0.08, 0.13, 0.18, 0.3]), np.array([0.84, 0.89, 0.94, 0.7])
    s = population_summary(a, b, [mu], [1e5], missing=[0.1, 0.0, 0.3, 0.2])
    fit = moment_inverse(s)
    np.testing.assert_allclose(params(fit), np.concatenate([a, b, [mu]]), atol=1e-10)


def test_gmm_exact_on_population():
    s = population_summary([0.05, 0.05], [0.75, 0.95], [0.15, 0.5, 0.85], [1e4, 1e4, 1e4])
    fit = constrained_gmm(s)
    np.testing.assert_allclose(params(fit), [0.05, 0.05, 0.75, 0.95, 0.15, 0.5, 0.85], atol=1e-7)
    assert fit.diagnostics["objective"] < 1e-12
    assert fit.diagnostics["jacobian_min_singular_value"] > 0.01


def test_em_exact_on_population():
    s = population_summary(A3, B3, MUS5, [1e4] * 5, missing=[0.1, 0.2, 0.0])
    fit = score_bin_em(s, tol=1e-14, max_iter=20000)
    np.testing.assert_allclose(params(fit), np.concatenate([A3, B3, MUS5]), atol=1e-6)
    fit = dawid_skene_em(population_summary(A3, B3, [0.37], [1e5]), tol=1e-14, max_iter=20000)
    np.testing.assert_allclose(params(fit), np.concatenate([A3, B3, [0.37]]), atol=1e-6)


# ----------------------------------------------------------------- EM against other implementations
def _neg_loglik(theta, counts, st):
    k = st.shape[1]
    a, b, mu = expit(theta[:k]), expit(theta[k : 2 * k]), expit(theta[2 * k :])
    l1 = np.where(st == 1, np.log(b), np.where(st == 0, np.log1p(-b), 0)).sum(1)
    l0 = np.where(st == 1, np.log(a), np.where(st == 0, np.log1p(-a), 0)).sum(1)
    lp = np.logaddexp(np.log(mu)[:, None] + l1[None], np.log1p(-mu)[:, None] + l0[None])
    return -(counts * lp).sum()


def test_em_fixed_point_is_the_maximum_likelihood():
    d = bc.simulate.simulate_toy(20000, "shifted", random_state=11, missing=0.15)
    s = bc.summarize(d, groups=5)
    fit = score_bin_em(s, tol=1e-13, max_iter=20000)
    counts = s.binary.pattern_counts
    theta0 = logit(params(fit))
    res = minimize(
        _neg_loglik,
        theta0 + 0.05,
        args=(counts, s.binary.states),
        method="BFGS",
        options={"gtol": 1e-8, "maxiter": 5000},
    )
    np.testing.assert_allclose(expit(res.x), params(fit), atol=2e-5)
    assert fit.loglik == pytest.approx(-res.fun, rel=1e-9)


def test_pattern_em_equals_per_item_em_from_same_start():
    d = bc.simulate.simulate_toy(5000, "nonlinear", random_state=12, missing=[0.0, 0.3, 0.1])
    s = bc.summarize(d, groups=[0, 0.3, 0.6, 1])
    g = np.searchsorted([0, 0.3, 0.6, 1], d.score, side="right") - 1
    a0, b0, mu0 = np.array([0.2, 0.1, 0.25]), np.array([0.8, 0.75, 0.9]), np.array([0.3, 0.5, 0.6])
    slow = dawid_skene_em_items(
        d.labels, group=np.minimum(g, 2), a0=a0, b0=b0, mu0=mu0, tol=1e-12, max_iter=5000
    )
    counts = s.binary.pattern_counts.astype(float)
    fast = binary_em_run(
        counts, s.binary.states, a0[None], b0[None], mu0[None], tol=1e-12, max_iter=5000
    )
    np.testing.assert_allclose(fast["a"][0], slow["a"], atol=1e-9)
    np.testing.assert_allclose(fast["b"][0], slow["b"], atol=1e-9)
    np.testing.assert_allclose(fast["mu"][0], slow["mu"], atol=1e-9)
    assert fast["n_iter"][0] == slow["n_iter"]


# ------------------------------------------------------------------ recovery at large n
N_BIG = 200_000
Z_TOL = 4.5  # |est - truth| / SE; with ~15 parameters P(any > 4.5) < 1e-4 under normality


def _recovery(fit, truth, se):
    err = np.abs(params(fit) - truth)
    assert np.all(err <= Z_TOL * se), (err / se).round(2)


def _groups_data(a, b, mus, n, seed, missing=0.0):
    """Items spread evenly over len(mus) equal-width score groups with given prevalences."""
    rng = np.random.default_rng(seed)
    L = len(mus)
    g = rng.integers(0, L, n)
    z = (g + rng.random(n)) / L
    y = rng.random(n) < np.asarray(mus)[g]
    return simulate_flip_data(z, y.astype(int), a, b, random_state=rng, missing=missing)


@pytest.mark.parametrize("missing", [0.0, 0.25])
def test_score_bin_em_recovers_truth(missing):
    d = _groups_data(A3, B3, MUS5, N_BIG, seed=1, missing=missing)
    s = bc.summarize(d, groups=5)
    fit = score_bin_em(s)
    pop = population_summary(A3, B3, MUS5, s.group_counts.values, missing=[missing] * 3)
    se = delta_method_se(
        lambda x: params(score_bin_em(x, n_starts=1, tol=1e-13, max_iter=20000)), pop
    )
    _recovery(fit, np.concatenate([A3, B3, MUS5]), se)


def test_dawid_skene_and_moments_recover_truth():
    d = _groups_data(A3, B3, [0.4], N_BIG, seed=2, missing=0.1)
    s = bc.summarize(d, groups=1)
    truth = np.concatenate([A3, B3, [0.4]])
    pop = population_summary(A3, B3, [0.4], [s.n_items], missing=[0.1] * 3)
    fit = dawid_skene_em(s)
    se = delta_method_se(
        lambda x: params(dawid_skene_em(x, n_starts=1, tol=1e-13, max_iter=20000)), pop
    )
    _recovery(fit, truth, se)
    fit_m = moment_inverse(s)
    se_m = delta_method_se(lambda x: params(moment_inverse(x)), pop)
    assert np.all(se_m >= se * 0.99)  # the MLE is at least as precise
    _recovery(fit_m, truth, se_m)


def test_two_annotator_estimators_recover_truth():
    a, b = np.array([0.05, 0.05]), np.array([0.75, 0.95])
    mus = [0.2, 0.75]
    d = _groups_data(a, b, mus, N_BIG, seed=3, missing=0.1)
    s = bc.summarize(d, groups=2)
    truth = np.concatenate([a, b, mus])
    pop = population_summary(a, b, mus, s.group_counts.values, missing=[0.1, 0.1])
    for est in (hui_walter, constrained_gmm, lambda x: score_bin_em(x)):
        se = delta_method_se(lambda x, est=est: params(est(x)), pop, h=1e-4)
        _recovery(est(s), truth, se)


# ----------------------------------------------------------------- orientation and degenerate cases
def test_orientation_follows_designated_annotator():
    s = population_summary(A3, B3, MUS5, [2e4] * 5)
    fit = score_bin_em(s, orient="a2")
    assert np.all(fit.delta.values > 0)
    # the mirrored model (1 - mu, b, a) gives the same counts; orientation picks one
    mirrored = population_summary(B3, A3, 1 - MUS5, [2e4] * 5)
    np.testing.assert_allclose(mirrored.pattern_counts.values, s.pattern_counts.values)


def test_adversarial_annotator_is_refused():
    a, b = np.array([0.9, 0.1, 0.15]), np.array([0.1, 0.85, 0.9])
    d = _groups_data(a, b, MUS5, 20000, seed=4)
    with pytest.raises(FitError, match="gap"):
        score_bin_em(bc.summarize(d, groups=5))


def test_always_one_annotator_is_refused_with_advice():
    d = _groups_data(A3, B3, MUS5, 20000, seed=5)
    lab = d.labels.copy()
    lab[:, 2] = 1
    d2 = bc.Annotations.from_arrays(d.score, lab)
    with pytest.raises(FitError, match="always answers 1"):
        score_bin_em(bc.summarize(d2, groups=5))
    fit = score_bin_em(bc.summarize(d2, groups=5), fallback="fixed")
    assert fit.status == "fallback" and any("fallback" in w for w in fit.warnings)


def test_empty_group_fails_drops_or_falls_back():
    rng = np.random.default_rng(6)
    z = rng.uniform(0, 0.6, 5000)
    y = rng.random(5000) < z
    d = simulate_flip_data(z, y.astype(int), A3, B3, random_state=rng)
    s = bc.summarize(d, groups=5)
    with pytest.raises(FitError, match="no annotated item"):
        score_bin_em(s)
    fit = score_bin_em(s, empty_groups="drop")
    assert fit.prevalence.sizes["group"] == 3 and any("dropped" in w for w in fit.warnings)
    fb = score_bin_em(s, fallback="fixed")
    assert fb.status == "fallback"
    np.testing.assert_allclose(fb.a.values, 0.2)


def test_small_gap_warns_with_value():
    a, b = np.array([0.1, 0.1, 0.48]), np.array([0.9, 0.85, 0.5])
    s = population_summary(a, b, MUS5, [4e4] * 5)
    with pytest.warns(IdentificationWarning, match="nearly uninformative: gap"):
        fit = score_bin_em(s, tol=1e-13, max_iter=20000)
    assert any("0.02" in w for w in fit.warnings)


def test_weak_groups_warn():
    d = _groups_data([0.1, 0.2], [0.8, 0.9], [0.5, 0.5], 4000, seed=7)
    with pytest.warns(IdentificationWarning, match="barely differ"):
        try:
            constrained_gmm(bc.summarize(d, groups=2))
        except FitError:
            pass


# ------------------------------------------------------------------ refused designs
def _data(k, n=400, seed=8):
    rng = np.random.default_rng(seed)
    return bc.Annotations.from_arrays(rng.random(n), rng.integers(0, 2, (n, k)))


@pytest.mark.parametrize(
    "k,method,groups,match",
    [
        (1, "score_bin_em", 5, "one annotator"),
        (1, "dawid_skene_em", None, "one annotator"),
        (2, "dawid_skene_em", None, "two annotators without score groups"),
        (2, "moments", None, "at least three"),
        (2, "score_bin_em", 1, "at least two non-empty score groups"),
        (2, "gmm", 1, "at least two non-empty"),
        (2, "hui_walter", 5, "exactly two groups"),
        (3, "hui_walter", 2, "exactly two annotators"),
        (3, "gmm", 5, "exactly two annotators"),
    ],
)
def test_refused_designs(k, method, groups, match):
    with pytest.raises(IdentificationError, match=match):
        bc.fit_channels(_data(k), method=method, groups=groups)


def test_never_coanswered_pair_refused():
    lab = np.full((200, 2), np.nan)
    lab[:100, 0] = 1
    lab[100:, 1] = 0
    d = bc.Annotations.from_arrays(np.linspace(0, 1, 200), lab)
    with pytest.raises(IdentificationError, match="never answered the same item"):
        bc.fit_channels(d, "gmm", groups=2)


def _flips(n, seed, k):
    rng = np.random.default_rng(seed)
    score = rng.random(n)
    truth = (rng.random(n) < score).astype(int)
    a, b = [0.1, 0.15, 0.2, 0.1][:k], [0.8, 0.9, 0.85, 0.8][:k]
    return simulate_flip_data(score, truth, a, b, random_state=seed)


def _split_design(n=600, seed=0, four=False):
    """r1 (and r4 with ``four``) alone on the first half of the items, r2 and r3 on the other."""
    d = _flips(n, seed, 4 if four else 3)
    lab = d.labels.copy()
    half = n // 2
    lab[:half, 1:3] = np.nan
    lab[half:, 0] = np.nan
    if four:
        lab[half:, 3] = np.nan
    return bc.Annotations.from_arrays(d.score, lab)


def test_parts_that_share_no_item_are_refused_for_one_prevalence_and_warned_for_groups():
    """r1 alone on half the items, r2 and r3 on the other half: Dawid-Skene EM (one
    prevalence) passed the design check and gave an NC-ECE that moved with the seed
    (0.221 / 0.206 / 0.193). Each part must identify its own channels: refused, naming
    the parts. Score groups let a part borrow the groups' prevalences: a warning."""
    d = _split_design()
    for method in ("dawid_skene_em", "moments"):
        with pytest.raises(IdentificationError, match=r"2 parts that never answer the same item"):
            bc.fit_channels(d, method, groups=1)
    with pytest.warns(IdentificationWarning, match=r"\{a2, a3\}: 300 item\(s\); \{a1\}: 300"):
        bc.fit_channels(d, "score_bin_em", groups=5)
    # a connected design of the same size passes: one item answered by all three links them
    lab = d.labels.copy()
    lab[0, :] = [1, 1, 1]
    lab[1, :] = [0, 0, 0]
    linked = bc.Annotations.from_arrays(d.score, lab)
    with pytest.raises(IdentificationError, match="never answered an item all three together"):
        bc.fit_channels(_pairs_only(), "dawid_skene_em", groups=1)
    from bayescal.channels.identification import design_parts

    assert [p[0] for p in design_parts(bc.summarize(linked, groups=1))] == [[0, 1, 2]]


def _pairs_only(n=900, seed=1):
    """Three annotators, every item answered by exactly two of them (pairs in turn)."""
    d = _flips(n, seed, 3)
    lab = d.labels.copy()
    lab[np.arange(n), np.arange(n) % 3] = np.nan
    return bc.Annotations.from_arrays(d.score, lab)


def test_one_annotator_per_item_is_refused_with_or_without_groups():
    """Every item answered by exactly one annotator (hostile re-check, issue 23): score-bin
    EM warned only and printed a decisive verdict, but each answer rate
    a_k + (b_k - a_k) mu_g is unchanged under an affine move of the prevalences matched by
    the channels, so no grouping identifies them. The same holds for C classes."""
    d = _flips(900, 2, 3)
    lab = np.full_like(d.labels, np.nan)
    lab[np.arange(900), np.arange(900) % 3] = d.labels[np.arange(900), np.arange(900) % 3]
    single = bc.Annotations.from_arrays(d.score, lab)
    for method, groups in (("score_bin_em", 5), ("dawid_skene_em", 1), ("moments", 1)):
        with pytest.raises(IdentificationError, match="no item has answers of two annotators"):
            bc.fit_channels(single, method, groups=groups)
    from bayescal.data.multiclass import MulticlassAnnotations
    from bayescal.simulate import simulate_multiclass

    m = simulate_multiclass(600, 3, random_state=0)
    mlab = np.full(m.labels.shape, np.nan)
    rows = np.arange(600)
    mlab[rows, rows % 3] = m.labels[rows, rows % 3]
    with pytest.raises(IdentificationError, match="'a2': 200, 'a3': 200 item"):
        bc.fit_channels(bc.summarize(MulticlassAnnotations.from_arrays(m.probs, mlab)))


def test_a_part_of_two_beside_one_of_three_is_refused_for_dawid_skene():
    """{r1, r4} beside {r2, r3}: no part has three annotators."""
    with pytest.raises(IdentificationError, match="fewer than three annotators"):
        bc.fit_channels(_split_design(four=True), "dawid_skene_em", groups=1)


def test_annotator_without_answers_refused():
    lab = np.random.default_rng(0).integers(0, 2, (50, 3)).astype(float)
    lab[:, 1] = np.nan
    with pytest.raises(bc.errors.DataError, match="answered no item"):
        bc.fit_channels(bc.Annotations.from_arrays(np.linspace(0, 1, 50), lab), "dawid_skene_em")


def test_fit_channels_argument_errors():
    d = _data(3)
    with pytest.raises(ConfigError, match="unknown method"):
        bc.fit_channels(d, "magic")
    with pytest.raises(ConfigError, match="groups are fixed"):
        bc.fit_channels(bc.summarize(d), "score_bin_em", groups=3)
    with pytest.raises(ConfigError, match="fallback"):
        bc.fit_channels(d, "score_bin_em", fallback="yes")
    with pytest.raises(ConfigError, match="orient"):
        bc.fit_channels(d, "score_bin_em", orient="nobody")
    assert (
        bc.fit_channels(d, "score-bin-em", groups=2, empty_groups="drop", fallback="fixed").method
        == "score_bin_em"
    )


def test_hui_walter_failure_is_an_error_not_nan():
    with pytest.raises(FitError, match="same in both groups"):
        hui_walter_moments([0.4, 0.4], [0.3, 0.5], [0.2, 0.2])
    with pytest.raises(FitError):
        hui_walter_moments([0.3, 0.5], [0.3, 0.5], [0.01, 0.6])


def test_result_type_shapes_and_repr():
    s = population_summary(A3, B3, MUS5, [1e4] * 5)
    fit = score_bin_em(s)
    assert fit.a.dims == ("draw", "annotator") and fit.a.sizes["draw"] == 1
    assert fit.prevalence.dims == ("draw", "group")
    assert fit.mu.values.shape == (1,)
    assert float(fit.mu[0]) == pytest.approx(MUS5.mean(), abs=1e-5)
    text = repr(fit)
    assert "a (FP rate)" in text and "prevalence" in text
    ds = fit.to_dataset()
    assert set(ds.data_vars) >= {"a", "b", "delta", "prevalence"}


def test_em_reproducible_with_seed():
    d = _groups_data(A3, B3, MUS5, 3000, seed=9)
    s = bc.summarize(d, groups=5)
    f1, f2 = score_bin_em(s, random_state=3), score_bin_em(s, random_state=3)
    np.testing.assert_array_equal(params(f1), params(f2))


# ------------------------------------------------------------------ one EM, two classes
def test_one_em_at_two_classes_gives_the_v02_binary_channels():
    # Committed numbers: v0.2's binary EM (channels/em.py at f14ef59, before the one EM) on
    # this fixture. The one EM does the same floating-point operations for C = 2 (its
    # docstring), so it agrees to rounding; 1e-10 leaves room only for a BLAS change.
    d = bc.simulate.simulate_toy(3000, "shifted", random_state=11, missing=[0.0, 0.2, 0.1])
    s = bc.summarize(d, groups=5)
    grouped, pooled = score_bin_em(s), dawid_skene_em(s)
    v02 = {
        "score_bin_em": (
            [0.07801733134825137, 0.12514430005723481, 0.18047546813773882],
            [0.8323317316048822, 0.8775661607134239, 0.9414655595303709],
            [
                0.2044477778595036,
                0.2939285351841201,
                0.4540279183229637,
                0.566698359076139,
                0.7273128990888538,
            ],
            -4391.241199596722,
        ),
        "dawid_skene_em": (
            [0.08352844009218936, 0.12569305915012643, 0.18106125618955332],
            [0.8321106064206977, 0.881658671488016, 0.9448401453680639],
            [0.47797677975155595],
            -4561.476356809302,
        ),
    }
    for fit in (grouped, pooled):
        a, b, mu, loglik = v02[fit.method]
        np.testing.assert_allclose(fit.a.values[0], a, rtol=0, atol=1e-10)
        np.testing.assert_allclose(fit.b.values[0], b, rtol=0, atol=1e-10)
        np.testing.assert_allclose(fit.prevalence.values[0], mu, rtol=0, atol=1e-10)
        assert fit.loglik == pytest.approx(loglik, rel=1e-12) and fit.layout == "binary"
    assert grouped.diagnostics["prevalence"] == "grouped"
    assert pooled.diagnostics["prevalence"] == "pooled"


def test_progress_is_called_once_per_iteration_with_the_change():
    s = bc.summarize(bc.simulate.simulate_toy(2000, random_state=3), groups=5)
    calls = []
    fit = score_bin_em(s, progress=lambda it, change: calls.append((it, change)))
    plain = score_bin_em(s)
    np.testing.assert_array_equal(fit.confusion.values, plain.confusion.values)
    # all starts run together: one call per iteration of the slowest start
    assert [it for it, _ in calls] == list(range(1, max(fit.diagnostics["iterations"]) + 1))
    assert all(np.isfinite(c) and c >= 0 for _, c in calls) and calls[-1][1] < 1e-6


def test_prevalence_spellings_and_their_deprecated_aliases():
    from bayescal.channels.em import resolve_prevalence

    s = bc.summarize(bc.simulate.simulate_toy(2000, random_state=3), groups=5)
    assert dawid_skene_em(s, prevalence="grouped").method == "score_bin_em"
    with pytest.warns(DeprecationWarning, match="use prevalence='pooled'"):
        assert resolve_prevalence(model="marginal") == "pooled"
    with pytest.warns(DeprecationWarning, match="use prevalence='grouped'"):
        assert resolve_prevalence(model="grouped") == "grouped"
    with pytest.warns(DeprecationWarning, match="pooled=False is deprecated"):
        fit = dawid_skene_em(s, pooled=False)
    np.testing.assert_array_equal(fit.confusion.values, score_bin_em(s).confusion.values)
    for bad in ({"prevalence": "marginal"}, {"pooled": "yes"}, {"model": "joint"}):
        with pytest.raises(ConfigError, match="must be"):
            resolve_prevalence(**bad)
    with pytest.raises(ConfigError, match="score_bin_em is the grouped EM"):
        score_bin_em(s, prevalence="pooled")
    with pytest.raises(ConfigError, match="min_singular applies to more than two classes"):
        score_bin_em(s, min_singular=0.1)


@pytest.mark.parametrize("n", [1, 2])
def test_em_on_a_handful_of_items_says_too_few_items(n):
    """One or two items cannot separate three annotators' errors: the refusal leads with
    the item count (it used to name an 'annotator whose answers do not depend on the
    class', which was not the problem)."""
    d = bc.Annotations.from_arrays(np.full(n, 0.5), np.ones((n, 3)))
    with pytest.raises(FitError, match=rf"^only {n} annotated item\(s\) for 7 free channel"):
        bc.fit_channels(bc.summarize(d), "dawid_skene_em", random_state=0)


def test_no_acceptable_start_names_the_annotator_and_offers_only_fixes_that_apply():
    """An annotator who always answers 1 leaves no start with every gap b - a > 0: the
    message names it (not its position) and, as every start converged, does not offer more
    iterations (hostile re-check M4, issue 23)."""
    from bayescal.simulate import simulate_toy

    d = simulate_toy(2000, random_state=0)
    labels = d.labels.copy()
    labels[:, 1] = 1
    s = bc.summarize(bc.Annotations.from_arrays(d.score, labels))
    with pytest.raises(FitError) as e:
        dawid_skene_em(s)
    message = str(e.value)
    assert "belongs to annotator 'a2'" in message and "index" not in message
    assert "max_iter" not in message and "drop it from the annotators" in message


def test_an_annotator_coded_the_other_way_round_is_told_so():
    """r3 = 1 - r1 was told it 'carries no information' (hostile re-check, issue 23)."""
    from bayescal.simulate import simulate_toy

    d = simulate_toy(2000, random_state=0)
    labels = d.labels.copy()
    labels[:, 2] = 1 - labels[:, 0]
    s = bc.summarize(bc.Annotations.from_arrays(d.score, labels))
    with pytest.raises(FitError, match=r"'a3'\). Its gap is -1: .* coded the other way round"):
        dawid_skene_em(s)
